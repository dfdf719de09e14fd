import { keyspace, type Keyspace } from '../keyspace.js';
import type { ScriptOp } from './op.js';
import { finishCalls, runScripts } from './run-scripts.js';
import type { BlockingTransport, Replication, Reply, ScriptCall, StreamEntry, Transport } from '../transport.js';

/** An op made ready for one queue: its script call, and how to read the reply. */
export interface BoundOp<T> {
  readonly call: ScriptCall;
  readonly read: (reply: Reply) => T;
}

/** The replies of several ops: a tuple of each op's read type. */
export type OpResults<T extends readonly { read: (reply: Reply) => unknown }[]> = {
  [K in keyof T]: T[K] extends { read: (reply: Reply) => infer R } ? R : never;
};

/**
 * `op`'s call on the queue of `keys`: the queue's fixed keys, and its prefix before the op's
 * arguments; an op with keys of its own (the registry's) takes those and its arguments alone.
 */
export function bind<T>(op: ScriptOp<T>, keys?: Keyspace): BoundOp<T> {
  if (op.keys) return { call: { script: op.script, keys: op.keys, args: op.args }, read: op.read };
  if (!keys) throw new Error(`${op.script.name} is a queue's script: bind it to a queue`);
  return { call: { script: op.script, keys: keys.fixed, args: [keys.prefix, ...op.args] }, read: op.read };
}

/**
 * Runs bound ops (of any queues) in one round trip, in order, and reads each reply; an error
 * reply rejects with its typed error (src/errors.ts, through runScripts). `onRequest` counts the
 * round trips, `replication` waits for replicas (see runScripts).
 */
export async function runOps<T extends readonly BoundOp<unknown>[]>(
  transport: Transport,
  ops: T,
  onRequest?: () => void,
  replication?: Replication,
): Promise<OpResults<T>> {
  const replies = await runScripts(transport, ops.map((o) => o.call), onRequest, replication);
  return ops.map((o, i) => o.read(replies[i]!)) as OpResults<T>;
}

/** Runs script calls prepared already (Leases' rounds) in one round trip: their raw replies, as runScripts answers. */
export function runCalls(transport: Transport, calls: readonly ScriptCall[], onRequest?: () => void, replication?: Replication): Promise<Reply[]> {
  return runScripts(transport, calls, onRequest, replication);
}

/**
 * The replies of script calls prepared already that went in another party's request (they rode
 * in it: RidingTransport), finished as runScripts finishes its own (finishCalls: a NOSCRIPT runs
 * again by EVAL, the first failure rejects typed).
 */
export function finishRiddenCalls(
  transport: Transport,
  calls: readonly ScriptCall[],
  replies: Array<Reply | Error>,
  onRequest?: () => void,
  replication?: Replication,
): Promise<Reply[]> {
  return finishCalls(transport, calls, replies, onRequest, replication);
}

/**
 * The one gateway to Redis for one queue: runs the ops of src/ops/ on it, one or several in one
 * round trip, and reads their replies into typed values. Nothing else calls the transport.
 */
export class Scripts {
  readonly keys: Keyspace;

  /** `onRequest` is told of every round trip sent (Leases counts them: what an edge beat spends). */
  constructor(
    readonly transport: Transport,
    queue: string,
    private readonly onRequest?: () => void,
  ) {
    this.keys = keyspace(queue);
  }

  /** `op`'s call on this queue, to share a round trip with other queues' (runOps). */
  bind<T>(op: ScriptOp<T>): BoundOp<T> {
    return bind(op, this.keys);
  }

  /** Runs one op; with `replication`, waits for replicas too (runScripts). */
  async run<T>(op: ScriptOp<T>, replication?: Replication): Promise<T> {
    const [result] = await runOps(this.transport, [this.bind(op)] as const, this.onRequest, replication);
    return result;
  }

  /** Runs several ops in one round trip, in order; with `replication`, waits for replicas too (runScripts). */
  runOps<T extends readonly ScriptOp<unknown>[]>(ops: T, replication?: Replication): Promise<OpResults<T>> {
    return runOps(this.transport, ops.map((op) => this.bind(op)), this.onRequest, replication) as Promise<OpResults<T>>;
  }

  /** Whether the transport can park on the events stream (XREAD BLOCK): Node's can, an edge runtime's cannot. */
  get canBlockOnEvents(): boolean {
    return typeof (this.transport as Partial<BlockingTransport>).xread === 'function';
  }

  /**
   * Entries after `after`, at most `count`, parked up to `blockMs` for the first (XREAD BLOCK on a
   * connection of the stream's own); [] at the timeout or when `signal` aborts. Only when
   * `canBlockOnEvents`.
   */
  readEventsBlocking(after: string, count: number, blockMs: number, signal?: AbortSignal): Promise<StreamEntry[]> {
    const { xread } = this.transport as Partial<BlockingTransport>;
    if (!xread) throw new Error('this transport cannot block on a stream (no xread)');
    return xread.call(this.transport, this.keys.key('events'), after, count, blockMs, signal);
  }
}
