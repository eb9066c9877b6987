/**
 * The READMEs and docs/ point only at what a clone has: every relative link
 * names an existing file (and, with `#anchor`, a heading in it), and every
 * repository path or Markdown file named in a code span exists.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from './support/cli.js';

const pages = [
  'README.md',
  ...readdirSync(join(ROOT, 'plugins')).map((name) => join('plugins', name, 'README.md')),
  ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f)),
].filter((page) => existsSync(join(ROOT, page)));

/** The text without fenced code blocks, where links and paths are examples. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's anchors for a page's headings (duplicates get -1, -2, …). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    result.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return result;
}

/** Problems with the links and named files of `page`, whose text is `source` (default: read from the file). */
function problemsOf(page: string, source?: string): string[] {
  const file = join(ROOT, page);
  const text = prose(source ?? readFileSync(file, 'utf8'));
  const problems: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const linked = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (!linked.startsWith(ROOT) || !existsSync(linked)) {
      problems.push(`${page}: link to ${target} (no such file in the repository)`);
      continue;
    }
    if (anchor && linked.endsWith('.md') && statSync(linked).isFile() && !anchors(linked).has(anchor.toLowerCase())) {
      problems.push(`${page}: link to ${target} (no heading #${anchor} in ${relative(ROOT, linked)})`);
    }
  }
  // Repository paths and Markdown files named in code spans, e.g. `sdk/manifest.ts`, `DESIGN.md`.
  for (const [, span] of text.matchAll(/`([^`\s]+)`/g)) {
    const named = span!.replace(/[.,:;]$/, '');
    const repoPath = /^(kernel|sdk|plugins|test|docs|registry)\/[\w./-]*$/.test(named);
    const markdown = /^[\w./-]+\.md$/.test(named);
    if (!repoPath && !markdown) continue;
    if (existsSync(join(ROOT, named)) || existsSync(resolve(dirname(file), named))) continue;
    problems.push(`${page}: names ${named}, which a clone does not have`);
  }
  return problems;
}

describe('documentation links', () => {
  test('there are pages to check: the README, every plugin README, docs/', () => {
    expect(pages).toContain('README.md');
    expect(pages).toContain(join('docs', 'errors.md'));
    expect(pages).toContain(join('docs', 'architecture.md'));
    expect(pages.filter((p) => p.startsWith('plugins')).length).toBeGreaterThanOrEqual(10);
  });

  test.each(pages)('%s points only at files a clone has', (page) => {
    expect(problemsOf(page)).toEqual([]);
  });

  test('the checker finds a broken link, a missing anchor and a missing named file', () => {
    // The same rules over a page that breaks each of them, so the test above cannot pass vacuously.
    const page = '[a](docs/nope.md) [b](README.md#no-such-heading) [c](README.md#guide) [d](https://example.com/x.md) `DESIGN.md` `sdk/nope.ts` `sdk/manifest.ts`\n\n```sh\n[e](in-a-fence.md)\n```\n';
    expect(problemsOf('README.md', page)).toEqual([
      'README.md: link to docs/nope.md (no such file in the repository)',
      'README.md: link to README.md#no-such-heading (no heading #no-such-heading in README.md)',
      'README.md: names DESIGN.md, which a clone does not have',
      'README.md: names sdk/nope.ts, which a clone does not have',
    ]);
  });
});
