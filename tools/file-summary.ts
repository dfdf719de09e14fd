/** One test file's figures in a suite harness's results.json (tools/bullmq-suite, tools/upstash-suite). */
export interface FileSummary {
  tests: number;
  passed: number;
  failed: number;
  skipped: number;
  /** The runner ran no test of the file: its first error line. */
  loadError?: string;
  /** Full names of the failing tests, as the runner prints them. */
  failing: string[];
}
