import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Consumer processes of a scenario: each runs `chaos/children/<script>` with `args` (under tsx),
 * and is one of `live` from its start until it exits. A scenario kills them by their PIDs (the
 * faults it makes) and every live one at its end.
 *
 * @example
 * const consumers = new ChildConsumers('consumer.ts', [ctx.redisUrl, QUEUE, RUNS]);
 * await Promise.all([0, 1, 2].map(() => consumers.spawn()));
 * const victim = [...consumers.live][0];
 * try { ... } finally { consumers.killAll(); }
 */
export class ChildConsumers {
  readonly #live = new Set<ChildProcess>();

  constructor(
    private readonly script: string,
    private readonly args: readonly string[],
  ) {}

  /** The processes started and not exited yet. */
  get live(): ReadonlySet<ChildProcess> {
    return this.#live;
  }

  /**
   * Starts one more; resolves with it once it printed `ready` (its consumer runs), or once it
   * exited before that (killed by a fault while starting: waiting on would hang the scenario).
   */
  spawn(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'children', this.script), ...this.args], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    this.#live.add(child);
    child.on('exit', () => this.#live.delete(child));
    return new Promise<ChildProcess>((resolve) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve(child));
      child.on('exit', () => resolve(child));
    });
  }

  /** SIGKILLs every live one. */
  killAll(): void {
    for (const child of this.#live) if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  }
}

/**
 * The kills of a scenario's consumer processes: once started, every `everyMs` one live process of
 * `consumers`, picked at random, is SIGKILLed by its PID and another spawned in its place (not
 * waited for), its kill's time (`Date.now()`) kept in `killedAt` under `keyOf(pid)` (the PID
 * itself unless told otherwise). A process `spare` says yes to is never picked (a frozen holder
 * kept to its run's end). Nothing is killed once `stop()` was called; it resolves when the loop
 * has ended.
 *
 * @example
 * const killer = new ConsumerKiller(consumers, 800);
 * killer.start();
 * try { ... await killer.stop(); ... } finally { await killer.stop(); consumers.killAll(); }
 */
export class ConsumerKiller<K extends number | string = number> {
  /** When each killed process was killed, by its key. */
  readonly killedAt = new Map<K, number>();
  #killing = false;
  #loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly consumers: ChildConsumers,
    private readonly everyMs: number,
    private readonly options: { readonly spare?: (pid: number) => boolean; readonly keyOf?: (pid: number) => K } = {},
  ) {}

  start(): void {
    this.#killing = true;
    this.#loop = (async () => {
      const { spare, keyOf = (pid: number) => pid as K } = this.options;
      while (this.#killing) {
        await new Promise((resolve) => setTimeout(resolve, this.everyMs));
        const choices = spare ? [...this.consumers.live].filter((c) => c.pid !== undefined && !spare(c.pid)) : [...this.consumers.live];
        const victim = choices[Math.floor(Math.random() * choices.length)];
        if (!this.#killing || victim?.pid === undefined) continue;
        this.killedAt.set(keyOf(victim.pid), Date.now());
        process.kill(victim.pid, 'SIGKILL');
        void this.consumers.spawn();
      }
    })();
  }

  /** Stops the kills; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.#killing = false;
    await this.#loop;
  }
}
