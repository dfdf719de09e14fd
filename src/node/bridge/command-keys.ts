import { Command } from 'ioredis';
import { slotOf } from '../../cluster-slot.js';
import type { RestCommand } from './rest-protocol.js';

/**
 * The keys of `command` by ioredis's table of Redis commands (EVAL and EVALSHA: the `numkeys`
 * after the script), [] for a keyless or unknown one. The Command is only read, never sent.
 *
 * @example
 * keysOf({ name: 'MGET', args: ['a', 'b'] }); // ['a', 'b']
 */
export function keysOf(command: RestCommand): string[] {
  return new Command(command.name, [...command.args]).getKeys().map(String);
}

/** The first key of `command`, undefined for a keyless one: what runsByMaster cuts a pipeline by. */
export const firstKeyOf = (command: RestCommand): string | undefined => keysOf(command)[0];

/** Whether the keys of `commands` hash to more than one slot: a cluster refuses such a transaction. */
export function crossSlot(commands: readonly RestCommand[]): boolean {
  const slots = new Set(commands.flatMap((command) => keysOf(command).map(slotOf)));
  return slots.size > 1;
}
