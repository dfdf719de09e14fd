/**
 * Consumer processes frozen on purpose (SIGSTOP, then SIGCONT by PID): a holder cut off from Redis
 * longer than its lease, as a partition or a long pause does, whose leases lapse meanwhile. Keeps
 * when each process was frozen, so a check can count a run's time in its process's running time
 * only, and which are frozen now (a scenario's killer leaves those alone).
 *
 * @example
 * const freezes = new Freezes();
 * await freezes.during(pid, async () => { await cancelItsJob(); await reaped(); });
 * freezes.runningMs(pid, from, to); // to - from, less the time pid was frozen in between
 */
export class Freezes {
  readonly #now = new Set<number>();
  readonly #spans = new Map<number, Array<readonly [number, number]>>();
  readonly #guarded = new Set<number>();

  /** Frozen now, or kept from kills a while longer (see guard). */
  spared(pid: number): boolean {
    return this.#now.has(pid) || this.#guarded.has(pid);
  }

  /** How many times a process was frozen. */
  get count(): number {
    return [...this.#spans.values()].reduce((sum, spans) => sum + spans.length, 0);
  }

  /** Freezes `pid` (SIGSTOP), runs `meanwhile`, then thaws it (SIGCONT) whatever `meanwhile` did. Throws at once if `pid` has exited. */
  async during<T>(pid: number, meanwhile: () => Promise<T>): Promise<T> {
    const from = Date.now();
    process.kill(pid, 'SIGSTOP'); // throws (ESRCH) when it has exited: nothing frozen
    this.#now.add(pid);
    try {
      return await meanwhile();
    } finally {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // it was killed meanwhile (the scenario's end)
      }
      this.#now.delete(pid);
      this.#spans.set(pid, [...(this.#spans.get(pid) ?? []), [from, Date.now()] as const]);
    }
  }

  /** Keeps `pid` from kills until `until` settles (its run's end is to be seen). */
  async guard<T>(pid: number, until: Promise<T>): Promise<T> {
    this.#guarded.add(pid);
    try {
      return await until;
    } finally {
      this.#guarded.delete(pid);
    }
  }

  /** Of the time from `from` to `to` (ms), how much process `pid` ran: less its frozen spans in between. */
  runningMs(pid: number, from: number, to: number): number {
    let frozen = 0;
    for (const [a, b] of this.#spans.get(pid) ?? []) frozen += Math.max(0, Math.min(b, to) - Math.max(a, from));
    return to - from - frozen;
  }
}
