import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FlowNode } from '../src/flows/flows.js';
import type { ApiTarget } from './http-call.js';
import { useHttpFixture } from './http-fixture.js';
import { snapshotKeys } from './helpers.js';
import { checkInvariants } from './invariants.js';

/** The payload cap by default: 1 MiB of UTF-8 JSON as stored. */
const PAYLOAD_CAP = 1024 * 1024;

/** A chain of `levels` jobs in `queue`, each the only child of the one above. */
function chain(queue: string, levels: number): Record<string, unknown> {
  let node: Record<string, unknown> = { queue, payload: levels };
  for (let level = levels - 1; level >= 1; level--) node = { queue, payload: level, children: [node] };
  return node;
}

/** Every node of a tree, root first. */
const nodesOf = (node: FlowNode): FlowNode[] => [node, ...node.children.flatMap(nodesOf)];

/**
 * `POST /v1/flows` of the HTTP contract (docs/design.md, "Flows"), against any target (the Node
 * server, the Worker under miniflare; both with a token): the tree answered with its derived ids
 * and each job's state, the same as the rows read back through the Queue; the same tree again
 * answered as duplicates, writing nothing; bad trees answered 400 naming the path, with no key of
 * any queue involved written (nor its registry entry); the bearer token; the route and its two
 * recursive schemas in the OpenAPI document. `redisUrl` is the Redis behind the target.
 */
export function describeHttpFlows(label: string, redisUrl: () => string, start: () => Promise<ApiTarget>): void {
  describe(label, () => {
    const fx = useHttpFixture({ prefix: 'http-flows', redisUrl, start });

    const hex = (): string => randomBytes(5).toString('hex');
    const { call, queueName: q, queueOf } = fx;

    /**
     * Every key of the queues with its value, and their registry entries; but the sequence number
     * in meta, which a repeated enqueue spends (lua/enqueue.lua: "a repeat costs only sequence numbers").
     */
    const stateOf = async (queues: readonly string[]): Promise<unknown> =>
      Promise.all(
        queues.map(async (queue) => {
          const keys = await snapshotKeys(fx.raw, `emq:{${queue}}:*`);
          delete ((keys[`emq:{${queue}}:meta`] as { value?: Record<string, string> } | undefined)?.value ?? {}).seq;
          return { keys, registered: await fx.raw.sismember('emq:queues', queue) };
        }),
      );

    /** Each node of the answer is a row of its queue, in the state the answer says. */
    async function stored(tree: FlowNode): Promise<void> {
      for (const node of nodesOf(tree)) {
        const job = await queueOf(node.queue).getJob(node.id);
        expect(job?.state, `${node.queue} ${node.id}`).toBe(node.state);
      }
      for (const queue of new Set(nodesOf(tree).map((n) => n.queue))) expect(await checkInvariants(fx.raw, queue), queue).toEqual([]);
    }

    it('writes a tree over three queues and answers it with its derived ids and states (201)', async () => {
      const [a, b, c] = [q(), q(), q()];
      const root = `report-${hex()}`;
      const runAt = new Date(Date.now() + 3_600_000).toISOString();
      const answer = await call('POST', '/v1/flows', {
        queue: a,
        id: root,
        payload: { report: 7 },
        maxAttempts: 2,
        children: [
          { queue: b, payload: { page: 1 }, group: 'g1', priority: 3 },
          { queue: b, payload: { page: 2 }, delayMs: 60_000, onFailure: 'ignore' },
          { queue: c, payload: 'merge', onFailure: 'remove', backoff: { type: 'fixed', delayMs: 10 }, children: [{ queue: a, payload: 'leaf', runAt }] },
        ],
      });
      expect(answer, JSON.stringify(answer.body)).toEqual({
        status: 201,
        body: {
          queue: a,
          id: `JOB:${root}`,
          state: 'waiting',
          children: [
            { queue: b, id: `JOB:${root}.0`, state: 'pending', children: [] },
            { queue: b, id: `JOB:${root}.1`, state: 'scheduled', children: [] },
            { queue: c, id: `JOB:${root}.2`, state: 'waiting', children: [{ queue: a, id: `JOB:${root}.2.0`, state: 'scheduled', children: [] }] },
          ],
        },
      });
      const tree = answer.body as unknown as FlowNode;
      await stored(tree);
      // the options went with each job, runAt read from ISO text
      const first = await queueOf(b).getJob(`JOB:${root}.0`);
      expect(first).toMatchObject({ payload: { page: 1 }, group: 'g1', priority: 3 });
      expect((await queueOf(a).getJob(`JOB:${root}`))?.maxAttempts).toBe(2);
      expect((await queueOf(c).getJob(`JOB:${root}.2`))?.backoff).toMatchObject({ type: 'fixed', delayMs: 10 });
      expect((await queueOf(a).getJob(`JOB:${root}.2.0`))?.runAt).toBe(Date.parse(runAt));
      for (const queue of [a, b, c]) expect(await fx.raw.sismember('emq:queues', queue), queue).toBe(1);

      // no root id: a random one, the children's derived from it
      const open = await call('POST', '/v1/flows', { queue: a, payload: 1, children: [{ queue: b, payload: 2 }, { queue: a, payload: 3 }] });
      expect(open.status, JSON.stringify(open.body)).toBe(201);
      const id = open.body.id as string;
      expect(id).toMatch(/^JOB:[0-9a-f]{8,}$/);
      expect(open.body).toEqual({
        queue: a,
        id,
        state: 'waiting',
        children: [
          { queue: b, id: `${id}.0`, state: 'pending', children: [] },
          { queue: a, id: `${id}.1`, state: 'pending', children: [] },
        ],
      });
      await stored(open.body as unknown as FlowNode);

      // a lone job is a flow too, and the deepest tree HTTP takes, 8 levels
      expect(await call('POST', '/v1/flows', { queue: c, payload: 'alone' })).toMatchObject({ status: 201, body: { queue: c, state: 'pending', children: [] } });
      const deep = await call('POST', '/v1/flows', chain(c, 8));
      expect(deep.status, JSON.stringify(deep.body)).toBe(201);
      const levels = nodesOf(deep.body as unknown as FlowNode);
      expect(levels.map((n) => n.state)).toEqual([...Array(7).fill('waiting'), 'pending']);
      expect(levels[7]!.id).toBe(`${levels[0]!.id}${'.0'.repeat(7)}`);
      await stored(deep.body as unknown as FlowNode);
    });

    it('answers the same tree again as duplicates (200) and writes nothing', async () => {
      const [a, b] = [q(), q()];
      const tree = { queue: a, id: `again-${hex()}`, payload: 1, children: [{ queue: b, payload: 2 }, { queue: b, payload: 3, children: [{ queue: a, payload: 4 }] }] };
      const first = await call('POST', '/v1/flows', tree);
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      const before = await stateOf([a, b]);
      const again = await call('POST', '/v1/flows', tree);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      const duplicate = (node: FlowNode): FlowNode => ({ ...node, state: 'duplicate', children: node.children.map(duplicate) });
      expect(again.body).toEqual(duplicate(first.body as unknown as FlowNode));
      expect(await stateOf([a, b])).toEqual(before);
      await stored(first.body as unknown as FlowNode);
    });

    it('refuses bad trees with 400 naming the path, and writes nothing to any queue of them', async () => {
      const [a, b] = [q(), q()];
      const wide = (children: number, queue = b): Record<string, unknown> => ({ queue: a, payload: 0, children: Array.from({ length: children }, (_, i) => ({ queue, payload: i })) });
      const bad: Array<[unknown, RegExp]> = [
        // not a tree
        [5, /^body: .*object/],
        ['tree', /^body: .*object/],
        [null, /^body: .*object/],
        [[{ queue: a, payload: 1 }], /^body: .*object/],
        [{ queue: a, payload: 1, children: { queue: b, payload: 2 } }, /^body children: .*array/],
        [{ queue: a, payload: 1, children: [5] }, /^body children\[0\]: .*object/],
        // a queue missing or badly named, at the root and below
        [{ payload: 1 }, /^body queue: /],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2 }, { payload: 3 }] }, /^body children\[1\]\.queue: /],
        [{ queue: 'bad name', payload: 1 }, /^body queue: letters, digits/],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2, children: [{ queue: 'x'.repeat(129), payload: 3 }] }] }, /^body children\[0\]\.children\[0\]\.queue: letters, digits/],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2, group: 'a b' }] }, /^body children\[0\]\.group: /],
        [{ queue: a, payload: 1, children: [{ queue: b, id: 'has space', payload: 2 }] }, /^body children\[0\]\.id: /],
        // a payload missing
        [{ queue: a }, /^body payload: payload is required$/],
        [{ queue: a, payload: 1, children: [{ queue: b }] }, /^body children\[0\]\.payload: payload is required$/],
        // too deep, too many
        [{ ...chain(a, 9), queue: b }, /^body children\[0\](\.children\[0\]){7}: a flow is at most 8 levels deep over HTTP$/],
        [chain(a, 40), /^body children\[0\](\.children\[0\]){7}: a flow is at most 8 levels deep over HTTP$/],
        [wide(1000), /^body: a flow holds at most 1000 jobs over HTTP, got 1001$/],
        [{ queue: a, payload: 0, children: [wide(500), wide(500)] }, /^body: a flow holds at most 1000 jobs over HTTP, got 1003$/],
        [wide(1001), /^body: a flow holds at most 1000 jobs over HTTP, got 1002$/],
        // a parent's own time, a root's failure policy
        [{ queue: a, payload: 1, delayMs: 5, children: [{ queue: b, payload: 2 }] }, /^body delayMs: a parent runs when its children have finished/],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2, runAt: Date.now() + 1000, children: [{ queue: a, payload: 3 }] }] }, /^body children\[0\]\.runAt: a parent runs when/],
        [{ queue: a, payload: 1, onFailure: 'ignore', children: [{ queue: b, payload: 2 }] }, /^body onFailure: onFailure is a child's: the root has no parent$/],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2, onFailure: 'retry' }] }, /^body children\[0\]\.onFailure: /],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2, delayMs: 5, runAt: 5 }] }, /^body children\[0\]: give delayMs or runAt, not both$/],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2, delayMs: -1 }] }, /^body children\[0\]\.delayMs: /],
        // unknown fields, dedupe included (a flow has fixed ids)
        [{ queue: a, payload: 1, dedupe: { key: 'k' } }, /^body: .*"dedupe"/],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2, prio: 1 }] }, /^body children\[0\]: .*"prio"/],
        [{ queue: a, payload: 1, children: [{ queue: b, payload: 2, backoffMs: 5 }] }, /^body children\[0\]: .*"backoffMs"/],
        // what only Flows.add can tell: one job twice in the tree
        [{ queue: a, payload: 1, children: [{ queue: b, id: 'twin', payload: 2 }, { queue: b, id: 'twin', payload: 3 }] }, /twice/],
      ];
      for (const [body, says] of bad) {
        const answer = await call('POST', '/v1/flows', body);
        const what = `${JSON.stringify(body).slice(0, 200)}: ${JSON.stringify(answer.body)}`;
        expect(answer.status, what).toBe(400);
        expect(answer.body.error?.code, what).toBe('EMQARG');
        expect(answer.body.error?.message, what).toMatch(says);
      }
      // not JSON, and a chain too deep for any recursive parser: still a 400, not a 500
      for (const rawBody of ['{not json', '', `${'{"queue":"a","payload":0,"children":['.repeat(150_000)}{"queue":"a","payload":0}${']}'.repeat(150_000)}`]) {
        const answer = await call('POST', '/v1/flows', undefined, rawBody);
        expect(answer.status, rawBody.slice(0, 50)).toBe(400);
        expect(answer.body.error?.code).toBe('EMQARG');
      }
      // a payload over the cap: 413, nothing written either
      const large = await call('POST', '/v1/flows', { queue: a, payload: 1, children: [{ queue: b, payload: 2 }, { queue: b, payload: 'x'.repeat(PAYLOAD_CAP) }] });
      expect(large.status, JSON.stringify(large.body)).toBe(413);
      expect(large.body.error?.code).toBe('EMQTOOLARGE');
      expect(large.body.error?.message).toMatch(/children\[1\]/);
      expect(await fx.raw.keys(`emq:{${a}}:*`)).toEqual([]);
      expect(await fx.raw.keys(`emq:{${b}}:*`)).toEqual([]);
      expect(await fx.raw.smismember('emq:queues', a, b)).toEqual([0, 0]);
    });

    it('requires the bearer token, as every route but /healthz does', async () => {
      const [a, b] = [q(), q()];
      const tree = { queue: a, payload: 1, children: [{ queue: b, payload: 2 }] };
      for (const auth of fx.target.token ? [undefined, 'wrong'] : []) {
        const res = await fetch(`${fx.target.baseUrl}/v1/flows`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: `Bearer ${auth}` } : {}) },
          body: JSON.stringify(tree),
        });
        expect(res.status).toBe(401);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('EMQAUTH');
      }
      expect(await fx.raw.keys(`emq:{${a}}:*`)).toEqual([]);
      expect(await fx.raw.keys(`emq:{${b}}:*`)).toEqual([]);
      expect((await call('POST', '/v1/flows', tree)).status).toBe(201);
    });

    it('documents the route and its recursive schemas in the OpenAPI document', async () => {
      const doc = await call('GET', '/v1/openapi.json');
      const paths = doc.body.paths as Record<string, Record<string, { requestBody: { content: Record<string, { schema: unknown }> }; responses: Record<string, unknown> }>>;
      expect(Object.keys(paths['/v1/flows']!)).toEqual(['post']);
      const post = paths['/v1/flows']!.post!;
      expect(post.requestBody.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/FlowJob' });
      expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '401', '413']));
      expect(JSON.stringify(post.responses['201'])).toContain('{"$ref":"#/components/schemas/FlowNode"}');
      const schemas = (doc.body.components as { schemas: Record<string, { properties: Record<string, { items?: unknown }>; additionalProperties?: boolean; required?: string[] }> }).schemas;
      const flowJob = schemas.FlowJob!;
      expect(Object.keys(flowJob.properties)).toEqual(['queue', 'payload', 'id', 'group', 'delayMs', 'runAt', 'priority', 'maxAttempts', 'backoff', 'onFailure', 'children']);
      expect(flowJob.additionalProperties).toBe(false);
      expect(flowJob.required).toEqual(['queue', 'payload']);
      expect(flowJob.properties.children!.items).toEqual({ $ref: '#/components/schemas/FlowJob' });
      expect(Object.keys(schemas.FlowNode!.properties)).toEqual(['queue', 'id', 'state', 'children']);
      expect(schemas.FlowNode!.properties.children!.items).toEqual({ $ref: '#/components/schemas/FlowNode' });
    });
  });
}
