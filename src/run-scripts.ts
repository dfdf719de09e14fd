import { fromReplyError } from './errors.js';
import type { Reply, ScriptCall, Transport } from './transport.js';

const isNoScript = (value: Reply | Error): value is Error =>
  value instanceof Error && value.message.startsWith('NOSCRIPT');

/**
 * Runs the calls in one round trip by EVALSHA; the ones Redis no longer has cached (NOSCRIPT,
 * after a restart or SCRIPT FLUSH) run again by EVAL in a second round trip. Resolves to each
 * call's reply; rejects with the typed error of the first call that failed.
 */
export async function runScripts(transport: Transport, calls: readonly ScriptCall[]): Promise<Reply[]> {
  if (calls.length === 0) return [];
  const results = await transport.evalsha(calls);
  const missing = results.flatMap((result, index) => (isNoScript(result) ? [index] : []));
  if (missing.length > 0) {
    const retried = await transport.eval(missing.map((index) => calls[index]!));
    missing.forEach((index, i) => {
      results[index] = retried[i]!;
    });
  }
  return results.map((result, index) => {
    if (result instanceof Error) throw fromReplyError(result, { script: calls[index]!.script.name });
    return result;
  });
}

/** Runs one call: see runScripts. */
export async function runScript(transport: Transport, call: ScriptCall): Promise<Reply> {
  const [reply] = await runScripts(transport, [call]);
  return reply!;
}
