/**
 * Every failure the BullMQ suite lists must fail for a reason the guide states (issue 36): a
 * reason is `guide "<section>": ...`, naming a `##` section of docs/guides/bullmq.md that states
 * the difference (its heading, or the heading's words before its first `:` or `,`), or `gap "<name>": ...`, naming a bullet `**<name>**` of that guide's "Gaps"
 * list. This reads a failure list against the guide's text and answers what is not stated.
 */

/** One listed failure: the BullMQ test file (without `.test.ts`), the test's full name, why it fails. */
export interface ListedFailure {
  readonly file: string;
  readonly test: string;
  readonly reason: string;
}

const GUIDE = /^guide "([^"]+)"/;
const GAP = /^gap "([^"]+)"/;

/**
 * The failures whose reason the guide does not state, each as `<file>: <test>: <why>`.
 *
 * @example
 * unstatedReasons([{ file: 'job', test: 't', reason: 'gap "job logs": ...' }], guideText); // [] when the guide lists **job logs**
 */
export function unstatedReasons(failures: readonly ListedFailure[], guide: string): string[] {
  const sections = new Set([...guide.matchAll(/^## (.+)$/gm)].map((m) => m[1]!.trim()));
  // the Gaps list: from its heading to the next heading of its level or above
  const heading = /^### Gaps$/m.exec(guide);
  const body = heading ? guide.slice(heading.index + heading[0].length) : '';
  const next = body.search(/^#{2,3} /m);
  const gaps = next < 0 ? body : body.slice(0, next);
  const named = new Set([...gaps.matchAll(/^- \*\*([^*]+)\*\*/gm)].map((m) => m[1]!.trim()));
  const out: string[] = [];
  for (const { file, test, reason } of failures) {
    const section = GUIDE.exec(reason)?.[1];
    const gap = GAP.exec(reason)?.[1];
    if (section !== undefined) {
      // a section is named by its heading, or the heading's words before its first `:` or `,`
      const has = [...sections].some((h) => h === section || h.startsWith(`${section}:`) || h.startsWith(`${section},`));
      if (!has) out.push(`${file}: ${test}: the guide has no section "${section}"`);
    } else if (gap !== undefined) {
      if (!named.has(gap)) out.push(`${file}: ${test}: the guide's Gaps list has no **${gap}**`);
    } else {
      out.push(`${file}: ${test}: a reason neither guide "<section>" nor gap "<name>": ${reason.slice(0, 80)}`);
    }
  }
  return out;
}
