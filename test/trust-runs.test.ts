/**
 * What trust covers of what a hook or an MCP server runs, by one rule: every
 * file or folder that the command, an argument or an env value names, and
 * env, cwd, url and headers. A hostile workspace is built in a temporary
 * folder, its server (a real stdio MCP server) or hook approved, then a file
 * swapped: each swap must need approval again. And a user server's identity
 * does not depend on the folder plinth runs in.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Kernel } from '../kernel/kernel.js';
import { trustSubject } from '../plugins/hooks/engine.js';
import type { McpService } from 'plinth/sdk';
import { type TestKernel, createTestKernel } from '../testing/index.js';
import { BIN, cleanEnv, describeRun, ensureBuilt, plinth } from './support/cli.js';
import { runCommand } from './support/commands.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const STDIO_SERVER = join(root, 'test', 'fixtures', 'mcp', 'servers', 'stdio-server.mjs');
// The sandbox would confine these workspace servers and hooks with nothing granted (they load the MCP SDK from
// outside the workspace); what is tested here is trust. Confinement: test/sandbox-*.test.ts.
const QUIET = { health: { enabled: false }, 'mcp-demo': { enabled: false }, sandbox: { enabled: false } };
const TEST_TIMEOUT = 60_000;

const children: ChildProcess[] = [];
const kernels: Array<{ dispose?: () => Promise<unknown>; shutdown: () => Promise<unknown> }> = [];
const folders: string[] = [];

afterEach(async () => {
  for (const kernel of kernels.splice(0)) await (kernel.dispose ? kernel.dispose() : kernel.shutdown()).catch(() => undefined);
});
afterAll(async () => {
  for (const child of children) child.kill();
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

async function temp(prefix = 'plinth-trust-runs-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
}

async function put(file: string, content: string, mode?: number): Promise<string> {
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, content);
  if (mode !== undefined) await chmod(file, mode);
  return file;
}

/** The fixture MCP server over streamable HTTP, on 127.0.0.1; its base URL. */
async function httpFixture(): Promise<string> {
  const child = spawn(process.execPath, [join(root, 'test', 'fixtures', 'mcp', 'servers', 'http-server.mjs'), '--port', '0', '--name', 'http-fixture'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited with ${code}`)));
  });
  return `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}

/** A module that starts the fixture MCP server over stdio; `note` makes two versions differ. */
const serverModule = (note: string) => `// ${note}\nimport ${JSON.stringify(STDIO_SERVER)};\n`;

/** A test kernel with every builtin plugin and the workspace's own settings. */
async function boot(workspace: string, workspaceSettings: Record<string, unknown>): Promise<{ kernel: TestKernel; mcp: McpService }> {
  await put(join(workspace, '.plinth', 'settings.json'), JSON.stringify(workspaceSettings, null, 2));
  const kernel = await createTestKernel({ builtin: true, workspace, settings: { plugins: QUIET } });
  kernels.push(kernel);
  return { kernel, mcp: await kernel.get('mcp') };
}

/** Runs one of the trust plugin's commands in process; returns what it printed. */
const trustCommand = async (kernel: TestKernel, name: string, args: string[]): Promise<string> => (await runCommand(kernel, 'trust', name, args)).text;

/**
 * Starts workspace server `ws`: refused until approved; approved with the
 * command the refusal names; then `swap` changes a file, and the restart must
 * be refused again as changed.
 */
async function approveThenSwap(workspace: string, server: Record<string, unknown>, swap: () => Promise<void>, expectConnected = true): Promise<void> {
  const { kernel, mcp } = await boot(workspace, { mcpServers: { ws: server } });
  const refused = await mcp.start('ws');
  expect(refused.error?.code, refused.error?.message).toBe('PLN_E_MCP_UNTRUSTED');
  await trustCommand(kernel, 'trust approve', ['mcp-server', 'ws']);
  const approved = await mcp.restart('ws');
  if (expectConnected) expect(approved.state, approved.error?.message).toBe('connected');
  else expect(approved.error?.code, approved.error?.message).not.toBe('PLN_E_MCP_UNTRUSTED');
  await mcp.stop('ws');

  await swap();
  const changed = await mcp.restart('ws');
  expect(changed.error?.code, `after the swap the server must need approval again; got ${changed.state} ${changed.error?.message ?? ''}`).toBe('PLN_E_MCP_UNTRUSTED');
  expect(changed.error?.message).toContain('changed');
}

describe('an approved workspace server whose files are swapped needs approval again', () => {
  it('node -r ./benign.js a.js: editing a.js (not the -r module)', async () => {
    const ws = await temp();
    await put(join(ws, 'benign.js'), '// nothing to see\n');
    await put(join(ws, 'a.js'), serverModule('v1'));
    await approveThenSwap(ws, { command: process.execPath, args: ['-r', './benign.js', 'a.js'] }, () => put(join(ws, 'a.js'), serverModule('v2: evil')).then(() => undefined));
  }, TEST_TIMEOUT);

  it('node srvdir: a file deep inside the folder', async () => {
    const ws = await temp();
    await put(join(ws, 'srvdir', 'index.js'), `require('./lib/deep/start.js');\n`);
    await put(join(ws, 'srvdir', 'lib', 'deep', 'start.js'), `import(${JSON.stringify(STDIO_SERVER)});\n`);
    await approveThenSwap(ws, { command: process.execPath, args: ['srvdir'] }, () =>
      put(join(ws, 'srvdir', 'lib', 'deep', 'start.js'), `// evil\nimport(${JSON.stringify(STDIO_SERVER)});\n`).then(() => undefined),
    );
  }, TEST_TIMEOUT);

  it('command bin/srv (a path without ./)', async () => {
    const ws = await temp();
    const script = (note: string) => `#!/bin/sh\n# ${note}\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(STDIO_SERVER)}\n`;
    await put(join(ws, 'bin', 'srv'), script('v1'), 0o755);
    await approveThenSwap(ws, { command: 'bin/srv' }, () => put(join(ws, 'bin', 'srv'), script('v2: evil'), 0o755).then(() => undefined));
  }, TEST_TIMEOUT);

  it('python3.11 s3.py (an interpreter no list knows)', async () => {
    const ws = await temp();
    await put(join(ws, 's3.py'), 'print("v1")\n');
    // Whether python3.11 is installed does not matter: trust decides before anything is spawned.
    await approveThenSwap(ws, { command: 'python3.11', args: ['s3.py'] }, () => put(join(ws, 's3.py'), 'import os  # evil\n').then(() => undefined), false);
  }, TEST_TIMEOUT);

  it('a file named in an env value (NODE_OPTIONS=--require ./p.js)', async () => {
    const ws = await temp();
    await put(join(ws, 'p.js'), '// v1\n');
    await put(join(ws, 's.js'), serverModule('v1'));
    await approveThenSwap(ws, { command: process.execPath, args: ['s.js'], env: { NODE_OPTIONS: '--require ./p.js' } }, () => put(join(ws, 'p.js'), '// v2: evil\n').then(() => undefined));
  }, TEST_TIMEOUT);

  it('an env value changed in the settings', async () => {
    const home = await temp();
    const ws = await temp();
    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: QUIET }));
    await put(join(ws, 's.js'), serverModule('v1'));
    const startWith = async (env: Record<string, string>) => {
      await put(join(ws, '.plinth', 'settings.json'), JSON.stringify({ mcpServers: { ws: { command: process.execPath, args: ['s.js'], env } } }));
      const kernel = new Kernel({ home, workspace: ws, builtin: true, env: {}, logLevel: 'silent' });
      kernels.push(kernel);
      await kernel.boot();
      return { kernel, status: await (await kernel.get('mcp')).start('ws') };
    };
    const first = await startWith({ MODE: 'safe' });
    expect(first.status.error?.code).toBe('PLN_E_MCP_UNTRUSTED');
    await runCommand(first.kernel, 'trust', 'trust approve', ['mcp-server', 'ws']);
    expect((await startWith({ MODE: 'safe' })).status.state).toBe('connected');
    const changed = await startWith({ MODE: 'unsafe' });
    expect(changed.status.error?.code).toBe('PLN_E_MCP_UNTRUSTED');
    expect(changed.status.error?.message).toContain('changed');
    expect(changed.status.error?.message).toContain('env MODE');
  }, TEST_TIMEOUT);
});

describe('an approved workspace hook whose files are swapped is not run: its approval is out of date, so the gate event is blocked', () => {
  it('node -r ./benign.js a.js: editing a.js', async () => {
    const ws = await temp();
    await put(join(ws, 'benign.js'), '// nothing to see\n');
    const hookScript = (allow: boolean) => `process.stdout.write(JSON.stringify({ allow: ${allow}, message: 'a.js says ${allow}' }));\n`;
    await put(join(ws, 'a.js'), hookScript(true));
    await put(join(ws, '.plinth', 'settings.json'), JSON.stringify({ hooks: { before_tool: [{ name: 'guard', command: 'node', args: ['-r', './benign.js', 'a.js'] }] } }));
    const kernel = await createTestKernel({ builtin: true, workspace: ws, settings: { plugins: QUIET } });
    kernels.push(kernel);
    const hooks = await kernel.get('hooks');
    const { hooks: defs } = await hooks.definitions();
    const hook = defs.find((h) => h.id === 'workspace:guard')!;
    await (await kernel.get('trust')).approve(trustSubject(hook));
    expect((await kernel.emit('before_tool', { tool: 'ls' })).messages).toContain('a.js says true');

    await put(join(ws, 'a.js'), hookScript(false));
    const decision = await kernel.emit('before_tool', { tool: 'ls' });
    expect(decision.messages).not.toContain('a.js says false');
    expect(decision.allow).toBe(false);
    expect(decision.blockedBy?.code).toBe('PLN_E_HOOK_UNRUNNABLE');
    const outcome = hooks.lastRun('before_tool')?.outcomes.find((o) => o.hook.id === 'workspace:guard');
    expect(outcome).toMatchObject({ status: 'failed', failure: 'untrusted' });
  }, TEST_TIMEOUT);
});

describe('a user server', () => {
  it('pinned in folder X is still trusted when plinth runs in folder Y, and Y does not un-approve X', async () => {
    const home = await temp();
    const x = await temp('plinth-x-');
    const y = await temp('plinth-y-');
    const remote = await httpFixture();
    const mcpServers = { mine: { command: process.execPath, args: [STDIO_SERVER] }, remote: { url: `${remote}/mcp`, transport: 'http' } };
    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: QUIET, mcpServers }));
    const startIn = async (workspace: string) => {
      const kernel = new Kernel({ home, workspace, builtin: true, env: {}, logLevel: 'silent' });
      kernels.push(kernel);
      await kernel.boot();
      const mcp = await kernel.get('mcp');
      return [await mcp.start('mine'), await mcp.start('remote')];
    };
    for (const folder of [x, y, x]) {
      for (const status of await startIn(folder)) expect(status.state, `${status.name} in ${folder}: ${status.error?.message ?? ''}`).toBe('connected');
    }
    const store = JSON.parse(await readFile(join(home, 'trust.json'), 'utf8'));
    expect(store.approvals.filter((a: { id: string }) => a.id === 'mine')).toHaveLength(1);
    expect(store.approvals.filter((a: { id: string }) => a.id === 'remote')).toHaveLength(1);
    expect(store.requests).toEqual([]);
  }, TEST_TIMEOUT);
});

describe('the rule, through the trust service', () => {
  /** A kernel with only the trust plugin, on its own home and the given workspace. */
  async function trustIn(workspace: string) {
    const kernel = await createTestKernel({ builtin: false, pluginDirs: [join(root, 'plugins', 'trust')], workspace });
    kernels.push(kernel);
    return { kernel, trust: await kernel.get('trust') };
  }
  const subject = (runs: Record<string, unknown>, source: 'workspace' | 'user' = 'workspace') => ({ kind: 'mcp-server' as const, id: 'srv', source, definition: {}, files: [], runs, summary: 'srv' });

  it('a folder past the bound is marked as not fingerprinted, and approvable as it is', async () => {
    const ws = await temp();
    const big = join(ws, 'big');
    await mkdir(big);
    await Promise.all(Array.from({ length: 2_001 }, (_, i) => writeFile(join(big, `f${i}.js`), `// ${i}\n`)));
    const { kernel, trust } = await trustIn(ws);
    const s = subject({ command: 'node', args: ['big'], cwd: ws });
    const approved = await trust.approve(s);
    await writeFile(join(big, 'f7.js'), '// not seen: past the bound, as the approval said\n');
    expect(await trust.inspect(s)).toMatchObject({ trusted: true, fingerprint: approved.fingerprint });
    const stored = JSON.parse(await readFile(join(kernel.home, 'trust.json'), 'utf8'));
    expect(stored.approvals[0].shown['folder big']).toContain('NOT fingerprinted');
  }, TEST_TIMEOUT);

  it('a user server: the state file it writes does not count, its script does; a workspace server: both count', async () => {
    const dir = await temp();
    const script = await put(join(dir, 'srv.mjs'), '// v1\n');
    const state = await put(join(dir, 'state'), '0\n');
    const { trust } = await trustIn(await temp());
    const user = subject({ command: 'node', args: [script, `--state=${state}`], cwd: dir }, 'user');
    const workspace = subject({ command: 'node', args: [script, `--state=${state}`], cwd: dir });
    expect(await trust.check(user)).toMatchObject({ trusted: true, level: 'user' });
    await trust.approve(workspace);
    await writeFile(state, '1\n');
    expect(await trust.inspect(user)).toMatchObject({ trusted: true, level: 'user' });
    expect(await trust.inspect(workspace)).toMatchObject({ trusted: false, level: 'changed' });
    await writeFile(script, '// v2\n');
    expect(await trust.inspect(user)).toMatchObject({ trusted: false, level: 'changed' });
  }, TEST_TIMEOUT);

  it('the working folder itself (`eslint .`) is flagged, not walked: an edit in the project does not need approval again', async () => {
    const ws = await temp();
    await put(join(ws, 'src', 'a.ts'), 'export {};\n');
    const { kernel, trust } = await trustIn(ws);
    const s = subject({ command: 'npx', args: ['eslint', '.'], cwd: ws });
    await trust.approve(s);
    await put(join(ws, 'src', 'a.ts'), 'export const edited = 1;\n');
    expect(await trust.inspect(s)).toMatchObject({ trusted: true });
    const stored = JSON.parse(await readFile(join(kernel.home, 'trust.json'), 'utf8'));
    expect(stored.approvals[0].shown['folder .']).toContain('NOT fingerprinted');
  }, TEST_TIMEOUT);

  it('a path built from a ${env:…} reference is flagged as not fingerprinted, not silently left out', async () => {
    const ws = await temp();
    const { kernel, trust } = await trustIn(ws);
    await trust.approve(subject({ command: 'node', args: ['s.js'], cwd: ws, env: { NODE_OPTIONS: '--require ${env:PWD}/p.js' } }));
    const stored = JSON.parse(await readFile(join(kernel.home, 'trust.json'), 'utf8'));
    expect(stored.approvals[0].shown['path ${env:PWD}/p.js']).toContain('NOT fingerprinted');
  }, TEST_TIMEOUT);

  describe('a shell command line (shellCommands) that reaches its code file indirectly', () => {
    const lines = {
      'a variable it assigns, eval and $(…)': 'c=cfg; eval "$(cat $c.txt)"',
      'quotes inside a word': 'eval "$(cat c""fg.txt)"',
      'a glob': '. ./cfg.tx?',
    };
    for (const [what, line] of Object.entries(lines)) {
      it(`${what}: ${line}: editing cfg.txt needs approval again, and the approval says what is not covered`, async () => {
        const ws = await temp();
        await put(join(ws, 'cfg.txt'), 'echo approved\n');
        const { kernel, trust } = await trustIn(ws);
        const s = subject({ command: 'sh', args: ['-c', line], cwd: ws });
        await trust.approve(s);
        const stored = JSON.parse(await readFile(join(kernel.home, 'trust.json'), 'utf8'));
        expect(stored.approvals[0].shown[`shell ${line}`]).toContain('files this command reads are NOT fingerprinted');
        expect(await trust.inspect(s)).toMatchObject({ trusted: true });
        await put(join(ws, 'cfg.txt'), 'echo unapproved\n');
        expect(await trust.inspect(s)).toMatchObject({ trusted: false, level: 'changed' });
      }, TEST_TIMEOUT);
    }

    it('what cannot be found ($HOME, a command\'s output) is said, and a plain command line gets no such line', async () => {
      const ws = await temp();
      const { kernel, trust } = await trustIn(ws);
      await trust.approve({ ...subject({ command: 'sh', args: ['-c', 'eval "$(cat $HOME/x)"'], cwd: ws }), id: 'a' });
      await trust.approve({ ...subject({ command: 'bash', args: ['-c', 'node ./x.js --fast'], cwd: ws }), id: 'b' });
      const stored = JSON.parse(await readFile(join(kernel.home, 'trust.json'), 'utf8'));
      const shown = (id: string) => stored.approvals.find((a: { id: string }) => a.id === id).shown as Record<string, string>;
      expect(shown('a')['shell eval "$(cat $HOME/x)"']).toMatch(/eval, \$\(…\), variables/);
      expect(Object.keys(shown('b')).filter((label) => label.startsWith('shell '))).toEqual([]);
    }, TEST_TIMEOUT);
  });

  describe('the folder of a workspace server\'s script', () => {
    it('a module beside it (require(\'./util.js\')) counts; node_modules does not, and the approval says so', async () => {
      const ws = await temp();
      await put(join(ws, 'tools', 'server.js'), "require('./util.js');\n");
      await put(join(ws, 'tools', 'util.js'), '// v1\n');
      await put(join(ws, 'tools', 'node_modules', 'dep', 'index.js'), '// dep v1\n');
      const { kernel, trust } = await trustIn(ws);
      const s = subject({ command: 'node', args: ['tools/server.js'], cwd: ws, cwdIsDefault: true });
      const approved = await trust.approve(s);
      await put(join(ws, 'tools', 'node_modules', 'dep', 'index.js'), '// dep v2\n');
      expect(await trust.inspect(s)).toMatchObject({ trusted: true, fingerprint: approved.fingerprint });
      const stored = JSON.parse(await readFile(join(kernel.home, 'trust.json'), 'utf8'));
      expect(stored.approvals[0].shown['folder tools']).toMatch(/^2 files, sha256/);
      expect(stored.approvals[0].shown['NOT fingerprinted']).toContain('node_modules');
      await put(join(ws, 'tools', 'util.js'), '// v2: unapproved\n');
      expect(await trust.inspect(s)).toMatchObject({ trusted: false, level: 'changed' });
    }, TEST_TIMEOUT);

    it('a script in the working folder: the folder is not walked, and the approval says so', async () => {
      const ws = await temp();
      await put(join(ws, 'server.js'), "require('./util.js');\n");
      await put(join(ws, 'util.js'), '// v1\n');
      const { kernel, trust } = await trustIn(ws);
      const s = subject({ command: 'node', args: ['server.js'], cwd: ws, cwdIsDefault: true });
      await trust.approve(s);
      const stored = JSON.parse(await readFile(join(kernel.home, 'trust.json'), 'utf8'));
      expect(stored.approvals[0].shown['NOT fingerprinted']).toContain('the working folder');
    }, TEST_TIMEOUT);

    it('a user server\'s folder is not walked (a user subject is the same in every folder)', async () => {
      const dir = await temp();
      await put(join(dir, 'server.mjs'), '// v1\n');
      await put(join(dir, 'state.mjs'), '// written at every run\n');
      const { trust } = await trustIn(dir);
      const s = subject({ command: 'node', args: [join(dir, 'server.mjs')], cwd: dir }, 'user');
      expect(await trust.check(s)).toMatchObject({ trusted: true, level: 'user' });
      await put(join(dir, 'state.mjs'), '// written again\n');
      expect(await trust.inspect(s)).toMatchObject({ trusted: true, level: 'user' });
    }, TEST_TIMEOUT);
  });

  it('a token under an innocent name is shown and kept masked, and still counts', async () => {
    const ws = await temp();
    const { kernel, trust } = await trustIn(ws);
    const s = subject({ command: 'node', args: ['s.js'], cwd: ws, env: { GITHUB_PAT: 'ghp_abcdefghijklmnop1234567890' } });
    await trust.approve(s);
    const changed = subject({ command: 'node', args: ['s.js'], cwd: ws, env: { GITHUB_PAT: 'ghp_zzzzzzzzzzzzzzzz1234567890' } });
    const verdict = await trust.inspect(changed);
    expect(await readFile(join(kernel.home, 'trust.json'), 'utf8')).not.toContain('ghp_');
    expect(verdict).toMatchObject({ trusted: false, level: 'changed' });
    expect(verdict.reason).toContain('a hidden value');
    expect(verdict.reason).not.toContain('ghp_');
  }, TEST_TIMEOUT);
});

describe('through the CLI', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it('the refusal, the approval and the re-approval show every field that decides what runs, secrets masked, and what changed', async () => {
    const base = await temp();
    const home = join(base, 'home');
    const ws = join(base, 'project');
    await mkdir(home, { recursive: true });
    await put(join(ws, 's.js'), serverModule('v1'));
    await put(join(ws, 'p.js'), '// v1\n');
    await writeFile(join(home, 'settings.json'), JSON.stringify({ plugins: QUIET }));
    const server = { command: 'node', args: ['s.js'], env: { NODE_OPTIONS: '--require /abs/p.js', API_TOKEN: 'sk-live-SECRET-123', PRELOAD: './p.js' }, headers: { 'X-Api-Key': 'hdr-SECRET-456' } };
    await put(join(ws, '.plinth', 'settings.json'), JSON.stringify({ mcpServers: { ws: server } }));
    const dirs = ['--home', home, '--workspace', ws];
    const opts = { ci: true, cwd: ws } as const;

    const refused = await plinth(['mcp', 'status', ...dirs], opts);
    expect(`${refused.stdout}${refused.stderr}`, describeRun(refused)).toContain('plinth trust approve mcp-server ws');

    // Before approving, `trust list` shows what it would run.
    const waiting = await plinth(['trust', 'list', ...dirs], opts);
    expect(waiting.code, describeRun(waiting)).toBe(0);
    expect(waiting.stdout).toContain('env NODE_OPTIONS: --require /abs/p.js');
    expect(waiting.stdout).not.toContain('SECRET');

    const approved = await plinth(['trust', 'approve', 'mcp-server', 'ws', ...dirs], opts);
    expect(approved.code, describeRun(approved)).toBe(0);
    const text = approved.stdout;
    expect(text).toContain('env NODE_OPTIONS: --require /abs/p.js');
    expect(text).toContain('env API_TOKEN: (hidden)');
    expect(text).toContain('header X-Api-Key: (hidden) value');
    expect(text).toMatch(/command: node/);
    expect(text).toMatch(/args: s\.js/);
    expect(text).toMatch(new RegExp(`cwd: ${ws.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(text).toMatch(/file s\.js: sha256 [0-9a-f]{12}/);
    expect(text).toMatch(/file \.\/p\.js: sha256 [0-9a-f]{12}/);
    for (const output of [approved.stdout, approved.stderr, refused.stdout, refused.stderr, await readFile(join(home, 'trust.json'), 'utf8')]) {
      expect(output).not.toContain('SECRET');
    }

    // Swapped: the refusal names what changed, and so does the next approval.
    await put(join(ws, 'p.js'), '// v2: evil\n');
    const changed = await plinth(['mcp', 'status', ...dirs], opts);
    expect(`${changed.stdout}${changed.stderr}`, describeRun(changed)).toContain('file ./p.js');
    // On a terminal, the question shows the fields and what changed (answered no here).
    const asked = await onTerminal('n', ['mcp', 'status', 'ws', ...dirs], ws);
    expect(asked, asked).toContain('Allow workspace MCP server "ws" to run?');
    expect(asked).toContain('What changed:');
    expect(asked).toMatch(/file \.\/p\.js: was sha256 [0-9a-f]{12}, now sha256 [0-9a-f]{12}/);
    expect(asked).toContain('env NODE_OPTIONS: --require /abs/p.js');
    expect(asked).not.toContain('SECRET');

    const again = await plinth(['trust', 'approve', 'mcp-server', 'ws', ...dirs], opts);
    expect(again.code, describeRun(again)).toBe(0);
    expect(again.stdout).toMatch(/Changed since the previous approval:\n\s+file \.\/p\.js: was sha256 [0-9a-f]{12}, now sha256 [0-9a-f]{12}/);
  }, TEST_TIMEOUT * 2);
});

/** Runs plinth on a pseudo-terminal that answers the first question with `answer`; returns everything it wrote. */
function onTerminal(answer: 'y' | 'n', args: string[], cwd: string): Promise<string> {
  const env = cleanEnv({}, { ci: false });
  return new Promise((resolve) => {
    execFile('python3', ['-B', join(root, 'test', 'fixtures', 'trust', 'answer-on-pty.py'), answer, '40', process.execPath, BIN, ...args], { cwd, env, timeout: 50_000, maxBuffer: 4 * 1024 * 1024 }, (_error, stdout, stderr) =>
      resolve(`${stdout}${stderr}`),
    );
  });
}
