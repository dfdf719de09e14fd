/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** One `emq` command: its arguments (those after its name) in, its exit code out. */
export type Command = (args: string[]) => Promise<number>;

/** Commands by the name `emq <name>` runs them under. */
export type Commands = Record<string, Command>;

/** Prints `value` as one line of JSON on stdout: how the commands answer. */
export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};
