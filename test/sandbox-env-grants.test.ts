/**
 * Env grants are per workspace and keyed by the host variable a value reads; a `${env:…}`
 * reference is no secret and is shown wherever an approval is. A workspace server that maps
 * `API_TOKEN` to `${env:AWS_SECRET_ACCESS_KEY}` is built as the mcp plugin builds it
 * (collectServers), started confined through the real launcher and bubblewrap, and its grants
 * given with the real `plinth perms grant` command.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, test } from 'vitest';
import { collectServers } from '../plugins/mcp/definitions.js';
import { serverTrustSubject } from '../plugins/mcp/trust-subject.js';
import { permsCommands } from '../plugins/sandbox/commands.js';
import { GRANT_QUESTION, createGrantPolicy } from '../plugins/sandbox/grants/index.js';
import type { CommandOutput } from '../sdk/commands.js';
import type { ConfigLayerView } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { runCommand } from './support/commands.js';
import { rejection } from './support/errors.js';
import { type SandboxRig, bwrapHere, sandboxRig } from './support/sandbox.js';

const here = bwrapHere();
if (!here.ok) console.warn(`env grants suite SKIPPED: ${here.why}`);

const HOST_ENV = { AWS_SECRET_ACCESS_KEY: 'aws-host-secret-4f3e2d1c', OTHER_SECRET: 'other-host-secret-9a8b7c', API_TOKEN: 'the-hosts-own-api-token' };
const SECRETS = Object.values(HOST_ENV);

/** A workspace's `leak` server: prints what it got as API_TOKEN. */
const leakServer = (reference: string) => ({ command: 'sh', args: ['-c', 'echo "API_TOKEN=${API_TOKEN:-unset}"'], env: { API_TOKEN: reference }, permissions: { env: ['API_TOKEN'] } });

/** The server's record as the mcp plugin makes it from the workspace's settings of `rig`. */
function record(rig: SandboxRig, reference: string) {
  const layer: ConfigLayerView = { scope: 'workspace', file: join(rig.workspace, '.plinth', 'settings.json'), settings: { mcpServers: { leak: leakServer(reference) } } };
  const { servers } = collectServers({ layers: [layer], plugins: [], manifests: [], config: {}, env: HOST_ENV, home: rig.home, workspace: rig.workspace, connectTimeoutMs: 10_000 });
  const found = servers.find((s) => s.definition.name === 'leak');
  if (found === undefined) throw new Error('the server was not collected');
  return found;
}

/** Starts the server confined, as the stdio transport does (its resolved env, acting for its principal). */
function start(rig: SandboxRig, reference: string) {
  const { definition } = record(rig, reference);
  return rig.launcher.run({ owner: 'mcp', program: definition.command!, args: [...definition.args], env: { ...definition.env }, cwd: rig.workspace, timeoutMs: 20_000, actingFor: definition.actingFor! });
}

/** `plinth perms <name> <args…>` run in `rig`'s workspace, against its PLINTH_HOME. */
async function perms(rig: SandboxRig, name: string, args: string[]): Promise<string> {
  const policy = createGrantPolicy({ home: rig.home });
  const commands = permsCommands({ policy, home: rig.home, workspace: rig.workspace, plugins: () => new Map(), availability: () => rig.sandbox.availability(), configLayers: () => [] });
  const printed: string[] = [];
  const out: CommandOutput = { print: (t) => void printed.push(t), json: (v) => void printed.push(JSON.stringify(v)), note: (t) => void printed.push(t) };
  await commands.find((c) => c.name === `perms ${name}`)!.run({ args, options: {}, json: false, out, signal: new AbortController().signal });
  return printed.join('\n');
}

describe.skipIf(!here.ok)('env grants (real bubblewrap)', () => {
  const rigs: SandboxRig[] = [];
  const rig = (options: Parameters<typeof sandboxRig>[0] = {}): SandboxRig => {
    const made = sandboxRig(options);
    rigs.push(made);
    return made;
  };
  afterAll(async () => {
    for (const r of rigs) {
      await r.close();
      await rm(r.root, { recursive: true, force: true });
    }
  });

  test('an env grant made for workspace A does not apply in workspace C, nor to a value read from another host variable', async () => {
    const a = rig();
    const c = rig({ home: a.home });
    // Workspace A passes the host's API_TOKEN; the user grants it there.
    await perms(a, 'grant', ['settings:workspace', 'env API_TOKEN']);
    const own = await start(a, '${env:API_TOKEN}');
    expect(own.stdout.toString()).toBe(`API_TOKEN=${HOST_ENV.API_TOKEN}\n`);

    // Workspace C maps API_TOKEN to the AWS secret: A's grant is not C's.
    const error = await rejection(start(c, '${env:AWS_SECRET_ACCESS_KEY}'));
    expect(error.code).toBe('PLN_E_PERM_NOT_GRANTED');
    expect(error.details?.permissions).toEqual(['env API_TOKEN=${env:AWS_SECRET_ACCESS_KEY}']);
    expect(error.hint).toContain("plinth perms grant settings:workspace 'env API_TOKEN=${env:AWS_SECRET_ACCESS_KEY}'");
    for (const secret of SECRETS) expect(`${error.message} ${error.hint}`).not.toContain(secret);

    // Nor does it apply in A itself once A reads another host variable under that name.
    expect((await rejection(start(a, '${env:AWS_SECRET_ACCESS_KEY}'))).code).toBe('PLN_E_PERM_NOT_GRANTED');
  });

  test('a changed ${env:…} reference asks again; the reference granted runs', async () => {
    const a = rig();
    const listed = await perms(a, 'grant', ['settings:workspace', 'env API_TOKEN=${env:AWS_SECRET_ACCESS_KEY}']);
    expect(listed).toContain('env API_TOKEN=${env:AWS_SECRET_ACCESS_KEY}');
    expect((await start(a, '${env:AWS_SECRET_ACCESS_KEY}')).stdout.toString()).toBe(`API_TOKEN=${HOST_ENV.AWS_SECRET_ACCESS_KEY}\n`);
    const error = await rejection(start(a, '${env:OTHER_SECRET}'));
    expect(error.code).toBe('PLN_E_PERM_NOT_GRANTED');
    expect(error.details?.permissions).toEqual(['env API_TOKEN=${env:OTHER_SECRET}']);
    // What is granted reads back with its reference, never a value.
    const list = await perms(a, 'list', ['settings:workspace']);
    expect(list).toContain('env API_TOKEN=${env:AWS_SECRET_ACCESS_KEY}');
    const file = await readFile(join(a.home, 'sandbox', 'grants.json'), 'utf8');
    for (const secret of SECRETS) expect(file).not.toContain(secret);
  });

  test('the question on a terminal names the reference and the workspace, never the value', async () => {
    const c = rig();
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = Object.assign(new PassThrough(), { isTTY: true });
    let asked = '';
    output.on('data', (chunk: Buffer) => {
      asked += chunk.toString();
      if (asked.includes(GRANT_QUESTION) && !input.writableEnded) input.end('n\n');
    });
    const policy = createGrantPolicy({ home: c.home, io: () => ({ input, output }), env: {} });
    const decision = await policy.decide(record(c, '${env:AWS_SECRET_ACCESS_KEY}').definition.actingFor!, { osSandbox: true });
    expect(decision).toMatchObject({ mode: 'refused', error: { code: 'PLN_E_PERM_DECLINED' } });
    expect(asked).toContain(`MCP server "leak" from workspace settings (workspace ${c.workspace})`);
    expect(asked).toContain('+ env: API_TOKEN = ${env:AWS_SECRET_ACCESS_KEY} (read from your environment, passed as API_TOKEN)');
    for (const secret of SECRETS) expect(asked).not.toContain(secret);
  });

  test('a grant stored the old way (bare settings:workspace) grants nothing: asked again once, never widened', async () => {
    const a = rig();
    const policy = createGrantPolicy({ home: a.home });
    await policy.store.update('settings:workspace', () => ({ version: 'settings', source: 'workspace', permissions: { filesystem: { read: [], write: [] }, network: { allow: [], deny: [] }, env: ['API_TOKEN'], shell: [], mcp: [] }, withheld: [], grantedAt: new Date().toISOString() }));
    expect((await rejection(start(a, '${env:API_TOKEN}'))).code).toBe('PLN_E_PERM_NOT_GRANTED');
  });
});

describe('trust shows where an env value comes from', () => {
  let kernel: TestKernel | undefined;
  afterAll(async () => {
    await kernel?.dispose();
  });

  test('the approval and `trust list` show ${env:AWS_SECRET_ACCESS_KEY} (the reference, never its value)', async () => {
    kernel = await createTestKernel({ builtin: false, pluginDirs: [join(process.cwd(), 'plugins', 'trust')] });
    const rigLike = { home: kernel.home, workspace: kernel.workspace } as SandboxRig;
    const subject = serverTrustSubject(record(rigLike, '${env:AWS_SECRET_ACCESS_KEY}'), (t) => t);
    const trust = await kernel.get('trust');
    expect((await trust.check(subject)).trusted).toBe(false);
    const listed = (await runCommand(kernel, 'trust', 'trust list')).text;
    expect(listed).toContain('env API_TOKEN: ${env:AWS_SECRET_ACCESS_KEY}');
    const approved = (await runCommand(kernel, 'trust', 'trust approve', ['mcp-server', 'leak'])).text;
    expect(approved).toContain('env API_TOKEN: ${env:AWS_SECRET_ACCESS_KEY}');
    expect(approved).not.toContain('(hidden)');
    for (const text of [listed, approved, await readFile(join(kernel.home, 'trust.json'), 'utf8')]) for (const secret of SECRETS) expect(text).not.toContain(secret);

    // A changed reference is a changed approval, and says what changed.
    const changed = serverTrustSubject(record(rigLike, '${env:OTHER_SECRET}'), (t) => t);
    const verdict = await trust.check(changed);
    expect(verdict).toMatchObject({ trusted: false, level: 'changed' });
    expect(verdict.reason).toContain('env API_TOKEN');
    expect((await runCommand(kernel, 'trust', 'trust list')).text).toContain('env API_TOKEN: was ${env:AWS_SECRET_ACCESS_KEY}, now ${env:OTHER_SECRET}');
  });
});
