/**
 * What Vercel's runtime tells a function about the request it serves: the part the adapter reads.
 * @vercel/functions reads the same object (`getContext()`); the adapter reads it itself, so the
 * package stays optional and the adapter bundles for the Edge runtime without it.
 */
export interface VercelRequestContext {
  /** Keeps the function alive after its response until `promise` settles (`waitUntil` of @vercel/functions). */
  readonly waitUntil?: (promise: Promise<unknown>) => void;
  /** When the platform ends the invocation (what `getDeadline()` of @vercel/functions reads), where it says. */
  readonly deadline?: string | number;
}

/** Where Vercel's runtimes keep the request context (`SYMBOL_FOR_REQ_CONTEXT` in @vercel/functions' get-context.js). */
const REQUEST_CONTEXT = Symbol.for('@vercel/request-context');

/**
 * The context of the request being served, or undefined off Vercel (local dev, tests, another
 * host): `globalThis[Symbol.for('@vercel/request-context')].get()`. Read it at the start of a
 * request, before its first await: a runtime without async context tells which request it is only
 * while that request's handler runs synchronously.
 *
 * @example
 * const keepAlive = vercelRequestContext()?.waitUntil; // undefined outside Vercel
 */
export function vercelRequestContext(): VercelRequestContext | undefined {
  const holder = (globalThis as { [REQUEST_CONTEXT]?: { get?: () => unknown } })[REQUEST_CONTEXT];
  const context = typeof holder?.get === 'function' ? holder.get() : undefined;
  return typeof context === 'object' && context !== null ? (context as VercelRequestContext) : undefined;
}

/**
 * The ms left until the context's deadline, or undefined when it gives none (or none that parses).
 *
 * @example
 * const left = msToDeadline(vercelRequestContext()) ?? Infinity;
 */
export function msToDeadline(context: VercelRequestContext | undefined): number | undefined {
  if (context?.deadline === undefined) return undefined;
  const at = new Date(context.deadline).getTime();
  return Number.isNaN(at) ? undefined : at - Date.now();
}
