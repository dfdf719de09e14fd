import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running report server: the url a Worker POSTs its reports to (its `REPORT_URL`), and its close. */
export interface ReportServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * An HTTP server on a free loopback port that takes the JSON bodies a test's Worker POSTs
 * (`report(body)` of `reportingWorkerEntry`), each handed to `onReport` before it answers `ok`;
 * what the reports add up to is the test's own to keep.
 *
 * @example
 * const runs: Run[] = [];
 * const reports = await startReportServer((body) => runs.push(body as Run));
 * // bind REPORT_URL: reports.url ... then
 * await reports.close();
 */
export async function startReportServer(onReport: (body: unknown) => void): Promise<ReportServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      onReport(JSON.parse(Buffer.concat(chunks).toString()) as unknown);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/report`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
