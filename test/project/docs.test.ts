import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from './typecheck.js';

/**
 * The docs a newcomer walks (issue 31): the README, the guides (docs/guides/), the design of
 * record (docs/design/, docs/design.md its index) and the reliability report. Their links lead
 * somewhere, their files read in one sitting, and a comment in the code that names a section of
 * the design or of the README names one that is there.
 */

/** Every Markdown file of the docs, as a path from the root. */
const DOCS = ['README.md', ...markdownUnder('docs')];
/** Where a comment may name a section: the code, the scripts, the benches, the tests, the tools. */
const CODE_FOLDERS = ['src', 'lua', 'bench', 'chaos', 'test', 'tools', 'examples', 'workers'];
/** The longest a doc may be, in lines: the README a page, every other file a sitting. */
const README_MAX_LINES = 300;
const DOC_MAX_LINES = 400;

const read = (path: string): string => readFileSync(join(root, path), 'utf8');

describe('the docs', () => {
  it(`keep the README under ${README_MAX_LINES} lines and every other doc under ${DOC_MAX_LINES}`, () => {
    const long = DOCS.map((doc) => ({ doc, lines: read(doc).split('\n').length - 1 }))
      .filter(({ doc, lines }) => lines >= (doc === 'README.md' ? README_MAX_LINES : DOC_MAX_LINES))
      .map(({ doc, lines }) => `${doc}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it('link only to files that exist, and to headings those files have', () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      for (const { line, target } of links(read(doc))) {
        if (/^[a-z]+:/i.test(target)) continue; // a web address or mailto: not ours to check
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? doc : relative(root, join(root, dirname(doc), decodeURIComponent(path)));
        if (!existsSync(join(root, file))) {
          broken.push(`${doc}:${line}: ${target} (no file ${file})`);
        } else if (anchor !== undefined && file.endsWith('.md') && !anchors(read(file)).has(anchor)) {
          broken.push(`${doc}:${line}: ${target} (no heading #${anchor} in ${file})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('reach every guide and every part of the design from their index', () => {
    const readme = read('README.md');
    const guides = DOCS.filter((doc) => doc.startsWith('docs/guides/'));
    expect(guides.filter((guide) => !readme.includes(`](${guide}`))).toEqual([]);
    const index = read('docs/design/README.md');
    const parts = DOCS.filter((doc) => doc.startsWith('docs/design/') && doc !== 'docs/design/README.md');
    expect(parts.filter((part) => !index.includes(`](${part.slice('docs/design/'.length)})`))).toEqual([]);
  });

  it('list in docs/design.md every section of the design, and the index links each where it is', () => {
    const index = read('docs/design.md');
    const sections = DOCS.filter((doc) => doc.startsWith('docs/design/')).flatMap((part) =>
      headings(read(part), true)
        .filter((h) => h !== 'The parts')
        .map((h) => `[${h}](${part.slice('docs/'.length)}#${slug(h)})`),
    );
    expect(sections.filter((link) => !index.includes(link))).toEqual([]);
  });

  it('have every section a comment names: `docs/design.md, "Section"` in the design, `README, "Section"` in the README', () => {
    const design = DOCS.filter((doc) => doc.startsWith('docs/design/')).map(read);
    // a design section is a heading, or a bullet's or a bold paragraph's lead ("- Two requests in flight (node): ...")
    const designSections = new Set(
      design.flatMap((part) => [...headings(part, true), ...[...part.matchAll(/^(?:- |\*\*)([A-Z][^.:(*]+?)(?:\.\*\*| \(|:)/gm)].map((m) => m[1]!)]),
    );
    // a README section is a heading or the text of a link: the feature list names each guide
    const readme = read('README.md');
    const readmeSections = new Set([...headings(readme), ...links(readme).map((l) => l.text)]);
    const missing: string[] = [];
    const self = relative(root, import.meta.filename);
    for (const file of CODE_FOLDERS.flatMap((folder) => codeUnder(folder)).filter((f) => f !== self)) {
      // a comment may wrap inside the quotes: its lines joined, the comment marks dropped
      const text = read(file).replace(/\s*\n\s*(?:\*(?!\/)|\/\/|--|#)?\s*/g, ' ');
      for (const m of text.matchAll(/(docs\/design\.md|DESIGN\.md|README),? "([^"]+)"/g)) {
        const [, doc, name] = m as unknown as [string, string, string];
        const known = doc === 'README' ? readmeSections : designSections;
        if (![...known].some((section) => section === name || section.startsWith(`${name} (`))) missing.push(`${file}: ${doc}, "${name}"`);
      }
    }
    expect([...new Set(missing)].sort()).toEqual([]);
  });
});

/** The headings of a Markdown text, outside its fenced blocks: a file's title too unless `sections` (`##` and deeper). */
function headings(markdown: string, sections = false): string[] {
  const found: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : (sections ? /^#{2,6} (.+)$/ : /^#{1,6} (.+)$/).exec(line);
    if (m) found.push(m[1]!.trim());
  }
  return found;
}

/** The anchors GitHub gives a Markdown text's headings (a repeated one gets -1, -2...). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const all = new Set<string>();
  for (const h of headings(markdown)) {
    const base = slug(h);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    all.add(n === 0 ? base : `${base}-${n}`);
  }
  return all;
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** Every inline link and image of a Markdown text outside its fenced blocks and code spans. */
function links(markdown: string): { line: number; text: string; target: string }[] {
  const found: { line: number; text: string; target: string }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((raw, i) => {
    if (raw.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    const line = raw.replace(/`[^`]*`/g, (code) => (code.includes('](') ? '' : code));
    for (const m of line.matchAll(/!?\[([^\]]*)\]\(([^)\s]+)\)/g)) found.push({ line: i + 1, text: m[1]!.replace(/^"|"$/g, ''), target: m[2]! });
  });
  return found;
}

/** Every Markdown file under `dir` (from the root), docs/api/ (TypeDoc's output, not committed) left out. */
function markdownUnder(dir: string): string[] {
  return filesUnder(dir, (path) => path.endsWith('.md') && !path.startsWith('docs/api/'));
}

/** Every source file under `dir` (from the root) a comment may be in. */
function codeUnder(dir: string): string[] {
  return filesUnder(dir, (path) => /\.(ts|tsx|lua|mjs|js|sh)$/.test(path) && !path.startsWith('src/generated/'));
}

function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir))
    .sort()
    .flatMap((name) => {
      const path = `${dir}/${name}`;
      if (name === 'node_modules' || name.startsWith('.')) return [];
      return statSync(join(root, path)).isDirectory() ? filesUnder(path, keep) : keep(path) ? [path] : [];
    });
}
