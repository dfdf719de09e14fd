import { readFileSync, statSync, truncateSync } from 'node:fs';

/**
 * One command of an append-only file: where it starts and ends, its name, and whether it sits
 * inside a MULTI/EXEC block (Redis 7 writes a script's effects as one such block).
 */
interface AofCommand {
  readonly start: number;
  readonly end: number;
  readonly name: string;
  readonly inMulti: boolean;
}

/** What one cut took off the end of the file. */
export interface CutResult {
  /** Bytes cut off. */
  readonly bytes: number;
  /** How long before the kill the file had the length it was cut back to, ms. */
  readonly ageMs: number;
  /** Writes cut off, the torn one too: transactions (a script's MULTI/EXEC block) and single commands. */
  readonly writes: number;
  /** The cut ends inside a transaction, in the middle of a command (a torn write). */
  readonly torn: boolean;
}

const CR = 0x0d;

/**
 * Reads the commands of an AOF's RESP text (`*<argc>`, then `$<len>` and the bytes of each
 * argument; `#` lines are annotations) until its end or its first incomplete command.
 */
function commandsOf(buf: Buffer): AofCommand[] {
  const out: AofCommand[] = [];
  let at = 0;
  let inMulti = false;
  const line = (from: number): { text: string; next: number } | undefined => {
    const cr = buf.indexOf(CR, from);
    if (cr < 0 || cr + 1 >= buf.length) return undefined;
    return { text: buf.toString('latin1', from, cr), next: cr + 2 };
  };
  for (;;) {
    const start = at;
    const head = line(at);
    if (!head) return out;
    if (head.text.startsWith('#')) {
      at = head.next;
      continue;
    }
    if (!head.text.startsWith('*')) throw new Error(`AOF: no command at offset ${start}`);
    const argc = Number(head.text.slice(1));
    let next = head.next;
    let name = '';
    for (let i = 0; i < argc; i++) {
      const len = line(next);
      if (!len) return out;
      const size = Number(len.text.slice(1));
      if (len.next + size + 2 > buf.length) return out;
      if (i === 0) name = buf.toString('latin1', len.next, len.next + size).toUpperCase();
      next = len.next + size + 2;
    }
    if (name === 'MULTI') inMulti = true;
    out.push({ start, end: next, name, inMulti: inMulti && name !== 'MULTI' && name !== 'EXEC' });
    if (name === 'EXEC') inMulti = false;
    at = next;
  }
}

/** Offsets after which the file holds whole writes only: after a command outside MULTI, or an EXEC. */
const wholeEnds = (commands: readonly AofCommand[]): number[] => commands.filter((c) => !c.inMulti && c.name !== 'MULTI').map((c) => c.end);

/**
 * What an OS crash does to an AOF kept with `appendfsync everysec`: Redis writes a reply's writes
 * to the file (the page cache) before it replies, but fsyncs them only once a second, in the
 * background, so a power loss takes back what was written since the last fsync. A SIGKILL of
 * redis-server alone loses only the writes it held back while a background fsync ran (it replies
 * before writing those); the kernel still writes out the rest. This emulates the crash by cutting
 * the file back after the kill: it samples the incremental file's length every few ms while Redis
 * runs, and `cut()` truncates the file to the length it had `windowMs` before the kill, at the end
 * of the last whole write by then (a clean cut), or torn in the middle of a command inside the
 * next transaction, as a write cut short by the crash leaves it.
 *
 * @example
 * const cuts = new PowerCut(redis.incrFile());
 * cuts.start();
 * const killedAt = performance.now();
 * await redis.kill();
 * const { bytes, writes } = cuts.cut(killedAt, 1_000, false);
 * await redis.start();
 */
export class PowerCut {
  /** The file's length over time, oldest first: (performance.now(), bytes). */
  private samples: Array<{ at: number; size: number }> = [];
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly file: string,
    private readonly everyMs = 5,
  ) {}

  /** Starts sampling the file's length. */
  start(): void {
    this.sample();
    this.timer ??= setInterval(() => this.sample(), this.everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sample(): void {
    const at = performance.now();
    // the file is gone once its server's directory is removed: nothing left to watch
    const size = statSync(this.file, { throwIfNoEntry: false })?.size;
    if (size === undefined) return;
    this.samples.push({ at, size });
    // a few seconds of history is all a cut looks at
    while (this.samples.length > 2 && this.samples[0]!.at < at - 5_000) this.samples.shift();
  }

  /**
   * Cuts the file (its server killed and gone) back to its length `windowMs` before `killedAt`,
   * to the end of a whole write, or `torn` inside the first transaction after that. Sampling
   * starts again from the cut file.
   */
  cut(killedAt: number, windowMs: number, torn: boolean): CutResult {
    const buf = readFileSync(this.file);
    const then = [...this.samples].reverse().find((s) => s.at <= killedAt - windowMs) ?? this.samples[0] ?? { at: killedAt, size: buf.length };
    const commands = commandsOf(buf);
    const ends = wholeEnds(commands);
    const clean = [0, ...ends].filter((end) => end <= then.size).pop()!;
    let at = clean;
    if (torn) {
      // inside the first transaction after the clean cut: its first command whole, its second cut in half
      const inner = commands.filter((c) => c.inMulti && c.start >= clean);
      const second = inner.find((c, i) => i > 0 && inner[i - 1]!.end === c.start);
      if (second) at = second.start + Math.floor((second.end - second.start) / 2);
    }
    const writes = ends.filter((end) => end > clean).length;
    truncateSync(this.file, at);
    this.samples = [];
    this.sample();
    return { bytes: buf.length - at, ageMs: Math.round(killedAt - then.at), writes, torn: at !== clean };
  }
}
