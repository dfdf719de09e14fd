import { describe, expect, it } from 'vitest';
import { formatTraceparent, isValidTraceContext, parseTraceparent } from './trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('W3C traceparent', () => {
  it('parses a version-00 header into a remote span context, and formats it back', () => {
    const context = parseTraceparent(`00-${TRACE}-${SPAN}-01`);
    expect(context).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
    expect(formatTraceparent(context!)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, traceFlags: 0 })).toBe(`00-${TRACE}-${SPAN}-00`);
  });

  it('reads a later version by its first four fields, stored as version 00', () => {
    const context = parseTraceparent(`cc-${TRACE}-${SPAN}-09-what-comes-later`);
    expect(context).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: 9 });
    expect(formatTraceparent(context!)).toBe(`00-${TRACE}-${SPAN}-09`);
  });

  it('ignores what W3C says to ignore', () => {
    for (const header of [
      undefined,
      '',
      'junk',
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${'0'.repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE}-${SPAN}-1`,
    ]) {
      expect(parseTraceparent(header), String(header)).toBeUndefined();
    }
    expect(isValidTraceContext({ traceId: '0'.repeat(32), spanId: SPAN, traceFlags: 1 })).toBe(false);
  });
});
