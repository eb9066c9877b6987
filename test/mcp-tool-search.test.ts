/**
 * Tool search on the mcp service (`searchTools`, `compactTools`) over real
 * servers: server-everything and nine SDK v2 fixture servers
 * (test/fixtures/mcp/catalog/server.mjs: GitHub-, GitLab-, Jira-, Slack-,
 * filesystem-, Postgres-, browser-, calendar- and mail-shaped tool lists),
 * 204 tools with overlapping names (`search`, `get_issue`, `create_branch`,
 * `list_reminders` on several servers), all started from user settings by
 * the builtin mcp plugin over stdio. Also the tokenizer, and the index
 * following `tools/list_changed` and a disconnect; and `plinth mcp tools
 * --search` as a person runs it.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpService } from 'plinth/sdk';
import { normalizeTerm, oneLineDescription, tokenizeTool } from '../plugins/mcp/features/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';
import { CATALOGS } from './fixtures/mcp/catalog/catalogs.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const CATALOG_SERVER = join(root, 'test', 'fixtures', 'mcp', 'catalog', 'server.mjs');
const EVERYTHING = join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

let kernel: TestKernel;
let mcp: McpService;

beforeAll(async () => {
  const mcpServers: Record<string, unknown> = { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } };
  for (const catalog of Object.keys(CATALOGS)) {
    mcpServers[catalog] = { command: process.execPath, args: [CATALOG_SERVER, catalog, ...(catalog === 'slack' ? ['--control'] : [])] };
  }
  kernel = await createTestKernel({
    builtin: true,
    settings: { mcpServers, plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } },
  });
  mcp = await kernel.get('mcp');
  const statuses = await mcp.startAll({ retries: 0 });
  expect(statuses.filter((s) => s.state !== 'connected').map((s) => `${s.name}: ${s.error?.message}`)).toEqual([]);
}, 120_000);

afterAll(async () => {
  await kernel?.dispose();
});

const names = (query: string, options?: Parameters<NonNullable<McpService['searchTools']>>[1]) => (mcp.searchTools?.(query, options) ?? []).map((h) => h.tool.name);

describe('the tokenizer', () => {
  it('splits camelCase, snake_case, kebab-case and acronyms into words', () => {
    expect(tokenizeTool('getIssueByID list_pull-requests toggle-simulated-logging getHTTPResponse')).toEqual([
      'get', 'Issue', 'By', 'ID', 'list', 'pull', 'requests', 'toggle', 'simulated', 'logging', 'get', 'HTTP', 'Response',
    ]);
  });

  it('lowercases, strips plurals and drops one-letter and stop words', () => {
    expect(['Issues', 'repositories', 'class', 'status', 'a', 'the', 'ID'].map(normalizeTerm)).toEqual(['issue', 'repository', 'class', 'status', null, null, 'id']);
  });

  it('keeps the first sentence of a description for the compact listing', () => {
    expect(oneLineDescription('Reads a file.\nSecond line with more detail.')).toBe('Reads a file.');
    expect(oneLineDescription('x'.repeat(200))).toHaveLength(120);
  });
});

describe('searchTools over ten real servers', () => {
  it('indexes every tool of the ten servers (at least 200)', () => {
    expect(mcp.tools().length).toBeGreaterThanOrEqual(200);
    expect(new Set(mcp.tools().map((t) => t.server)).size).toBe(10);
  });

  it.each([
    ['open a pull request', 'github__create_pull_request'],
    ['merge request diff', 'gitlab__get_merge_request_diffs'],
    ['JQL', 'jira__search'],
    ['move jira issue to another status', 'jira__transition_issue'],
    ['post message to slack channel', 'slack__post_message'],
    ['rename a file', 'files__move_file'],
    ['sql execution plan', 'postgres__explain_query'],
    ['screenshot of the page', 'browser__take_screenshot'],
    ['find free time for a meeting', 'calendar__find_free_time'],
    ['vacation auto reply', 'mail__set_vacation_responder'],
    ['sum of two numbers', 'everything__get-sum'],
    ['gzip', 'everything__gzip-file-as-resource'],
  ])('"%s" finds %s in the first five', (query, expected) => {
    expect(names(query, { limit: 5 })).toContain(expected);
  });

  it('matches identifiers however they are written: snake_case, camelCase, words', () => {
    for (const query of ['create_pull_request', 'createPullRequest', 'create pull request']) {
      expect(names(query, { limit: 1 })).toEqual(['github__create_pull_request']);
    }
  });

  it('matches prefixes and typos', () => {
    expect(names('screensh', { limit: 3 })).toContain('browser__take_screenshot');
    expect(names('calender evnt', { limit: 5 })).toContain('calendar__create_event');
  });

  it('finds tools by their parameters', () => {
    // "threadTs" is a parameter of two Slack tools, in neither name nor description.
    expect(names('threadTs', { limit: 2 }).sort()).toEqual(['slack__get_thread_replies', 'slack__reply_to_thread']);
  });

  it('ranks a tool that shares its name with others by the words that tell them apart', () => {
    const all = names('get issue', { limit: 10 });
    expect(all).toEqual(expect.arrayContaining(['github__get_issue', 'gitlab__get_issue', 'jira__get_issue']));
    expect(names('get jira issue', { limit: 1 })).toEqual(['jira__get_issue']);
  });

  it('keeps to the servers asked for, and to the limit', () => {
    expect(names('create branch', { servers: ['gitlab'], limit: 3 })[0]).toBe('gitlab__create_branch');
    expect(names('create branch', { servers: ['gitlab'], limit: 3 }).every((n) => n.startsWith('gitlab__'))).toBe(true);
    expect(names('list', { limit: 4 })).toHaveLength(4);
    expect(names('   ')).toEqual([]);
  });

  it('gives the hits with a score and the words that matched', () => {
    const hit = mcp.searchTools!('execution plan', { limit: 1 })[0]!;
    expect(hit.tool).toMatchObject({ name: 'postgres__explain_query', server: 'postgres', tool: 'explain_query' });
    expect(hit.score).toBeGreaterThan(0);
    expect(hit.terms).toEqual(expect.arrayContaining(['execution', 'plan']));
  });

  it('lists every tool in one line for hosts that build their own prompts', () => {
    const compact = mcp.compactTools!();
    expect(compact).toHaveLength(mcp.tools().length);
    expect(compact.find((t) => t.name === 'files__edit_file')).toEqual({
      name: 'files__edit_file',
      server: 'files',
      description: 'Make line-based edits to a text file and return a git-style diff.',
    });
    expect(mcp.compactTools!({ servers: ['postgres'] }).every((t) => t.server === 'postgres')).toBe(true);
    expect(compact.every((t) => !t.description.includes('\n') && t.description.length <= 120)).toBe(true);
  });
});

describe('the index follows the servers', () => {
  /** Resolves at the next change of `server`'s tools. */
  const nextToolsChange = (server: string) =>
    new Promise<void>((resolve) => {
      const off = mcp.onListChanged!((change) => {
        if (change.server === server && change.list === 'tools') {
          off();
          resolve();
        }
      });
    });

  it('finds a tool added after tools/list_changed, and no longer one removed', async () => {
    expect(names('quarterly okr dashboard')).not.toContain('slack__quarterly_okr_dashboard');
    let changed = nextToolsChange('slack');
    await mcp.callTool('slack__add_tool', { name: 'quarterly_okr_dashboard', description: 'Shows the quarterly OKR dashboard.' });
    await changed;
    expect(names('quarterly okr dashboard', { limit: 1 })).toEqual(['slack__quarterly_okr_dashboard']);

    changed = nextToolsChange('slack');
    await mcp.callTool('slack__remove_tool', { name: 'post_message' });
    await changed;
    expect(names('post message to slack channel', { limit: 10 })).not.toContain('slack__post_message');
    expect(names('slack channel topic', { limit: 3 })).toContain('slack__set_channel_topic');
  });

  it('drops a server\'s tools when it stops and indexes them again when it is back', async () => {
    expect(names('sql execution plan', { limit: 3 })).toContain('postgres__explain_query');
    await mcp.stop('postgres');
    expect(names('sql execution plan', { limit: 10 }).some((n) => n.startsWith('postgres__'))).toBe(false);
    expect(mcp.compactTools!().some((t) => t.server === 'postgres')).toBe(false);
    const status = await mcp.start('postgres', { retries: 0 });
    expect(status.state).toBe('connected');
    expect(names('sql execution plan', { limit: 3 })).toContain('postgres__explain_query');
  }, 30_000);
});

describe('plinth mcp tools --search', () => {
  it('prints the best matches of the servers, and --json gives them with their scores', async () => {
    ensureBuilt();
    const box = await sandbox('plinth-tool-search-');
    try {
      await box.settings({
        mcpServers: {
          github: { command: process.execPath, args: [CATALOG_SERVER, 'github'] },
          gitlab: { command: process.execPath, args: [CATALOG_SERVER, 'gitlab'] },
        },
        plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } },
      });
      const text = await run(box, ['mcp', 'tools', '--search', 'merge request diffs', '--limit', '2']);
      expectExit(text, 0);
      const rows = text.stdout.trim().split('\n').slice(1);
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatch(/^gitlab__get_merge_request_diffs\s+Get the changes/);

      const answer = await run(box, ['mcp', 'tools', 'github', '--search', 'pull request', '--json']);
      expectExit(answer, 0);
      const found = json<{ query: string; tools: Array<{ name: string; score: number }> }>(answer);
      expect(found.query).toBe('pull request');
      expect(found.tools.length).toBeGreaterThan(3);
      expect(found.tools.every((t) => t.name.startsWith('github__') && t.score > 0)).toBe(true);

      const usage = await run(box, ['mcp', 'tools', '--limit', '3']);
      expect(usage.code).not.toBe(0);
      expect(usage.stderr).toContain('--limit goes with --search');
    } finally {
      await box.remove();
    }
  }, 120_000);
});
