import type { TraceContext } from './trace-context.js';

/**
 * The little of `@opentelemetry/api` (1.x) echomq uses, typed here so the package's own types
 * never name a module its user may not have installed. The real module fits it (checked where
 * it is imported, below).
 */
export interface OpenTelemetryApi {
  readonly trace: {
    getTracer(name: string, version?: string): OtelTracer;
    getSpanContext(context: OtelContext): TraceContext | undefined;
    setSpanContext(context: OtelContext, spanContext: TraceContext): OtelContext;
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
  };
  readonly context: {
    active(): OtelContext;
    with<T>(context: OtelContext, fn: () => T): T;
  };
}

/** An OpenTelemetry Context: opaque here, only handed back to the API. */
export interface OtelContext {
  getValue(key: symbol): unknown;
}

/** An attribute value as OpenTelemetry takes it. */
export type OtelAttributes = Record<string, string | number | boolean | undefined>;

/** The span options echomq sets. */
export interface OtelSpanOptions {
  /** SpanKind: 2 CLIENT, 3 PRODUCER, 4 CONSUMER (the API's enum values, fixed by the spec). */
  readonly kind?: number;
  readonly links?: Array<{ context: TraceContext; attributes?: OtelAttributes }>;
  /** Epoch ms. */
  readonly startTime?: number;
}

/** The span methods echomq calls. */
export interface OtelSpan {
  spanContext(): TraceContext;
  isRecording(): boolean;
  setAttribute(key: string, value: string | number | boolean): unknown;
  setAttributes(attributes: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: { name: string; message: string; stack?: string } | string): void;
  end(endTime?: number): void;
}

/** A tracer: what starts spans. */
export interface OtelTracer {
  startSpan(name: string, options?: OtelSpanOptions, context?: OtelContext): OtelSpan;
}

/** The API and echomq's tracer from it, once found. */
export interface Otel {
  readonly api: OpenTelemetryApi;
  readonly tracer: OtelTracer;
}

/** undefined: not looked for yet (or still looking); null: not installed. */
let found: Otel | null | undefined;
let finding: Promise<void> | undefined;

/**
 * Looks for `@opentelemetry/api` once per process (a dynamic import, so the package loads and runs
 * without it); returns the search while it is under way, undefined once it is over, so a caller
 * on a hot path pays a comparison after the first call. A bundler (wrangler's esbuild) bundles the
 * API when it is installed and leaves a failing import when it is not: the `.then(found, missing)`
 * is what tells it to.
 *
 * @example
 * const looking = findOpenTelemetry();
 * if (looking) await looking;
 * const otel = openTelemetry();
 */
export function findOpenTelemetry(): Promise<void> | undefined {
  if (found !== undefined) return undefined;
  return (finding ??= import('@opentelemetry/api').then(
    (api: OpenTelemetryApi) => {
      found = { api, tracer: api.trace.getTracer('echomq') };
    },
    () => {
      found = null;
    },
  ));
}

/**
 * The API and echomq's tracer, or undefined when `@opentelemetry/api` is not installed (or not
 * found yet: see findOpenTelemetry). With the API but no tracer provider registered, spans are
 * the API's no-op spans and nothing is recorded.
 */
export function openTelemetry(): Otel | undefined {
  return found ?? undefined;
}
