import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_RESULT_BYTES, encodeProgress, encodeResult, MAX_PROGRESS_BYTES } from './encode.js';
import { InvalidArgumentError, PayloadError, PayloadTooLargeError } from './errors.js';

describe('encodeResult: a handler result as the row keeps it', () => {
  it('is JSON text, none for undefined, up to the cap in UTF-8 bytes', () => {
    expect(encodeResult(undefined, DEFAULT_MAX_RESULT_BYTES)).toBeUndefined();
    expect(encodeResult(null, 10)).toBe('null');
    expect(encodeResult({ sent: 3, at: new Date(0) }, 100)).toBe('{"sent":3,"at":"1970-01-01T00:00:00.000Z"}');
    expect(encodeResult('completed', 100)).toBe('"completed"');
    // 'é' is 2 bytes of UTF-8: 4 of them and the quotes are 10 bytes, exactly the cap
    expect(encodeResult('éééé', 10)).toBe('"éééé"');
    expect(DEFAULT_MAX_RESULT_BYTES).toBe(65_536);
  });

  it('refuses what JSON cannot carry and what is over the cap, naming why or the size and the cap', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const bad of [10n, cycle, () => 1, Symbol('s')]) {
      expect(() => encodeResult(bad, 1000)).toThrow(PayloadError);
      expect(() => encodeResult(bad, 1000)).toThrow(/^the handler's result is not JSON-serialisable/);
    }
    expect(() => encodeResult('ééééé', 10)).toThrow(PayloadTooLargeError);
    expect(() => encodeResult('ééééé', 10)).toThrow("the handler's result is 12 bytes of JSON, over maxResultBytes (10)");
  });
});

describe('encodeProgress: a progress report as the row keeps it', () => {
  it('takes a number from 0 to 100 or a JSON value of at most 4 KiB', () => {
    expect(encodeProgress(0)).toBe('0');
    expect(encodeProgress(42.5)).toBe('42.5');
    expect(encodeProgress(100)).toBe('100');
    expect(encodeProgress({ page: 3, of: 10 })).toBe('{"page":3,"of":10}');
    expect(encodeProgress('thumbnails')).toBe('"thumbnails"');
    expect(encodeProgress([1, 2])).toBe('[1,2]');
    expect(encodeProgress(null)).toBe('null');
    expect(encodeProgress({ big: 1000 })).toBe('{"big":1000}');
    const fits = 'x'.repeat(MAX_PROGRESS_BYTES - 2);
    expect(encodeProgress(fits)).toHaveLength(MAX_PROGRESS_BYTES);
  });

  it('refuses anything else with InvalidArgumentError, saying why', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const cases: Array<[unknown, RegExp]> = [
      [-1, /^progress as a number must be from 0 to 100, got -1$/],
      [100.5, /from 0 to 100, got 100.5/],
      [Number.NaN, /from 0 to 100, got NaN/],
      [Number.POSITIVE_INFINITY, /from 0 to 100, got Infinity/],
      [undefined, /^progress must be a number from 0 to 100 or a JSON value, got undefined$/],
      [() => 1, /^progress must be a number from 0 to 100 or a JSON value/],
      [10n, /^progress must be a JSON value/],
      [cycle, /^progress must be a JSON value/],
      ['x'.repeat(MAX_PROGRESS_BYTES - 1), /^progress is 4097 bytes of JSON, over the cap of 4096$/],
    ];
    for (const [value, message] of cases) {
      expect(() => encodeProgress(value)).toThrow(InvalidArgumentError);
      expect(() => encodeProgress(value)).toThrow(message);
    }
  });
});
