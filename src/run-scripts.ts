import { fromReplyError } from './errors.js';
import type { Reply, ScriptCall, Transport } from './transport.js';

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
 * that failed.
 */
export async function runScripts(transport: Transport, calls: readonly ScriptCall[]): Promise<Reply[]> {
  if (calls.length === 0) return [];
  let seen = loaded.get(transport);
  if (!seen) loaded.set(transport, (seen = new Set()));
  const known = seen;
  const bySha = calls.length === 1 || calls.every((c) => known.has(c.script.sha1));
  const results = bySha ? await transport.evalsha(calls) : await transport.eval(calls);
  const missing = results.flatMap((result, index) => (isNoScript(result) ? [index] : []));
  if (missing.length > 0) {
    const retried = await transport.eval(missing.map((index) => calls[index]!));
    missing.forEach((index, i) => {
      results[index] = retried[i]!;
    });
  }
  return results.map((result, index) => {
    const call = calls[index]!;
    if (result instanceof Error) {
      if (isNoScript(result)) known.delete(call.script.sha1);
      throw fromReplyError(result, { script: call.script.name });
    }
    known.add(call.script.sha1);
    return result;
  });
}

/** Runs one call: see runScripts. */
export async function runScript(transport: Transport, call: ScriptCall): Promise<Reply> {
  const [reply] = await runScripts(transport, [call]);
  return reply!;
}
