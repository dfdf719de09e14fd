import type { Outcome } from '../handler.js';
import { BOUNDED_STREAMING, createApp, type RequestLog } from '../http/app.js';
import type { Job } from '../job.js';
import { keyspace } from '../keyspace.js';
import { type Claimed, Leases, type PreparedRound, readRiddenRound, sendRounds } from '../lease/leases.js';
import { Queue } from '../queue/queue.js';
import { sleep } from '../timers.js';
import type { ScriptCall } from '../transport.js';
import type { BeatSummary, FinishedJob } from './bounded-beat.js';
import { IsolateQueue, QueueDrain } from './drain.js';
import { type BeatSettings, beatSettings } from './settings.js';
import { ServedQueues } from './served-queues.js';
import { RidingTransport, type Ride } from './riding-transport.js';

import type { AcknowledgedLater, BeatHost, BeatHostOptions, Platform, ScheduledEvent, ScheduledReport, WaitUntil } from './platform.js';

export type { AcknowledgedLater, BeatHost, BeatHostOptions, Platform, QueueHandlers, ScheduledEvent, ScheduledReport, WaitUntil } from './platform.js';

/** The lane of the host's transport a call is in: a queue's enqueues, by its meta key (RidingTransport). */
const enqueueLane = (call: ScriptCall): string | undefined => (call.script.name === 'enqueue' ? call.keys[0] : undefined);

/** A drain after an enqueue spends at most this many requests. */
const ENQUEUE_DRAIN_BUDGET = 50;

/**
 * The runtime-free serverless core (docs/design/runtimes.md, "Serverless platforms"): `fetch` is
 * the HTTP API (the same hono app as `emq serve`); `scheduled` drains every queue that has a
 * handler with bounded beats until a deadline, waiting for scheduled jobs that fall due before
 * it; after an enqueue through the API a short drain runs in `ctx.waitUntil` (unless a drain of
 * this instance will claim the job anyway), so a user does not wait for the next scheduled event.
 * What one instance keeps per queue (IsolateQueue) lets a completion ride with the next request
 * instead of costing one of its own. Each platform is an adapter over these two (src/edge/,
 * src/lambda/, ...): it reads its event, its time left and its `waitUntil`.
 *
 * @example
 * const host = createBeatHost({ handlers: { mail: async (job) => send(job.payload) } }, platform);
 * const response = await host.fetch(request, env, { waitUntil: (p) => pending.push(p) });
 */
export function createBeatHost<Env extends object, Payloads extends { [Name in keyof Payloads]: unknown } = Record<string, unknown>>(
  options: BeatHostOptions<Payloads>,
  platform: Platform<Env>,
): BeatHost<Env> {
  const log = options.log ?? ((entry: Record<string, unknown>) => console.log(JSON.stringify(entry)));
  // the payload types are the caller's promise about what its queues carry: at run time a handler
  // takes whatever its queue holds
  const served = new ServedQueues(options.handlers as Readonly<Record<string, unknown>>, options.partitions as Readonly<Record<string, unknown>> | undefined);
  /** Per env object (an isolate or a warm instance): its transport and what it knows of each queue. */
  const instances = new WeakMap<object, { transport: RidingTransport; queues: Map<string, IsolateQueue> }>();
  const settingsOf = (env: Env): BeatSettings => beatSettings(platform.settingsOf(env), options.beat, platform.defaults);
  /** The ride each request's enqueue took (by the request's execution context), withdrawn when the request ends. */
  const rides = new WeakMap<object, Ride>();

  const instanceOf = (env: Env): { transport: RidingTransport; queues: Map<string, IsolateQueue> } => {
    let instance = instances.get(env);
    if (!instance) instances.set(env, (instance = { transport: new RidingTransport(platform.connect(env), enqueueLane), queues: new Map() }));
    return instance;
  };

  /**
   * The instance's state of `name` (a queue, or a partition `mail~3`), or undefined when the host
   * has no handler for it (see ServedQueues).
   */
  const queueOf = (env: Env, name: string): IsolateQueue | undefined => {
    const { transport, queues } = instanceOf(env);
    let shared = queues.get(name);
    if (!shared) {
      const servedQueue = served.resolve(name);
      if (!servedQueue) return undefined;
      const queueOptions = servedQueue.partitions === undefined ? options.queueOptions : { ...options.queueOptions, partitions: servedQueue.partitions };
      const queue = new Queue<unknown>(transport, name, queueOptions);
      const leases = new Leases(queue);
      const made = new IsolateQueue(queue, leases, servedQueue.handler);
      // a flow parent this queue's child released in a queue of this host runs now, as an
      // enqueue's job does: a drain of its queue, awaited by a drain of this one
      leases.onRelease = (released) => {
        for (const parentQueue of released) {
          const drain = startDrain(env, parentQueue, Date.now());
          if (drain) made.spawn(drain);
        }
      };
      queues.set(name, (shared = made));
    }
    return shared;
  };

  /**
   * A short drain of queue `name` for work due at `dueAt` (after an enqueue, or a flow parent
   * released): its promise, or undefined when none is needed (no handler, no drains configured,
   * due after the window, or a drain of this instance in its beats will claim it).
   */
  const startDrain = (env: Env, name: string, dueAt: number): Promise<void> | undefined => {
    const settings = settingsOf(env);
    const partitions = served.partitionsOf(name);
    if (partitions) return drainPartitions(env, partitions, dueAt, settings);
    const shared = queueOf(env, name);
    const startUntil = Date.now() + settings.drainOnEnqueueMs;
    // no drain for a job due after the window (the cron's beat runs it), nor for one claimable
    // now that a drain of this instance in its beats will claim; a job due later gets its own
    // drain, asleep until then (IsolateQueue)
    if (settings.drainOnEnqueueMs <= 0 || !shared || dueAt > startUntil) return undefined;
    const now = Date.now();
    if (dueAt <= now && shared.covers()) return undefined;
    const drain = new QueueDrain(shared, settings, startUntil + settings.beat.jobTimeoutMs, ENQUEUE_DRAIN_BUDGET, onOutcome(name));
    return drain.run(dueAt > now ? { sleepUntil: dueAt } : {}).then(
      (summaries) => log({ msg: 'drain after enqueue', summaries: report(drain, summaries) }),
      (error: unknown) => log({ msg: 'drain after enqueue failed', error: String(error) }),
    );
  };

  /**
   * Before an enqueue through the API of jobs claimable now: the first beat of the drain that
   * follows rides in the enqueue's own request, behind it (RidingTransport), and the drain starts
   * from its reply, so an enqueue and the claim of its job cost one request, not two. Nothing
   * rides when no drain would start (no handler, no drains, a partitioned queue's name: its
   * partitions drain as before) or a drain of this instance will claim the job anyway. A ride no
   * enqueue took by the end of its request (the add was refused before it was sent) is withdrawn.
   */
  const rideEnqueue = (env: Env, ctx: WaitUntil & object, name: string): void => {
    const settings = settingsOf(env);
    if (settings.drainOnEnqueueMs <= 0 || served.partitionsOf(name)) return;
    const shared = queueOf(env, name);
    if (!shared || shared.covers()) return;
    const startUntil = Date.now() + settings.drainOnEnqueueMs;
    const deadline = startUntil + settings.beat.jobTimeoutMs;
    const drain = new QueueDrain(shared, settings, deadline, ENQUEUE_DRAIN_BUDGET, onOutcome(name));
    const asked = drain.firstClaim();
    const leaseMs = Math.max(1, deadline - Date.now()) + (settings.beat.leaseMarginMs ?? 15_000);
    const meta = keyspace(name).fixed[0]!;
    const { transport } = instanceOf(env);
    let prepared: PreparedRound<unknown> | undefined;
    let finished: Array<FinishedJob<unknown>> = [];
    let answered: ((claimed: Claimed<unknown> | null) => void) | undefined;
    const ride = transport.ride(
      meta,
      // completions held for a request to ride with go too: they are acknowledged now
      () => (prepared = shared.leases.prepare({ finished: (finished = shared.takeCarried()), claim: asked, beat: true, leaseMs })).calls,
      () => shared.beatSent(new Promise((resolve) => (answered = resolve))),
    );
    shared.rideStarted();
    rides.set(ctx, ride);
    const run = async (): Promise<void> => {
      let claimed: Claimed<unknown> | null = null;
      let running: Promise<BeatSummary[]> | undefined;
      try {
        const replies = await ride.replies;
        if (!replies || !prepared) return;
        const result = await readRiddenRound(transport, prepared, replies, () => shared.leases.requests++);
        claimed = result.claimed;
        result.settled.forEach((how, i) => onOutcome(name)(finished[i]!.job, how === 'fenced' ? { kind: 'fenced' } : finished[i]!.outcome));
        answered?.(claimed);
        // the drain is among the instance's (it joins as it starts) before the ride stops covering
        running = drain.run({ first: { claimed: claimed!, asked } });
      } finally {
        shared.rideEnded();
        if (!running) answered?.(claimed);
      }
      const summaries = await running;
      log({ msg: 'drain after enqueue', rode: true, summaries: report(drain, summaries) });
    };
    ctx.waitUntil(run().catch((error: unknown) => log({ msg: 'drain after enqueue failed', error: String(error) })));
  };

  /**
   * Drains `shareds` together until `deadline`: their first beats in one request (an idle set of
   * queues costs that one request), then each that has work on its own, `budget` requests each.
   * What the first request cost, and every drain's summaries.
   */
  const drainTogether = async (
    env: Env,
    shareds: readonly IsolateQueue[],
    settings: BeatSettings,
    deadline: number,
    budget: number,
  ): Promise<{ firstRequests: number; summaries: Array<BeatSummary | AcknowledgedLater> }> => {
    const drains = shareds.map((shared) => new QueueDrain(shared, settings, deadline, budget - 1, onOutcome(shared.queue.name)));
    const asked = drains.map((drain) => drain.firstClaim());
    const leaseMs = Math.max(1, deadline - Date.now()) + (settings.beat.leaseMarginMs ?? 15_000);
    let firstRequests = 0;
    const sent = sendRounds(
      instanceOf(env).transport,
      shareds.map((shared, i) => shared.leases.prepare({ claim: asked[i]!, beat: true, leaseMs })),
      () => firstRequests++,
    );
    // a beat that claims is in flight for each queue: a drain of this instance asleep for a job
    // due by now need not beat for it (the drain this beat starts claims all it promoted)
    shareds.forEach((shared, i) => {
      if (asked[i]! > 0) shared.beatSent(sent.then((firsts) => firsts[i]!.claimed ?? null));
    });
    const firsts = await sent;
    const all = await Promise.all(
      drains.map(async (drain, i) => {
        const first = { claimed: firsts[i]!.claimed!, asked: asked[i]! };
        return report(drain, await drain.run({ first }));
      }),
    );
    return { firstRequests, summaries: all.flat() };
  };

  /**
   * The drain after an enqueue the API reported by a partitioned queue's own name (a bulk enqueue
   * spread over its partitions, say): the partitions no drain of this instance covers drain
   * together, their first beats in one request, the enqueue drain's budget shared among them. One
   * reported by a partition's name (`mail~3`) drains that partition alone, as any queue.
   */
  const drainPartitions = (env: Env, partitions: readonly string[], dueAt: number, settings: BeatSettings): Promise<void> | undefined => {
    const startUntil = Date.now() + settings.drainOnEnqueueMs;
    if (settings.drainOnEnqueueMs <= 0 || dueAt > startUntil) return undefined;
    const shareds = partitions.map((name) => queueOf(env, name)!);
    const uncovered = (): IsolateQueue[] => shareds.filter((shared) => !shared.covers());
    if (dueAt <= Date.now() && uncovered().length === 0) return undefined;
    const budget = Math.max(2, Math.floor(ENQUEUE_DRAIN_BUDGET / partitions.length));
    const run = async (): Promise<void> => {
      if (dueAt > Date.now()) await sleep(dueAt - Date.now());
      const left = uncovered();
      if (left.length === 0) return;
      const { summaries } = await drainTogether(env, left, settings, startUntil + settings.beat.jobTimeoutMs, budget);
      log({ msg: 'drain after enqueue', summaries });
    };
    return run().catch((error: unknown) => log({ msg: 'drain after enqueue failed', error: String(error) }));
  };

  const onOutcome =
    (queue: string) =>
    (job: Job<unknown>, outcome: Outcome | { kind: 'fenced' }): void => {
      if (outcome.kind !== 'complete') {
        log({ msg: 'job', queue, id: job.id, outcome: outcome.kind, ...('error' in outcome ? { error: outcome.error.split('\n')[0] } : {}) });
      }
    };

  /** A drain's summaries for the log: its beats, and what it acknowledged on its own after them. */
  const report = (drain: QueueDrain, summaries: BeatSummary[]): Array<BeatSummary | AcknowledgedLater> =>
    drain.acknowledgedLater.requests > 0 ? [...summaries, { acknowledgedLater: drain.acknowledgedLater }] : summaries;

  const app = createApp<Env>({
    transport: (c) => instanceOf(c.env).transport,
    token: (c) => platform.settingsOf(c.env).EMQ_TOKEN || undefined,
    refuse: (c) => {
      const missing = platform.refuse?.(c.env);
      if (missing) return missing;
      const env = platform.settingsOf(c.env);
      if (!env.EMQ_TOKEN && env.EMQ_LOCAL_DEV !== '1') {
        return `the ${platform.label} has no EMQ_TOKEN: set it with ${platform.secretHint} (an open API is for local dev only, EMQ_LOCAL_DEV=1)`;
      }
      return undefined;
    },
    warning: (c) => (platform.settingsOf(c.env).EMQ_TOKEN ? undefined : 'no EMQ_TOKEN: this API is open (local dev only)'),
    ...(options.queueOptions ? { queueOptions: options.queueOptions } : {}),
    ...(options.dashboard === undefined ? {} : { dashboard: options.dashboard }),
    log: (entry: RequestLog) => log({ ...entry }),
    // a serverless invocation cannot park: SSE reads every second and closes after 25 s, ?wait is cut to 20 s
    streaming: BOUNDED_STREAMING,
    beforeEnqueue: (c, name) => rideEnqueue(c.env, c.executionCtx, name),
    afterEnqueue: (c, name, dueAt) => {
      // a beat that rode behind this request's enqueue claims the job (this request's ride, or one
      // of a request of the same queue that went first): unless an enqueue of the queue went
      // without one since, or did not run where it rode (a NOSCRIPT sent it again alone)
      if (rides.get(c.executionCtx)?.covered()) return;
      const drain = startDrain(c.env, name, dueAt);
      if (drain) c.executionCtx.waitUntil(drain);
    },
  });

  /**
   * A scheduled event: the first beat of every queue in one request (all an idle event sends),
   * then each queue that has work drains on its own until the deadline.
   */
  const scheduled = async (env: Env, event: ScheduledEvent): Promise<ScheduledReport> => {
    const settings = settingsOf(env);
    const trigger = { cron: event.trigger };
    const deadlineMs = Math.min(settings.deadlineMs, event.timeLeftMs ?? Infinity);
    const noJobCanStart =
      settings.noJobCanStart ??
      (settings.beat.jobTimeoutMs > deadlineMs
        ? `the job timeout (${settings.beat.jobTimeoutMs} ms) is longer than this event's drain (${Math.floor(deadlineMs)} ms, the time the platform leaves it): it only reaps and promotes`
        : undefined);
    if (noJobCanStart) log({ level: 'warn', msg: 'no job can start', cron: trigger.cron, reason: noJobCanStart });
    const deadline = Date.now() + deadlineMs;
    // a partitioned queue is each of its partitions: every one drained, the event's budget shared
    const names = served.drained();
    const budget = Math.floor(settings.beat.maxRequests / Math.max(1, names.length));
    const queues = names.map((name) => queueOf(env, name)!);
    const { firstRequests: requests, summaries: flat } = await drainTogether(env, queues, settings, deadline, budget);
    // what the event spent, and on how many scheduler slots: an idle event is its first request
    // alone; a slot fired costs its beat, its firing and the requests that run its job
    const spent = flat.reduce((n, s) => n + ('acknowledgedLater' in s ? s.acknowledgedLater.requests : s.requests), requests);
    const fired = flat.reduce((n, s) => n + ('fired' in s ? s.fired : 0), 0);
    const report: ScheduledReport = { firstRequests: requests, requests: spent, firedSlots: fired, summaries: flat };
    log({ msg: 'scheduled beat', cron: trigger.cron, ...report });
    return report;
  };

  return {
    app,
    fetch: async (request, env, ctx) => {
      const executionCtx = { waitUntil: (promise: Promise<unknown>) => ctx.waitUntil(promise), passThroughOnException: () => {}, props: {} };
      try {
        return await app.fetch(request, env, executionCtx);
      } finally {
        rides.get(executionCtx)?.cancel();
      }
    },
    scheduled: (env, event) =>
      scheduled(env, event).catch((error: unknown) => {
        log({ msg: 'scheduled beat failed', cron: event.trigger, error: String(error) });
        return undefined;
      }),
  };
}
