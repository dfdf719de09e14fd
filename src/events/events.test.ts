import { describe, expect, it } from 'vitest';
import { assertEventId, decodeEntry, isEventId } from './decode.js';
import { InvalidArgumentError } from '../errors.js';

const ID = '1700000000123-4';
const base = { id: ID, time: 1_700_000_000_123 };

describe('decodeEntry: a stream entry into its events', () => {
  it('decodes each event by its name, fields by name, numbers as numbers', () => {
    const cases: Array<[string[], object]> = [
      [['e', 'added', 'j', 'JOB:1'], { event: 'added', jobId: 'JOB:1' }],
      [['e', 'added', 'j', 'JOB:1', 'g', 'g1'], { event: 'added', jobId: 'JOB:1', group: 'g1' }],
      [['e', 'scheduled', 'j', 'JOB:1', 'd', '1700000005000'], { event: 'scheduled', jobId: 'JOB:1', dueAt: 1_700_000_005_000 }],
      [['e', 'promoted', 'j', 'JOB:1'], { event: 'promoted', jobId: 'JOB:1' }],
      [['e', 'active', 'j', 'JOB:1', 'a', '2'], { event: 'active', jobId: 'JOB:1', attempt: 2 }],
      [['e', 'progress', 'j', 'JOB:1', 'a', '1', 'p', '{"done":3}'], { event: 'progress', jobId: 'JOB:1', attempt: 1, progress: { done: 3 } }],
      [['e', 'completed', 'j', 'JOB:1', 'a', '1'], { event: 'completed', jobId: 'JOB:1', attempt: 1, resultOmitted: false }],
      [['e', 'completed', 'j', 'JOB:1', 'r', '[1,"two"]'], { event: 'completed', jobId: 'JOB:1', result: [1, 'two'], resultOmitted: false }],
      [['e', 'completed', 'j', 'JOB:1', 'r', 'null'], { event: 'completed', jobId: 'JOB:1', result: null, resultOmitted: false }],
      [['e', 'completed', 'j', 'JOB:1', 'rt', '1'], { event: 'completed', jobId: 'JOB:1', resultOmitted: true }],
      [['e', 'retried', 'j', 'JOB:1', 'a', '1', 'x', 'boom', 'd', '5'], { event: 'retried', jobId: 'JOB:1', attempt: 1, error: 'boom', dueAt: 5 }],
      [['e', 'dead', 'j', 'JOB:1', 'a', '3', 'x', ''], { event: 'dead', jobId: 'JOB:1', attempt: 3, error: '' }],
      [['e', 'stalled', 'j', 'JOB:1', 'g', 'g', 'a', '1'], { event: 'stalled', jobId: 'JOB:1', group: 'g', attempt: 1 }],
      [['e', 'released', 'j', 'JOB:1'], { event: 'released', jobId: 'JOB:1' }],
      [['e', 'removed', 'j', 'JOB:x:y'], { event: 'removed', jobId: 'JOB:x:y' }],
      [['e', 'reprocessed', 'j', 'JOB:1'], { event: 'reprocessed', jobId: 'JOB:1' }],
      [['e', 'replaced', 'j', 'JOB:1', 'g', 'g'], { event: 'replaced', jobId: 'JOB:1', group: 'g' }],
      [['e', 'replaced', 'j', 'JOB:1', 'd', '9'], { event: 'replaced', jobId: 'JOB:1', dueAt: 9 }],
      [['e', 'paused'], { event: 'paused' }],
      [['e', 'resumed'], { event: 'resumed' }],
      [['e', 'group-paused', 'g', 'g1'], { event: 'group-paused', group: 'g1' }],
      [['e', 'group-resumed', 'g', 'g1'], { event: 'group-resumed', group: 'g1' }],
      [['e', 'limit', 'g', 'g1', 'l', '4'], { event: 'limit', group: 'g1', limit: 4 }],
      [['e', 'limit', 'g', 'g1', 'l', ''], { event: 'limit', group: 'g1', limit: null }],
      [['e', 'cleaned', 'n', '12', 's', 'dead'], { event: 'cleaned', count: 12, state: 'dead' }],
      [['e', 'drained', 'n', '0'], { event: 'drained', count: 0 }],
    ];
    for (const [fields, event] of cases) {
      expect(decodeEntry(ID, fields), JSON.stringify(fields)).toEqual({ events: [{ ...base, ...event }], skipped: 0 });
    }
  });

  it('splits an entry of a batch at each `e`, in order, every event with the entry id', () => {
    const fields = ['e', 'completed', 'j', 'JOB:1', 'a', '1', 'e', 'active', 'j', 'JOB:2', 'g', 'g', 'a', '1', 'e', 'active', 'j', 'JOB:3', 'a', '2'];
    expect(decodeEntry(ID, fields)).toEqual({
      events: [
        { ...base, event: 'completed', jobId: 'JOB:1', attempt: 1, resultOmitted: false },
        { ...base, event: 'active', jobId: 'JOB:2', group: 'g', attempt: 1 },
        { ...base, event: 'active', jobId: 'JOB:3', attempt: 2 },
      ],
      skipped: 0,
    });
  });

  it('leaves out, and counts, what it cannot read, and goes on past it', () => {
    const cases: string[][] = [
      ['e', 'exploded', 'j', 'JOB:1'], // a name this version does not know
      ['e', 'added'], // no job
      ['e', 'added', 'j', 'FLOW:1'], // a job of another kind
      ['e', 'scheduled', 'j', 'JOB:1'], // no due time
      ['e', 'scheduled', 'j', 'JOB:1', 'd', 'soon'],
      ['e', 'active', 'j', 'JOB:1'], // no attempt
      ['e', 'retried', 'j', 'JOB:1', 'd', '5'], // no error
      ['e', 'dead', 'j', 'JOB:1'],
      ['e', 'progress', 'j', 'JOB:1'], // no progress
      ['e', 'progress', 'j', 'JOB:1', 'p', '{'],
      ['e', 'completed', 'j', 'JOB:1', 'r', 'not json'],
      ['e', 'group-paused'],
      ['e', 'limit', 'g', 'g'],
      ['e', 'limit', 'g', 'g', 'l', 'x'],
      ['e', 'cleaned', 'n', '1', 's', 'pending'],
      ['e', 'drained'],
      ['j', 'JOB:1'], // fields before any `e`
    ];
    for (const fields of cases) expect(decodeEntry(ID, fields), JSON.stringify(fields)).toEqual({ events: [], skipped: 1 });
    expect(decodeEntry(ID, ['e', 'exploded', 'e', 'paused'])).toEqual({ events: [{ ...base, event: 'paused' }], skipped: 1 });
    expect(decodeEntry(ID, [])).toEqual({ events: [], skipped: 0 });
  });
});

describe('isEventId: what a reader may pass as after', () => {
  it('takes <ms>-<seq> below 2^64 each, and 0', () => {
    for (const id of ['0', '0-0', '1-0', '1700000000000-12', '18446744073709551615-18446744073709551615']) expect(isEventId(id), id).toBe(true);
    for (const id of ['', '$', '-', '+', '>', '1', '00', '1-', '-1', '1-2-3', 'x-1', '18446744073709551616-0', '0-18446744073709551616', ' 1-0', '1-0 ', 1, null]) {
      expect(isEventId(id), String(id)).toBe(false);
    }
    expect(() => assertEventId('$')).toThrow(InvalidArgumentError);
    expect(() => assertEventId('1-0')).not.toThrow();
  });
});
