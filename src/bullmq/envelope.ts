/**
 * What the layer stores as an echomq job's payload: BullMQ's `name` and `opts` kept beside `data`,
 * and the ids BullMQ shows (`1`, `my-id`) for echomq's (`JOB:1`, `JOB:my-id`).
 */
import { bullQueueName, DEFAULT_PREFIX } from './queue-names.js';
import type { JobsOptions } from './options.js';

/** echomq's error of a flow parent its child failed: `child <id> of queue <queue> failed: <error>`. */
const CHILD_FAILED = /^child (\S+) of queue (\S+) failed: /;

/**
 * An echomq payload written by the layer: the BullMQ job's name, data and options.
 *
 * @example
 * const payload: Envelope = { name: 'send', data: { to: 'a@example.com' }, opts: { attempts: 3 } };
 */
export interface Envelope {
  /** BullMQ's job name. */
  readonly name: string;
  /** BullMQ's job data. */
  readonly data: unknown;
  /** The options it was added with, defaults merged in, as `job.opts` reads them. */
  readonly opts: JobsOptions;
}

/**
 * The envelope a payload is, or one around it when an echomq producer of its own wrote it (name
 * `''`, the payload as data).
 *
 * @example
 * envelopeOf({ name: 'a', data: 1, opts: {} }).name; // 'a'
 * envelopeOf(42).data; // 42
 */
export function envelopeOf(payload: unknown): Envelope {
  // `opts` always written, `data` left out by JSON when undefined
  if (typeof payload === 'object' && payload !== null && typeof (payload as { name?: unknown }).name === 'string' && typeof (payload as { opts?: unknown }).opts === 'object') {
    const p = payload as { name: string; data: unknown; opts?: JobsOptions };
    return { name: p.name, data: p.data, opts: p.opts ?? {} };
  }
  return { name: '', data: payload, opts: {} };
}

/**
 * BullMQ's id for an echomq job id: `JOB:` taken off.
 *
 * @example
 * bullId('JOB:1'); // '1'
 */
export function bullId(id: string): string {
  return id.startsWith('JOB:') ? id.slice(4) : id;
}

/**
 * echomq's id for a BullMQ one (`1` is `JOB:1`); one already `JOB:` stays.
 *
 * @example
 * emqId('1'); // 'JOB:1'
 */
export function emqId(id: string): string {
  return id.startsWith('JOB:') ? id : `JOB:${id}`;
}

/**
 * BullMQ's `failedReason` for the error text echomq keeps (`Error: boom\n    at ...`): its message;
 * a flow parent's that its child failed names the child's key under `prefix`, as BullMQ does.
 *
 * @example
 * failedReasonOf('Error: boom\n    at f (x.js:1:1)'); // 'boom'
 * failedReasonOf('child JOB:3 of queue mail failed: Error: boom'); // 'child bull:mail:3 failed'
 */
export function failedReasonOf(text: string | undefined, prefix: string = DEFAULT_PREFIX): string | undefined {
  if (text === undefined) return undefined;
  const first = text.split('\n', 1)[0]!;
  // a flow parent failed by its child (lua/includes/fail_parent.lua): BullMQ names the child's key
  const child = CHILD_FAILED.exec(first);
  if (child) return `child ${prefix}:${bullQueueName(child[2]!, prefix)}:${bullId(child[1]!)} failed`;
  const named = /^[A-Za-z_$][\w$]*(?:Error|Exception)?: /.exec(first);
  return named && /Error|Exception/.test(named[0]) ? first.slice(named[0].length) : first;
}
