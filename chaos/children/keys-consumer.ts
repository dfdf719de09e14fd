// A consumer process for the keys-faults scenario, killed by its parent (SIGKILL by PID) at
// random: one Consumer of the scenario's queue over ioredis (a beat every 500 ms: its reaper ends
// a killed consumer's runs once their 1 s leases lapse, giving their keys' slots back), the handler
// of chaos/lib/keys-jobs.ts logging every run's start and end in the run log the parent reads (a
// file: a restarted Redis neither loses nor replays a record).
//
// KEYS_MUTANT=rate (a mutant, for checking the scenario catches it): every script's claim check
// of a key's rate (includes/key_slots.lua's take) made to let every job through, in this process's
// copy of the scripts (their text patched and hashed again, as the property tests' mutant claims
// are), so its claims and beats start jobs past their keys' rates.
import { createHash } from 'node:crypto';
import { type ScriptSource, scripts } from '../../src/generated/scripts.js';
import { KEYS_LEASE_MS, KEYS_QUEUE, type KeysPayload, keysHandler } from '../lib/keys-jobs.js';
import { runLoggedConsumer } from '../lib/logged-jobs.js';

if (process.env.KEYS_MUTANT === 'rate') {
  const table = scripts as unknown as Record<string, ScriptSource>;
  let patched = 0;
  for (const [name, script] of Object.entries(table)) {
    // a function, not a string, as the replacement: `$'` in one means the text after the match
    const lua = script.lua.replace('if s[3] and s[5] >= s[3] then', () => 'if false then');
    if (lua === script.lua) continue;
    table[name] = { ...script, sha1: createHash('sha1').update(lua).digest('hex'), lua };
    patched++;
  }
  if (patched === 0) throw new Error('the rate mutant found no rate check to break');
}

runLoggedConsumer<KeysPayload>(KEYS_QUEUE, KEYS_LEASE_MS, keysHandler);
