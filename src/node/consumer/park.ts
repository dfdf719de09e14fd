import { performance } from 'node:perf_hooks';
import { keyspace } from '../../keyspace.js';
import type { Claimed, Leases } from '../../lease/leases.js';
import type { BlockingTransport } from '../../transport.js';
import { sleep } from '../../timers.js';
import { backoffMs } from './backoff.js';
import { type ConsumerHooks, fireHook } from './hooks.js';
import type { LeaseTimers } from './lease-timers.js';
import type { RequestKind, Requests } from './requests.js';
import type { SettlesLoop } from './settles.js';

/** Jobs claimed behind the park's BLPOP, and how many that claim asked for. */
export interface EarlyClaim<Payload> {
  readonly claimed: Claimed<Payload>;
  readonly asked: number;
}

/** What ended a park: the loop's next request, what the claim behind the BLPOP brought, the loop's failures so far. */
export interface ParkEnd<Payload> {
  readonly next: RequestKind;
  readonly early?: EarlyClaim<Payload>;
  readonly failures: number;
}

/**
 * Where a parked consumer waits with free slots and nothing to claim: `BLPOP wake sched` on its
 * own connection for what is left of the beat. A token on the doorbell (wake) means work to claim;
 * a schedule-bell token or the beat's end means a beat is due.
 *
 * @example
 * const park = new Park(transport, leases, queue.name, { leaseMs, beatMs, hooks }, requests, timers, loop);
 * ({ next, early, failures } = await park.parkOrBackOff(claimed, room, failures));
 */
export class Park<Payload> {
  /** The doorbell (a wake token: claim) and the schedule bell (a token: beat). */
  private readonly bells: readonly string[];
  private readonly leaseMs: number;
  private readonly beatMs: number;
  private readonly hooks: ConsumerHooks<Payload>;

  constructor(
    private readonly transport: BlockingTransport,
    private readonly leases: Leases<Payload>,
    queue: string,
    settings: { readonly leaseMs: number; readonly beatMs: number; readonly hooks: ConsumerHooks<Payload> },
    private readonly requests: Requests<Payload>,
    private readonly timers: LeaseTimers<Payload>,
    /** The loop itself: a park that fails as it stops is no failure. */
    private readonly loop: Pick<SettlesLoop, 'stopping'>,
  ) {
    this.leaseMs = settings.leaseMs;
    this.beatMs = settings.beatMs;
    this.hooks = settings.hooks;
    const keys = keyspace(queue);
    this.bells = [keys.key('wake'), keys.key('sched')];
  }

  /**
   * Nothing more to claim now (`claimed` says when the next job falls due and the next lease
   * ends): arm the timers and park; a failed park backs off and beats next.
   */
  async parkOrBackOff(claimed: Claimed<Payload>, room: number, failures: number): Promise<ParkEnd<Payload>> {
    this.timers.arm(claimed.nextDueAt, claimed.nextLeaseEnd);
    try {
      return { ...(await this.wait(room)), failures };
    } catch (error) {
      if (this.loop.stopping) return { next: 'beat', failures };
      fireHook(this.hooks, 'onError', error);
      await sleep(backoffMs(failures));
      return { next: 'beat', failures: failures + 1 };
    }
  }

  /**
   * Waits on the doorbell for what is left of the beat: a wake token claims, anything else beats.
   * When the transport can, the claim for the `room` free slots rides behind the BLPOP, so Redis
   * runs it the moment a token arrives and the handler starts one round trip sooner. A claim Redis
   * refused (NOSCRIPT after a restart, say) is dropped: the loop then claims the ordinary way.
   */
  private async wait(room: number): Promise<Omit<ParkEnd<Payload>, 'failures'>> {
    const left = this.beatMs - (performance.now() - this.requests.lastBeatAt);
    if (left <= 1) return { next: 'beat' };
    if (room <= 0 || !this.transport.blpopThen) {
      const bell = await this.transport.blpop(this.bells, left);
      return { next: bell === this.bells[0] ? 'claim' : 'beat' };
    }
    const claim = this.leases.claimCall(room, this.leaseMs);
    const { key, reply } = await this.transport.blpopThen(this.bells, left, claim.call);
    const next: RequestKind = key === this.bells[0] ? 'claim' : 'beat';
    if (reply === undefined || reply instanceof Error) return { next };
    const claimed = claim.read(reply);
    // the claim ran as its reply left Redis: within a one-way trip of now
    this.timers.setClock(claimed.now, performance.now());
    return { next, early: { claimed, asked: room } };
  }
}
