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
