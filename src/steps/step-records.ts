import { InvalidArgumentError, shown } from '../errors.js';
import type { StepKind, StepRecord, StepState } from './steps.js';

/**
 * A step's record as its steps hash keeps it (docs/design/steps.md): JSON with short fields, the
 * result left as JSON text (`r`) until a handler or a reader asks for it.
 */
export interface RawStep {
  readonly n: string;
  readonly k: StepKind;
  readonly s: string;
  readonly r?: string;
  readonly e?: string;
  readonly a?: number;
  readonly st?: number;
  readonly ft?: number;
  readonly u?: number;
  readonly ev?: string;
  readonly ei?: string;
  readonly cq?: string;
  readonly ci?: string;
}

/** The recorded steps of a job, by index, from its steps hash flat (field, value, ...). */
export function decodeSteps(flat: readonly string[]): Map<number, RawStep> {
  const steps = new Map<number, RawStep>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const index = Number(flat[i]);
    // the hash also holds `ev:<event>`, the last event a wait took
    if (Number.isSafeInteger(index) && index >= 1) steps.set(index, JSON.parse(flat[i + 1]!) as RawStep);
  }
  return steps;
}

const STATES: Record<string, StepState> = {
  done: 'done',
  failed: 'failed',
  sleeping: 'sleeping',
  waiting: 'waiting',
  timedout: 'timed-out',
  invoking: 'invoking',
};

/** A record as readers see it, in index order. */
export function stepRecords(steps: ReadonlyMap<number, RawStep>): StepRecord[] {
  return [...steps.entries()].sort(([a], [b]) => a - b).map(([index, raw]) => stepRecord(index, raw));
}

/** One record as readers see it: undefined fields left out, the result parsed. */
export function stepRecord(index: number, raw: RawStep): StepRecord {
  const record: { -readonly [K in keyof StepRecord]: StepRecord[K] } = {
    index,
    name: raw.n,
    kind: raw.k,
    state: STATES[raw.s] ?? 'done',
    attempts: raw.a ?? (raw.k === 'run' ? 1 : 0),
  };
  if (raw.r !== undefined) record.result = JSON.parse(raw.r) as unknown;
  if (raw.e !== undefined) record.error = raw.e;
  if (raw.st !== undefined) record.startedAt = raw.st;
  if (raw.ft !== undefined) record.finishedAt = raw.ft;
  if (raw.u !== undefined) record.until = raw.u;
  if (raw.ev !== undefined) record.event = raw.ev;
  if (raw.ei !== undefined) record.eventId = raw.ei;
  if (raw.cq !== undefined && raw.ci !== undefined) record.child = { queue: raw.cq, id: raw.ci };
  return record;
}

/** A step's name: 1 to 200 characters, none of them control characters. */
const STEP_NAME = /^[^\u0000-\u001f\u007f]{1,200}$/;

/** Throws InvalidArgumentError unless `name` is a step name. */
export function assertStepName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !STEP_NAME.test(name)) {
    throw new InvalidArgumentError(`a step name is 1 to 200 characters, no control characters, got ${shown(name)}`);
  }
}

/** An event's name: as a queue's, letters, digits and `._-`, 1 to 128. */
const EVENT_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** Throws InvalidArgumentError unless `name` is an event name. */
export function assertEventName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !EVENT_NAME.test(name)) {
    throw new InvalidArgumentError(`an event name is 1 to 128 letters, digits, '.', '_' or '-', got ${shown(name)}`);
  }
}

/** The most paths one match may name. */
const MAX_MATCH_PATHS = 8;
/** A path into an event's data: object keys joined by dots. */
const MATCH_PATH = /^[A-Za-z0-9_$-]{1,64}(\.[A-Za-z0-9_$-]{1,64}){0,7}$/;

/**
 * A wait's match as the scripts take it (lua/includes/event_match.lua): its shape (the paths,
 * sorted, joined by newlines) and its values in that order as a JSON array.
 */
export function encodeMatch(match: unknown): { shape: string; values: string } {
  if (match === undefined) return { shape: '', values: '[]' };
  if (typeof match !== 'object' || match === null || Array.isArray(match)) {
    throw new InvalidArgumentError(`match must be an object of paths to values, got ${shown(match)}`);
  }
  const paths = Object.keys(match).sort();
  if (paths.length > MAX_MATCH_PATHS) throw new InvalidArgumentError(`a match names at most ${MAX_MATCH_PATHS} paths, got ${paths.length}`);
  const values = paths.map((path) => {
    if (!MATCH_PATH.test(path)) throw new InvalidArgumentError(`a match path is object keys (letters, digits, '_', '$', '-') joined by dots, got ${shown(path)}`);
    const value = (match as Record<string, unknown>)[path];
    const ok = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!ok) throw new InvalidArgumentError(`match.${path} must be a string, a finite number or a boolean, got ${shown(value)}`);
    return value;
  });
  return { shape: paths.join('\n'), values: JSON.stringify(values) };
}
