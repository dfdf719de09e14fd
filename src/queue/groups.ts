import { InvalidArgumentError, shown } from '../errors.js';
import type { RateLimit } from './rate-limits.js';

/**
 * One group of a queue with its numbers, as `Queue.groups` lists it (`GET /v1/queues/:q/groups`,
 * `emq groups`). Times are epoch ms on the Redis server's clock.
 *
 * @example
 * const { groups } = await queue.groups({ prefix: 'tenant-' });
 * for (const g of groups) console.log(g.group, g.active, g.waiting, g.paused);
 */
export interface GroupInfo {
  /** The group's name. */
  readonly group: string;
  /** Its jobs active now (leased). */
  readonly active: number;
  /** Its limit of jobs active at once (`setGroupLimit`), null for none. */
  readonly limit: number | null;
  /** Its rate limit (`setGroupRateLimit`), null for none. */
  readonly rate: RateLimit | null;
  /** Whether it is paused (`pauseGroup`). */
  readonly paused: boolean;
  /** When its hold ends (`holdGroup`, a handler's RateLimitedError), null when it has none. */
  readonly heldUntil: number | null;
  /** When it may start a job again as its throttle has it (at its rate limit, or held), null when it is not throttled. */
  readonly throttledUntil: number | null;
  /** Its jobs waiting in its lane to be claimed (pending: its lane's zset and arrivals list). */
  readonly waiting: number;
}

/** One page of a walk over a queue's groups (`Queue.groups`). */
export interface GroupsPage {
  /** The page's groups, sorted by name. */
  readonly groups: GroupInfo[];
  /** The cursor of the next page, null once the walk is done. */
  readonly cursor: string | null;
}

/** `Queue.groups`'s options. */
export interface GroupsOptions {
  /** Where the walk goes on: the `cursor` of the page before; absent to start. */
  readonly cursor?: string;
  /** About the most groups a page holds (SSCAN's COUNT), 1 to 1000 (default 100). */
  readonly limit?: number;
  /** Only the groups whose name starts with it: up to 128 letters, digits, `.`, `_` or `-`. */
  readonly prefix?: string;
}

/** The most groups a page of `Queue.groups` asks for, and its default. */
export const GROUPS_PAGE = { default: 100, max: 1000 } as const;

/** The largest SSCAN cursor: an unsigned 64-bit integer. */
const MAX_CURSOR = 2n ** 64n - 1n;

/** A group name prefix: what a group name may hold, none of it a glob character, so MATCH `<prefix>*` is exact. */
const PREFIX = /^[A-Za-z0-9._-]{0,128}$/;

/** Whether `text` is a cursor SSCAN takes: a decimal unsigned 64-bit integer. */
export function isScanCursor(text: string): boolean {
  return /^\d{1,20}$/.test(text) && BigInt(text) <= MAX_CURSOR;
}

/**
 * `options` of a walk over groups checked: limit 1 to 1000 (default 100), a prefix of a group
 * name, and (with `cursor: true`) an SSCAN cursor. Throws InvalidArgumentError naming the option,
 * before any Redis call. A partitioned queue checks its own cursor (`<partition>:<cursor>`).
 *
 * @example
 * checkGroupsOptions({ limit: 50, prefix: 'tenant-' }, true); // { cursor: '0', limit: 50, prefix: 'tenant-' }
 */
export function checkGroupsOptions(options: unknown, cursor: boolean): { cursor: string; limit: number; prefix: string } {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidArgumentError(`options must be an object, got ${shown(options)}`);
  const given = options as Record<string, unknown>;
  const limit = given.limit ?? GROUPS_PAGE.default;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > GROUPS_PAGE.max) {
    throw new InvalidArgumentError(`limit must be an integer from 1 to ${GROUPS_PAGE.max}, got ${shown(limit)}`);
  }
  const prefix = given.prefix ?? '';
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new InvalidArgumentError(`prefix must be up to 128 letters, digits, '.', '_' or '-' (the start of a group name), got ${shown(prefix)}`);
  }
  const at = given.cursor ?? '0';
  if (typeof at !== 'string' || (cursor && !isScanCursor(at))) {
    throw new InvalidArgumentError(`cursor must be the cursor a page of groups answered, got ${shown(at)}`);
  }
  return { cursor: at, limit, prefix };
}
