import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scripts } from '../../src/generated/scripts.js';
import { generatedPath, renderScripts } from '../../tools/build-lua.js';
import { scriptsOf, useRedis } from '../helpers.js';
import { usePrivateRedis } from '../private-redis.js';
import { claimOp } from '../../src/ops/claim.js';
import { countsOp } from '../../src/ops/counts.js';

const luaDir = join(import.meta.dirname, '..', '..', 'lua');

describe('the generated scripts module', () => {
  const redis = useRedis();

  it('is up to date with lua/ (run npm run build:lua)', () => {
    expect(readFileSync(generatedPath, 'utf8')).toBe(renderScripts());
  });

  it('has one entry per script file', () => {
    const files = readdirSync(luaDir).filter((f) => f.endsWith('.lua'));
    expect(Object.keys(scripts)).toHaveLength(files.length);
  });

  it.each(Object.values(scripts))('$name opens with a header naming KEYS, ARGV and its reply', (script) => {
    const header = /^--\[\[([\s\S]*?)\]\]/.exec(script.lua)?.[1] ?? '';
    expect(header).toMatch(new RegExp(`^\\s*${script.name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}:`));
    expect(header).toMatch(/\bKEYS\b/);
    expect(header).toMatch(/\bARGV\b/);
    expect(header).toMatch(/\bReply\b/);
  });

  it('has no include line left and every include helper written once', () => {
    for (const script of Object.values(scripts)) {
      expect(script.lua).not.toMatch(/@include/);
      const names = [...script.lua.matchAll(/^local function (\w+)/gm)].map((m) => m[1]);
      expect(new Set(names).size).toBe(names.length);
    }
  });

  it('carries the sha1 Redis computes for the source', async () => {
    for (const script of Object.values(scripts)) {
      expect(await redis.raw.script('LOAD', script.lua)).toBe(script.sha1);
    }
  });
});

describe('the script gateway on a Redis that forgot its scripts', () => {
  // SCRIPT FLUSH forgets every script of the server: a Redis of this suite's own, not the run's
  const redis = usePrivateRedis();

  it('falls back to EVAL when Redis has forgotten the scripts', async () => {
    const queue = redis.queue();
    await redis.raw.script('FLUSH');
    expect(await redis.raw.script('EXISTS', scripts.enqueue.sha1)).toEqual([0]);
    await queue.add({ ok: true });
    // the EVAL fallback leaves the script cached, so the next call goes by EVALSHA again
    expect(await redis.raw.script('EXISTS', scripts.enqueue.sha1)).toEqual([1]);
    await redis.raw.script('FLUSH');
    const gateway = scriptsOf(queue);
    const [stats, claimed] = await gateway.runOps([countsOp(), claimOp(1, 1000)] as const);
    expect(stats.pending).toBe(1);
    expect(claimed.jobs).toHaveLength(1);
  });
});
