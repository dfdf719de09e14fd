import { describe, expect, it } from 'vitest';
import { checkSpec, firedBy, nextAfterFiring, planUpsert, slotAfter } from './schedulers.js';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

describe('scheduler slots', () => {
  it('every: slots on the anchor’s grid, the first strictly after the time asked, within startAt and endAt', () => {
    const spec = checkSpec({ every: 1000 });
    expect(slotAfter(spec, 5000, 0)).toBe(5000);
    expect(slotAfter(spec, 5000, 4999)).toBe(5000);
    expect(slotAfter(spec, 5000, 5000)).toBe(6000);
    expect(slotAfter(spec, 5000, 7500)).toBe(8000);
    const bounded = checkSpec({ every: 1000, startAt: 5000, endAt: 7000 });
    expect(slotAfter(bounded, 5000, 6999)).toBe(7000);
    expect(slotAfter(bounded, 5000, 7000)).toBeNull();
  });

  it('cron in a time zone across the daylight-saving changes: wall-clock times, a skipped hour fires once after it', () => {
    // 02:30 every day in Berlin: on 29 March 2026 02:00-03:00 does not exist (clocks go forward)
    const spec = checkSpec({ cron: '30 2 * * *', tz: 'Europe/Berlin' });
    const slots: Array<string | null> = [];
    let t = at('2026-03-27T12:00:00Z');
    for (let i = 0; i < 4; i++) {
      const next = slotAfter(spec, -1, t)!;
      slots.push(iso(next));
      t = next;
    }
    expect(slots).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
    // 25 October 2026: 02:30 happens twice (clocks go back); it fires once
    const autumn: Array<string | null> = [];
    t = at('2026-10-24T12:00:00Z');
    for (let i = 0; i < 3; i++) {
      const next = slotAfter(spec, -1, t)!;
      autumn.push(iso(next));
      t = next;
    }
    expect(autumn).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z']);
    // 09:00 in New York is 13:00 UTC in summer and 14:00 in winter
    const ny = checkSpec({ cron: '0 9 * * *', tz: 'America/New_York' });
    expect(iso(slotAfter(ny, -1, at('2026-07-01T00:00:00Z')))).toBe('2026-07-01T13:00:00.000Z');
    expect(iso(slotAfter(ny, -1, at('2026-12-01T00:00:00Z')))).toBe('2026-12-01T14:00:00.000Z');
  });

  it('cron with six fields has seconds; startAt and endAt bound it', () => {
    const spec = checkSpec({ cron: '*/15 * * * * *', startAt: '2026-01-01T00:00:20Z', endAt: '2026-01-01T00:01:00Z' });
    expect(iso(slotAfter(spec, -1, at('2026-01-01T00:00:00Z')))).toBe('2026-01-01T00:00:30.000Z');
    expect(iso(slotAfter(spec, -1, at('2026-01-01T00:00:45Z')))).toBe('2026-01-01T00:01:00.000Z');
    expect(slotAfter(spec, -1, at('2026-01-01T00:01:00Z'))).toBeNull();
    // startAt itself is a slot when it is one
    const exact = checkSpec({ cron: '*/15 * * * * *', startAt: '2026-01-01T00:00:15Z' });
    expect(iso(slotAfter(exact, -1, 0))).toBe('2026-01-01T00:00:15.000Z');
  });

  it('a firing moves on to the first slot after both the slot and the server’s time: one catch-up, not one per missed slot', () => {
    const due = { id: 's', revision: 3, slot: 10_000, spec: '{"every":1000}', anchor: 0 };
    expect(nextAfterFiring(due, 10_002)).toBe(11_000);
    expect(nextAfterFiring(due, 15_500)).toBe(16_000);
    expect(nextAfterFiring({ ...due, spec: 'not json' }, 10_002)).toBe(-1);
  });

  it('an upsert keeps the slot of the same spec, starts a new spec from now, and never goes back to a slot fired', () => {
    const spec = checkSpec({ every: 1000 });
    expect(planUpsert(spec, {}, 5000)).toEqual({ expected: -1, spec: '{"every":1000}', anchor: 5000, limit: -1, nextSlot: 5000 });
    const row = { v: '4', k: '{"every":1000}', an: '5000', n: '9000', l: '8000', f: '4' };
    expect(planUpsert(spec, row, 9500)).toMatchObject({ expected: 4, anchor: 5000, nextSlot: 9000 });
    // another interval: anchored at now, after the last slot fired
    expect(planUpsert(checkSpec({ every: 500 }), row, 9500)).toMatchObject({ anchor: 9500, nextSlot: 9500 });
    expect(planUpsert(checkSpec({ every: 500 }), { ...row, l: '9500' }, 9500)).toMatchObject({ nextSlot: 10_000 });
    // a limit on the spec goes to the script, which stops a scheduler that reached it
    expect(planUpsert(checkSpec({ every: 1000, limit: 2 }), row, 9500)).toMatchObject({ limit: 2 });
  });

  it('the id of a fired job names its scheduler and slot', () => {
    expect(firedBy('JOB:nightly.report@1764561600000')).toEqual({ id: 'nightly.report', slot: 1764561600000 });
    expect(firedBy('JOB:42')).toBeUndefined();
    expect(firedBy('JOB:a@b')).toBeUndefined();
  });
});
