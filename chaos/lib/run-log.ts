import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/**
 * A handler run's start, as its process logged it before the handler did anything: the job, its
 * claim (lease token and attempt), the process and its clock (`Date.now()`: the scenario's clock
 * too, one machine), and whether the run's signal was aborted already.
 */
export interface RunStart {
  readonly k: 's';
  readonly id: string;
  readonly token: number;
  readonly attempt: number;
  readonly pid: number;
  readonly at: number;
  readonly aborted: boolean;
}

/**
 * A handler run's end: how it ended (`outcome`, the handler's own word for what it returned or
 * threw) and, when its signal aborted, with what (`abortedBy`: the reason's class name) and when.
 */
export interface RunEnd {
  readonly k: 'e';
  readonly id: string;
  readonly token: number;
  readonly attempt: number;
  readonly pid: number;
  readonly at: number;
  readonly outcome: string;
  readonly abortedBy?: string;
  readonly abortedAt?: number;
}

/** A consumer hook that fired (`onCancelled`, ...) for a job. */
export interface HookFired {
  readonly k: 'h';
  readonly id: string;
  readonly hook: string;
  readonly pid: number;
  readonly at: number;
}

export type RunRecord = RunStart | RunEnd | HookFired;

/**
 * A file of run records, one JSON line each, appended by the consumer processes of a scenario
 * with one synchronous `write` per record (O_APPEND: lines of a few hundred bytes from several
 * processes do not interleave), so a record is in the file before the handler goes on and a
 * SIGKILL loses none that was written. Outside Redis on purpose: a restarted redis-server can
 * neither lose nor replay a record. A line cut by a kill mid-write is skipped when read.
 *
 * @example
 * const log = new RunLog(join(dir, 'runs.jsonl'));
 * log.append({ k: 's', id: job.id, token: job.token, attempt: job.attempt, pid: process.pid, at: Date.now(), aborted: false });
 * const { records, torn } = log.read();
 */
export class RunLog {
  constructor(readonly path: string) {}

  append(record: RunRecord): void {
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
  }

  /** Every whole record, in the file's order, and how many lines were not whole. */
  read(): { records: RunRecord[]; torn: number } {
    if (!existsSync(this.path)) return { records: [], torn: 0 };
    const records: RunRecord[] = [];
    let torn = 0;
    for (const line of readFileSync(this.path, 'utf8').split('\n')) {
      if (line === '') continue;
      try {
        records.push(JSON.parse(line) as RunRecord);
      } catch {
        torn++;
      }
    }
    return { records, torn };
  }
}
