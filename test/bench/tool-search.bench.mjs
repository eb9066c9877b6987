#!/usr/bin/env node
/**
 * Tool search: `node test/bench/tool-search.bench.mjs [--json] [--quick]`.
 *
 * The corpus: ten real servers' tool lists — server-everything's, listed by a
 * real SDK client over stdio, and the nine catalogs of
 * test/fixtures/mcp/catalog/catalogs.mjs (204 tools with overlapping names).
 * For the latency figures it is copied to 1,000 and 10,000 tools (each copy a
 * server of its own, `github7`, with one word of its own in every description).
 *
 * Printed, in one run:
 * - search latency p50/p99 of the mcp plugin's index (plugins/mcp/features/
 *   search.ts: MiniSearch, prefix + fuzzy, through the real tool registry) at
 *   1,000 and 10,000 tools, against the baseline of the same queries through
 *   the marketplace's scorer (internal/registry/search.ts: substring tiers,
 *   every term required), with the ratio; target p50 < 2 ms at 10,000;
 * - the time to index 10,000 tools, and to index one server again after its
 *   `list_changed` (incremental);
 * - recall@5 of both on LABELLED (queries written for this benchmark, one
 *   expected tool each, worded as a person asks, not as the description
 *   says); target ≥ 0.9 for the index;
 * - the size of `tools/list` in tokens (gpt-tokenizer, o200k_base) for the ten
 *   servers as `plinth serve` lists them today (`toolMode: all`), against what
 *   `search` mode lists (the pinned tools + the two gateway tools'
 *   definitions, GATEWAY_TOOLS of plugins/gateway/gateway-tools.ts), and
 *   the compact listing (`compactTools`) for comparison.
 *
 * Nothing is asserted. `--json` prints one JSON document on stdout; progress
 * goes to stderr. `--quick` is a smoke run, not figures.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { countTokens } from 'gpt-tokenizer';
import { createJiti } from 'jiti';
import { benchOptions, quantile } from './support.mjs';
import { CATALOGS, toolsOf } from '../fixtures/mcp/catalog/catalogs.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const jiti = createJiti(import.meta.url);
const { createToolSearch } = await jiti.import(path.join(ROOT, 'plugins/mcp/features/search.ts'));
const { createToolRegistry } = await jiti.import(path.join(ROOT, 'plugins/mcp/features/registry.ts'));
const { prepareQuery, prepareSearchDoc, searchScore } = await jiti.import(path.join(ROOT, 'internal/registry/search.ts'));

const { json: JSON_OUT, quick: QUICK } = benchOptions('tool-search.bench');
const ROUNDS = QUICK ? 2 : 20;
const progress = (text) => process.stderr.write(`${text}\n`);
const round = (x, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** One expected tool per query, worded as someone would ask. */
const LABELLED = [
  ['find open bugs in github', 'github__search_issues'],
  ['comment on a github issue', 'github__add_issue_comment'],
  ['open a pull request', 'github__create_pull_request'],
  ['squash and merge a PR', 'github__merge_pull_request'],
  ['approve a pull request', 'github__create_pull_request_review'],
  ['read a file from a github repo', 'github__get_file_contents'],
  ['fork a repo', 'github__fork_repository'],
  ['github actions runs', 'github__list_workflow_runs'],
  ['gitlab merge request changes', 'gitlab__get_merge_request_diffs'],
  ['retry failed ci jobs', 'gitlab__retry_pipeline'],
  ['ci job log output', 'gitlab__get_job_log'],
  ['gitlab milestones', 'gitlab__list_milestones'],
  ['jira JQL search', 'jira__search'],
  ['move a jira ticket to done', 'jira__transition_issue'],
  ['log hours on a ticket', 'jira__add_worklog'],
  ['issues in the current sprint', 'jira__get_sprint_issues'],
  ['mark one issue as blocking another', 'jira__link_issues'],
  ['send a slack message to a channel', 'slack__post_message'],
  ['reply in a slack thread', 'slack__reply_to_thread'],
  ['react with an emoji', 'slack__add_reaction'],
  ['dm someone on slack', 'slack__send_direct_message'],
  ['post a slack message later', 'slack__schedule_message'],
  ['rename a file', 'files__move_file'],
  ['find files matching a glob', 'files__search_files'],
  ['search file contents with a regex', 'files__grep'],
  ['last lines of a log file', 'files__tail_file'],
  ['unzip an archive', 'files__extract_archive'],
  ['sha256 of a file', 'files__checksum_file'],
  ['columns of a table', 'postgres__describe_table'],
  ['explain analyze a slow query', 'postgres__explain_query'],
  ['which indexes are unused', 'postgres__analyze_index_health'],
  ['cancel a running query', 'postgres__kill_query'],
  ['export query results to csv', 'postgres__export_csv'],
  ['screenshot the web page', 'browser__take_screenshot'],
  ['click a button on the page', 'browser__click'],
  ['run javascript in the browser', 'browser__evaluate_javascript'],
  ['save the page as pdf', 'browser__save_pdf'],
  ['schedule a meeting with attendees', 'calendar__create_event'],
  ['when is everyone free', 'calendar__find_free_time'],
  ['decline a meeting invitation', 'calendar__respond_to_event'],
  ['out of office', 'calendar__set_out_of_office'],
  ['add a video call link to a meeting', 'calendar__add_video_conference'],
  ['search my inbox for invoices', 'mail__search_emails'],
  ['send an email', 'mail__send_email'],
  ['download an email attachment', 'mail__get_attachment'],
  ['automatic vacation reply', 'mail__set_vacation_responder'],
  ['unsubscribe from a newsletter mailing list', 'mail__unsubscribe'],
  ['add two numbers', 'everything__get-sum'],
  ['echo a string back', 'everything__echo'],
  ['compress a file with gzip', 'everything__gzip-file-as-resource'],
  ['long running operation with progress', 'everything__trigger-long-running-operation'],
  ['print environment variables', 'everything__get-env'],
];

/** What a gateway in `toolMode: search` adds to its `tools/list`: its two tools, as the gateway defines them. */
const { GATEWAY_TOOLS } = await jiti.import(path.join(ROOT, 'plugins/gateway/gateway-tools.ts'));

/** Tools a user would pin in search mode (always listed). */
const PINNED = ['files__read_file', 'files__edit_file', 'github__search_issues'];

// ── the ten servers' tools ───────────────────────────────────────────────────

progress('listing server-everything over stdio…');
const client = new Client({ name: 'tool-search-bench', version: '0.0.0' });
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  stderr: 'pipe',
});
await client.connect(transport);
const everything = (await client.listTools()).tools;
await client.close();

/** Per server, the tools as the server lists them. */
const LISTS = { everything, ...Object.fromEntries(Object.keys(CATALOGS).map((c) => [c, toolsOf(c)])) };
const TEN = Object.values(LISTS).reduce((n, list) => n + list.length, 0);

const entry = (server, listed, suffix = '') => ({
  tool: {
    name: `${server}__${listed.name}`,
    server,
    tool: listed.name,
    ...(listed.title && { title: listed.title }),
    description: suffix ? `${listed.description ?? ''} ${suffix}` : listed.description,
    inputSchema: listed.inputSchema,
  },
  listed,
});

/** Words that make the copies differ. */
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa'];

/** A registry with `count` tools: the ten servers, then copies of them. */
function corpus(count) {
  const registry = createToolRegistry();
  const servers = [];
  let n = 0;
  for (let copy = 0; n < count; copy++) {
    for (const [server, list] of Object.entries(LISTS)) {
      if (n >= count) break;
      const name = copy === 0 ? server : `${server}${copy}`;
      const take = list.slice(0, count - n);
      const suffix = copy === 0 ? '' : `${WORDS[copy % WORDS.length]}${copy}`;
      registry.setTools(name, take.map((t) => entry(name, t, suffix)));
      servers.push(name);
      n += take.length;
    }
  }
  return { registry, servers };
}

// ── latency ──────────────────────────────────────────────────────────────────

/** The marketplace scorer over the same tools: the baseline. */
function baselineIndex(registry) {
  const docs = registry.tools().map((t) => ({
    name: t.name,
    doc: prepareSearchDoc({ name: t.name, description: `${t.title ?? ''} ${t.description ?? ''} ${Object.keys(t.inputSchema.properties ?? {}).join(' ')}` }),
  }));
  return (text, limit) => {
    const query = prepareQuery(text);
    const scored = [];
    for (const { name, doc } of docs) {
      const score = searchScore(query, doc);
      if (score > 0) scored.push({ name, score });
    }
    scored.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
    return scored.slice(0, limit).map((s) => s.name);
  };
}

const QUERIES = LABELLED.map(([q]) => q);

function latency(search) {
  for (const q of QUERIES) search(q, 5); // warm-up
  const times = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const q of QUERIES) {
      const start = performance.now();
      search(q, 5);
      times.push(performance.now() - start);
    }
  }
  return { p50: round(quantile(times, 0.5)), p99: round(quantile(times, 0.99)), searches: times.length };
}

const results = { tools: TEN, servers: Object.keys(LISTS).length, latency: {}, indexing: {}, recall: {}, tokens: {} };

for (const size of QUICK ? [1_000] : [1_000, 10_000]) {
  progress(`latency at ${size} tools…`);
  const { registry, servers } = corpus(size);
  const index = createToolSearch(registry);
  const started = performance.now();
  index.search('warm up the index', { limit: 1 });
  const buildMs = performance.now() - started;
  const ours = latency((q, limit) => index.search(q, { limit }));
  const base = baselineIndex(registry);
  const theirs = latency(base);
  results.latency[size] = { index: ours, baseline: theirs, p50Ratio: round(ours.p50 / theirs.p50, 2) };
  // One server's list changes: the next search re-indexes that server only.
  const changed = servers.findLast((s) => s.startsWith('github'));
  const again = registry.tools().filter((t) => t.server === changed).map((tool) => ({ tool }));
  registry.setTools(changed, again);
  const t0 = performance.now();
  index.search('after a change', { limit: 1 });
  results.indexing[size] = { firstSearchMs: round(buildMs, 1), searchAfterOneServerChangedMs: round(performance.now() - t0, 2), serverTools: again.length };
  index.dispose();
}

// ── recall@5 ─────────────────────────────────────────────────────────────────

progress('recall@5…');
const ten = corpus(TEN).registry;
const index = createToolSearch(ten);
const base = baselineIndex(ten);
const misses = { index: [], baseline: [] };
let hitsOurs = 0;
let hitsBase = 0;
for (const [q, expected] of LABELLED) {
  if (index.search(q, { limit: 5 }).some((h) => h.tool.name === expected)) hitsOurs++;
  else misses.index.push(`${q} → ${expected} (got ${index.search(q, { limit: 3 }).map((h) => h.tool.name).join(', ') || 'nothing'})`);
  if (base(q, 5).includes(expected)) hitsBase++;
  else misses.baseline.push(q);
}
results.recall = {
  queries: LABELLED.length,
  index: round(hitsOurs / LABELLED.length),
  baseline: round(hitsBase / LABELLED.length),
  indexMisses: misses.index,
};

// ── tokens of tools/list ─────────────────────────────────────────────────────

progress('tokens…');
/** What `plinth serve` lists: every tool under `<server>__<tool>`, as its server listed it. */
const allList = Object.entries(LISTS).flatMap(([server, list]) => list.map((t) => ({ ...t, name: `${server}__${t.name}` })));
const byName = new Map(allList.map((t) => [t.name, t]));
const tokens = (value) => countTokens(JSON.stringify(value));
const searchList = [...PINNED.map((n) => byName.get(n)), ...GATEWAY_TOOLS];
const oneSearch = index.search('open a pull request', { limit: 5 }).map((h) => byName.get(h.tool.name));
results.tokens = {
  tokenizer: 'gpt-tokenizer o200k_base, JSON of the tools/list result',
  all: tokens({ tools: allList }),
  search: tokens({ tools: searchList }),
  searchUnpinned: tokens({ tools: GATEWAY_TOOLS }),
  pinned: PINNED,
  oneSearchAnswer: tokens({ tools: oneSearch }),
  compactListing: countTokens(index.compact().map((t) => `${t.name}: ${t.description}`).join('\n')),
};
results.tokens.ratio = round(results.tokens.search / results.tokens.all, 3);
index.dispose();

// ── report ───────────────────────────────────────────────────────────────────

if (JSON_OUT) {
  process.stdout.write(`${JSON.stringify({ bench: 'tool-search', quick: QUICK, ...results }, null, 2)}\n`);
} else {
  const lines = [`tool search over ${TEN} tools of ${results.servers} servers${QUICK ? ' (--quick: figures mean nothing)' : ''}`];
  for (const [size, l] of Object.entries(results.latency)) {
    lines.push(
      `  ${String(size).padStart(6)} tools: search p50 ${l.index.p50} ms, p99 ${l.index.p99} ms (baseline scorer p50 ${l.baseline.p50} ms, p99 ${l.baseline.p99} ms; ratio p50 ${l.p50Ratio}) over ${l.index.searches} searches`,
    );
    const i = results.indexing[size];
    lines.push(`                 first search (indexes all) ${i.firstSearchMs} ms; search after one server (${i.serverTools} tools) changed ${i.searchAfterOneServerChangedMs} ms`);
  }
  lines.push(`  recall@5 on ${results.recall.queries} labelled queries: index ${results.recall.index}, baseline scorer ${results.recall.baseline} (target ≥ 0.9)`);
  for (const miss of results.recall.indexMisses) lines.push(`    missed: ${miss}`);
  const t = results.tokens;
  lines.push(`  tools/list tokens (${t.tokenizer}): all ${t.all}; search mode ${t.search} (${t.pinned.length} pinned + 2 gateway tools; ${t.searchUnpinned} with none pinned), ratio ${t.ratio}`);
  lines.push(`                 one search_tools answer (5 definitions) ${t.oneSearchAnswer}; compact listing of all ${TEN} tools ${t.compactListing}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
