import { describe, expect, inject, it } from 'vitest';
import { IoredisTransport } from '../../src/node/ioredis-transport.js';
import { serveApi } from '../../src/node/cli/serve.js';
import { describeHttpAdmin } from '../http-admin.suite.js';
import { describeHttpApi } from '../http-api.suite.js';
import { describeHttpFlows } from '../http-flows.suite.js';
import { describeHttpGroups } from '../http-groups.suite.js';
import { describeHttpRate } from '../http-rate.suite.js';
import { describeHttpSchedulers } from '../http-schedulers.suite.js';

const quiet = (): void => {};

/** The API on Node, through real HTTP, with and without a token. */
for (const token of [undefined, 'test-token-1234']) {
  describeHttpApi(`the HTTP API on Node (${token ? 'token required' : 'open'})`, () => inject('redisUrl'), async () => {
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
  });
}

describeHttpAdmin('the admin routes on Node', () => inject('redisUrl'), async () => {
  const transport = IoredisTransport.connect(inject('redisUrl'));
  const api = await serveApi({ transport, port: 0, log: quiet, token: 'test-token-admin' });
  return {
    baseUrl: api.url,
    token: 'test-token-admin',
    close: async () => {
      await api.close();
      await transport.close();
    },
  };
});

describeHttpSchedulers('the scheduler routes on Node', () => inject('redisUrl'), async () => {
  const transport = IoredisTransport.connect(inject('redisUrl'));
  const api = await serveApi({ transport, port: 0, log: quiet, token: 'test-token-schedulers' });
  return {
    baseUrl: api.url,
    token: 'test-token-schedulers',
    close: async () => {
      await api.close();
      await transport.close();
    },
  };
});

describeHttpRate('the rate-limit routes on Node', () => inject('redisUrl'), async () => {
  const transport = IoredisTransport.connect(inject('redisUrl'));
  const api = await serveApi({ transport, port: 0, log: quiet, token: 'test-token-rate' });
  return {
    baseUrl: api.url,
    token: 'test-token-rate',
    close: async () => {
      await api.close();
      await transport.close();
    },
  };
});

describeHttpGroups('the groups route on Node', () => inject('redisUrl'), async () => {
  const transport = IoredisTransport.connect(inject('redisUrl'));
  const api = await serveApi({ transport, port: 0, log: quiet, token: 'test-token-groups' });
  return {
    baseUrl: api.url,
    token: 'test-token-groups',
    close: async () => {
      await api.close();
      await transport.close();
    },
  };
});

describeHttpFlows('the flows route on Node', () => inject('redisUrl'), async () => {
  const transport = IoredisTransport.connect(inject('redisUrl'));
  const api = await serveApi({ transport, port: 0, log: quiet, token: 'test-token-flows' });
  return {
    baseUrl: api.url,
    token: 'test-token-flows',
    close: async () => {
      await api.close();
      await transport.close();
    },
  };
});

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
