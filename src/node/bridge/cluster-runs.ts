import { type Cluster, Command } from 'ioredis';
import { slotOf } from '../../cluster-slot.js';
import type { RestCommand } from './rest-protocol.js';

/**
 * The keys of `command` by ioredis's table of Redis commands (EVAL and EVALSHA: the `numkeys`
 * after the script), [] for a keyless or unknown one. The Command is only read, never sent.
 */
function keysOf(command: RestCommand): string[] {
  return new Command(command.name, [...command.args]).getKeys().map(String);
}

/**
 * `commands` cut into runs of consecutive commands that one master of `cluster` serves, by the
 * slot of each command's first key (the client's map of slots), in order: what one pipeline of
 * a cluster client may carry. A keyless command joins the run it comes in (a first run of keyless ones
 * is joined by the first keyed command).
 *
 * @example
 * for (const run of runsByMaster(cluster, commands)) await send(run); // one pipeline per run, in order
 */
export function runsByMaster(cluster: Cluster, commands: readonly RestCommand[]): RestCommand[][] {
  const runs: RestCommand[][] = [];
  let last: string | undefined;
  for (const command of commands) {
    const key = keysOf(command)[0];
    const master = key === undefined ? undefined : cluster.slots[slotOf(key)]?.[0];
    if (runs.length > 0 && (master === undefined || last === undefined || master === last)) {
      runs[runs.length - 1]!.push(command);
    } else {
      runs.push([command]);
    }
    if (master !== undefined) last = master;
  }
  return runs;
}

/** Whether the keys of `commands` hash to more than one slot: a cluster refuses such a transaction. */
export function crossSlot(commands: readonly RestCommand[]): boolean {
  const slots = new Set(commands.flatMap((command) => keysOf(command).map(slotOf)));
  return slots.size > 1;
}
