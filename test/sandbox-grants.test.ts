/**
 * The grants side of the sandbox, with the real kernel and real files: what a
 * principal is allowed (stored grants, `sandbox.default`, the no-sandbox
 * path), refusals without a terminal, and the in-process capabilities
 * (`ctx.fs`, `ctx.fetch`, `ctx.env`, `ctx.exec`, `ctx.mcp`) refused and logged.
 * The prompt itself is tested on a real terminal in sandbox-grants-terminal.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { readAudit } from '../plugins/sandbox/audit.js';
import { createCapabilityCheck, createGrantPolicy, parseItem, storeGrant, widening, withItems } from '../plugins/sandbox/grants/index.js';
import { sandboxRig } from './support/sandbox.js';
import { type ConfigLayerView, NO_PERMISSIONS, parseManifest, type PluginContext, type PluginKernel, type Principal, isPlinthError, permissionsSchema } from '../sdk/index.js';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { rejection } from './support/errors.js';
import { tempFolders, writePlugin } from './support/plugin-folder.js';
import { withoutTerminal } from './support/terminal.js';

withoutTerminal();
const folders = tempFolders('plinth-grants-');
const kernels: TestKernel[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.dispose();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  await folders.removeAll();
});

const SANDBOX = { osSandbox: true };
/** The user's settings saying "confined": the user's own plugins then need grants too (the default is "open"). */
const CONFINED: ConfigLayerView[] = [{ scope: 'user', file: 'settings.json', settings: { sandbox: { default: 'confined' } } }];
const confined = (home: string) => createGrantPolicy({ home, configLayers: () => CONFINED });
const NO_SANDBOX = { osSandbox: false };

function principal(id: string, declared: unknown, extra: Partial<Principal> = {}): Principal {
  return { id, source: 'user', declared: permissionsSchema.parse(declared), label: `plugin "${id}"`, ...extra };
}

/** An HTTP server on 127.0.0.1 that answers "ok from <port>". */
async function serve(): Promise<number> {
  const server = createServer((_req, res) => res.end(`ok from ${(server.address() as AddressInfo).port}`));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * A real kernel with a plugin whose context the test keeps, and — unless
 * `service` is false — the grants' `capabilities` service, provided by an
 * inline plugin exactly as the sandbox plugin provides it.
 */
async function kernelWith(permissions: unknown, options: { service?: boolean; settings?: Record<string, unknown>; workspace?: string } = {}) {
  let context: PluginContext | undefined;
  let layers: (() => PluginKernel['configLayers']) | undefined;
  const kernel = await createTestKernel({
    settings: options.settings ?? { sandbox: { default: 'confined' } },
    ...(options.workspace && { workspace: options.workspace }),
    plugins: [
      ...(options.service === false
        ? []
        : [
            {
              manifest: { name: 'grants-service', provides: ['capabilities'] },
              setup(k: PluginKernel, ctx: PluginContext) {
                k.provide('capabilities', createCapabilityCheck({ home: ctx.paths.home, policy: createGrantPolicy({ home: ctx.paths.home, configLayers: () => k.configLayers }) }));
              },
            },
          ]),
      {
        manifest: { name: 'greeter', permissions },
        setup(k: PluginKernel, ctx: PluginContext) {
          context = ctx;
          layers = () => k.configLayers;
        },
      },
    ],
  });
  kernels.push(kernel);
  const ctx = context!;
  const configLayers = layers!;
  const policy = createGrantPolicy({ home: ctx.paths.home, configLayers });
  return { kernel, ctx, policy, configLayers, home: ctx.paths.home };
}

describe('permission items and the widening diff', () => {
  test('an update that adds hosts, paths, env, commands and servers widens by exactly those; a narrowing is empty', () => {
    const v1 = permissionsSchema.parse({ network: { allow: ['api.example.com'] }, env: ['TOKEN'] });
    const v2 = permissionsSchema.parse({ network: { allow: ['api.example.com', 'cdn.example.com'] }, env: ['TOKEN', 'HOME_DIR'], filesystem: { read: ['${workspace}'] }, shell: ['git'], mcp: ['files'] });
    expect(widening(v1, v2).map((i) => `${i.kind} ${i.value}`)).toEqual(['filesystem.read ${workspace}', 'network cdn.example.com', 'env HOME_DIR', 'shell git', 'mcp files']);
    expect(widening(v2, v1)).toEqual([]);
  });

  test('dropping a deny widens (the host is no longer refused); adding one narrows', () => {
    const strict = permissionsSchema.parse({ network: { allow: ['*.example.com'], deny: ['evil.example.com'] } });
    const loose = permissionsSchema.parse({ network: { allow: ['*.example.com'] } });
    expect(widening(strict, loose)).toEqual([{ kind: 'network.deny', value: 'evil.example.com' }]);
    expect(widening(loose, strict)).toEqual([]);
  });

  test('a permission typed on the command line is checked as the manifest checks it', () => {
    expect(parseItem('network:API.example.com')).toEqual({ kind: 'network', value: 'api.example.com' });
    expect(parseItem('read ${workspace}/src')).toEqual({ kind: 'filesystem.read', value: '${workspace}/src' });
    for (const bad of ['network https://x.test/path', 'filesystem.read relative/path', 'colour red', 'env 1BAD']) {
      let error: unknown;
      try {
        parseItem(bad);
      } catch (e) {
        error = e;
      }
      expect(isPlinthError(error) && error.code, bad).toBe('PLN_E_PERM_ITEM_INVALID');
    }
  });
});

describe('the decision', () => {
  test('without a terminal the answer is no, and the error names the exact command that grants it', async () => {
    const home = await folders.make();
    const policy = confined(home);
    const decision = await policy.decide(principal('greeter', { network: { allow: ['api.example.com'] } }), SANDBOX);
    expect(decision.mode).toBe('refused');
    if (decision.mode !== 'refused') return;
    expect(decision.error.code).toBe('PLN_E_PERM_NOT_GRANTED');
    expect(decision.error.hint).toContain('`plinth perms grant greeter`');
    expect(decision.error.details).toMatchObject({ command: 'plinth perms grant greeter', permissions: ['network api.example.com'] });
  });

  test('a workspace hook has no manifest to grant from: the command names each item, quoted for the shell', async () => {
    const policy = confined(await folders.make());
    const decision = await policy.decide(principal('settings:workspace', { filesystem: { write: ['${workspace}/out'] } }, { source: 'workspace', label: 'hook "fmt" of the workspace settings' }), SANDBOX);
    expect(decision.mode === 'refused' && decision.error.details?.command).toBe("plinth perms grant settings:workspace 'filesystem.write ${workspace}/out'");
  });

  test('a stored grant lets it run confined with what it declares; one item revoked is withheld, not asked for again', async () => {
    const home = await folders.make();
    const policy = confined(home);
    const declared = { network: { allow: ['api.example.com'] }, env: ['TOKEN'] };
    await policy.store.update('greeter', () => ({ version: '1.0.0', permissions: permissionsSchema.parse(declared), withheld: [], grantedAt: new Date().toISOString() }));
    expect(await policy.decide(principal('greeter', declared), SANDBOX)).toEqual({ mode: 'confined', granted: permissionsSchema.parse(declared) });
    await policy.store.update('greeter', (g) => ({ ...g!, permissions: permissionsSchema.parse({ network: { allow: ['api.example.com'] } }), withheld: [parseItem('env TOKEN')] }));
    const after = await policy.decide(principal('greeter', declared), SANDBOX);
    expect(after).toEqual({ mode: 'confined', granted: permissionsSchema.parse({ network: { allow: ['api.example.com'] } }) });
  });

  test('a grant given to a plugin from one place does not pass to a plugin of the same name from another (a cloned project\'s)', async () => {
    const home = await folders.make();
    const policy = confined(home);
    const declared = { env: ['TOKEN'] };
    await storeGrant(home, 'greeter', permissionsSchema.parse(declared), { version: '1.0.0', source: 'user', unconfined: true });
    expect((await policy.decide(principal('greeter', declared), SANDBOX)).mode).toBe('confined');
    const impostor = principal('greeter', declared, { source: 'workspace' });
    const decision = await policy.decide(impostor, SANDBOX);
    expect(decision.mode === 'refused' && decision.error.code).toBe('PLN_E_PERM_NOT_GRANTED');
    expect((await policy.decide(impostor, NO_SANDBOX)).mode).toBe('refused');
  });

  test('builtin plugins run their children open (they are plinth); a plugin that declares nothing needs no grant', async () => {
    const policy = confined(await folders.make());
    const declared = { network: { allow: ['registry.npmjs.org'] } };
    expect((await policy.decide(principal('mcp-demo', declared, { source: 'builtin' }), SANDBOX)).mode).toBe('open');
    expect((await policy.decide(principal('mcp-demo', declared, { source: 'builtin' }), NO_SANDBOX)).mode).toBe('open');
    expect(await policy.decide(principal('quiet', {}), SANDBOX)).toEqual({ mode: 'confined', granted: NO_PERMISSIONS });
  });

  test('a grants file that is not one grants nothing (fail closed) and says how to fix it', async () => {
    const home = await folders.make();
    await mkdir(join(home, 'sandbox'));
    await writeFile(join(home, 'sandbox', 'grants.json'), '{"grantsVersion": 1, "plugins": {"greeter": {"permissions": 3}}}');
    const decision = await confined(home).decide(principal('greeter', { env: ['TOKEN'] }), SANDBOX);
    expect(decision.mode === 'refused' && decision.error.code).toBe('PLN_E_PERM_GRANTS_INVALID');
  });
});

describe('sandbox.default from the settings', () => {
  test('"open" in the user settings runs the user\'s own plugins unconfined', async () => {
    const { configLayers, home } = await kernelWith({}, { service: false, settings: { sandbox: { default: 'open' } } });
    const policy = createGrantPolicy({ home, configLayers });
    const decision = await policy.decide(principal('greeter', { env: ['TOKEN'] }), SANDBOX);
    expect(decision.mode).toBe('open');
    expect(decision.mode === 'open' && decision.reason).toContain('sandbox.default is "open"');
  });

  test('when no settings file says, the user\'s own plugins run as they did before the sandbox: open', async () => {
    const policy = createGrantPolicy({ home: await folders.make(), configLayers: () => [] });
    expect(await policy.decide(principal('greeter', { env: ['TOKEN'] }), SANDBOX)).toEqual({ mode: 'open', reason: 'sandbox.default is "open" (the default)' });
  });

  test('a workspace cannot loosen it to "open", but may tighten the user\'s "open" to "confined"', async () => {
    const workspace = await folders.make();
    await mkdir(join(workspace, '.plinth'));
    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ sandbox: { default: 'open' } }));
    const loosen = await kernelWith({}, { service: false, workspace });
    const policy = createGrantPolicy({ home: loosen.home, configLayers: loosen.configLayers });
    expect((await policy.decide(principal('greeter', { env: ['TOKEN'] }), SANDBOX)).mode).toBe('refused'); // confined: not granted, no terminal

    await writeFile(join(workspace, '.plinth', 'settings.json'), JSON.stringify({ sandbox: { default: 'confined' } }));
    const tighten = await kernelWith({}, { service: false, workspace, settings: { sandbox: { default: 'open' } } });
    const tightened = createGrantPolicy({ home: tighten.home, configLayers: tighten.configLayers });
    const decision = await tightened.decide(principal('greeter', { env: ['TOKEN'] }), SANDBOX);
    expect(decision.mode === 'refused' && decision.error.code).toBe('PLN_E_PERM_NOT_GRANTED');
  });

  test('"open" never reaches workspace or downloaded plugins, nor the workspace settings\' hooks', async () => {
    const { configLayers, home } = await kernelWith({}, { service: false, settings: { sandbox: { default: 'open' } } });
    const policy = createGrantPolicy({ home, configLayers });
    const declared = { env: ['TOKEN'] };
    // Installed by the marketplace: plugins/<name> links to plugins/.versions/<name>@<version>.
    const installed = await writePlugin(join(home, 'plugins', '.versions'), { name: 'fetched@1.0.0' });
    await symlink(installed, join(home, 'plugins', 'fetched'));
    for (const who of [
      principal('proj', declared, { source: 'workspace' }),
      principal('fetched', declared, { dir: join(home, 'plugins', 'fetched') }),
      principal('settings:workspace', declared, { source: 'workspace' }),
    ]) {
      const decision = await policy.decide(who, SANDBOX);
      expect(decision.mode === 'refused' && decision.error.code, who.id).toBe('PLN_E_PERM_NOT_GRANTED');
    }
    expect((await policy.standing(principal('fetched', declared, { dir: join(home, 'plugins', 'fetched') }))).source).toBe('downloaded');
  });
});

describe('where no OS sandbox is available', () => {
  test('a plugin is refused, plainly, unless the user allowed exactly that plugin to run unconfined', async () => {
    const home = await folders.make();
    const policy = confined(home);
    const greeter = principal('greeter', { network: { allow: ['api.example.com'] } });
    const refused = await policy.decide(greeter, NO_SANDBOX);
    expect(refused.mode === 'refused' && refused.error.code).toBe('PLN_E_PERM_NO_SANDBOX');
    expect(refused.mode === 'refused' && refused.error.message).toContain('no OS sandbox is available on this machine');
    expect(refused.mode === 'refused' && refused.error.hint).toContain('plinth perms grant greeter --unconfined');

    await policy.store.update('greeter', () => ({ version: '1.0.0', permissions: NO_PERMISSIONS, withheld: [], unconfined: true, grantedAt: new Date().toISOString() }));
    const open = await policy.decide(greeter, NO_SANDBOX);
    expect(open.mode).toBe('open');
    // Exactly that plugin: another one is still refused.
    const other = await policy.decide(principal('other', { env: ['X'] }), NO_SANDBOX);
    expect(other.mode === 'refused' && other.error.code).toBe('PLN_E_PERM_NO_SANDBOX');
    // With a sandbox, "unconfined" grants nothing: the permissions are still asked for.
    expect((await policy.decide(greeter, SANDBOX)).mode).toBe('refused');
  });
});

describe('in-process capabilities', () => {
  test('deny wins over allow: ctx.fetch reaches the allowed port of 127.0.0.1, not the denied one, and the refusal is logged', async () => {
    const [allowed, denied] = [await serve(), await serve()];
    const permissions = { network: { allow: ['127.0.0.1'], deny: [`127.0.0.1:${denied}`] } };
    const { ctx, policy, home } = await kernelWith(permissions);
    await policy.store.update('greeter', () => ({ version: '0.0.0', permissions: permissionsSchema.parse(permissions), withheld: [], grantedAt: new Date().toISOString() }));
    expect(await (await ctx.fetch(`http://127.0.0.1:${allowed}/`)).text()).toBe(`ok from ${allowed}`);
    const error = await rejection(ctx.fetch(`http://127.0.0.1:${denied}/`));
    expect(error.code).toBe('PLN_E_PERM_DENIED');
    expect(readAudit(home, { plugin: 'greeter', permission: 'network' })).toEqual([expect.objectContaining({ target: `127.0.0.1:${denied}` })]);
  });

  test('without the sandbox plugin the checks follow what the plugin declares (deny still wins)', async () => {
    const [allowed, denied] = [await serve(), await serve()];
    const { ctx } = await kernelWith({ network: { allow: ['127.0.0.1'], deny: [`127.0.0.1:${denied}`] } }, { service: false });
    expect((await ctx.fetch(`http://127.0.0.1:${allowed}/`)).status).toBe(200);
    expect((await rejection(ctx.fetch(`http://127.0.0.1:${denied}/`))).code).toBe('PLN_E_PERM_DENIED');
    expect((await rejection(ctx.fetch('http://localhost:1/'))).code).toBe('PLN_E_PERM_DENIED');
  });

  test('a redirect to a host that is not granted is refused, not followed', async () => {
    const target = await serve();
    const redirector = createServer((_req, res) => res.writeHead(302, { location: `http://localhost:${target}/` }).end());
    servers.push(redirector);
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    const { ctx } = await kernelWith({ network: { allow: [`127.0.0.1:${(redirector.address() as AddressInfo).port}`] } }, { service: false });
    expect((await rejection(ctx.fetch(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/`))).code).toBe('PLN_E_PERM_DENIED');
  });

  test('ctx.fs, ctx.env, ctx.exec and ctx.mcp refuse what was not granted, each written to the audit log', async () => {
    const outside = await folders.make();
    await writeFile(join(outside, 'secret.txt'), 'not yours');
    const granted = await folders.make();
    await writeFile(join(granted, 'notes.txt'), 'yours');
    // A link inside the granted folder that leads out of it: judged by where it leads.
    await symlink(join(outside, 'secret.txt'), join(granted, 'link.txt'));
    const permissions = { filesystem: { read: [granted] }, env: ['GRANTED_VAR'], shell: ['node'], mcp: ['files'] };
    const { ctx, policy, home } = await kernelWith(permissions);
    await policy.store.update('greeter', () => ({ version: '0.0.0', permissions: permissionsSchema.parse(permissions), withheld: [], grantedAt: new Date().toISOString() }));

    expect(await ctx.fs.readFile(join(granted, 'notes.txt'), 'utf8')).toBe('yours');
    await ctx.fs.writeFile(join(ctx.fs.tmp, 'scratch.txt'), 'mine'); // its private temporary folder
    expect(await readFile(join(ctx.fs.tmp, 'scratch.txt'), 'utf8')).toBe('mine');
    const refusals = [
      () => ctx.fs.readFile(join(outside, 'secret.txt'), 'utf8'),
      () => ctx.fs.readFile(join(granted, 'link.txt'), 'utf8'),
      () => ctx.fs.writeFile(join(granted, 'new.txt'), 'read-only grant'),
      () => ctx.env.get('PATH'),
      () => ctx.exec({ program: 'sh', args: ['-c', 'true'] }),
      () => ctx.mcp.callTool('other', 'read', {}),
    ];
    for (const refusal of refusals) expect((await rejection(refusal())).code).toBe('PLN_E_PERM_DENIED');
    await expect(stat(join(granted, 'new.txt'))).rejects.toThrow();
    const logged = readAudit(home, { plugin: 'greeter' }).map((e) => [e.permission, e.target]);
    expect(logged).toEqual([
      ['filesystem', join(outside, 'secret.txt')],
      ['filesystem', join(outside, 'secret.txt')],
      ['filesystem', join(granted, 'new.txt')],
      ['env', 'PATH'],
      ['shell', 'sh'],
      ['mcp', 'other'],
    ]);
  });

  test('a plugin that was never granted is refused at its first capability use, naming the command', async () => {
    const { ctx, home } = await kernelWith({ env: ['GRANTED_VAR'] });
    const error = await rejection(ctx.env.get('GRANTED_VAR'));
    expect(error.code).toBe('PLN_E_PERM_NOT_GRANTED');
    expect(error.hint).toContain('plinth perms grant greeter');
    expect(readAudit(home, { plugin: 'greeter' })).toHaveLength(1);
  });

  test('a builtin plugin\'s children run open, but its capabilities are held to what it declares', async () => {
    const home = await folders.make();
    const check = createCapabilityCheck({ home, policy: confined(home) });
    const manifest = parseManifest({ name: 'mcp-demo', version: '1.0.0', permissions: { env: ['DEMO_VAR'] } });
    if (!manifest.ok) throw new Error('bad manifest');
    const info = { name: 'mcp-demo', version: '1.0.0', source: 'builtin' as const, dir: home, manifest: manifest.manifest };
    const places = { workspace: home, home, plinthHome: home, tmp: join(home, 'tmp') };
    expect(await check.check(info, { kind: 'env', name: 'DEMO_VAR' }, places)).toBeUndefined();
    expect((await check.check(info, { kind: 'env', name: 'PATH' }, places))?.code).toBe('PLN_E_PERM_DENIED');
    expect(readAudit(home, { plugin: 'mcp-demo' }).map((e) => e.target)).toEqual(['PATH']);
  });

  test('withItems keeps a grant exact: what is added is what is there', () => {
    expect(withItems(NO_PERMISSIONS, [parseItem('env A'), parseItem('env A')]).env).toEqual(['A']);
  });
});

describe('through a real confined launch', () => {
  const bwrap = probeBwrap();
  test.skipIf(!bwrap)('a downloaded plugin\'s command is not started before it is granted; stored "always", it runs confined with its grant', async () => {
    const rig = sandboxRig();
    try {
      await writeFile(join(rig.workspace, 'readme.txt'), 'granted read');
      const declared = permissionsSchema.parse({ filesystem: { read: ['${workspace}'] } });
      const principal: Principal = { id: 'fetched', source: 'downloaded', dir: rig.pluginDir, declared, label: 'plugin "fetched"' };
      const marker = join(rig.root, 'started');
      const refused = await rejection(rig.launcher.run({ owner: 'fetched', program: 'sh', args: ['-c', `touch ${marker}`], actingFor: principal }));
      expect(refused.code).toBe('PLN_E_PERM_NOT_GRANTED');
      expect(refused.hint).toContain('plinth perms grant fetched');
      await expect(stat(marker)).rejects.toThrow(); // nothing ran
      expect(readAudit(rig.home, { plugin: 'fetched', permission: 'launch' })).toHaveLength(1);

      await storeGrant(rig.home, 'fetched', declared, { version: '1.0.0' });
      const ran = await rig.launcher.run({ owner: 'fetched', program: 'cat', args: [join(rig.workspace, 'readme.txt')], actingFor: principal });
      expect(ran.stdout.toString()).toBe('granted read');
    } finally {
      await rig.close();
    }
  });
});

/** Whether bubblewrap runs here (the escape suite says why when it does not). */
function probeBwrap(): boolean {
  try {
    execFileSync('bwrap', ['--unshare-all', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
