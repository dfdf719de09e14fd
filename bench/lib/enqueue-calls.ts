import { scripts } from '../../src/generated/scripts.js';
import { Queue, registeredAlready } from '../../src/queue/queue.js';
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
 * way). Nothing reaches Redis. The queue's registration, a round trip of its own before a Queue's
 * first enqueue (the timed adds come after the warm-up's), is left out: the recording Queue is
 * told it is registered, as openQueue tells a Queue whose registration it read. Throws if an add
 * sends anything but its one enqueue call, so the floor never times calls echomq does not make.
 *
 * @example
 * const calls = await enqueueCalls('bench-enq1-1a2b3c4d', [{ i: -1 }, { i: 0 }]);
 * // calls[1].keys, calls[1].args: what add({ i: 0 }) sends after the warm-up add
 */
export async function enqueueCalls(name: string, payloads: readonly unknown[]): Promise<ScriptCall[]> {
  const recorder = new RecordingTransport();
  const queue = new Queue(recorder, name, ECHO_QUEUE_OPTIONS);
  registeredAlready(queue);
  const out: ScriptCall[] = [];
  for (const payload of payloads) {
    const before = recorder.calls.length;
    // the recorder's error reply makes add throw once its request is built: expected here
    const error = await queue.add(payload).then(() => undefined, (e: unknown) => e);
    const sent = recorder.calls.slice(before);
    if (sent.length !== 1 || sent[0]!.script.sha1 !== scripts.enqueue.sha1) {
      const names = sent.map((c) => c.script.name).join(', ') || 'nothing';
      throw new Error(`bench: add(${JSON.stringify(payload)}) sent ${names}, expected one ${scripts.enqueue.name} call`, { cause: error });
    }
    out.push(sent[0]!);
  }
  return out;
}
