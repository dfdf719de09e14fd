import { describe, expect, it } from 'vitest';
import { applies, compareWithList, firstLine, parseJunit, type Expected } from './junit.js';

/** A bun JUnit report of two files, shaped as `bun test --reporter=junit` writes it (bun 1.4). */
const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="bun test" tests="5" failures="2" skipped="1">
  <testsuite name="pkg/commands/get.test.ts" file="pkg/commands/get.test.ts" tests="2">
    <testcase name="gets a value" classname="" time="0.003" file="pkg/commands/get.test.ts" line="12" assertions="1" />
    <testsuite name="when &apos;k&apos; is missing" file="pkg/commands/get.test.ts" line="20" tests="1">
      <testsuite name="inner" file="pkg/commands/get.test.ts" line="21" tests="1">
        <testcase name="returns null" classname="inner &gt; when &apos;k&apos; is missing" file="pkg/commands/get.test.ts" line="22">
          <failure type="UpstashError" message="ERR unknown command &apos;HEXPIRE&apos;, with args beginning with: &apos;a&apos;, command was: [&quot;hexpire&quot;]&#10;more">UpstashError: ...</failure>
        </testcase>
      </testsuite>
    </testsuite>
  </testsuite>
  <testsuite name="pkg/pipeline.test.ts" file="pkg/pipeline.test.ts" tests="3">
    <testcase name="works" classname="" file="pkg/pipeline.test.ts" line="5" assertions="0">
      <failure type="AssertionError" message="expect(received).toEqual(expected)">x</failure>
    </testcase>
    <testcase name="skipped one" classname="" file="pkg/pipeline.test.ts" line="9"><skipped /></testcase>
    <testcase name="passes" classname="" file="pkg/pipeline.test.ts" line="12" assertions="1" />
  </testsuite>
</testsuites>`;

describe('the upstash-suite harness', () => {
  it('reads bun\'s JUnit report by file, a test named by its describe blocks outermost first', () => {
    const files = parseJunit(REPORT);
    expect(Object.keys(files)).toEqual(['commands/get', 'pipeline']);
    expect(files['commands/get']).toEqual({
      summary: { tests: 2, passed: 1, failed: 1, skipped: 0, failing: ["when 'k' is missing > inner > returns null"] },
      messages: { "when 'k' is missing > inner > returns null": "ERR unknown command 'HEXPIRE'" },
    });
    expect(files.pipeline!.summary).toEqual({ tests: 3, passed: 1, failed: 1, skipped: 1, failing: ['works'] });
  });

  it('keeps a failure\'s first line without the random keys upstash and Redis append', () => {
    expect(firstLine('\nERR x, command was: ["get","k"]\nstack')).toBe('ERR x');
  });

  it('holds the list: an unlisted failure, a listed test passing, a gate the server meets', () => {
    const files = parseJunit(REPORT);
    const messages = Object.fromEntries(Object.entries(files).map(([f, r]) => [f, r.messages]));
    const summaries = Object.fromEntries(Object.entries(files).map(([f, r]) => [f, r.summary]));
    const old = { version: '7.0.15', has: new Set<string>() };
    const expected: Expected = {
      upstashCommit: 'x',
      failures: [
        { file: 'commands/get', test: "when 'k' is missing > inner > returns null", reason: 'needs Redis >= 7.4', unlessCommands: ['HEXPIRE'] },
        { file: 'pipeline', test: 'passes', reason: 'listed, yet it passes' },
      ],
    };
    expect(compareWithList(summaries, messages, expected, old)).toEqual([
      'UNEXPECTED FAILURE pipeline: works\n    expect(received).toEqual(expected)',
      'PASSING BUT LISTED pipeline: passes (fixed, or the server has what it needs: remove it from the list or gate it)',
    ]);
    // on a server with HEXPIRE the gated entry drops out, and the failure is unexpected
    const newer = { version: '7.4.0', has: new Set(['HEXPIRE']) };
    expect(applies(expected.failures[0]!, newer)).toBe(false);
    expect(compareWithList(summaries, messages, expected, newer)[0]).toMatch(/^UNEXPECTED FAILURE commands\/get/);
    expect(applies({ file: 'f', test: 't', reason: 'r', unlessRedis: '8.2.0' }, { version: '8.2.1', has: new Set() })).toBe(false);
    expect(applies({ file: 'f', test: 't', reason: 'r', unlessRedis: '8.2.0' }, old)).toBe(true);
  });
});
