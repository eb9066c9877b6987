/**
 * What granted permissions mean, without running anything: host matching
 * (deny over allow, ports, subdomains only, IP literals, look-alikes), the
 * placeholders expanded to real paths, the manifest's permissions checked
 * with clear messages, and the bubblewrap command line's shape.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { bwrapArgs, nodeOptions } from '../plugins/sandbox/bwrap.js';
import { expandFilesystem, expandPath, hostRefusal } from '../plugins/sandbox/policy.js';
import { appendAudit, readAudit } from '../plugins/sandbox/audit.js';
import { parseManifest, permissionsSchema } from '../sdk/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'plinth-sandbox-policy-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const network = (allow: string[], deny: string[] = []) => permissionsSchema.parse({ network: { allow, deny } }).network;

describe('host matching', () => {
  test('an exact name matches itself on any port, and nothing that merely ends or starts like it', () => {
    const n = network(['example.com']);
    expect(hostRefusal(n, 'example.com', 443)).toBeUndefined();
    expect(hostRefusal(n, 'EXAMPLE.com.', 80)).toBeUndefined();
    expect(hostRefusal(n, 'evilexample.com', 443)).toBe('not in network.allow');
    expect(hostRefusal(n, 'example.com.evil.test', 443)).toBe('not in network.allow');
    expect(hostRefusal(n, 'api.example.com', 443)).toBe('not in network.allow');
  });

  test('*.example.com means subdomains only', () => {
    const n = network(['*.example.com']);
    expect(hostRefusal(n, 'api.example.com', 443)).toBeUndefined();
    expect(hostRefusal(n, 'a.b.example.com', 443)).toBeUndefined();
    expect(hostRefusal(n, 'example.com', 443)).toBe('not in network.allow');
    expect(hostRefusal(n, 'evilexample.com', 443)).toBe('not in network.allow');
    expect(hostRefusal(n, 'api.example.com.evil.test', 443)).toBe('not in network.allow');
  });

  test('a port narrows a pattern to that port', () => {
    const n = network(['api.example.com:8443', '127.0.0.1:5000']);
    expect(hostRefusal(n, 'api.example.com', 8443)).toBeUndefined();
    expect(hostRefusal(n, 'api.example.com', 443)).toBe('not in network.allow');
    expect(hostRefusal(n, '127.0.0.1', 5000)).toBeUndefined();
    expect(hostRefusal(n, '127.0.0.1', 5001)).toContain('an IP address that is not declared');
  });

  test('deny wins over allow, whatever the order', () => {
    const n = network(['*.example.com', 'example.com'], ['secret.example.com', 'example.com:22']);
    expect(hostRefusal(n, 'api.example.com', 443)).toBeUndefined();
    expect(hostRefusal(n, 'secret.example.com', 443)).toBe('denied by "secret.example.com"');
    expect(hostRefusal(n, 'example.com', 22)).toBe('denied by "example.com:22"');
    expect(hostRefusal(n, 'example.com', 443)).toBeUndefined();
  });

  test('IP literals are allowed only when declared as such; a wildcard never matches one', () => {
    const n = network(['*.0.0.1', '[::1]:8080', '10.0.0.5']);
    expect(hostRefusal(n, '127.0.0.1', 80)).toContain('an IP address');
    expect(hostRefusal(n, '::1', 8080)).toBeUndefined();
    expect(hostRefusal(n, '[::1]', 8080)).toBeUndefined();
    expect(hostRefusal(n, '10.0.0.5', 443)).toBeUndefined();
    expect(hostRefusal(n, '10.0.0.6', 443)).toContain('an IP address');
  });

  test('nothing declared: nothing allowed', () => {
    expect(hostRefusal(network([]), 'example.com', 443)).toBe('no network access is declared');
  });
});

describe('the permissions schema', () => {
  test('host patterns with a scheme, a path or a wildcard in the middle are refused with the expected form', () => {
    for (const bad of ['https://example.com', 'example.com/path', 'api.*.com', '*example.com', 'example.com:99999', '']) {
      const result = permissionsSchema.safeParse({ network: { allow: [bad] } });
      expect(result.success, bad).toBe(false);
    }
    expect(permissionsSchema.parse({ network: { allow: ['API.Example.com:443'] } }).network.allow).toEqual(['api.example.com:443']);
  });

  test('a manifest with a mistaken permissions block names each problem at its path', () => {
    const result = parseManifest({ name: 'p', version: '1.0.0', permissions: { filesystem: { read: ['src'] }, network: { allow: ['http://x.test'] }, env: ['NOT-A-NAME'], net: true } });
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    expect(issues.map((i) => i.path)).toEqual(expect.arrayContaining(['permissions.filesystem.read[0]', 'permissions.network.allow[0]', 'permissions.env[0]', 'permissions']));
    expect(issues.find((i) => i.path === 'permissions')?.message).toContain('unknown permission "net"');
    expect(issues.find((i) => i.path === 'permissions.filesystem.read[0]')?.message).toContain('${workspace}');
  });

  test('a manifest that declares nothing gets every kind, empty', () => {
    const result = parseManifest({ name: 'p', version: '1.0.0' });
    expect(result.ok && result.manifest.permissions).toEqual({ filesystem: { read: [], write: [] }, network: { allow: [], deny: [] }, env: [], shell: [], mcp: [] });
  });
});

describe('placeholders', () => {
  const workspace = join(scratch, 'ws');
  const real = join(scratch, 'real-home');
  const linked = join(scratch, 'home-link');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  mkdirSync(real, { recursive: true });
  symlinkSync(real, linked);
  const values = { workspace, home: linked, pluginDir: join(scratch, 'plugin'), tmp: join(scratch, 'tmp') };

  test('each placeholder expands to its real path (symlinks resolved), also for what does not exist yet', () => {
    expect(expandPath('${workspace}/src', values)).toBe(join(workspace, 'src'));
    expect(expandPath('${home}/.config/tool', values)).toBe(join(real, '.config', 'tool'));
    expect(expandPath('${pluginDir}', values)).toBe(join(scratch, 'plugin'));
    expect(expandPath('${tmp}/x', values)).toBe(join(scratch, 'tmp', 'x'));
    expect(expandPath('/etc/hostname', values)).toBe('/etc/hostname');
  });

  test('${pluginDir} means nothing for a principal without a folder; write implies read', () => {
    expect(expandPath('${pluginDir}/data', { ...values, pluginDir: undefined })).toBeUndefined();
    const fs = expandFilesystem({ read: ['${workspace}', '${workspace}/src'], write: ['${workspace}/src'] }, values);
    expect(fs).toEqual({ read: [workspace], write: [join(workspace, 'src')] });
  });

  test('a path with ".." is refused by the schema', () => {
    expect(permissionsSchema.safeParse({ filesystem: { read: ['${workspace}/../elsewhere'] } }).success).toBe(false);
  });
});

describe('the bubblewrap command line', () => {
  const base = join(scratch, 'cmd');
  const granted = join(base, 'granted');
  const inner = join(granted, 'inner');
  mkdirSync(join(inner, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(inner, '.bashrc'), '');
  mkdirSync(join(base, 'home'));
  mkdirSync(join(base, 'tmp'));
  const args = bwrapArgs({ file: '/usr/bin/true', args: ['--x'], cwd: join(base, 'elsewhere'), read: [granted], write: [inner], privateHome: join(base, 'home'), privateTmp: join(base, 'tmp'), protectedPaths: [], env: { PATH: '/usr/bin' } });
  const pairs = (flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]] : []));

  test('every namespace unshared, dies with plinth, a session and /proc of its own, no capabilities, no variable on the command line', () => {
    for (const flag of ['--unshare-all', '--die-with-parent', '--new-session']) expect(args).toContain(flag);
    // The environment is bwrap's own (bwrapEnvironment), never --setenv NAME VALUE.
    expect(args).not.toContain('--setenv');
    expect(pairs('--cap-drop')).toEqual(['ALL']);
    expect(pairs('--proc')).toEqual(['/proc']);
    expect(args.slice(-2)).toEqual(['/usr/bin/true', '--x']);
  });

  test('the read grant read-only, the write grant inside it writable after it, protected files read-only again, nothing of /tmp /run /home', () => {
    const order = (path: string, flag: string) => args.findIndex((a, i) => a === flag && args[i + 1] === path);
    expect(order(granted, '--ro-bind')).toBeGreaterThan(-1);
    expect(order(inner, '--bind')).toBeGreaterThan(order(granted, '--ro-bind'));
    expect(order(join(inner, '.bashrc'), '--ro-bind')).toBeGreaterThan(order(inner, '--bind'));
    expect(order(join(inner, '.git'), '--ro-bind')).toBeGreaterThan(order(inner, '--bind'));
    const bound = [...pairs('--bind'), ...pairs('--ro-bind')];
    for (const hidden of ['/tmp', '/run', '/var/run', '/home', '/root', '/etc', '/etc/shadow']) expect(bound).not.toContain(hidden);
    // A working folder that is not granted is not bound: the child starts in its private HOME.
    expect(pairs('--chdir')).toEqual([join(base, 'home')]);
  });

  test('a write grant over plinth\'s user folder leaves it read-only, but the private HOME inside it writable', () => {
    const plinthHome = join(base, 'granted', 'inner', 'plinth-home');
    const privateHome = join(plinthHome, 'sandbox', 'homes', 'p');
    mkdirSync(privateHome, { recursive: true });
    const over = bwrapArgs({ file: '/usr/bin/true', args: [], cwd: base, read: [], write: [inner], privateHome, privateTmp: join(base, 'tmp'), protectedPaths: [plinthHome], env: {} });
    const last = (path: string) => over.reduce((found, a, i) => ((a === '--bind' || a === '--ro-bind') && over[i + 1] === path ? i : found), -1);
    expect(over[last(plinthHome)]).toBe('--ro-bind');
    expect(over[last(privateHome)]).toBe('--bind');
    expect(last(privateHome)).toBeGreaterThan(last(plinthHome));
  });

  test('NODE_OPTIONS quotes a flag whose value holds a space', () => {
    expect(nodeOptions(['--allow-fs-read=/b c', '--x'])).toBe('--allow-fs-read="/b c" --x');
  });
});

describe('the audit log', () => {
  test('concurrent writers lose no line, and the reader filters by plugin and permission', async () => {
    const home = join(scratch, 'audit-home');
    await Promise.all(Array.from({ length: 200 }, (_, i) => appendAudit(home, { plugin: i % 2 === 0 ? 'a' : 'b', permission: 'network', target: `h${i}.test:443`, reason: 'not in network.allow' })));
    expect(readAudit(home)).toHaveLength(200);
    expect(readAudit(home, { plugin: 'a' })).toHaveLength(100);
    expect(readAudit(home, { plugin: 'a', permission: 'env' })).toHaveLength(0);
    expect(readAudit(home, { limit: 3 })).toHaveLength(3);
  });
});
