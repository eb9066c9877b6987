/**
 * The build bundles zod into dist/, while a third-party plugin that imports
 * `zod` gets node_modules' copy (jiti gives it only `plinth/sdk`, the host's
 * dist/sdk). The two copies must compose: an sdk schema inside the plugin's
 * z.object, the plugin's schema in the sdk's parseSettings, and errors either
 * way.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { beforeAll, describe, expect, test } from 'vitest';
import { ROOT, ensureBuilt } from './support/cli.js';

type Sdk = typeof import('../sdk/index.js');
let sdk: Sdk;

beforeAll(async () => {
  ensureBuilt();
  sdk = (await import(pathToFileURL(join(ROOT, 'dist', 'sdk', 'index.js')).href)) as Sdk;
}, 300_000);

describe('the bundled sdk and node_modules zod', () => {
  test('an sdk schema inside the plugin\'s z.object parses, with its defaults', () => {
    const schema = z.object({ setting: sdk.settingSchema, count: z.number() });
    expect(schema.parse({ setting: { name: 'apiKey' }, count: 1 })).toEqual({
      setting: { name: 'apiKey', type: 'string', required: false, sensitive: false, scope: 'any' },
      count: 1,
    });
  });

  test('its errors carry the path into the sdk schema and are the plugin\'s ZodError', () => {
    const schema = z.object({ setting: sdk.settingSchema, count: z.number() });
    const result = schema.safeParse({ setting: { name: '' }, count: 'x' });
    expect(result.success).toBe(false);
    expect(result.error).toBeInstanceOf(z.ZodError);
    expect(result.error?.issues.map((issue) => issue.path)).toEqual([['setting', 'name'], ['count']]);
    expect(z.prettifyError(result.error!)).toContain('at setting.name');
    expect(() => schema.parse({ setting: {}, count: 1 })).toThrow(z.ZodError);
    expect(sdk.settingSchema.safeParse({}).error).toBeInstanceOf(z.ZodError);
  });

  test('the sdk\'s parseSettings takes a schema made with the plugin\'s zod', () => {
    const schema = z.object({ limit: z.int().positive({ error: 'expected a positive integer' }).default(3) }).strict();
    expect(sdk.parseSettings('p', schema, {})).toEqual({ limit: 3 });
    let error: unknown;
    try {
      sdk.parseSettings('p', schema, { limit: -1, extra: 1 });
    } catch (caught) {
      error = caught;
    }
    expect(sdk.isPlinthError(error) && error.code).toBe('PLN_E_SETTING_INVALID');
    expect((error as Error).message).toBe('plugin "p": plugins.p.settings.limit: expected a positive integer; plugins.p.settings.extra: is not a setting of this plugin');
  });
});
