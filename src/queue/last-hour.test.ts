import { describe, expect, it } from 'vitest';
import { addLastHours, LAST_HOUR_MINUTES, lastHourOf } from './last-hour.js';

const zeros = (): number[] => new Array<number>(LAST_HOUR_MINUTES).fill(0);

describe('lastHourOf', () => {
  it('places each field of the hour by its minute, the current one last, and leaves out the rest', () => {
    const hour = lastHourOf(1000, { c1000: '3', d1000: '1', c941: '2', c940: '9', d1001: '4', x999: '5', c: '1' });
    const completed = zeros();
    completed[59] = 3;
    completed[0] = 2;
    const dead = zeros();
    dead[59] = 1;
    expect(hour).toEqual({ minute: 1000 * 60_000, completed, dead });
  });
});

describe('addLastHours', () => {
  it('adds minute by minute, a partition read a minute earlier moved back one', () => {
    const a = lastHourOf(1000, { c1000: '1', c999: '2', c941: '3' });
    const b = lastHourOf(999, { c999: '10', c940: '20', d999: '1' });
    const sum = addLastHours([a, b])!;
    expect(sum.minute).toBe(1000 * 60_000);
    expect(sum.completed[59]).toBe(1);
    expect(sum.completed[58]).toBe(12);
    // b's oldest minute (940) is outside a's hour: dropped
    expect(sum.completed[0]).toBe(3);
    expect(sum.completed.reduce((x, y) => x + y, 0)).toBe(16);
    expect(sum.dead[58]).toBe(1);
    expect(addLastHours([])).toBeUndefined();
  });
});
