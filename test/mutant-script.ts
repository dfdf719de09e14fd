import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { ScriptOp } from '../src/ops/op.js';

/**
 * `op` with its script's text `from` replaced by `to`, under a name and sha1 of its own: a mutant
 * transition a test runs to show a property (or the keyspace checker) catches what it breaks.
 * Throws when the script holds no `from`, so a mutant never passes by patching nothing.
 *
 * @example
 * const broken = mutantOf(claimOp(4, 60_000), 'claim-ignoring-key-rates', 'if s[3] and s[5] >= s[3] then', 'if false then');
 */
export function mutantOf<T>(op: ScriptOp<T>, name: string, from: string, to: string): ScriptOp<T> {
  // a function, not a string, as the replacement: `$'` in one means the text after the match
  const lua = op.script.lua.replace(from, () => to);
  if (lua === op.script.lua) throw new Error(`the mutant ${name} found no ${JSON.stringify(from)} to break`);
  return { ...op, script: { name, sha1: createHash('sha1').update(lua).digest('hex'), lua } };
}

/**
 * How a seeded property over `runs` reports a mutant: the error fast-check throws (its text says
 * after how many runs it failed), or '' when every run passed. `run` answers what is wrong with a
 * run of the mutant, undefined when nothing is.
 *
 * @example
 * expect(await mutantFailure(runArb, (ops) => run(ops, true), 3)).toMatch(/Property failed after 1 tests/);
 */
export async function mutantFailure<T>(runs: fc.Arbitrary<T>, run: (value: T) => Promise<string | undefined>, seed: number, numRuns = 25): Promise<string> {
  try {
    await fc.assert(
      fc.asyncProperty(runs, async (value) => {
        const wrong = await run(value);
        if (wrong !== undefined) throw new Error(wrong);
      }),
      { numRuns, seed },
    );
    return '';
  } catch (error) {
    return String(error);
  }
}
