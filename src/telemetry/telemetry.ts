import type { Job } from '../job.js';
import { findOpenTelemetry, type Otel, type OtelAttributes, type OtelContext, type OtelSpan, openTelemetry } from './opentelemetry.js';
import { formatTraceparent, isValidTraceContext, parseTraceparent, type TraceContext } from './trace-context.js';

/**
 * echomq's spans, after the OpenTelemetry messaging semantic conventions: `send <queue>` around an
 * enqueue (PRODUCER; its context is stored on each job's row as a W3C traceparent), `receive
 * <queue>` for a claim that handed out jobs (CLIENT, linked to each job's enqueue), `process
 * <queue>` around each handler run (CONSUMER, a child of the job's enqueue; a BatchConsumer's batch
 * is one, linked to each job's), and `settle <queue>` for each recorded outcome (CLIENT, a child
 * of the process span). Every function here does nothing when `@opentelemetry/api` is absent, and
 * records nothing without a registered tracer provider. README, "Telemetry"; docs/design.md.
 */

const SYSTEM = 'echomq';
// SpanKind and SpanStatusCode values, fixed by the OpenTelemetry spec
const CLIENT = 2;
const PRODUCER = 3;
const CONSUMER = 4;
const STATUS_ERROR = 2;

/** A finished job as settled: its job is a Job at run time, whose trace context may be on it. */
type TracedFinish = { readonly job: { readonly id: string; readonly traceparent?: string | undefined } };

/** The span each job ran under (its process span, or its batch's), for its settle span's parent. */
const processSpans = new WeakMap<object, TraceContext>();

/** The attributes every span of `queue` carries. */
function common(queue: string, operation: 'send' | 'receive' | 'process' | 'settle'): OtelAttributes {
  return {
    'messaging.system': SYSTEM,
    'messaging.destination.name': queue,
    'messaging.operation.type': operation,
    'messaging.operation.name': operation,
  };
}

/** `base` with `span` as its span, or `base` when there is none to set. */
function withSpan(otel: Otel, base: OtelContext, span: TraceContext | undefined): OtelContext {
  return span ? otel.api.trace.setSpanContext(base, span) : base;
}

/**
 * Marks a span failed: the error recorded as an exception event, status ERROR, `error.type` (its
 * class name; `_OTHER` for a thrown value that is not an Error, as the conventions say).
 */
function fail(span: OtelSpan, error: unknown): void {
  if (!span.isRecording()) return;
  const e = error instanceof Error ? error : undefined;
  const message = e ? e.message : typeof error === 'string' ? error : String(error);
  span.recordException(e ? { name: e.name, message: e.message, ...(e.stack === undefined ? {} : { stack: e.stack }) } : message);
  span.setStatus({ code: STATUS_ERROR, message: message.split('\n')[0]! });
  span.setAttribute('error.type', e ? e.name : '_OTHER');
}

/**
 * Runs an enqueue (`send`, given the traceparent to store on each row, "" for none) inside a
 * `send <queue>` span. The span's parent is the active span, else the caller's `traceparent` (an
 * HTTP request's header). What is stored: the span's context when valid (a tracer provider is
 * registered, or a trace is being continued); without the API, the caller's traceparent when it is
 * valid; else nothing. The first call waits for the search for the API (once per process); after
 * it, without the API, `send` is called at once and its promise returned as it is.
 */
export function traceSend<T extends ReadonlyArray<{ readonly id: string; readonly state: string }>>(
  queue: string,
  count: number,
  traceparent: string | undefined,
  send: (traceparent: string) => Promise<T>,
): Promise<T> {
  const looking = findOpenTelemetry();
  if (looking) return looking.then(() => traceSend(queue, count, traceparent, send));
  const otel = openTelemetry();
  if (!otel) {
    const given = parseTraceparent(traceparent);
    return send(given ? formatTraceparent(given) : '');
  }
  return sendInSpan(otel, queue, count, traceparent, send);
}

async function sendInSpan<T extends ReadonlyArray<{ readonly id: string; readonly state: string }>>(
  otel: Otel,
  queue: string,
  count: number,
  traceparent: string | undefined,
  send: (traceparent: string) => Promise<T>,
): Promise<T> {
  const active = otel.api.context.active();
  const current = otel.api.trace.getSpanContext(active);
  const parent = current && isValidTraceContext(current) ? active : withSpan(otel, active, parseTraceparent(traceparent));
  const span = otel.tracer.startSpan(`send ${queue}`, { kind: PRODUCER }, parent);
  const recording = span.isRecording();
  const context = span.spanContext();
  const stored = isValidTraceContext(context) ? formatTraceparent(context) : '';
  // the API without a tracer provider, and no trace to continue: nothing to record or carry
  if (!recording && stored === '') return send('');
  if (recording) {
    span.setAttributes(common(queue, 'send'));
    if (count !== 1) span.setAttribute('messaging.batch.message_count', count);
  }
  try {
    const results = await otel.api.context.with(otel.api.trace.setSpan(parent, span), () => send(stored));
    if (recording && results.length === 1) {
      span.setAttributes({ 'messaging.message.id': results[0]!.id, 'echomq.job.state': results[0]!.state });
    }
    return results;
  } catch (error) {
    fail(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * A `receive <queue>` span for a claim that handed out `jobs`, from `startTime` (when its request
 * went out) to now, linked to each job's enqueue. Nothing for a claim that handed out none.
 */
export function traceReceive(queue: string, startTime: number, jobs: ReadonlyArray<Job<unknown>>): void {
  const otel = openTelemetry();
  if (!otel || jobs.length === 0) return;
  const links: Array<{ context: TraceContext; attributes: OtelAttributes }> = [];
  for (const job of jobs) {
    const context = parseTraceparent(job.traceparent);
    if (context) links.push({ context, attributes: { 'messaging.message.id': job.id } });
  }
  const span = otel.tracer.startSpan(`receive ${queue}`, { kind: CLIENT, links, startTime }, otel.api.context.active());
  if (span.isRecording()) {
    span.setAttributes(common(queue, 'receive'));
    span.setAttribute('messaging.batch.message_count', jobs.length);
    if (jobs.length === 1) span.setAttribute('messaging.message.id', jobs[0]!.id);
  }
  span.end();
}

/** A handler's run inside its span: `run` calls the handler with the span active, `end` closes it. */
export interface ProcessSpan {
  run<T>(fn: () => T): T;
  /** How the run ended; `error` is what it threw (or timed out with), recorded on the span. */
  end(outcome: { readonly kind: string }, error?: unknown): void;
}

/**
 * A `process <queue>` span for one job's handler run, a child of the job's enqueue (its row's
 * traceparent), else of the active context. Undefined when the API is absent, or when there is
 * neither a tracer provider nor a trace to continue (the API's no-op span with no context).
 */
export function startProcess(queue: string, job: Job<unknown>): ProcessSpan | undefined {
  const otel = openTelemetry();
  if (!otel) return undefined;
  const parent = withSpan(otel, otel.api.context.active(), parseTraceparent(job.traceparent));
  const span = otel.tracer.startSpan(`process ${queue}`, { kind: CONSUMER }, parent);
  if (span.isRecording()) {
    span.setAttributes(common(queue, 'process'));
    span.setAttributes({ 'messaging.message.id': job.id, 'echomq.job.attempt': job.attempt, 'echomq.job.max_attempts': job.maxAttempts });
    if (job.group !== undefined) span.setAttribute('echomq.job.group', job.group);
    processSpans.set(job, span.spanContext());
  } else if (!isValidTraceContext(span.spanContext())) {
    return undefined;
  }
  // a span not recorded (sampled out) still runs the handler in its context: the handler's own
  // spans follow its sampling decision
  return processRun(otel, span, parent);
}

/**
 * A `process <queue>` span for a batch handler's run over the jobs of `batch`, linked to each
 * job's enqueue (a batch has no one parent), a child of the active context. Undefined when the
 * API is absent.
 */
export function startBatchProcess(queue: string, batch: ReadonlyArray<{ readonly job: Job<unknown> }>): ProcessSpan | undefined {
  const otel = openTelemetry();
  if (!otel) return undefined;
  const links: Array<{ context: TraceContext; attributes: OtelAttributes }> = [];
  for (const { job } of batch) {
    const context = parseTraceparent(job.traceparent);
    if (context) links.push({ context, attributes: { 'messaging.message.id': job.id } });
  }
  const parent = otel.api.context.active();
  const span = otel.tracer.startSpan(`process ${queue}`, { kind: CONSUMER, links }, parent);
  if (span.isRecording()) {
    span.setAttributes(common(queue, 'process'));
    span.setAttribute('messaging.batch.message_count', batch.length);
  }
  if (span.isRecording()) {
    const context = span.spanContext();
    for (const { job } of batch) processSpans.set(job, context);
  } else if (!isValidTraceContext(span.spanContext())) {
    return undefined;
  }
  return processRun(otel, span, parent);
}

function processRun(otel: Otel, span: OtelSpan, parent: OtelContext): ProcessSpan {
  const active = otel.api.trace.setSpan(parent, span);
  return {
    run: (fn) => otel.api.context.with(active, fn),
    end: (outcome, error) => {
      if (span.isRecording()) {
        span.setAttribute('echomq.job.outcome', outcome.kind);
        if (outcome.kind !== 'complete') fail(span, error);
      }
      span.end();
    },
  };
}

/**
 * A `settle <queue>` span per finished job, from `startTime` (when the request went out) to now:
 * a child of the span the job ran under (else of its enqueue), with what became of it
 * (`echomq.settle.outcome`: completed, pending, scheduled, dead, fenced). A fenced settle (the
 * lease was lost: the outcome was not recorded) has status ERROR and `error.type` `fenced`.
 */
export function traceSettles(queue: string, startTime: number, finished: ReadonlyArray<TracedFinish>, settled: readonly string[]): void {
  const otel = openTelemetry();
  if (!otel || finished.length === 0) return;
  const base = otel.api.context.active();
  finished.forEach(({ job }, i) => {
    const enqueued = parseTraceparent(job.traceparent);
    const parent = withSpan(otel, base, processSpans.get(job) ?? enqueued);
    const span = otel.tracer.startSpan(`settle ${queue}`, { kind: CLIENT, startTime }, parent);
    if (span.isRecording()) {
      const outcome = settled[i] ?? 'fenced';
      span.setAttributes(common(queue, 'settle'));
      span.setAttributes({ 'messaging.message.id': job.id, 'echomq.settle.outcome': outcome });
      if (outcome === 'fenced') {
        span.setStatus({ code: STATUS_ERROR, message: 'fenced: the lease was lost, the outcome was not recorded' });
        span.setAttribute('error.type', 'fenced');
      }
    }
    span.end();
  });
}
