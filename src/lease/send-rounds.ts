import { relayOrLeave } from '../flows/flow-relay.js';
import { findOpenTelemetry } from '../telemetry/opentelemetry.js';
import { finishRiddenCalls, runCalls } from '../ops/scripts.js';
import type { Replication, Reply, Transport } from '../transport.js';
import type { PreparedRound, RoundResult } from './rounds.js';

/**
 * Sends several queues' rounds in one round trip (they share one transport): an edge event
 * serving many queues spends one request on them all. Each result answers its round, in order.
 *
 * @example
 * const [mail, thumbs] = await sendRounds(transport, [mailLeases.prepare(r), thumbLeases.prepare(r)]);
 */
export async function sendRounds<T extends readonly PreparedRound<unknown>[]>(
  transport: Transport,
  rounds: T,
  onRequest?: () => void,
): Promise<{ [K in keyof T]: T[K] extends PreparedRound<infer P> ? RoundResult<P> : never }> {
  const looking = findOpenTelemetry();
  if (looking) await looking;
  const calls = rounds.flatMap((r) => r.calls);
  // one WAIT covers the round trip: the longest timeout any round that settles asked for
  let replication: Replication | undefined;
  for (const r of rounds) if (r.replication && (!replication || r.replication.timeoutMs > replication.timeoutMs)) replication = r.replication;
  const replies = await runCalls(transport, calls, onRequest, replication);
  let next = 0;
  const results = rounds.map((r) => r.read(replies.slice(next, (next += r.calls.length))));
  // flow news relayed as Leases.round relays it: a failed relay leaves it for a later beat
  await Promise.all(results.map((result, i) => relayOrLeave(transport, rounds[i]!.queue, result.outbox, onRequest, rounds[i]!.onRelease)));
  return results as {
    [K in keyof T]: T[K] extends PreparedRound<infer P> ? RoundResult<P> : never;
  };
}

/**
 * Reads a round whose calls went in another party's request (they rode in it: the Worker's first
 * beat in an enqueue's request, src/serverless/riding-transport.ts) as sendRounds reads its own: a call
 * Redis answered NOSCRIPT runs again (a request of its own, told to `onRequest`), flow news is
 * relayed. `replies` are the replies to `round.calls`, in order.
 */
export async function readRiddenRound<P>(
  transport: Transport,
  round: PreparedRound<P>,
  replies: Array<Reply | Error>,
  onRequest?: () => void,
): Promise<RoundResult<P>> {
  const result = round.read(await finishRiddenCalls(transport, round.calls, replies, onRequest, round.replication));
  await relayOrLeave(transport, round.queue, result.outbox, onRequest, round.onRelease);
  return result;
}
