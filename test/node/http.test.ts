import { describe, expect, inject, it } from 'vitest';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { serveApi } from '../../src/node/cli/serve.js';
import { describeHttpAdmin } from '../http-admin.suite.js';
import { describeHttpApi } from '../http-api.suite.js';
import { describeHttpFlows } from '../http-flows.suite.js';
import { describeHttpSteps } from '../http-steps.suite.js';
import { describeHttpCancel } from '../http-cancel.suite.js';
import { describeHttpGroups } from '../http-groups.suite.js';
import { describeHttpKeys } from '../http-keys.suite.js';
import { describeHttpRate } from '../http-rate.suite.js';
import { describeHttpSchedulers } from '../http-schedulers.suite.js';
import type { ApiTarget } from '../http-call.js';

const quiet = (): void => {};

/** The API on Node through real HTTP (`serveApi`, what `emq serve` runs), requiring `token` when given. */
const nodeApi =
  (token?: string) =>
  async (): Promise<ApiTarget> => {
    const transport = IoredisTransport.connect(inject('redisUrl'));
    const api = await serveApi({ transport, port: 0, log: quiet, ...(token ? { token } : {}) });
    return {
      baseUrl: api.url,
      ...(token ? { token } : {}),
      close: async () => {
        await api.close();
        await transport.close();
      },
    };
  };

for (const token of [undefined, 'test-token-1234']) {
  describeHttpApi(`the HTTP API on Node (${token ? 'token required' : 'open'})`, () => inject('redisUrl'), nodeApi(token));
}
describeHttpAdmin('the admin routes on Node', () => inject('redisUrl'), nodeApi('test-token-admin'));
describeHttpSchedulers('the scheduler routes on Node', () => inject('redisUrl'), nodeApi('test-token-schedulers'));
describeHttpRate('the rate-limit routes on Node', () => inject('redisUrl'), nodeApi('test-token-rate'));
describeHttpGroups('the groups route on Node', () => inject('redisUrl'), nodeApi('test-token-groups'));
describeHttpFlows('the flows route on Node', () => inject('redisUrl'), nodeApi('test-token-flows'));
describeHttpSteps('the steps route on Node', () => inject('redisUrl'), nodeApi('test-token-steps'));
describeHttpCancel('the cancel routes on Node', () => inject('redisUrl'), nodeApi('test-token-cancel'));
describeHttpKeys('the key routes on Node', () => inject('redisUrl'), nodeApi('test-token-keys'));

describe('the HTTP API on Node, beyond the contract', () => {
  it('binds loopback only when open, and answers 503 when Redis does not', async () => {
    const transport = IoredisTransport.connect('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    const api = await serveApi({ transport, port: 0, log: quiet });
    try {
      expect(api.open).toBe(true);
      expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${api.url}/healthz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: { code: 'EMQREDIS' } });
    } finally {
      await api.close();
      await transport.close();
    }
  });

  it('logs one structured line per request with its id', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const transport = IoredisTransport.connect(inject('redisUrl'));
    const api = await serveApi({ transport, port: 0, log: (entry) => lines.push({ ...entry }) });
    try {
      const res = await fetch(`${api.url}/v1/queues/log-check`);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'info', msg: 'request', method: 'GET', path: '/v1/queues/log-check', status: 200, requestId: res.headers.get('x-request-id') });
    } finally {
      await api.close();
      await transport.close();
    }
  });
});
