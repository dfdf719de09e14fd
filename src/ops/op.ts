import { JobNotFoundError, JobStateError } from '../errors.js';
import type { ScriptSource } from '../generated/scripts.js';
import { QUEUE_REGISTRY } from '../keyspace.js';
import { PARTITIONS_REGISTRY } from '../partitions/partition-of.js';
import { asArray, asNumber, asString } from './reply.js';
import type { Reply } from '../transport.js';

/**
 * One call of a transition's script and how to read its reply: what each file of src/ops/ builds,
 * beside its Lua file (`change-priority.ts` for `lua/change-priority.lua`). It names no queue: the
 * gateway (src/ops/scripts.ts) runs it on one, KEYS the queue's fixed keys and ARGV its prefix then
 * `args`; an op with `keys` of its own (the registry's) runs with those and `args` alone.
 */
export interface ScriptOp<T> {
  /** The script, from src/generated/scripts.ts. */
  readonly script: ScriptSource;
  /** Its arguments, after the queue's prefix. */
  readonly args: readonly (string | number)[];
  /** Keys of its own, outside any queue's slot; absent for a queue's script. */
  readonly keys?: readonly string[];
  /** Reads the reply into typed values; throws the error table's error for a refusal the reply codes. */
  readonly read: (reply: Reply) => T;
}

/** The keys of the registry scripts (list-queues, register-queue, unregister-queue): outside every queue's slot. */
export const REGISTRY_KEYS: readonly string[] = [QUEUE_REGISTRY, PARTITIONS_REGISTRY];

/** What a script that may write flow news answers beside its own reply: the outbox entries it wrote. */
export interface WithOutbox<T> {
  readonly value: T;
  /** Outbox entries to relay (src/flows/flow-relay.ts); empty for a script that wrote none. */
  readonly outbox: readonly string[];
}

/** The request a chunk of a bulk admin call belongs to: the same key again answers its first reply. */
export interface AdminRequest {
  readonly key: string;
  readonly ttlMs: number;
}

/** A settle call's subject: a job and the lease token its holder got. */
export interface Held {
  /** The job's id. */
  readonly id: string;
  /** The lease token its claim handed out (`Job.token`). */
  readonly token: number;
}

/** Held jobs as the lease scripts take them: id, token, id, token... */
export const heldArgs = (held: readonly Held[]): Array<string | number> => held.flatMap((h) => [h.id, h.token]);

/** A count or time the scripts answer -1 for "none". */
export const nullable = (value: number): number | null => (value < 0 ? null : value);

/** A list of numbers (one per item of a batch, or a fixed head). */
export const codes = (reply: Reply | undefined, what: string): number[] => asArray(reply, what).map((v) => asNumber(v, what));

/** A list of strings; [] for an absent reply (nil). */
export function strings(reply: Reply | undefined, what: string): string[] {
  if (reply === undefined || reply === null) return [];
  return asArray(reply, what).map((v) => asString(v, what));
}

/**
 * A job transition's reply code: 1 done; 0 no such job (JobNotFoundError); -1 the job is not in
 * the state the script needs, `needed` saying which (JobStateError).
 */
export function doneOrThrow(code: number, jobId: string, needed: string): void {
  if (code === 0) throw new JobNotFoundError(`no job ${jobId}`, { jobId });
  if (code < 0) throw new JobStateError(`job ${jobId} is not ${needed}`, { jobId });
}
