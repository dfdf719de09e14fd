import { scripts } from '../../src/generated/scripts.js';
import { Queue } from '../../src/queue.js';
import type { Reply, ScriptCall, Transport } from '../../src/transport.js';
import { ECHO_QUEUE_OPTIONS } from './impls.js';

/**
 * A Transport that sends nothing: it records every script call handed to it and answers each
 * with an error, so the Queue above it builds its requests exactly as it would for Redis and
 * then throws.
 */
class RecordingTransport implements Transport {
  readonly endpoint = 'nowhere (recording)';
  readonly calls: ScriptCall[] = [];

  evalsha(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.record(calls);
  }

  eval(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    return this.record(calls);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private async record(calls: readonly ScriptCall[]): Promise<Array<Reply | Error>> {
    this.calls.push(...calls);
    return calls.map(() => new Error('ERR recorded, not sent'));
  }
}

/**
 * The enqueue script call echomq's `queue.add(payload)` sends for each of `payloads`, in order,
 * from one Queue named `name` with the bench's options: the same KEYS and ARGV, byte for byte in
 * size and count, as the timed adds of a fresh Queue send (its own request key counts up the same
 * way). Nothing reaches Redis. The queue's registration, which rides with a Queue's first
 * successful enqueue only, is left out.
 *
 * @example
 * const calls = await enqueueCalls('bench-enq1-1a2b3c4d', [{ i: -1 }, { i: 0 }]);
 * // calls[1].keys, calls[1].args: what add({ i: 0 }) sends after the warm-up add
 */
export async function enqueueCalls(name: string, payloads: readonly unknown[]): Promise<ScriptCall[]> {
  const recorder = new RecordingTransport();
  const queue = new Queue(recorder, name, ECHO_QUEUE_OPTIONS);
  const out: ScriptCall[] = [];
  for (const payload of payloads) {
    const before = recorder.calls.length;
    // the recorder's error reply makes add throw once its request is built: expected here
    const error = await queue.add(payload).then(() => undefined, (e: unknown) => e);
    const enqueue = recorder.calls.slice(before).filter((c) => c.script.sha1 === scripts.enqueue.sha1);
    if (enqueue.length !== 1) throw error ?? new Error(`bench: add sent ${enqueue.length} enqueue calls, expected 1`);
    out.push(enqueue[0]!);
  }
  return out;
}
