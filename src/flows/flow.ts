/**
 * What a parent makes of a child that died (`FlowJob.onFailure`): `fail-parent` (the default)
 * sends the waiting parent to dead with the child's error; `ignore` counts the child as finished
 * and the parent's handler sees its error; `remove` drops the child from the parent's children,
 * as if it had never been one; `wait` leaves the parent waiting (the child shows failed) until the
 * child is reprocessed and finishes, as BullMQ's parents wait by default.
 */
export type OnFailure = 'fail-parent' | 'ignore' | 'remove' | 'wait';

/** A child as its parent records it (`Job.children`, `JobRecord.children`). */
export interface ChildOutcome<Result = unknown> {
  /** The child's queue. */
  readonly queue: string;
  /** `JOB:` and its id. */
  readonly id: string;
  /**
   * `completed` with its `result`; `failed` with its `error` (it died: with `onFailure: 'ignore'`
   * the parent still runs, with `fail-parent` the parent is dead, with `wait` the parent waits for
   * it to be reprocessed); `unfinished` while it has not
   * finished (or was reprocessed since).
   */
  readonly state: 'unfinished' | 'completed' | 'failed';
  /** What its handler resolved with (undefined: nothing, or not completed). */
  readonly result?: Result | undefined;
  /** The error it died with, when failed. */
  readonly error?: string | undefined;
}

/** The parent a flow's child reports to (`Job.parent`, `JobRecord.parent`). */
export interface ParentRef {
  /** The parent's queue. */
  readonly queue: string;
  /** `JOB:` and its id. */
  readonly id: string;
  /** What the parent makes of this child if it dies. */
  readonly onFailure: OnFailure;
}

/** A parent's count of its children (`JobRecord.flow`). */
export interface ChildrenCount {
  /** Children it waits for in all (a child dropped by `onFailure: 'remove'` or removed no longer counts). */
  readonly total: number;
  /** Of those, how many have finished (completed, or failed and counted). */
  readonly done: number;
}

/** The policy letters the row's `fp` and the outbox entries carry. */
export const POLICY_CODE: Readonly<Record<OnFailure, string>> = { 'fail-parent': 'f', ignore: 'i', remove: 'r', wait: 'w' };
const POLICY_OF: Readonly<Record<string, OnFailure>> = { f: 'fail-parent', i: 'ignore', r: 'remove', w: 'wait' };

/** A row's `fp` (`<queue>|<id>|<policy letter>`) as a ParentRef; undefined for none. */
export function decodeParent(fp: string | undefined | null): ParentRef | undefined {
  if (!fp) return undefined;
  const [queue, id, policy] = fp.split('|');
  if (!queue || !id) return undefined;
  return { queue, id, onFailure: POLICY_OF[policy ?? 'f'] ?? 'fail-parent' };
}

/**
 * A parent's children hash (`emq:{q}:kids:<id>`, field `<queue>|<id>` -> `<token>|<kind>|<body>`)
 * as ChildOutcomes, in field order. Kinds: `w` and `p` unfinished (never finished; reprocessed),
 * `c` completed (body: its result JSON, '' for none), `d`, `f` and `k` failed (body: its error; `f`
 * failed the parent, `k` left it waiting).
 */
export function decodeChildren(flat: readonly string[]): ChildOutcome[] {
  const out: ChildOutcome[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const field = flat[i]!;
    const value = flat[i + 1]!;
    const bar = field.indexOf('|');
    const queue = field.slice(0, bar);
    const id = field.slice(bar + 1);
    const first = value.indexOf('|');
    const kind = value.slice(first + 1, first + 2);
    const body = value.slice(first + 3);
    if (kind === 'c') out.push({ queue, id, state: 'completed', result: body === '' ? undefined : (JSON.parse(body) as unknown) });
    else if (kind === 'd' || kind === 'f' || kind === 'k') out.push({ queue, id, state: 'failed', error: body });
    else out.push({ queue, id, state: 'unfinished' });
  }
  return out;
}
