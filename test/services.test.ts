/**
 * Services: a plugin provides what its manifest lists in `provides`, any
 * plugin (or the host) gets it by name, and settings choose between providers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isPlinthError, type PlinthError } from '../sdk/index.js';
import { createTestKernel, type TestKernel, type TestKernelOptions } from '../testing/index.js';
import type { InlinePlugin } from '../kernel/kernel.js';
import { ServiceRegistry, serviceChoices } from '../kernel/services.js';
import type { PluginSource } from '../kernel/types.js';
import { rejection } from './support/errors.js';

/** A service type, declared the way a plugin author does, so `get` is typed. */
interface KeyValueStore {
  readonly backend: string;
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

declare module '../sdk/index.js' {
  interface Services {
    'example:kv': KeyValueStore;
  }
}

const kernels: TestKernel[] = [];

async function boot(options: TestKernelOptions = {}): Promise<TestKernel> {
  const kernel = await createTestKernel(options);
  kernels.push(kernel);
  return kernel;
}

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

function memoryStore(backend: string): KeyValueStore {
  const data = new Map<string, string>();
  return { backend, get: (key) => data.get(key), set: (key, value) => void data.set(key, value) };
}

/** A plugin that provides `example:kv` backed by `backend`, counting its setups. */
function kvProvider(name: string, options: { lazy?: boolean; setups?: string[] } = {}): InlinePlugin {
  return {
    manifest: { name, provides: ['example:kv'], ...(options.lazy && { activation: 'lazy' as const }) },
    setup(kernel) {
      options.setups?.push(name);
      kernel.provide('example:kv', memoryStore(name));
    },
  };
}

describe('providing and getting', () => {
  it('lets one plugin get the service another provides', async () => {
    let fromConsumer: KeyValueStore | undefined;
    const kernel = await boot({
      plugins: [
        kvProvider('kv-memory'),
        {
          manifest: { name: 'session-cache', dependencies: { 'kv-memory': '*' } },
          async setup(kernel) {
            fromConsumer = await kernel.get('example:kv'); // typed KeyValueStore through `Services`
            fromConsumer.set('session', 'abc');
          },
        },
      ],
    });

    const store = await kernel.get('example:kv');
    expect(store.backend).toBe('kv-memory');
    expect(store).toBe(fromConsumer);
    expect(store.get('session')).toBe('abc');
  });

  it('fails a plugin that provides a service its manifest does not declare', async () => {
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'sneaky' },
          setup: (kernel) => void kernel.provide('example:kv', memoryStore('sneaky')),
        },
        {
          manifest: { name: 'sneaky-async' },
          async setup(kernel) {
            await Promise.resolve();
            kernel.provide('example:kv', memoryStore('sneaky-async'));
          },
        },
      ],
    });

    for (const name of ['sneaky', 'sneaky-async']) {
      const status = kernel.status().find((p) => p.name === name);
      expect(status?.state).toBe('failed');
      expect(status?.error?.code).toBe('PLN_E_SERVICE_UNDECLARED');
      expect(status?.error?.message).toContain(name);
    }
    expect((await rejection(kernel.get('example:kv'))).code).toBe('PLN_E_SERVICE_MISSING');
  });

  it('rejects get of a service nobody provides', async () => {
    const kernel = await boot();
    const error = await rejection(kernel.get('example:kv'));
    expect(error.code).toBe('PLN_E_SERVICE_MISSING');
    expect(error.message).toContain('example:kv');
  });

  it('says which known service a misspelt name is near', async () => {
    const kernel = await boot({ plugins: [{ manifest: { name: 'kv', provides: ['example:kv'] }, setup(k) { k.provide('example:kv', {} as never); } }] });
    kernel.provide('sampling', {});
    expect((await rejection(kernel.get('example:kb'))).message).toBe('no plugin provides service "example:kb" (did you mean "example:kv"?)');
    expect((await rejection(kernel.get('samplng'))).message).toBe('no plugin provides service "samplng" (did you mean "sampling"?)');
    expect((await rejection(kernel.get('nothing-like-it'))).message).toBe('no plugin provides service "nothing-like-it"');
  });

  it('lets the host provide a service, to itself and to plugins', async () => {
    let fromPlugin: unknown;
    const kernel = await boot({
      plugins: [
        {
          // Lazy, so it runs after the host has provided.
          manifest: { name: 'sampler-user', activation: 'lazy', events: ['before_model'] },
          setup: async (kernel) => void (fromPlugin = await kernel.get('sampling')),
        },
      ],
    });
    const sampling = { sample: (prompt: string) => `echo ${prompt}` };
    const off = kernel.provide('sampling', sampling);

    expect(await kernel.get('sampling')).toBe(sampling);
    await kernel.emit('before_model', {});
    expect(fromPlugin).toBe(sampling);

    off();
    expect((await rejection(kernel.get('sampling'))).code).toBe('PLN_E_SERVICE_MISSING');
  });

  it('imports a lazy provider on the first get, and only once', async () => {
    const setups: string[] = [];
    const kernel = await boot({ plugins: [kvProvider('kv-lazy', { lazy: true, setups })] });
    expect(kernel.status()[0]?.state).toBe('lazy');
    expect(setups).toEqual([]);

    const [first, second] = await Promise.all([kernel.get('example:kv'), kernel.get('example:kv')]);

    expect(first.backend).toBe('kv-lazy');
    expect(second).toBe(first);
    expect(setups).toEqual(['kv-lazy']);
    expect(kernel.status()[0]?.state).toBe('active');
  });
});

describe('choosing a provider', () => {
  it('refuses to guess between two providers', async () => {
    const kernel = await boot({ plugins: [kvProvider('kv-memory'), kvProvider('kv-redis')] });

    const error = await rejection(kernel.get('example:kv'));

    expect(error.code).toBe('PLN_E_SERVICE_AMBIGUOUS');
    expect(error.message).toContain('kv-memory');
    expect(error.message).toContain('kv-redis');
  });

  it('uses the provider settings name (how a deployment swaps an implementation)', async () => {
    const setups: string[] = [];
    const kernel = await boot({
      settings: { services: { 'example:kv': 'kv-redis' } },
      plugins: [kvProvider('kv-memory', { lazy: true, setups }), kvProvider('kv-redis', { lazy: true, setups })],
    });

    expect((await kernel.get('example:kv')).backend).toBe('kv-redis');
    // The other lazy provider is never imported.
    expect(setups).toEqual(['kv-redis']);
  });

  it('lets a profile swap the provider', async () => {
    const settings = {
      services: { 'example:kv': 'kv-memory' },
      profiles: { production: { services: { 'example:kv': 'kv-redis' } } },
    };
    const plugins = [kvProvider('kv-memory', { lazy: true }), kvProvider('kv-redis', { lazy: true })];

    const development = await boot({ settings, plugins });
    const production = await boot({ settings, plugins, profile: 'production' });

    expect((await development.get('example:kv')).backend).toBe('kv-memory');
    expect((await production.get('example:kv')).backend).toBe('kv-redis');
  });

  it('rejects a choice in settings that does not provide the service', async () => {
    const kernel = await boot({
      settings: { services: { 'example:kv': 'kv-typo' } },
      plugins: [kvProvider('kv-memory')],
    });

    const error = await rejection(kernel.get('example:kv'));

    expect(error.code).toBe('PLN_E_SERVICE_PROVIDER_UNKNOWN');
    expect(error.message).toContain('kv-typo');
    expect(error.message).toContain('kv-memory');
  });

  it('lets settings choose the host over a plugin', async () => {
    const kernel = await boot({ settings: { services: { 'example:kv': 'host' } }, plugins: [kvProvider('kv-memory', { lazy: true })] });
    kernel.provide('example:kv', memoryStore('host'));
    expect((await kernel.get('example:kv')).backend).toBe('host');
  });
});

describe('providers that do not deliver', () => {
  it('rejects with PLN_E_SERVICE_UNAVAILABLE, the provider\'s error as the cause, when its setup fails', async () => {
    const kernel = await boot({
      plugins: [
        {
          manifest: { name: 'kv-broken', provides: ['example:kv'], activation: 'lazy' },
          setup() {
            throw new Error('connection refused');
          },
        },
      ],
    });

    const error = await rejection(kernel.get('example:kv'));

    expect(error.code).toBe('PLN_E_SERVICE_UNAVAILABLE');
    expect(error.plugin).toBe('kv-broken');
    expect(isPlinthError(error.cause)).toBe(true);
    expect((error.cause as PlinthError).code).toBe('PLN_E_PLUGIN_SETUP');
    expect(kernel.status()[0]?.state).toBe('failed');
  });

  it('rejects with PLN_E_SERVICE_NOT_PROVIDED when the provider declared the service but did not provide it', async () => {
    const kernel = await boot({
      plugins: [{ manifest: { name: 'kv-forgetful', provides: ['example:kv'] }, setup() {} }],
    });

    const error = await rejection(kernel.get('example:kv'));

    expect(error.code).toBe('PLN_E_SERVICE_NOT_PROVIDED');
    expect(error.plugin).toBe('kv-forgetful');
  });
});

describe('choices and providers that came with the project', () => {
  const layer = (scope: 'user' | 'workspace', services: Record<string, string>, profile?: string) => ({
    scope,
    file: `/${scope}/settings.json`,
    ...(profile && { profile }),
    settings: { services },
  });
  const sources: Record<string, PluginSource> = { 'kv-user': 'user', 'kv-ws': 'workspace', 'kv-builtin': 'builtin' };

  it('ignores a workspace settings choice of a workspace provider, so the user choice under it stands', () => {
    const ignored: PlinthError[] = [];
    const choices = serviceChoices(
      {
        settings: {},
        layers: [layer('user', { 'example:kv': 'kv-user', other: 'kv-user' }), layer('workspace', { 'example:kv': 'kv-ws', other: 'kv-builtin' }), layer('workspace', { third: 'kv-ws' }, 'prod')],
      },
      (name) => sources[name],
      (error) => void ignored.push(error),
    );
    expect(choices).toEqual({ 'example:kv': 'kv-user', other: 'kv-builtin' });
    expect(ignored.map((e) => [e.code, e.details?.service])).toEqual([
      ['PLN_E_SERVICE_CHOICE_IGNORED', 'example:kv'],
      ['PLN_E_SERVICE_CHOICE_IGNORED', 'third'],
    ]);
    // The user may choose a workspace provider.
    expect(serviceChoices({ settings: {}, layers: [layer('user', { 'example:kv': 'kv-ws' })] }, (name) => sources[name], () => undefined)).toEqual({ 'example:kv': 'kv-ws' });
  });

  it('without a choice, a workspace provider does not make a service ambiguous; two others still do', async () => {
    const registry = new ServiceRegistry({ choices: {}, activate: async () => undefined, sourceOf: (name) => sources[name] });
    registry.declare('kv-builtin', ['example:kv']);
    registry.declare('kv-ws', ['example:kv']);
    expect(registry.chooseProvider('example:kv')).toBe('kv-builtin');
    registry.declare('kv-user', ['example:kv']);
    expect(() => registry.chooseProvider('example:kv')).toThrow(expect.objectContaining({ code: 'PLN_E_SERVICE_AMBIGUOUS' }));
  });
});
