import { Cluster, type Redis } from 'ioredis';
import { RedisError, replicationShortfall } from '../errors.js';
import type { Replication, Reply, ScriptCall } from '../transport.js';
import { isRedirect, refreshSlots, runsByMaster, type Run } from './cluster-runs.js';
import type { ConnectionWatch } from './connection-watch.js';
import { asError, asReply, settle } from './ioredis-reply.js';

type Replies = Array<Reply | Error>;

/** A call's command and its first argument: EVALSHA and the sha1, or EVAL and the source. */
export type Head = (call: ScriptCall) => [string, string];

/** EVALSHA by the script's sha1. */
export const BY_SHA: Head = (call) => ['evalsha', call.script.sha1];
/** EVAL with the script's source. */
export const BY_SOURCE: Head = (call) => ['eval', call.script.lua];

/** What a run sent with a WAIT behind it answered: the calls' replies, and how many replicas acknowledged (WAIT's error when it was refused). */
interface Waited {
  readonly replies: Replies;
  readonly acknowledged: number | Error;
}

/**
 * The script calls of IoredisTransport's round trips, over its client: one pipeline (a plain
 * command for one call), or on a cluster one pipeline per run of a master's calls, one after
 * another (cluster-runs.ts). A call Redis refused is that call's Error; a connection failure
 * (lost with the request out) rejects the whole request with ConnectionError; with
 * `replication`, too few replicas behind any run rejects it with ReplicationError once every run
 * has been sent.
 */
export class ScriptSender {
  /** On a cluster: the scripts (sha1) each master (`host:port`) is known to hold. */
  private readonly loadedOn = new Map<string, Set<string>>();

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly watch: ConnectionWatch,
  ) {}

  /** Sends once the connection is ready (at once, with no promise in between, when it is). */
  send(calls: readonly ScriptCall[], head: Head, replication: Replication | undefined): Promise<Replies> {
    const waiting = this.watch.ready();
    if (waiting) return waiting.then(() => this.sendNow(calls, head, replication));
    return this.sendNow(calls, head, replication);
  }

  private async sendNow(calls: readonly ScriptCall[], head: Head, replication: Replication | undefined): Promise<Replies> {
    if (replication) return this.sendReplicated(calls, head, replication);
    if (this.redis instanceof Cluster) {
      const replies: Replies = [];
      for (const run of runsByMaster(this.redis, calls, firstKey)) replies.push(...(await this.sendRunOn(run, calls, head)));
      return replies;
    }
    return this.sendRun(calls, head);
  }

  /**
   * `durability: 'replicated'`: each run of calls one master serves is one pipeline with
   * `WAIT replicas timeoutMs` behind the calls (WAIT has no key: it goes where the pipeline goes,
   * and counts what this connection wrote there). ioredis follows MOVED in a pipeline only when
   * every other reply in it is an error too, which a WAIT's reply is not; so calls answered MOVED
   * or ASK (a failover, a slot migrating) are sent again here, on a fresh map of slots, at most
   * twice. Fewer replicas than asked behind any run that wrote: ReplicationError, the fewest named.
   */
  private async sendReplicated(calls: readonly ScriptCall[], head: Head, replication: Replication): Promise<Replies> {
    const settled: Replies = new Array<Reply | Error>(calls.length);
    let pending = calls.map((_, i) => i);
    let fewest = Infinity;
    for (let hop = 0; ; hop++) {
      const runs = this.redis instanceof Cluster ? runsByMaster(this.redis, calls, firstKey, pending) : [{ master: undefined, indices: pending }];
      for (const run of runs) {
        const { replies, acknowledged } = await this.sendRunOn(run, calls, head, replication);
        let wrote = false;
        run.indices.forEach((index, i) => {
          const reply = replies[i]!;
          settled[index] = reply;
          // a NOSCRIPT ran nothing either: runScripts sends it again by EVAL, with its own WAIT
          if (!isRedirect(reply) && !(reply instanceof Error && reply.message.startsWith('NOSCRIPT'))) wrote = true;
        });
        if (!wrote) continue; // sent nowhere (a replica, or a master no longer serving it, redirected every call)
        // a Redis that refuses WAIT (a managed service may) cannot give what was asked
        if (acknowledged instanceof Error) throw new RedisError(`Redis at ${this.watch.url} did not run WAIT (durability 'replicated'): ${acknowledged.message}`);
        fewest = Math.min(fewest, acknowledged);
      }
      pending = pending.filter((i) => isRedirect(settled[i]!));
      if (pending.length === 0 || hop === 2 || !(this.redis instanceof Cluster)) break;
      await refreshSlots(this.redis);
    }
    if (fewest < replication.replicas) throw replicationShortfall(this.watch.url, fewest, replication.replicas, replication.timeoutMs);
    return settled;
  }

  /**
   * A run of `calls` one master serves, by EVALSHA only for the scripts that master is known to
   * hold: on a cluster each node caches scripts of its own (a promoted replica or a restarted node
   * none), so a script first goes to each master by EVAL, which loads it there, and a NOSCRIPT
   * forgets it again. So runScripts's NOSCRIPT retry, a second round trip, is left for what nobody
   * could know (a SCRIPT FLUSH).
   */
  private async sendRunOn(run: Run, calls: readonly ScriptCall[], head: Head): Promise<Replies>;
  private async sendRunOn(run: Run, calls: readonly ScriptCall[], head: Head, replication: Replication): Promise<Waited>;
  private async sendRunOn(run: Run, calls: readonly ScriptCall[], head: Head, replication?: Replication): Promise<Replies | Waited> {
    const some = run.indices.map((i) => calls[i]!);
    const loaded = run.master === undefined ? undefined : (this.loadedOn.get(run.master) ?? this.loadedOn.set(run.master, new Set()).get(run.master)!);
    const headOn: Head = (call) => {
      const sent = head(call);
      return sent[0] === 'evalsha' && loaded && !loaded.has(call.script.sha1) ? ['eval', call.script.lua] : sent;
    };
    const answered = replication ? await this.sendRun(some, headOn, replication) : await this.sendRun(some, headOn);
    if (loaded) {
      const replies = Array.isArray(answered) ? answered : answered.replies;
      replies.forEach((reply, i) => {
        const sha = some[i]!.script.sha1;
        if (reply instanceof Error && reply.message.startsWith('NOSCRIPT')) loaded.delete(sha);
        else if (!isRedirect(reply)) loaded.add(sha);
      });
    }
    return answered;
  }

  /** One pipeline (a plain command for one call): on a cluster, calls that one master serves. */
  private async sendRun(calls: readonly ScriptCall[], head: Head): Promise<Replies>;
  /** The same with a WAIT behind the calls. */
  private async sendRun(calls: readonly ScriptCall[], head: Head, replication: Replication): Promise<Waited>;
  private async sendRun(calls: readonly ScriptCall[], head: Head, replication?: Replication): Promise<Replies | Waited> {
    if (calls.length === 1 && !replication) {
      const call = calls[0]!;
      const [command, first] = head(call);
      try {
        return [asReply(await this.redis.call(command, argv(first, call)))];
      } catch (error) {
        const failed = this.watch.failure(error);
        if (failed !== error) throw failed;
        return [asError(error)];
      }
    }
    const pipeline = this.redis.pipeline();
    for (const call of calls) {
      const [command, first] = head(call);
      pipeline.call(command, argv(first, call));
    }
    if (replication) pipeline.call('wait', replication.replicas, replication.timeoutMs);
    let results: Array<[Error | null, unknown]> | null;
    try {
      results = await pipeline.exec();
    } catch (error) {
      throw this.watch.failure(error);
    }
    const replies = settle(results);
    for (const reply of replies) {
      if (reply instanceof Error) {
        const failed = this.watch.failure(reply);
        if (failed !== reply) throw failed;
      }
    }
    if (!replication) return replies;
    const waited = replies.pop();
    return { replies, acknowledged: typeof waited === 'number' ? waited : asError(waited instanceof Error ? waited : `WAIT answered ${String(waited)}`) };
  }
}

const firstKey = (call: ScriptCall): string | undefined => call.keys[0];

/** EVAL/EVALSHA's arguments after the command: the script (or its sha1), numkeys, keys, args. */
export function argv(first: string, call: ScriptCall): Array<string | number> {
  const out: Array<string | number> = [first, call.keys.length];
  for (const key of call.keys) out.push(key);
  for (const arg of call.args) out.push(arg);
  return out;
}
