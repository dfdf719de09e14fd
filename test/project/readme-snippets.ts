/** A fenced TypeScript block of a Markdown file, and how the README test treats it. */
export interface Snippet {
  /** The Markdown line (1-based) of the block's first line of code. */
  readonly line: number;
  readonly code: string;
  /**
   * How it runs: `exits` (runs to its end and exits 0 on its own), `until-sigterm` (runs until
   * SIGTERM, then exits 0), or `not-run` with the reason.
   */
  readonly run: { readonly kind: 'exits' } | { readonly kind: 'until-sigterm' } | { readonly kind: 'not-run'; readonly reason: string };
}

const OPEN = /^```(ts|typescript)\s*$/;
const CLOSE = /^```\s*$/;
const NOT_RUN = /^<!--\s*not run:\s*(.+?)\s*-->$/;
const UNTIL_SIGTERM = /^<!--\s*runs until SIGTERM\s*-->$/;

/**
 * Every ```ts (or ```typescript) block of `markdown`, in order. The line just above a block (blank
 * lines skipped) may mark it: `<!-- not run: <why> -->` (type-checked only: a Worker module, a
 * fragment that continues another block) or `<!-- runs until SIGTERM -->` (a long-running
 * process, stopped with SIGTERM). A block left open is an error, not a silent skip.
 */
export function snippets(markdown: string): Snippet[] {
  const lines = markdown.split('\n');
  const found: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!OPEN.test(lines[i]!)) {
      // another fenced block (sh, json...): skip it whole, so a ``` inside is not taken for ours
      if (lines[i]!.startsWith('```')) for (i++; i < lines.length && !CLOSE.test(lines[i]!); i++);
      continue;
    }
    let end = i + 1;
    while (end < lines.length && !CLOSE.test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`the block opened at line ${i + 1} is never closed`);
    let above = i - 1;
    while (above >= 0 && lines[above]!.trim() === '') above--;
    const marker = above >= 0 ? lines[above]!.trim() : '';
    const notRun = NOT_RUN.exec(marker);
    found.push({
      line: i + 2,
      code: lines.slice(i + 1, end).join('\n'),
      run: notRun ? { kind: 'not-run', reason: notRun[1]! } : UNTIL_SIGTERM.test(marker) ? { kind: 'until-sigterm' } : { kind: 'exits' },
    });
    i = end;
  }
  return found;
}
