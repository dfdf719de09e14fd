/**
 * The shapes BullMQ's Job is read and written in: its progress, its JSON, its parent and
 * dependencies, and what it needs of its queue (docs/design/bullmq-layer.md, "Jobs").
 */
import type { QueueSurface } from '../queue/surface.js';
import type { Envelope } from './envelope.js';
import type { JobsOptions } from './options.js';

/** BullMQ's progress: a number or any small JSON value. */
export type JobProgress = string | boolean | number | object;

/**
 * What a Job needs of its queue: the names it shows and the echomq queue its calls go to. A layer
 * Queue and a Worker are each one.
 */
export interface JobQueue {
  /** The BullMQ queue name. */
  readonly name: string;
  /** `<prefix>:<name>`, as BullMQ qualifies it (a flow child's parent key starts with it). */
  readonly qualifiedName: string;
  /** The echomq queue the layer runs on. */
  readonly emq: QueueSurface<Envelope>;
  /** Adds a job as Queue.add does, answering its Job (Job.create calls it). */
  add?(name: string, data: unknown, opts?: JobsOptions): Promise<unknown>;
}

/** BullMQ's JSON form of a job (`asJSON`): data, opts, progress, returnvalue and stacktrace as JSON text. */
export interface JobJson {
  /** Its id. */
  readonly id: string;
  /** Its name. */
  readonly name: string;
  /** Its data, as JSON. */
  readonly data: string;
  /** Its options. */
  readonly opts: JobsOptions;
  /** Its progress, as JSON. */
  readonly progress: string;
  /** Attempts finished. */
  readonly attemptsMade: number;
  /** Attempts started. */
  readonly attemptsStarted: number;
  /** When it finished (epoch ms). */
  readonly finishedOn?: number | undefined;
  /** When its last run started (epoch ms). */
  readonly processedOn?: number | undefined;
  /** When it was added (epoch ms). */
  readonly timestamp: number;
  /** Its last error message, as JSON. */
  readonly failedReason: string;
  /** Its last error stack, as JSON. */
  readonly stacktrace: string;
  /** Its return value, as JSON. */
  readonly returnvalue: string;
  /** Its delay, ms. */
  readonly delay: number;
  /** Its priority. */
  readonly priority: number;
  /** A flow child's parent: its id and qualified queue. */
  readonly parent?: JobParent | undefined;
  /** A flow child's parent's key, `<prefix>:<queue>:<id>`. */
  readonly parentKey?: string | undefined;
}

/** A flow child's parent, as BullMQ names it. */
export interface JobParent {
  /** The parent's id. */
  readonly id: string;
  /** The parent's `<prefix>:<queue>`. */
  readonly queueKey: string;
}

/** A flow parent's children as `getDependencies` reads them (one page: every cursor 0). */
export interface Dependencies {
  /** Completed children's results, by key. */
  readonly processed?: Record<string, unknown>;
  /** Unfinished children's keys. */
  readonly unprocessed?: string[];
  /** Keys of the children that failed the parent. */
  readonly failed?: string[];
  /** Errors of the children that failed while the parent ran on, by key. */
  readonly ignored?: Record<string, string>;
  /** Always 0: one page holds them all. */
  readonly nextProcessedCursor?: number;
  /** Always 0. */
  readonly nextUnprocessedCursor?: number;
  /** Always 0. */
  readonly nextFailedCursor?: number;
  /** Always 0. */
  readonly nextIgnoredCursor?: number;
}

/** BullMQ's page of one kind of children: taken, and one page holds them all here. */
export interface DependenciesPageOpts {
  /** Where the page starts (BullMQ's cursor): taken. */
  readonly cursor?: number;
  /** How many a page holds: taken. */
  readonly count?: number;
}

/** Which kinds getDependencies answers (BullMQ's options): none named, every kind. */
export interface DependenciesOpts {
  /** Completed children. */
  readonly processed?: DependenciesPageOpts;
  /** Unfinished children. */
  readonly unprocessed?: DependenciesPageOpts;
  /** Children that failed the parent. */
  readonly failed?: DependenciesPageOpts;
  /** Children that failed while the parent ran on. */
  readonly ignored?: DependenciesPageOpts;
}

/** How many of a parent's children are in each kind (`getDependenciesCount`). */
export interface DependenciesCount {
  /** Completed. */
  readonly processed: number;
  /** Not finished. */
  readonly unprocessed: number;
  /** Failed the parent. */
  readonly failed: number;
  /** Failed, the parent ran on. */
  readonly ignored: number;
}

/** What a running job reports progress through (the echomq handler's context). */
export type ProgressWriter = (progress: unknown) => Promise<boolean>;

