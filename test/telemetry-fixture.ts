/**
 * OpenTelemetry for a suite: the SDK's BasicTracerProvider exporting to an InMemorySpanExporter,
 * registered globally with the AsyncLocalStorage context manager for the suite's life (and
 * unregistered after, so nothing leaks into another suite of the same worker), and readers for
 * the spans echomq made.
 *
 * @example
 * const tracing = useTracing();
 * const [send] = tracing.spans('send', queue.name);
 */
import { context, type SpanContext, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { formatTraceparent } from '../src/telemetry/trace-context.js';

/** SpanKind values. */
export const KIND = { CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
/** SpanStatusCode.ERROR. */
export const ERROR = 2;

export interface Tracing {
  /** A tracer of the test's own, for parent spans. */
  readonly tracer: ReturnType<typeof trace.getTracer>;
  /** Finished spans named `<operation> <queue>`, oldest first. */
  spans(operation: 'send' | 'receive' | 'process' | 'settle', queue: string): ReadableSpan[];
  /** Every finished span. */
  all(): ReadableSpan[];
}

export function useTracing(): Tracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  return {
    tracer: trace.getTracer('test'),
    spans: (operation, queue) => exporter.getFinishedSpans().filter((s) => s.name === `${operation} ${queue}`),
    all: () => exporter.getFinishedSpans(),
  };
}

/** The W3C traceparent of a span: what a job's row keeps of its enqueue. */
export const traceparentOf = (span: ReadableSpan): string => formatTraceparent(span.spanContext());

/** Whether `child`'s parent is `parent` (same trace, parent span id). */
export function isChildOf(child: ReadableSpan, parent: ReadableSpan | SpanContext): boolean {
  const p = 'spanContext' in parent && typeof parent.spanContext === 'function' ? parent.spanContext() : (parent as SpanContext);
  return child.parentSpanContext?.traceId === p.traceId && child.parentSpanContext?.spanId === p.spanId;
}

/** The span ids `span` links to, with each link's message id. */
export const linksOf = (span: ReadableSpan): Array<[string, unknown]> =>
  span.links.map((l) => [l.context.spanId, l.attributes?.['messaging.message.id']]);
