/**
 * The Levenshtein distance of `a` and `b`: the fewest single-character insertions, deletions and
 * substitutions that turn one into the other. Two rows of the table, not the table: the CLI asks
 * this of a handful of short names.
 */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate `input` most likely meant, for a "did you mean" line: the only candidate that
 * starts with it (`--lease` for `--lease-ms`), else the closest by edit distance when that is at
 * most 2, or a third of the input's length for longer names (ties: the first candidate);
 * undefined when nothing is that close.
 *
 * @example
 * nearest('--concurency', ['--handler', '--concurrency']) // '--concurrency'
 */
export function nearest(input: string, candidates: readonly string[]): string | undefined {
  const extending = candidates.filter((c) => c.startsWith(input) && c !== input);
  if (input.length >= 3 && extending.length === 1) return extending[0];
  const limit = Math.max(2, Math.floor(input.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(input, candidate);
    if (distance <= limit && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
