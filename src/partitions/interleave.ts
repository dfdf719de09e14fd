/**
 * Several async iterables' items as each comes, every source's order kept; ends when all have.
 * `stop` is aborted when the caller stops early: the sources park on their reads, and the abort
 * ends them so their return() settles.
 *
 * @example
 * for await (const event of interleave(parts.map((p) => p.events({ signal })), stop)) console.log(event);
 */
export async function* interleave<T>(sources: ReadonlyArray<AsyncIterable<T>>, stop: AbortController): AsyncGenerator<T> {
  const iterators = sources.map((source) => source[Symbol.asyncIterator]());
  const next = (i: number) => iterators[i]!.next().then((result) => ({ i, result }));
  const waiting = new Map(iterators.map((_, i) => [i, next(i)] as const));
  try {
    while (waiting.size > 0) {
      const { i, result } = await Promise.race(waiting.values());
      if (result.done) {
        waiting.delete(i);
        continue;
      }
      waiting.set(i, next(i));
      yield result.value;
    }
  } finally {
    stop.abort();
    await Promise.allSettled(iterators.map((it) => it.return?.()));
  }
}
