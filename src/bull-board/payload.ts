/**
 * How the board reads an echomq job's payload and id: a payload written by `echomq/bullmq` (its
 * envelope, `{ name, data, opts }`) shows its name, data and options; any other payload is the
 * data, unnamed. Ids show as given at enqueue, `JOB:` taken off, as `echomq/bullmq` shows them.
 * Read by shape here, not imported from src/bullmq/: the adapter stands on echomq's Queue alone
 * (docs/design.md, "The bull-board adapter").
 */

/** A payload as the board shows it. */
export interface ShownPayload {
  /** The `echomq/bullmq` job name, or `''`. */
  readonly name: string;
  /** Its data: the envelope's, or the whole payload. */
  readonly data: unknown;
  /** The `echomq/bullmq` options it was added with, or none. */
  readonly opts: Readonly<Record<string, unknown>>;
  /** Whether the payload is an `echomq/bullmq` envelope. */
  readonly envelope: boolean;
}

/**
 * The name, data and options of a payload: an `echomq/bullmq` envelope's (a string `name` and an
 * object `opts`, as that layer writes every job), else the payload as data.
 *
 * @example
 * shownPayload({ name: 'send', data: 1, opts: {} }).name; // 'send'
 * shownPayload({ to: 'a' }).data; // { to: 'a' }
 */
export function shownPayload(payload: unknown): ShownPayload {
  if (typeof payload === 'object' && payload !== null) {
    const p = payload as { name?: unknown; data?: unknown; opts?: unknown };
    if (typeof p.name === 'string' && typeof p.opts === 'object' && p.opts !== null) return { name: p.name, data: p.data, opts: p.opts as Record<string, unknown>, envelope: true };
  }
  return { name: '', data: payload, opts: {}, envelope: false };
}

/**
 * The id the board shows for echomq id `id`: `JOB:` taken off.
 *
 * @example
 * boardId('JOB:1'); // '1'
 */
export function boardId(id: string): string {
  return id.startsWith('JOB:') ? id.slice(4) : id;
}

/**
 * echomq's id for a board id (`1` is `JOB:1`); one already `JOB:` stays.
 *
 * @example
 * jobIdOf('1'); // 'JOB:1'
 */
export function jobIdOf(id: string): string {
  return id.startsWith('JOB:') ? id : `JOB:${id}`;
}

/**
 * The message of the error text echomq keeps (`Error: boom\n    at ...`), as BullMQ's
 * `failedReason` reads: its first line without the error's class name.
 *
 * @example
 * failedReasonOf('Error: boom\n    at f (x.js:1:1)'); // 'boom'
 */
export function failedReasonOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const first = text.split('\n', 1)[0]!;
  const named = /^[A-Za-z_$][\w$]*(?:Error|Exception)?: /.exec(first);
  return named && /Error|Exception/.test(named[0]) ? first.slice(named[0].length) : first;
}
