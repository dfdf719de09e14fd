import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ListedFailure, unstatedReasons } from './reasons.js';

const guide = readFileSync(new URL('../../docs/guides/bullmq.md', import.meta.url), 'utf8');
const listed = (JSON.parse(readFileSync(new URL('./expected-failures.json', import.meta.url), 'utf8')) as { failures: ListedFailure[] }).failures;

describe("the BullMQ suite's expected failures", () => {
  it('each fails for a reason the guide states: a section of it, or a bullet of its Gaps list', () => {
    expect(listed.length).toBeGreaterThan(0);
    expect(unstatedReasons(listed, guide)).toEqual([]);
  });

  it('can fail: a section or a gap the guide does not have, or a reason of neither form, is reported', () => {
    const text = '## Differences\n\ntext\n\n## What does not move: old keys\n\n### Gaps\n\n- **job logs**: not kept\n\n## Next\n\n- **not a gap**: elsewhere\n';
    const failures: ListedFailure[] = [
      { file: 'a', test: 'ok section', reason: 'guide "Differences": x' },
      { file: 'a', test: 'ok gap', reason: 'gap "job logs": y' },
      { file: 'a', test: 'ok heading words', reason: 'guide "What does not move": v' },
      { file: 'a', test: 'a heading cut mid-word', reason: 'guide "What does": u' },
      { file: 'a', test: 'no section', reason: 'guide "Nowhere": z' },
      { file: 'a', test: 'gap outside the list', reason: 'gap "not a gap": w' },
      { file: 'a', test: 'free text', reason: 'undiagnosed' },
    ];
    expect(unstatedReasons(failures, text).map((line) => line.split(': ')[1])).toEqual(['a heading cut mid-word', 'no section', 'gap outside the list', 'free text']);
  });
});
