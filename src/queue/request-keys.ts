import { InvalidArgumentError, shown } from '../errors.js';
import type { EnqueueRequest } from '../ops/enqueue.js';
import type { AdminRequest } from '../ops/op.js';
import { randomHex } from '../random-hex.js';

/** How long a key the core makes for one call is remembered: longer than any transport retries a request. */
const OWN_REQUEST_TTL_MS = 120_000;
const CALLER_KEY = /^[A-Za-z0-9._:-]{1,200}$/;

/**
 * The request keys of one Queue's calls, which make a request its transport repeats answer what
 * it first answered: a random prefix (96 bits, once) and a count, cheaper than randomness per call.
 */
export class RequestKeys {
  private readonly prefix = randomHex();
  private count = 0;

  constructor(private readonly idempotencyTtlMs: number) {}

  /** The request key of one enqueue call: the caller's `idempotencyKey` (checked), or one of its own. */
  enqueue(idempotencyKey: string | undefined): EnqueueRequest {
    if (idempotencyKey === undefined) {
      return { key: `a:${this.prefix}${(this.count++).toString(36)}`, ttlMs: OWN_REQUEST_TTL_MS, callerKey: false };
    }
    if (typeof idempotencyKey !== 'string' || !CALLER_KEY.test(idempotencyKey)) {
      throw new InvalidArgumentError(`idempotencyKey must be 1 to 200 letters, digits, '.', '_', ':' or '-', got ${shown(idempotencyKey)}`);
    }
    return { key: `k:${idempotencyKey}`, ttlMs: this.idempotencyTtlMs, callerKey: true };
  }

  /** The request key of one chunk of a bulk admin call. */
  admin(): AdminRequest {
    return { key: `b:${this.prefix}${(this.count++).toString(36)}`, ttlMs: OWN_REQUEST_TTL_MS };
  }
}
