/**
 * What a package runner implies (internal/permissions/package-runner.ts): the registry it will
 * fetch from inside the sandbox, and its own variables; nothing for a program
 * that is no package runner. A workspace hook that runs `npx` asks for them too.
 */
import { describe, expect, test } from 'vitest';
import { hookPrincipal } from '../plugins/hooks/principal.js';
import { NO_PERMISSIONS } from '../sdk/index.js';
import { packageRunnerPermissions, withPackageRunner } from '../internal/permissions/package-runner.js';
import { hookDefinition } from './support/hook-definition.js';

const allow = (command: string, args: string[], env: Record<string, string> = {}) => packageRunnerPermissions(command, args, env)?.permissions.network?.allow;

describe('package runners', () => {
  test('npx, npm exec, pnpm dlx: the registry from --registry, else npm_config_registry, else the public one', () => {
    expect(allow('npx', ['-y', '@modelcontextprotocol/server-memory'])).toEqual(['registry.npmjs.org:443']);
    expect(allow('/usr/bin/npx', ['-y', 'pkg', '--registry=http://127.0.0.1:4873/'])).toEqual(['127.0.0.1:4873']);
    expect(allow('npm', ['exec', '--yes', 'pkg'], { npm_config_registry: 'https://npm.example.com/' })).toEqual(['npm.example.com:443']);
    expect(allow('pnpm', ['dlx', 'pkg'], { NPM_CONFIG_REGISTRY: 'http://[::1]:4873/' })).toEqual(['[::1]:4873']);
    // A reference is read at launch: its host is not known here, so the public default is what is asked for.
    expect(allow('npx', ['pkg'], { npm_config_registry: '${env:REGISTRY}' })).toEqual(['registry.npmjs.org:443']);
    expect(packageRunnerPermissions('npx', ['pkg'], { npm_config_registry: 'x', npm_config_cache: 'y', API_KEY: 'z' })?.permissions.env).toEqual(['npm_config_registry', 'npm_config_cache']);
  });

  test('uvx and uv tool run: PyPI, or the index given', () => {
    expect(allow('uvx', ['mcp-server-git'])).toEqual(['pypi.org:443', 'files.pythonhosted.org:443']);
    expect(allow('uv', ['tool', 'run', 'x'], { UV_INDEX_URL: 'http://127.0.0.1:8080/simple' })).toEqual(['127.0.0.1:8080']);
  });

  test('no package runner: nothing implied, the declared permissions as they are', () => {
    for (const [command, args] of [['node', ['server.js']], ['npm', ['test']], ['uv', ['run', 'x.py']], ['npx-like', ['pkg']]] as const) expect(packageRunnerPermissions(command, [...args])).toBeUndefined();
    expect(withPackageRunner(NO_PERMISSIONS, 'node', ['x.js'])).toBe(NO_PERMISSIONS);
  });

  test('a workspace hook running npx declares its registry besides what it declares itself', () => {
    const hook = hookDefinition({ id: 'workspace:lint', name: 'lint', source: 'workspace', cwd: '/w', action: { type: 'command', command: 'npx', args: ['-y', 'some-linter'] } });
    const principal = hookPrincipal(hook, undefined, { home: '/h', workspace: '/w' });
    expect(principal.declared.network.allow).toEqual(['registry.npmjs.org:443']);
  });
});
