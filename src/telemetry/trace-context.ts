/**
 * A span's identity as W3C Trace Context carries it (https://www.w3.org/TR/trace-context/): the
 * shape of OpenTelemetry's SpanContext, so one passes for the other.
 */
export interface TraceContext {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  /** Bit 0: sampled. */
  readonly traceFlags: number;
  /** Whether it came from elsewhere (a header, a job's row) rather than a span of this process. */
  readonly isRemote?: boolean;
}

// version, trace id, parent id, flags; a later version may append fields after a '-' (W3C, "Versioning")
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** Whether `traceId` and `spanId` are well formed and not the all-zero ids W3C reserves for "none". */
export function isValidTraceContext(context: TraceContext): boolean {
  // the all-zero ids first: the API's no-op spans carry them, and a hot path asks about those
  return (
    context.spanId !== ZERO_SPAN && context.traceId !== ZERO_TRACE && /^[0-9a-f]{32}$/.test(context.traceId) && /^[0-9a-f]{16}$/.test(context.spanId)
  );
}

/**
 * A `traceparent` header's span, marked remote; undefined for anything W3C says to ignore (a
 * malformed value, version `ff`, an all-zero id, extra fields on version 00).
 *
 * @example
 * parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
 * // { traceId: '4bf9...', spanId: '00f0...', traceFlags: 1, isRemote: true }
 */
export function parseTraceparent(header: string | undefined): TraceContext | undefined {
  if (typeof header !== 'string') return undefined;
  const m = TRACEPARENT.exec(header.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const context = { traceId: traceId!, spanId: spanId!, traceFlags: parseInt(flags!, 16), isRemote: true };
  return isValidTraceContext(context) ? context : undefined;
}

/**
 * The version-00 `traceparent` of a span: `00-<trace id>-<span id>-<flags>`, 55 characters, what
 * a job's row keeps (its `x` field, docs/design.md "The row").
 *
 * @example
 * formatTraceparent({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 });
 * // '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
 */
export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
