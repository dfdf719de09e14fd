/**
 * Reading bun's JUnit report of one upstash test file, and comparing its failures with
 * `expected-failures.json` (for tools/upstash-suite/run.ts).
 */

import type { FileSummary } from '../file-summary.js';

export type { FileSummary } from '../file-summary.js';

/** One listed failure: a test of a file, with its one-line reason. */
export interface ExpectedFailure {
  file: string;
  test: string;
  reason: string;
  /** Listed only while the server lacks one of these commands (`COMMAND INFO`): a newer Redis or a module has them. */
  unlessCommands?: string[];
  /** Listed only while the server is older than this version. */
  unlessRedis?: string;
}

export interface Expected {
  upstashCommit: string;
  note?: string;
  failures: ExpectedFailure[];
}

/** The private server: its version and which of the listed commands it has. */
export interface ServerFacts {
  version: string;
  has: ReadonlySet<string>;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

const unescape = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, code: string) => {
    if (code.startsWith('#x') || code.startsWith('#X')) return String.fromCodePoint(parseInt(code.slice(2), 16));
    if (code.startsWith('#')) return String.fromCodePoint(Number(code.slice(1)));
    return ENTITIES[code] ?? whole;
  });

const attribute = (tag: string, name: string): string | undefined => {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match ? unescape(match[1]!) : undefined;
};

/**
 * A failure's first line, without what changes from run to run: upstash's error message appends
 * the whole command (random keys) after `, command was:`, Redis's unknown-command error its args.
 */
export function firstLine(message: string): string {
  const line = message.split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
  return line.split(', command was: ')[0]!.split(', with args beginning with:')[0]!.slice(0, 240);
}

/** One file's figures and the first line of each failure, by the test's full name. */
export interface FileReport {
  summary: FileSummary;
  messages: Record<string, string>;
}

/**
 * The tests of a bun JUnit report (`bun test --reporter=junit`), by file (`pkg/` and `.test.ts`
 * dropped: `commands/get`): a test's full name is the describe blocks it sits in (the nested
 * `<testsuite>`s inside the file's), then its name, joined by ` > ` as bun prints them.
 *
 * @example
 * parseJunit('<testsuite name="pkg/a.test.ts"><testsuite name="d"><testcase name="t"><failure message="boom"/></testcase></testsuite></testsuite>');
 * // { a: { summary: { tests: 1, passed: 0, failed: 1, skipped: 0, failing: ['d > t'] }, messages: { 'd > t': 'boom' } } }
 */
export function parseJunit(xml: string): Record<string, FileReport> {
  const files: Record<string, FileReport> = {};
  /** The open <testsuite>s: the file's, then its describe blocks. */
  const suites: string[] = [];
  const tags = /<testsuite\b([^>]*?)(\/?)>|<\/testsuite>|<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (let match = tags.exec(xml); match !== null; match = tags.exec(xml)) {
    if (match[0] === '</testsuite>') {
      suites.pop();
      continue;
    }
    if (match[1] !== undefined) {
      if (match[2] !== '/') suites.push(attribute(match[1], 'name') ?? '');
      continue;
    }
    const file = (suites[0] ?? '').replace(/^(\.\/)?pkg\//, '').replace(/\.test\.ts$/, '');
    const report = (files[file] ??= { summary: { tests: 0, passed: 0, failed: 0, skipped: 0, failing: [] }, messages: {} });
    const summary = report.summary;
    const tag = match[3]!;
    const body = match[5] ?? '';
    const full = [...suites.slice(1), attribute(tag, 'name') ?? ''].join(' > ');
    summary.tests++;
    const failure = /<(failure|error)\b([^>]*?)(\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    if (failure) {
      summary.failed++;
      summary.failing.push(full);
      report.messages[full] = firstLine(attribute(failure[2]!, 'message') ?? unescape(failure[4] ?? ''));
    } else if (/<skipped\b/.test(body)) summary.skipped++;
    else summary.passed++;
  }
  return files;
}

const versionAtLeast = (version: string, minimum: string): boolean => {
  const a = version.split('.').map(Number);
  const b = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
};

/** Whether `entry` applies on this server: a gated entry drops out once the server has what it needs. */
export const applies = (entry: ExpectedFailure, facts: ServerFacts): boolean =>
  !(entry.unlessCommands !== undefined && entry.unlessCommands.every((c) => facts.has.has(c.toUpperCase()))) &&
  !(entry.unlessRedis !== undefined && versionAtLeast(facts.version, entry.unlessRedis));

/**
 * The differences between the failures of the files run and the list: a failure not listed
 * (`UNEXPECTED FAILURE`), a listed test of a file run that did not fail (`PASSING BUT LISTED`),
 * and a file bun could not run.
 */
export function compareWithList(
  files: Record<string, FileSummary>,
  messages: Record<string, Record<string, string>>,
  expected: Expected,
  facts: ServerFacts,
): string[] {
  const lines: string[] = [];
  const listed = expected.failures.filter((e) => applies(e, facts));
  for (const [file, s] of Object.entries(files)) {
    if (s.loadError) lines.push(`LOAD ERROR ${file}: ${s.loadError}`);
    const mine = listed.filter((e) => e.file === file);
    const names = new Set(mine.map((e) => e.test));
    for (const name of new Set(s.failing)) {
      if (!names.has(name)) lines.push(`UNEXPECTED FAILURE ${file}: ${name}\n    ${messages[file]?.[name] ?? ''}`);
    }
    const failing = new Set(s.failing);
    for (const e of mine) {
      if (!failing.has(e.test)) {
        lines.push(`PASSING BUT LISTED ${file}: ${e.test} (fixed, or the server has what it needs: remove it from the list or gate it)`);
      }
    }
  }
  return lines;
}
