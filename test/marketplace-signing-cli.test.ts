/**
 * The built `plinth` against a signed registry served on 127.0.0.1: a key
 * made with `registry keygen`, versions published with `--sign`; an
 * installed plugin whose files are changed, added or removed on disk is
 * refused at the next load, `ext verify` names each file, and `ext install
 * --force` restores it, verified again; a version the registry revokes is
 * disabled while `plinth up` runs, with the reason and the version to move to.
 */
import { appendFile, cp, mkdtemp, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RegistryServer, serveRegistry } from '../registry/server.js';
import { execFile } from 'node:child_process';
import { BIN, ROOT, type Result, type Sandbox, cleanEnv, ensureBuilt, expectExit, json, run, sandbox, start } from './support/cli.js';
import { writePlugin } from './support/market.js';

// Each test runs several plinth commands (each a process that boots a kernel) on a shared machine.
vi.setConfig({ testTimeout: 120_000 });

let base: string;
/** A key and a registry folder with greeter 1.0.0 and 1.0.1 signed, made once with the real commands; each test works on a copy. */
let template: { dir: string; keyid: string };
let removeTemplate: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), 'plinth-signing-cli-'));
  const maker = await sandbox('plinth-signing-template-');
  removeTemplate = () => maker.remove();
  const keygen = await run(maker, ['registry', 'keygen', join(maker.base, 'registry-key.pem'), '--json']);
  expectExit(keygen, 0);
  for (const version of ['1.0.0', '1.0.1']) {
    const dir = await writePlugin(join(maker.base, 'sources'), { name: 'greeter', version, files: { 'lib/data.txt': 'data' } });
    expectExit(await run(maker, ['registry', 'publish', dir, '--to', join(maker.base, 'registry'), '--sign', join(maker.base, 'registry-key.pem')]), 0);
  }
  template = { dir: maker.base, keyid: json<{ keyid: string }>(keygen).keyid };
}, 300_000);
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
  await removeTemplate?.();
});
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A sandbox, a key, a registry folder with greeter 1.0.0 and 1.0.1 signed, served; the sandbox's settings pin the key. */
async function signedSetup(settings: Record<string, unknown> = {}): Promise<{ box: Sandbox; folder: string; keyFile: string; keyid: string; server: RegistryServer }> {
  const box = await sandbox('plinth-signing-');
  closers.push(() => box.remove());
  // The template's key (0600, as keygen wrote it: cp keeps the mode) and registry: three commands fewer per test.
  const keyFile = join(box.base, 'registry-key.pem');
  const folder = join(box.base, 'registry');
  const keyid = template.keyid;
  for (const name of ['registry-key.pem', 'registry-key.pem.pub', 'registry']) await cp(join(template.dir, name), join(box.base, name), { recursive: true });
  const server = await serveRegistry(folder);
  closers.push(() => server.close());
  await box.settings({ registries: [{ name: 'local', url: server.url, keys: [keyid] }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false }, ...settings } });
  return { box, folder, keyFile, keyid, server };
}

const output = (result: Result) => `${result.stdout}\n${result.stderr}`;

describe('registry keygen and publish --sign', () => {
  it('makes an ed25519 key 0600 and prints its keyid; a signed install records it', async () => {
    const { box, keyFile, keyid } = await signedSetup();
    expect(keyid).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(`${keyFile}.pub`)).isFile()).toBe(true);
    // A key is never overwritten.
    const again = await run(box, ['registry', 'keygen', keyFile]);
    expectExit(again, 1);
    expect(again.stderr).toContain('PLN_E_REGISTRY_SIGN_KEY');
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']), 0);
    const verify = await run(box, ['ext', 'verify', 'greeter']);
    expectExit(verify, 0);
    expect(verify.stdout).toContain(`greeter@1.0.0: ok, every file as installed (signed by ${keyid})`);
  });
});

describe('keys trusted on first use', () => {
  /** `plinth <args>` on a pseudo-terminal (python's pty), answering its first [y/N] with `answer`. */
  function onTerminal(box: Sandbox, args: string[], answer: string): Promise<{ code: number; screen: string }> {
    const argv = [process.execPath, BIN, ...box.dirs, ...args];
    return new Promise((resolve) => {
      execFile('python3', [join(ROOT, 'test', 'support', 'on-terminal.py'), JSON.stringify(argv), JSON.stringify(cleanEnv({}, { ci: false })), answer], { cwd: box.workspace, timeout: 60_000 }, (error, stdout) => {
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, screen: stdout });
      });
    });
  }

  it('shows the fingerprint and asks on a terminal; without one it refuses and names the command; --trust-key trusts it', async () => {
    const { box, keyid, server } = await signedSetup();
    await box.settings({ registries: [{ name: 'local', url: server.url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
    const refused = await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']);
    expectExit(refused, 1);
    expect(refused.stderr).toContain('PLN_E_MARKET_KEY_UNTRUSTED');
    expect(refused.stderr).toContain(`--trust-key ${keyid}`);
    const declined = await onTerminal(box, ['ext', 'install', 'greeter@1.0.0', '--yes'], 'n');
    expect(declined.code, declined.screen).toBe(1);
    expect(declined.screen).toContain(`${keyid} (ed25519)`);
    expect(declined.screen).toContain('Trust this key? [y/N]');
    const accepted = await onTerminal(box, ['ext', 'install', 'greeter@1.0.0', '--yes'], 'y');
    expect(accepted.code, accepted.screen).toBe(0);
    expect(accepted.screen).toContain('installed greeter@1.0.0 from local');
    // Recorded: the next command asks nothing.
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.1', '--yes']), 0);

    const other = await signedSetup();
    await other.box.settings({ registries: [{ name: 'local', url: other.server.url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
    expectExit(await run(other.box, ['ext', 'install', 'greeter@1.0.0', '--yes', '--trust-key', other.keyid]), 0);
  });

  it('a --trust-key the registry does not sign with (a typo) is named as such, not passed over as if none was given', async () => {
    const { box, keyid, server } = await signedSetup();
    await box.settings({ registries: [{ name: 'local', url: server.url }], plugins: { health: { enabled: false }, 'mcp-demo': { enabled: false } } });
    const typo = `${keyid.slice(0, -3)}xyz`;
    const refused = await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes', '--trust-key', typo, '--json']);
    expectExit(refused, 1);
    const { error } = json<{ error: { code: string; message: string } }>(refused);
    expect(error.code).toBe('PLN_E_MARKET_KEY_UNTRUSTED');
    expect(error.message).toContain(`--trust-key ${typo} is not a key it lists`);
    expect(error.message).not.toContain('nobody was asked');
  });
});

describe('registry rotate-key and index', () => {
  it('hands the registry over to a new key that clients pinned to the old one follow; the old key publishes nothing more', async () => {
    const { box, folder, keyFile, keyid } = await signedSetup();
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']), 0);
    const nextFile = join(box.base, 'next-key.pem');
    const next = json<{ keyid: string }>(await run(box, ['registry', 'keygen', nextFile, '--json']));
    const rotate = await run(box, ['registry', 'rotate-key', '--to', folder, '--from', keyFile, '--sign', nextFile]);
    expectExit(rotate, 0);
    expect(rotate.stdout).toContain(`now signs with ${next.keyid} (was ${keyid}); 2 version(s)`);
    const index = await run(box, ['registry', 'index', '--to', folder, '--sign', nextFile, '--ttl', '7', '--json']);
    expectExit(index, 0);
    expect(json<{ version: number }>(index).version).toBe(4);
    const stale = await run(box, ['registry', 'publish', await writePlugin(join(box.base, 'sources'), { name: 'greeter', version: '1.0.2' }), '--to', folder, '--sign', keyFile]);
    expectExit(stale, 1);
    expect(stale.stderr).toContain('PLN_E_REGISTRY_SIGN_KEY');
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.1', '--yes']), 0);
    const verify = await run(box, ['ext', 'verify', 'greeter']);
    expect(verify.stdout).toContain(`(signed by ${next.keyid})`);
  });
});

describe('installed files', () => {
  it('a plugin whose files changed, were added or removed does not load; ext verify names them; install --force restores it', async () => {
    const { box } = await signedSetup();
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']), 0);
    const dir = join(box.home, 'plugins', 'greeter');
    await appendFile(join(dir, 'index.ts'), '\n// edited by hand\n');
    await writeFile(join(dir, 'extra.ts'), 'export {};\n');
    await unlink(join(dir, 'lib', 'data.txt'));

    const list = await run(box, ['plugins', 'list']);
    expect(output(list)).toContain('PLN_E_MARKET_FILES_CHANGED');
    expect(output(list)).toContain('changed index.ts; added extra.ts; removed lib/data.txt');

    const verify = await run(box, ['ext', 'verify', 'greeter']);
    expectExit(verify, 1);
    expect(verify.stdout).toMatch(/changed\s+index\.ts/);
    expect(verify.stdout).toMatch(/added\s+extra\.ts/);
    expect(verify.stdout).toMatch(/removed\s+lib\/data\.txt/);
    expect(verify.stdout).toContain('restore it: plinth ext install --force greeter@1.0.0');
    const report = json<{ plugins: Array<{ status: string; changed: string[]; added: string[]; removed: string[] }> }>(await run(box, ['ext', 'verify', 'greeter', '--json']));
    expect(report.plugins).toEqual([expect.objectContaining({ status: 'changed', changed: ['index.ts'], added: ['extra.ts'], removed: ['lib/data.txt'] })]);

    expectExit(await run(box, ['ext', 'install', '--force', 'greeter@1.0.0', '--yes']), 0);
    expectExit(await run(box, ['ext', 'verify', 'greeter']), 0);
    const after = await run(box, ['plugins', 'list']);
    expect(output(after)).not.toContain('PLN_E_MARKET_FILES_CHANGED');
  });

  it('a file changed without changing its size or mtime is still found (the full check of ext verify, and ctime at load)', async () => {
    const { box } = await signedSetup();
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']), 0);
    const file = join(box.home, 'plugins', 'greeter', 'lib', 'data.txt');
    const before = await stat(file);
    await writeFile(file, 'DATA');
    const { utimes } = await import('node:fs/promises');
    await utimes(file, before.atime, before.mtime);
    expect(output(await run(box, ['plugins', 'list']))).toContain('changed lib/data.txt');
    expect((await run(box, ['ext', 'verify', 'greeter'])).stdout).toMatch(/changed\s+lib\/data\.txt/);
  });


  it('a linked development folder of the same name is not checked, and ext verify says so', async () => {
    const { box } = await signedSetup();
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']), 0);
    const dev = await writePlugin(join(box.base, 'dev'), { name: 'greeter', version: '1.0.0' });
    expectExit(await run(box, ['ext', 'link', dev]), 0);
    await appendFile(join(dev, 'index.ts'), '\n// work in progress\n');
    const verify = await run(box, ['ext', 'verify', 'greeter']);
    expectExit(verify, 0);
    expect(verify.stdout).toContain('greeter@1.0.0: linked: a linked development folder is used instead of the installed greeter@1.0.0: it is not checked');
    expect(output(await run(box, ['plugins', 'list']))).not.toContain('PLN_E_MARKET_FILES_CHANGED');
  });
});

describe('revocation', () => {
  it('a revoked version is disabled while plinth up runs, with the reason and the version to move to, and does not load again', async () => {
    const { box, folder, keyFile } = await signedSetup({ extensions: { settings: { updateCheck: true, hotReload: false } } });
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']), 0);
    const revoke = await run(box, ['registry', 'revoke', 'greeter@1.0.0', '--to', folder, '--sign', keyFile, '--reason', 'leaks the greeting', '--use', '1.0.1']);
    expectExit(revoke, 0);

    const child = start(box, ['up']);
    closers.push(async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.resume();
    for (let i = 0; i < 600 && !stderr.includes('disabled greeter@1.0.0'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stderr).toContain('disabled greeter@1.0.0: revoked by registry local: leaks the greeting; move to 1.0.1: plinth ext install greeter@1.0.1');
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));

    const verify = await run(box, ['ext', 'verify', 'greeter']);
    expectExit(verify, 1);
    expect(verify.stdout).toContain('greeter@1.0.0: revoked: leaks the greeting (plinth ext install greeter@1.0.1)');
    expect(output(await run(box, ['plugins', 'list']))).toContain('PLN_E_MARKET_REVOKED');
    const outdated = await run(box, ['ext', 'outdated']);
    expect(outdated.stdout).toContain('revoked: greeter@1.0.0 by registry local: leaks the greeting; move to 1.0.1');
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.1', '--yes']), 0);
    expectExit(await run(box, ['ext', 'verify', 'greeter']), 0);
  });
  it('ext install and ext rollback refuse a revoked version with the --use suggestion; ext verify fails once the revocations are hidden', async () => {
    const { box, folder, keyFile } = await signedSetup();
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']), 0);
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.1', '--yes']), 0);
    expectExit(await run(box, ['registry', 'revoke', 'greeter@1.0.0', '--to', folder, '--sign', keyFile, '--reason', 'leaks the greeting', '--use', '1.0.1']), 0);
    const install = await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes', '--force']);
    expectExit(install, 1);
    expect(install.stderr).toContain('PLN_E_MARKET_REVOKED');
    expect(install.stderr).toContain('plinth ext install greeter@1.0.1');
    const rollback = await run(box, ['ext', 'rollback', 'greeter']);
    expectExit(rollback, 1);
    expect(rollback.stderr).toContain('PLN_E_MARKET_REVOKED');
    expect(rollback.stderr).toContain('plinth ext install greeter@1.0.1');
    // The registry (or a mirror) stops serving the list: not "ok".
    await unlink(join(folder, '-', 'plinth', 'revocations.json'));
    const verify = await run(box, ['ext', 'verify', 'greeter']);
    expectExit(verify, 1);
    expect(verify.stderr).toContain('PLN_E_MARKET_REVOCATIONS_MISSING');
    expect(verify.stderr).toContain('plinth registry index --to <folder> --sign <key>');
  });

  it('without --use, the version to move to is the newest that an install would accept: not a newer unsigned one', async () => {
    const { box, folder, keyFile } = await signedSetup();
    expectExit(await run(box, ['ext', 'install', 'greeter@1.0.0', '--yes']), 0);
    // 1.0.2 is published without a signature: the registry's key is pinned, so an install refuses it.
    const unsigned = await writePlugin(join(box.base, 'sources'), { name: 'greeter', version: '1.0.2' });
    expectExit(await run(box, ['registry', 'publish', unsigned, '--to', folder]), 0);
    expectExit(await run(box, ['registry', 'index', '--to', folder, '--sign', keyFile]), 0);
    expect((await run(box, ['ext', 'install', 'greeter@1.0.2', '--yes'])).stderr).toContain('PLN_E_MARKET_UNSIGNED');
    expectExit(await run(box, ['registry', 'revoke', 'greeter@1.0.0', '--to', folder, '--sign', keyFile, '--reason', 'leaks the greeting']), 0);
    const outdated = await run(box, ['ext', 'outdated']);
    expect(outdated.stdout).toContain('revoked: greeter@1.0.0 by registry local: leaks the greeting; move to 1.0.1 (plinth ext install greeter@1.0.1)');
  });
});
