/**
 * parseSettings, the sdk's check of a plugin's own settings: one
 * PLN_E_SETTING_INVALID naming every bad key at its full path with a plain
 * sentence, the schema's own message when it gives one, never zod's issue
 * list and never the value (which may be a secret). Also used by a real
 * plugin through the kernel: its setup fails with that error.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isPlinthError, parseSettings, type PlinthError } from '../sdk/index.js';
import { createTestKernel } from '../testing/index.js';

function failure(run: () => unknown): PlinthError {
  try {
    run();
  } catch (error) {
    if (isPlinthError(error)) return error;
    throw error;
  }
  throw new Error('expected a PlinthError');
}

describe('parseSettings', () => {
  const schema = z.object({
    perMinute: z.int().positive({ error: 'expected a positive integer' }).optional(),
    retries: z.number().int().min(1),
    mode: z.enum(['fast', 'safe']),
    token: z.string().min(8),
    hosts: z.array(z.string().min(1)),
  });
  const good = { retries: 2, mode: 'fast', token: 'abcdefgh', hosts: ['a'] };

  it('returns the parsed settings when they are valid', () => {
    expect(parseSettings('demo', schema, { ...good, perMinute: 3 })).toEqual({ ...good, perMinute: 3 });
  });

  it('names every bad key at plugins.<plugin>.settings.<key>, in plain words, with the schema\'s own message kept', () => {
    const error = failure(() => parseSettings('demo', schema, { perMinute: 0, retries: 0, mode: 'quick', token: 'sk-123', hosts: [''] }));
    expect(error.code).toBe('PLN_E_SETTING_INVALID');
    expect(error.plugin).toBe('demo');
    expect(error.message).toBe(
      'plugin "demo": plugins.demo.settings.perMinute: expected a positive integer; ' +
        'plugins.demo.settings.retries: expected a number of at least 1; ' +
        'plugins.demo.settings.mode: expected one of "fast", "safe"; ' +
        'plugins.demo.settings.token: expected at least 8 characters; ' +
        'plugins.demo.settings.hosts[0]: expected at least 1 character',
    );
    expect(error.details).toMatchObject({ setting: 'perMinute', path: 'plugins.demo.settings.perMinute' });
    expect(error.hint).toContain('plugins.demo.settings.perMinute');
    // Neither the value (it may be a secret) nor zod's own wording.
    expect(JSON.stringify(error.toJSON())).not.toContain('sk-123');
    expect(error.message).not.toMatch(/Too small|Invalid input|too_small/);
  });

  it('says which type was expected and which was given, and names unknown keys of a strict schema', () => {
    const strict = z.strictObject({ timeout: z.number() });
    const error = failure(() => parseSettings('demo', strict, { timeout: '5s', tiemout: 1 }));
    expect(error.message).toContain('plugins.demo.settings.timeout: expected a number, got a string');
    expect(error.message).toContain('plugins.demo.settings.tiemout: is not a setting of this plugin');
  });

  it('fails the plugin that uses it at setup, with that error and not a wrapped zod dump', async () => {
    const kernel = await createTestKernel({
      settings: { plugins: { limiter: { settings: { perMinute: 0 } } } },
      plugins: [
        {
          manifest: { name: 'limiter', settings: [{ name: 'perMinute', type: 'number' }] },
          setup(_kernel, ctx) {
            parseSettings('limiter', z.object({ perMinute: z.int().positive({ error: 'expected a positive integer' }) }), ctx.settings);
          },
        },
      ],
    });
    try {
      const status = kernel.status().find((p) => p.name === 'limiter');
      expect(status?.error).toEqual({
        code: 'PLN_E_SETTING_INVALID',
        message: 'plugin "limiter": plugins.limiter.settings.perMinute: expected a positive integer',
        hint: expect.stringContaining('plugins.limiter.settings.perMinute'),
      });
    } finally {
      await kernel.dispose();
    }
  });
});
