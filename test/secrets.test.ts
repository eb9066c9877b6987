/**
 * Sensitive settings: a value a plugin declares `sensitive` never reaches a
 * log line, a plugin status or the settings shown by `inspect()`, however the
 * plugin tries to leak it (logging it, throwing it, blocking an event with it).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import type { InlinePlugin } from '../kernel/kernel.js';

/** Given in settings.json. */
const API_KEY = 'sk-live-7f3a9c2e1b';
/** Given through the environment variable the plugin declares. */
const TOKEN = 'ghp_envTokenX81Q';
const SECRETS = [API_KEY, TOKEN];

const vaultManifest = {
  name: 'vault',
  settings: [
    { name: 'apiKey', type: 'string' as const, sensitive: true },
    { name: 'token', type: 'string' as const, sensitive: true, envVar: 'VAULT_TOKEN' },
    { name: 'region', type: 'string' as const, default: 'eu-west-1' },
  ],
};

/** A plugin that does its best to leak its own secrets. */
const leakyVault: InlinePlugin = {
  manifest: vaultManifest,
  setup(kernel, ctx) {
    const { apiKey, token } = ctx.settings as { apiKey: string; token: string };
    ctx.log.info(`connecting with key ${apiKey} and token ${token}`);
    ctx.log.warn('credentials', { apiKey, token, nested: { header: `Bearer ${token}` } });
    kernel.on('before_tool', () => ({ allow: false, message: `refused: key ${apiKey} is read-only` }));
    kernel.on('after_tool', () => {
      throw new Error(`upstream rejected token ${token}`);
    });
    kernel.hooks.ready.tap(() => {
      throw new Error(`ready failed for ${apiKey}`);
    });
    return () => {
      throw new Error(`could not revoke ${token}`);
    };
  },
};

/** A second plugin that tries to read the first one's secrets from the settings and fails its setup quoting them. */
const failingVault: InlinePlugin = {
  manifest: { name: 'vault-mirror', dependencies: { vault: '*' } },
  setup(kernel) {
    const settings = (kernel.config.plugins as Record<string, { settings: Record<string, string> }>).vault!.settings;
    throw new Error(`mirror cannot use ${settings.apiKey}`);
  },
};

let kernel: TestKernel;

beforeEach(async () => {
  kernel = await createTestKernel({
    settings: { plugins: { vault: { settings: { apiKey: API_KEY } } } },
    env: { VAULT_TOKEN: TOKEN },
    plugins: [leakyVault, failingVault],
  });
});

afterEach(async () => {
  await kernel.dispose();
});

/** Fails the test naming the place where a secret showed up. */
function expectNoSecret(where: string, text: string): void {
  for (const secret of SECRETS) {
    expect(text.includes(secret), `${where} contains the secret ${secret.slice(0, 4)}…`).toBe(false);
  }
}

describe('sensitive settings', () => {
  it('reach the plugin itself unredacted', async () => {
    let seen: Readonly<Record<string, unknown>> | undefined;
    const probe = await createTestKernel({
      settings: { plugins: { vault: { settings: { apiKey: API_KEY } } } },
      env: { VAULT_TOKEN: TOKEN },
      plugins: [{ manifest: vaultManifest, setup: (_kernel, ctx) => void (seen = ctx.settings) }],
    });
    await probe.dispose();
    expect(seen).toEqual({ apiKey: API_KEY, token: TOKEN, region: 'eu-west-1' });
  });

  it('never appear in the log, whatever the plugin logs, throws or blocks with', async () => {
    await kernel.emit('before_tool', { tool: 'deploy' });
    await kernel.emit('after_tool', { tool: 'deploy' });
    const report = await kernel.dispose();

    // The leaks did happen (so the checks below are not vacuous) ...
    expect(kernel.logs.some((line) => line.includes('connecting with key [redacted] and token [redacted]'))).toBe(true);
    expect(kernel.logs.some((line) => line.includes('PLN_E_EVENT_HANDLER'))).toBe(true);
    expect(kernel.logs.some((line) => line.includes('PLN_E_HOOK_FAILED'))).toBe(true);
    expect(report.errors.map((e) => e.code)).toContain('PLN_E_PLUGIN_TEARDOWN');
    // ... and no line carries a secret.
    expectNoSecret('the log', kernel.logs.join('\n'));
  });

  it('never appear in plugin status errors', () => {
    const mirror = kernel.status().find((p) => p.name === 'vault-mirror');
    expect(mirror?.state).toBe('failed');
    expect(mirror?.error?.code).toBe('PLN_E_PLUGIN_SETUP');
    expectNoSecret('status()', JSON.stringify(kernel.status()));
    expectNoSecret('the boot report', JSON.stringify(kernel.report.plugins));
  });

  it('never appear in decisions, whether a handler blocks with one or throws one', async () => {
    const blocked = await kernel.emit('before_tool', { tool: 'deploy' });
    const failed = await kernel.emit('after_tool', { tool: 'deploy' });

    expect(blocked.blockedBy?.plugin).toBe('vault');
    expect(failed.blockedBy?.code).toBe('PLN_E_EVENT_HANDLER');
    expectNoSecret('a blocking decision', JSON.stringify(blocked));
    expectNoSecret('a failed decision', JSON.stringify(failed));
  });

  it('never appear in errors handed to the caller', async () => {
    const activation = await kernel.activate('vault-mirror').catch((error: unknown) => error);
    const report = await kernel.dispose();

    expect(activation).toMatchObject({ code: 'PLN_E_PLUGIN_SETUP' });
    expectNoSecret('the activation error', JSON.stringify(activation));
    expect(report.errors.map((e) => e.code)).toContain('PLN_E_PLUGIN_TEARDOWN');
    expectNoSecret('the shutdown report', JSON.stringify(report.errors.map((e) => e.toJSON())));
  });

  it('are hidden from other plugins reading the settings', async () => {
    let seen: unknown;
    const probe = await createTestKernel({
      settings: { plugins: { vault: { settings: { apiKey: API_KEY } } } },
      plugins: [
        { manifest: vaultManifest, setup: () => undefined },
        { manifest: { name: 'curious' }, setup: (k) => void (seen = (k.config.plugins as Record<string, unknown>).vault) },
      ],
    });
    await probe.dispose();
    expect(seen).toEqual({ settings: { apiKey: '[redacted]' } });
  });

  it('are redacted from the settings inspect() shows', () => {
    const { settings } = kernel.inspect().config;
    expect(settings.plugins).toEqual({ vault: { settings: { apiKey: '[redacted]' } } });
    expectNoSecret('inspect()', JSON.stringify(kernel.inspect().config));
    expectNoSecret('inspect().plugins', JSON.stringify(kernel.inspect().plugins));
  });
});
