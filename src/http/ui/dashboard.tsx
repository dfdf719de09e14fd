/** @jsxImportSource hono/jsx */
import type { Context, Env, Hono } from 'hono';
import type { JSX } from 'hono/jsx/jsx-runtime';
import { streamSSE } from 'hono/streaming';
import type { QueueEvent } from '../../events/events.js';
import type { JobRecord, JobState } from '../../job.js';
import type { GroupInfo, GroupsPage } from '../../queue/groups.js';
import type { QueueSurface } from '../../queue/surface.js';
import { queueOverviews } from '../../queue/registry.js';
import { sleep, startInterval, startTimer } from '../../timers.js';
import type { Transport } from '../../transport.js';
import { problem } from '../problem.js';
import { DASHBOARD_SCRIPT } from './client-script.js';
import { KEYS_SHOWN, KeysSection } from './concurrency-keys.js';
import { DEAD_PAGE, DeadPage } from './dead-page.js';
import { GroupPage, GroupsTable } from './group-page.js';
import { JobPage, type Timeline } from './job-page.js';
import { JOBS_PAGE, LISTED_STATES, QueuePage } from './queue-page.js';
import { QUEUES_PAGE, QueuesPage } from './queues-page.js';
import { type Liveness, MAX_LIVE_QUEUES, Shell } from './shell.js';
import { DASHBOARD_CSS } from './styles.js';

/** What the dashboard's routes need of the app. */
export interface DashboardDeps<E extends Env> {
  /** The transport of a request. */
  readonly transport: (c: Context<E>) => Transport;
  /** A queue by name, as the API resolves it (partitioned or not). */
  readonly queueOf: (c: Context<E>, name: string) => Promise<QueueSurface>;
  /** How pages stay live, and how long `/ui/live` may hold a response (undefined: while the client stays). */
  readonly live: Liveness & { readonly streamMs?: number };
}

/**
 * The page's security headers: its script and stylesheet from this origin only, requests to this
 * origin only, no framing (no click-jacking of its buttons), no referrer.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/** Headers of the page's script and stylesheet: text that changes only with the package. */
const asset = (type: string): Record<string, string> => ({ 'Content-Type': type, 'Cache-Control': 'public, max-age=300', ...SECURITY_HEADERS });

/** A rendered fragment, the answer of a `/ui/part` route: HTML, never cached. */
async function fragment(c: Context, node: JSX.Element): Promise<Response> {
  return c.html(await node.toString(), 200, { 'Cache-Control': 'no-store', ...SECURITY_HEADERS });
}


/** `?offset=` as a non-negative integer, 0 when absent; undefined when malformed. */
function offsetOf(c: Context): number | undefined {
  const raw = c.req.query('offset');
  if (raw === undefined || raw === '') return 0;
  return /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
}

/**
 * The dashboard's frame (`/ui` and every page under it) and its assets: no data, so served
 * before the bearer token is checked. Register before the app's refusal and auth middleware.
 */
export function registerDashboardShell<E extends Env>(app: Hono<E>, live: Liveness): void {
  app.get('/ui/app.js', (c) => c.body(DASHBOARD_SCRIPT, 200, asset('text/javascript; charset=utf-8')));
  app.get('/ui/app.css', (c) => c.body(DASHBOARD_CSS, 200, asset('text/css; charset=utf-8')));
  const shell = async (c: Context<E>) =>
    c.html(`<!doctype html>${await (<Shell live={live} />).toString()}`, 200, { 'Cache-Control': 'no-store', ...SECURITY_HEADERS });
  app.get('/ui', shell);
  app.get('/ui/', shell);
  app.get('/ui/queues/*', shell);
}

/**
 * The dashboard's content, behind the bearer token like every API route: `/ui/part/...` answers
 * the HTML of the page at `/ui/...` (the shell's script fetches it), `/ui/live` tells of changes
 * of the queues a page shows (SSE). Register after the app's auth middleware.
 */
export function registerDashboardParts<E extends Env>(app: Hono<E>, deps: DashboardDeps<E>): void {
  app.get('/ui/part', async (c) => {
    const offset = offsetOf(c);
    if (offset === undefined) return problem(c, 'EMQARG', 'offset must be a non-negative integer');
    const prefix = c.req.query('prefix') ?? '';
    const queues = await queueOverviews(deps.transport(c), { prefix, offset, limit: QUEUES_PAGE });
    return fragment(c, <QueuesPage queues={queues} prefix={prefix} offset={offset} />);
  });

  app.get('/ui/part/queues/:queue', async (c) => {
    const name = c.req.param('queue');
    const state = (c.req.query('state') ?? 'pending') as JobState;
    if (!(LISTED_STATES as readonly string[]).includes(state)) return problem(c, 'EMQARG', `state must be one of ${LISTED_STATES.join(', ')}`);
    const offset = offsetOf(c);
    if (offset === undefined) return problem(c, 'EMQARG', 'offset must be a non-negative integer');
    const q = await deps.queueOf(c, name);
    const [stats, jobs, schedulers, groups, keys] = await Promise.all([
      q.stats(),
      q.getJobs(state, { limit: JOBS_PAGE, offset }),
      q.listSchedulers(),
      groupsOf(q, c.req.query('groups')),
      // a partitioned queue refuses keys: it has none to show
      q.partitions === 1 ? q.keyLimits() : [],
    ]);
    return fragment(
      c,
      <QueuePage
        stats={stats}
        state={state}
        offset={offset}
        jobs={jobs}
        schedulers={schedulers}
        groups={<GroupsTable queue={name} groups={groups.groups} more={groups.cursor} />}
        keys={<KeysSection queue={name} keys={keys.slice(0, KEYS_SHOWN)} total={keys.length} />}
      />,
    );
  });

  app.get('/ui/part/queues/:queue/dead', async (c) => {
    const name = c.req.param('queue');
    const offset = offsetOf(c);
    if (offset === undefined) return problem(c, 'EMQARG', 'offset must be a non-negative integer');
    const q = await deps.queueOf(c, name);
    const [jobs, stats] = await Promise.all([q.getJobs('dead', { limit: DEAD_PAGE, offset }), q.stats()]);
    return fragment(c, <DeadPage queue={name} jobs={jobs} offset={offset} total={stats.counts.dead} />);
  });

  app.get('/ui/part/queues/:queue/jobs/:id', async (c) => {
    const { queue: name, id } = c.req.param();
    const q = await deps.queueOf(c, name);
    const job = await q.getJob(id);
    if (!job) return problem(c, 'EMQNOTFOUND', `no job ${id} in queue ${name}`);
    return fragment(c, <JobPage queue={name} job={job} timeline={await timelineOf(q, job)} now={Date.now()} />);
  });

  app.get('/ui/part/queues/:queue/groups/:group', async (c) => {
    const { queue: name, group } = c.req.param();
    const q = await deps.queueOf(c, name);
    const found = await groupOf(q, group);
    if (!found) return problem(c, 'EMQNOTFOUND', `no group ${group} in queue ${name}`);
    return fragment(c, <GroupPage queue={name} group={found} />);
  });

  app.get('/ui/live', async (c) => {
    const names = [...new Set(c.req.queries('queue') ?? [])];
    if (names.length === 0 || names.length > MAX_LIVE_QUEUES) return problem(c, 'EMQARG', `name 1 to ${MAX_LIVE_QUEUES} queues (?queue=a&queue=b)`);
    const queues = await Promise.all(names.map((name) => deps.queueOf(c, name)));
    return streamSSE(c, async (stream) => {
      const stop = new AbortController();
      stream.onAbort(() => stop.abort());
      const timer = deps.live.streamMs === undefined ? undefined : startTimer(() => stop.abort(), deps.live.streamMs);
      const heartbeat = startInterval(() => void stream.write(': keep-alive\n\n'), 15_000);
      const news = new Mailbox(stop.signal);
      // From a few seconds back, not from "now": "now" is the stream's end when an iterator first
      // reads, after `ready` went out, so a change between the page's fetch of its content and
      // that read would be missed. An entry's id is its server time: a change replayed costs one
      // reload, one missed a stale page.
      const after = `${Math.max(0, Date.now() - LIVE_REPLAY_MS)}-0`;
      const followers = queues.map(async (q, i) => {
        try {
          for await (const _ of q.events({ after, signal: stop.signal, pollMs: deps.live.pollMs })) news.post(names[i]!);
        } catch {
          // Redis failed: the response ends, and the page reconnects
          stop.abort();
        }
      });
      try {
        await stream.writeSSE({ event: 'ready', data: names.join(' ') });
        while (!stop.signal.aborted) {
          const changed = await news.take();
          if (changed.length > 0) await stream.writeSSE({ event: 'change', data: changed.join(' ') });
          // a burst of events (a batch settling) is one message: the page reloads once
          await sleep(250);
        }
      } finally {
        stop.abort();
        timer?.cancel();
        heartbeat.cancel();
        await Promise.allSettled(followers);
      }
    });
  });
}

/** How far back `/ui/live` starts reading each queue's events, in ms. */
const LIVE_REPLAY_MS = 5_000;

/** Names posted since the last take, each once; `take` waits for one (or the signal). */
class Mailbox {
  private readonly names = new Set<string>();
  private wake: (() => void) | undefined;

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', () => this.wake?.(), { once: true });
  }

  post(name: string): void {
    this.names.add(name);
    this.wake?.();
  }

  async take(): Promise<string[]> {
    if (this.names.size === 0 && !this.signal.aborted) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    const taken = [...this.names];
    this.names.clear();
    return taken;
  }
}

/** How many entries of the events stream a job's timeline reads at most, a page at a time. */
const TIMELINE_PAGES = 4;
const TIMELINE_PAGE = 500;

/**
 * A job's events, read from the stream from when the job was created (an entry's id is its
 * server time), so a recent job's timeline costs a page or two, whatever the stream holds.
 */
async function timelineOf(q: QueueSurface, job: JobRecord): Promise<Timeline> {
  // a partitioned queue's job is in one partition's stream
  const source = q.partitionOfAdded(job.id, job.group ?? null);
  let after = `${Math.max(0, job.createdAt - 1)}-0`;
  const events: QueueEvent[] = [];
  for (let page = 0; page < TIMELINE_PAGES; page++) {
    const read = await source.readEvents({ after, limit: TIMELINE_PAGE });
    for (const e of read.events) if ('jobId' in e && e.jobId === job.id) events.push(e);
    if (read.next === after) return { events, ...(events.length === 0 ? { note: 'No event of this job in the stream: the queue’s events are off, or trimmed past it.' } : {}) };
    after = read.next;
  }
  return { events, note: `Read ${TIMELINE_PAGES * TIMELINE_PAGE} entries from the job’s creation on; later events are not shown.` };
}

/** How many groups the queue page lists at a time. */
const GROUPS_PAGE = 50;

/** A page of the queue's groups, from `cursor` (undefined: the first page). */
async function groupsOf(q: QueueSurface, cursor: string | undefined): Promise<GroupsPage> {
  return q.groups({ limit: GROUPS_PAGE, ...(cursor === undefined || cursor === '' ? {} : { cursor }) });
}

/** One group of the queue, or null when the queue has none by that name (its prefix walk, kept to that name). */
async function groupOf(q: QueueSurface, group: string): Promise<GroupInfo | null> {
  let cursor: string | undefined;
  do {
    const page = await q.groups({ prefix: group, limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    const found = page.groups.find((g) => g.group === group);
    if (found) return found;
    cursor = page.cursor ?? undefined;
  } while (cursor !== undefined);
  return null;
}
