import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { FlowNode } from '../../src/flows/flows.js';
import { queueState } from '../admin-helpers.js';
import { emq } from '../cli-run.js';
import { checkInvariants } from '../invariants.js';
import { useRedis } from '../helpers.js';

/** Every node of a tree, root first. */
const nodesOf = (node: FlowNode): FlowNode[] => [node, ...node.children.flatMap(nodesOf)];

/** `emq flow <json-file>`: the tree printed as one JSON line, read back through the Queue; bad files and trees refused with exit 2. */
describe('emq flow', () => {
  const redis = useRedis();
  const env = { REDIS_URL: inject('redisUrl') };
  const dir = mkdtempSync(join(tmpdir(), 'emq-flow-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  // each command is a process of its own started through tsx (about a second on this machine)
  it('writes a tree from a file or stdin, prints it, and the same file again is duplicates', { timeout: 60_000 }, async () => {
    const [a, b] = [redis.queue(), redis.queue()];
    const tree = {
      queue: a.name,
      id: 'report-7',
      payload: { report: 7 },
      children: [
        { queue: b.name, payload: { page: 1 } },
        { queue: b.name, payload: { page: 2 }, delayMs: 60_000, onFailure: 'ignore' },
        { queue: a.name, payload: 'merge', children: [{ queue: b.name, payload: 'leaf', group: 'g' }] },
      ],
    };
    const path = file('report.json', JSON.stringify(tree, null, 2));
    const run = await emq(['flow', path], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n')).toHaveLength(2);
    const written = JSON.parse(run.stdout) as FlowNode;
    expect(written).toEqual({
      queue: a.name,
      id: 'JOB:report-7',
      state: 'waiting',
      children: [
        { queue: b.name, id: 'JOB:report-7.0', state: 'pending', children: [] },
        { queue: b.name, id: 'JOB:report-7.1', state: 'scheduled', children: [] },
        { queue: a.name, id: 'JOB:report-7.2', state: 'waiting', children: [{ queue: b.name, id: 'JOB:report-7.2.0', state: 'pending', children: [] }] },
      ],
    });
    for (const node of nodesOf(written)) {
      const queue = node.queue === a.name ? a : b;
      expect((await queue.getJob(node.id))?.state, node.id).toBe(node.state);
    }
    expect((await b.getJob('JOB:report-7.2.0'))?.group).toBe('g');
    for (const queue of [a, b]) expect(await checkInvariants(redis.raw, queue.name)).toEqual([]);

    // again: nothing written, every job a duplicate
    const again = await emq(['flow', path], env);
    expect(again.code, again.stderr).toBe(0);
    const duplicate = (node: FlowNode): FlowNode => ({ ...node, state: 'duplicate', children: node.children.map(duplicate) });
    expect(JSON.parse(again.stdout)).toEqual(duplicate(written));

    // from stdin
    const piped = await emq(['flow', '-'], env, { stdin: JSON.stringify({ queue: a.name, payload: 1, children: [{ queue: b.name, payload: 2 }] }) });
    expect(piped.code, piped.stderr).toBe(0);
    const fromStdin = JSON.parse(piped.stdout) as FlowNode;
    expect(fromStdin.id).toMatch(/^JOB:[0-9a-f]+$/);
    expect(fromStdin.children).toEqual([{ queue: b.name, id: `${fromStdin.id}.0`, state: 'pending', children: [] }]);
    expect((await b.getJob(`${fromStdin.id}.0`))?.payload).toBe(2);
  });

  it('refuses a file or a tree it cannot take with exit 2, one clear line, and writes nothing', { timeout: 120_000 }, async () => {
    const [a, b] = [redis.queue(), redis.queue()];
    let deep: Record<string, unknown> = { queue: b.name, payload: 0 };
    for (let i = 0; i < 32; i++) deep = { queue: a.name, payload: i, children: [deep] };
    const runs: Array<[string[], RegExp, string?]> = [
      [['flow'], /^emq flow: flow takes one JSON file \(- for stdin\)$/],
      [['flow', 'a.json', 'b.json'], /^emq flow: flow takes one JSON file/],
      [['flow', join(dir, 'missing.json')], /^emq flow: cannot read .*missing\.json: ENOENT/],
      [['flow', dir], /^emq flow: cannot read .*: EISDIR/],
      [['flow', file('broken.json', '{"queue": ')], /^emq flow: .*broken\.json is not JSON: /],
      [['flow', '-'], /^emq flow: stdin is not JSON: /, 'not json'],
      [['flow', file('number.json', '5')], /^emq flow: a flow job is an object/],
      [['flow', file('no-queue.json', JSON.stringify({ queue: a.name, payload: 1, children: [{ payload: 2 }] }))], /^emq flow: children\[0\]: queue name must be/],
      [['flow', file('bad-name.json', JSON.stringify({ queue: a.name, payload: 1, children: [{ queue: b.name, payload: 2, children: [{ queue: 'bad name', payload: 3 }] }] }))], /^emq flow: children\[0\]\.children\[0\]: queue name must be/],
      [['flow', file('root-policy.json', JSON.stringify({ queue: a.name, payload: 1, onFailure: 'ignore', children: [{ queue: b.name, payload: 2 }] }))], /^emq flow: onFailure is a child's/],
      [['flow', file('parent-delay.json', JSON.stringify({ queue: a.name, payload: 1, delayMs: 10, children: [{ queue: b.name, payload: 2 }] }))], /^emq flow: a parent runs when its children have finished/],
      [['flow', file('unknown.json', JSON.stringify({ queue: a.name, payload: 1, children: [{ queue: b.name, payload: 2, dedupe: { key: 'k' } }] }))], /^emq flow: children\[0\]: unknown field "dedupe"/],
      [['flow', file('deep.json', JSON.stringify(deep))], /^emq flow: (children\[0\]\.){31}children\[0\]: a flow is at most 32 levels deep$/],
      [['flow', '--wait', '5', 'x.json'], /^emq flow: unknown option --wait/],
    ];
    const before = await Promise.all([a, b].map((q) => queueState(redis.raw, q)));
    // two at a time: a process each, and the machine has two cores
    for (let i = 0; i < runs.length; i += 2) {
      await Promise.all(
        runs.slice(i, i + 2).map(async ([args, says, stdin]) => {
          const run = await emq(args, env, { stdin });
          const what = `${args.join(' ')}: ${run.stderr}`;
          expect(run.code, what).toBe(2);
          expect(run.stderr.trim().split('\n')[0], what).toMatch(says);
          expect(run.stderr).not.toMatch(/\n\s+at /);
          expect(run.stdout).toBe('');
        }),
      );
    }
    expect(await Promise.all([a, b].map((q) => queueState(redis.raw, q)))).toEqual(before);
    expect(await redis.raw.smismember('emq:queues', a.name, b.name)).toEqual([0, 0]);
  });

  it('is in emq --help', { timeout: 30_000 }, async () => {
    const help = await emq(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('emq flow <json-file>');
    expect(help.stdout).toMatch(/emq flow <json-file>\n\s+Writes a flow from the file \(- reads stdin\)/);
  });
});
