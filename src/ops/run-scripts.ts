import { fromReplyError } from '../errors.js';
import type { Replication, Reply, ScriptCall, Transport } from '../transport.js';

const isNoScript = (value: Reply | Error): value is Error =>
  value instanceof Error && value.message.startsWith('NOSCRIPT');

/** The scripts each transport has seen Redis run: those go by EVALSHA, sha1 only. */
const loaded = new WeakMap<Transport, Set<string>>();

/**
 * Runs the calls in one round trip and in order. A batch whose scripts this transport has not yet
 * seen run goes by EVAL (the source loads them), so its calls never run out of order; after that
 * they go by EVALSHA. A call Redis answers NOSCRIPT (a restart or SCRIPT FLUSH since) runs again
 * by EVAL in a second round trip: the one case where a later call of the batch may already have
 * run before it. Resolves to each call's reply; rejects with the typed error of the first call
 * that failed. `onRequest` is called once per round trip sent (a NOSCRIPT retry is a second one),
 * for callers that count what they spend (the edge beat's request budget). With `replication`
 * each round trip waits for the replicas too (`durability: 'replicated'`), rejecting with
 * ReplicationError when too few acknowledged in time.
 */
export async function runScripts(
  transport: Transport,
  calls: readonly ScriptCall[],
  onRequest?: () => void,
  replication?: Replication,
): Promise<Reply[]> {
  if (calls.length === 0) return [];
  let known = loaded.get(transport);
  if (!known) loaded.set(transport, (known = new Set()));
  const bySha = calls.length === 1 || allKnown(known, calls);
  onRequest?.();
  const results = bySha ? await transport.evalsha(calls, replication) : await transport.eval(calls, replication);
  return finishCalls(transport, calls, results, onRequest, replication);
}

/**
 * The second half of runScripts, for replies to `calls` that came back by some other request (a
 * call that rode in another's: RidingTransport): a call Redis answered NOSCRIPT runs again by
 * EVAL in a round trip of its own, and the first call that failed rejects with its typed error.
 */
export async function finishCalls(
  transport: Transport,
  calls: readonly ScriptCall[],
  results: Array<Reply | Error>,
  onRequest?: () => void,
  replication?: Replication,
): Promise<Reply[]> {
  let known = loaded.get(transport);
  if (!known) loaded.set(transport, (known = new Set()));
  // plain loops, no intermediate arrays: this is every request's path (enqueue one at a time)
  let missing: number[] | undefined;
  for (let i = 0; i < results.length; i++) if (isNoScript(results[i]!)) (missing ??= []).push(i);
  if (missing) {
    onRequest?.();
    const retried = await transport.eval(
      missing.map((index) => calls[index]!),
      replication,
    );
    missing.forEach((index, i) => {
      results[index] = retried[i]!;
    });
  }
  for (let i = 0; i < calls.length; i++) {
    const result = results[i]!;
    const call = calls[i]!;
    if (result instanceof Error) {
      if (isNoScript(result)) known.delete(call.script.sha1);
      throw fromReplyError(result, { script: call.script.name });
    }
    known.add(call.script.sha1);
  }
  return results as Reply[];
}

function allKnown(known: ReadonlySet<string>, calls: readonly ScriptCall[]): boolean {
  for (const call of calls) if (!known.has(call.script.sha1)) return false;
  return true;
}

/** Runs one call: see runScripts. */
export async function runScript(transport: Transport, call: ScriptCall): Promise<Reply> {
  const [reply] = await runScripts(transport, [call]);
  return reply!;
}
