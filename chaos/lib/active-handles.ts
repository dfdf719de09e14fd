/** What a refused call must not leave behind: sockets, servers, child processes and their pipes. */
export const CONNECTIONS: ReadonlySet<string> = new Set(['TCPSocketWrap', 'TCPServerWrap', 'PipeWrap', 'ProcessWrap']);
/** Timers, checked apart: ioredis keeps a bounded one (2 s) after disconnecting a closed socket. */
export const TIMERS: ReadonlySet<string> = new Set(['Timeout']);

/** The process's live resources of the `kinds` given, counted by kind. */
export function activeHandles(kinds: ReadonlySet<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (kinds.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

/** The kinds of which `now` has more than `before`, as `kind+n` words ('' when none). */
function excess(before: ReadonlyMap<string, number>, now: ReadonlyMap<string, number>): string {
  return [...now].filter(([kind, n]) => n > (before.get(kind) ?? 0)).map(([kind, n]) => `${kind}+${n - (before.get(kind) ?? 0)}`).join(' ');
}

/**
 * Waits up to `graceMs` for the process's resources of the kinds `before` was taken of to come
 * back to `before` (a closed socket goes a tick or two after its close resolves, a new one comes
 * a tick after its client is made) and says what is still left over: '' when nothing is.
 *
 * @example
 * const before = activeHandles(CONNECTIONS);
 * await main(['stats', 'bad name']);
 * const left = await handlesLeftOver(before, CONNECTIONS); // '' or e.g. 'TCPSocketWrap+1'
 */
export async function handlesLeftOver(before: ReadonlyMap<string, number>, kinds: ReadonlySet<string>, graceMs = 2_000): Promise<string> {
  const until = performance.now() + graceMs;
  // a client opens its socket a little after it is made (ioredis connects on a later turn): look after 10 ms
  await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setTimeout(resolve, 10));
  let left = excess(before, activeHandles(kinds));
  while (left !== '' && performance.now() < until) {
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
    left = excess(before, activeHandles(kinds));
  }
  return left;
}
