/**
 * BullMQ's queue names and prefixes, and the echomq queue names they stand for: `bull:mail` is
 * echomq's `mail`, `staging:mail` is `staging.mail` (docs/guides/bullmq.md, "Every option").
 */

/** BullMQ's default prefix. */
export const DEFAULT_PREFIX = 'bull';

/**
 * The echomq queue a BullMQ queue of `name` under `prefix` is: the name itself under BullMQ's
 * default prefix, else `<prefix>.<name>`.
 *
 * @example
 * emqQueueName('mail'); // 'mail'
 * emqQueueName('mail', 'staging'); // 'staging.mail'
 */
export function emqQueueName(name: string, prefix: string = DEFAULT_PREFIX): string {
  const bare = prefix.replace(/[{}]/g, '');
  return bare === DEFAULT_PREFIX || bare === '' ? name : `${bare}.${name}`;
}

/**
 * The BullMQ queue name an echomq queue stands for under `prefix`: emqQueueName undone.
 *
 * @example
 * bullQueueName('staging.mail', 'staging'); // 'mail'
 */
export function bullQueueName(queue: string, prefix: string = DEFAULT_PREFIX): string {
  const bare = prefix.replace(/[{}]/g, '');
  return bare !== DEFAULT_PREFIX && bare !== '' && queue.startsWith(`${bare}.`) ? queue.slice(bare.length + 1) : queue;
}
