import { describe, expect, it } from 'vitest';
import { settingSchema, type SettingDecl } from '../sdk/manifest.js';
import { PlinthError } from '../sdk/errors.js';
import type { Settings } from '../kernel/config/schema.js';
import { redactSettings } from '../kernel/config/plugin-settings.js';
import { maskCredentialKeys } from '../plugins/inspect/mask.js';
import { REDACTED, Redactor } from '../internal/text/redact.js';

function redactorWith(...secrets: string[]): Redactor {
  const redactor = new Redactor();
  for (const secret of secrets) redactor.add(secret);
  return redactor;
}

describe('Redactor.text', () => {
  it('replaces every occurrence of every secret', () => {
    const redactor = redactorWith('hunter22', 'tok-abc123');
    expect(redactor.text('login hunter22 with tok-abc123, again hunter22')).toBe(
      `login ${REDACTED} with ${REDACTED}, again ${REDACTED}`,
    );
  });

  it('leaves text alone when it holds no secret, or no secret is known', () => {
    expect(new Redactor().text('nothing to hide')).toBe('nothing to hide');
    expect(redactorWith('hunter22').text('nothing to hide')).toBe('nothing to hide');
  });

  it('ignores empty and very short secrets, and learns each secret once', () => {
    const redactor = redactorWith('', 'ab', 'dev');
    expect(redactor.empty).toBe(true);
    expect(redactor.text('dev ab')).toBe('dev ab');

    redactor.add('s3cret');
    redactor.add('s3cret');
    expect(redactor.text('s3cret')).toBe(REDACTED);
  });

  it('masks a secret that contains another without leaking its tail', () => {
    const redactor = redactorWith('abcd', 'abcd-efgh-1234');
    expect(redactor.text('key=abcd-efgh-1234;')).toBe(`key=${REDACTED};`);
  });

  it('masks the whole stretch where two secrets overlap', () => {
    const redactor = redactorWith('abcdef', 'defghi');
    expect(redactor.text('xx abcdefghi yy')).toBe(`xx ${REDACTED} yy`);
  });

  it('masks a short secret (under 8 characters) only as a whole token, so ordinary words stay whole', () => {
    const redactor = redactorWith('short', 'plugin');
    expect(redactor.text('the token is shorter than 16 characters')).toBe('the token is shorter than 16 characters');
    expect(redactor.text('run `plinth plugins list` to see every plugin_x found')).toBe('run `plinth plugins list` to see every plugin_x found');
    expect(redactor.text('a shortcut, unshorten, Shorts, shortö, é-plugin')).toBe(`a shortcut, unshorten, Shorts, shortö, é-${REDACTED}`);
  });

  it('still masks a short secret in headers, URLs, query strings, JSON and plain words', () => {
    const redactor = redactorWith('short');
    expect(redactor.text('Authorization: Bearer short')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactor.text('https://user:short@host/path/short?token=short&x=1#short')).toBe(
      `https://user:${REDACTED}@host/path/${REDACTED}?token=${REDACTED}&x=1#${REDACTED}`,
    );
    expect(redactor.text(JSON.stringify({ token: 'short', list: ['short'] }))).toBe(`{"token":"${REDACTED}","list":["${REDACTED}"]}`);
    expect(redactor.text('token short, (short) short.')).toBe(`token ${REDACTED}, (${REDACTED}) ${REDACTED}.`);
    expect(redactor.value({ headers: { 'x-api-key': 'short' } })).toEqual({ headers: { 'x-api-key': REDACTED } });
  });

  it('masks a short secret right after an escape that ends in a letter or digit (JSON, URL, terminal)', () => {
    const redactor = redactorWith('short');
    expect(redactor.text(JSON.stringify({ log: 'one\nshort\tshort' }))).toBe(`{"log":"one\\n${REDACTED}\\t${REDACTED}"}`);
    expect(redactor.text('q=a%20short%20b')).toBe(`q=a%20${REDACTED}%20b`);
    expect(redactor.text('\u001b[1mshort\u001b[0m and \\x1b[31mshort')).toBe(`\u001b[1m${REDACTED}\u001b[0m and \\x1b[31m${REDACTED}`);
    expect(redactor.text('\\u00e9short')).toBe(`\\u00e9${REDACTED}`);
  });

  it('masks a short secret that begins or ends with punctuation wherever that edge meets a letter', () => {
    const redactor = redactorWith('!pw!');
    expect(redactor.text('a!pw!b')).toBe(`a${REDACTED}b`);
  });

  it('masks a secret of 8 characters or more anywhere, even glued to other letters', () => {
    const redactor = redactorWith('tok12345', 'hunter2hunter2');
    expect(redactor.text('xtok12345y and prefix_hunter2hunter2_suffix')).toBe(`x${REDACTED}y and prefix_${REDACTED}_suffix`);
  });

  it('masks a secret as it appears inside JSON and inside a URL', () => {
    const secret = 'p@ss "word"/x';
    const redactor = redactorWith(secret);
    expect(redactor.text(JSON.stringify({ password: secret }))).toBe(`{"password":"${REDACTED}"}`);
    expect(redactor.text(`https://host/?pw=${encodeURIComponent(secret)}`)).toBe(`https://host/?pw=${REDACTED}`);
  });
});

describe('Redactor.value', () => {
  it('redacts strings through nested objects and arrays, without touching the original', () => {
    const redactor = redactorWith('tok-abc123');
    const original = { server: { headers: { authorization: 'Bearer tok-abc123' } }, args: ['--token', 'tok-abc123'], retries: 3, on: true };

    const copy = redactor.value(original);

    expect(copy).toEqual({ server: { headers: { authorization: `Bearer ${REDACTED}` } }, args: ['--token', REDACTED], retries: 3, on: true });
    expect(original.args[1]).toBe('tok-abc123');
  });

  it('replaces a number that is a learned secret, and keeps other numbers', () => {
    const redactor = redactorWith('739214');
    expect(redactor.value({ pin: 739214, nested: [{ pin: 739214 }], port: 8080 })).toEqual({ pin: REDACTED, nested: [{ pin: REDACTED }], port: 8080 });
  });

  it('turns errors into plain redacted objects', () => {
    const redactor = redactorWith('tok-abc123');
    const plain = Object.assign(new Error('401 for tok-abc123'), { code: 'E_AUTH' });
    const coded = new PlinthError('PLN_E_TEST', 'rejected tok-abc123', { plugin: 'oauth', details: { token: 'tok-abc123' } });

    expect(redactor.value({ error: plain })).toEqual({ error: { name: 'Error', message: `401 for ${REDACTED}`, code: 'E_AUTH' } });
    expect(redactor.value(coded)).toMatchObject({
      name: 'PlinthError',
      code: 'PLN_E_TEST',
      message: `rejected ${REDACTED}`,
      plugin: 'oauth',
      details: { token: REDACTED },
    });
  });

  it('copes with cycles', () => {
    const redactor = redactorWith('tok-abc123');
    const node: Record<string, unknown> = { token: 'tok-abc123' };
    node.self = node;

    const copy = redactor.value(node) as Record<string, unknown>;

    expect(copy.token).toBe(REDACTED);
    expect(copy.self).toBe(copy);
  });

  it('returns the value itself when no secret is known', () => {
    const value = { a: ['b'] };
    expect(new Redactor().value(value)).toBe(value);
  });
});

describe('a redactor layered over another (a plugin over the kernel)', () => {
  it('masks its own secrets, then passes text and every string of a value through the other', () => {
    const kernel = redactorWith('kernel-secret-1');
    const plugin = new Redactor({ then: (text) => kernel.text(text) });
    plugin.add('plugin-secret-2');
    expect(plugin.text('a plugin-secret-2 b kernel-secret-1')).toBe(`a ${REDACTED} b ${REDACTED}`);
    // Even before it learned anything of its own: the layer below still applies.
    const fresh = new Redactor({ then: (text) => kernel.text(text) });
    expect(fresh.value({ header: 'kernel-secret-1' })).toEqual({ header: REDACTED });
  });
});

describe('maskCredentialKeys', () => {
  it('masks every string under a key that names a credential, keeps ${env:} references and everything else', () => {
    const shown = maskCredentialKeys({
      mcpServers: { s: { url: 'https://x', headers: { Authorization: 'Bearer abc', 'X-Api-Key': '${env:KEY}', Accept: 'json' }, oauth: { clientId: 'c', clientSecret: 's3' } } },
      tokens: ['t1', 't2'],
    });
    expect(shown).toEqual({
      mcpServers: { s: { url: 'https://x', headers: { Authorization: REDACTED, 'X-Api-Key': '${env:KEY}', Accept: 'json' }, oauth: { clientId: 'c', clientSecret: REDACTED } } },
      tokens: [REDACTED, REDACTED],
    });
  });
});

describe('redactSettings', () => {
  const decls = new Map<string, SettingDecl[]>([
    [
      'oauth',
      [
        settingSchema.parse({ name: 'clientSecret', sensitive: true }),
        settingSchema.parse({ name: 'clientId' }),
      ],
    ],
  ]);

  it('hides sensitive plugin settings in the base and in every profile', () => {
    const settings: Settings = {
      plugins: { oauth: { enabled: true, settings: { clientId: 'cli', clientSecret: 'shh-111' } }, mcp: { settings: { clientSecret: 'not-declared-here' } } },
      profiles: {
        prod: { plugins: { oauth: { settings: { clientSecret: 'shh-222' } } } },
        dev: { timeouts: { setup: 100 } },
      },
      mcpServers: { github: { command: 'gh' } },
    };

    const shown = redactSettings(settings, decls);

    expect(shown.plugins?.oauth).toEqual({ enabled: true, settings: { clientId: 'cli', clientSecret: REDACTED } });
    expect(shown.plugins?.mcp?.settings?.clientSecret).toBe('not-declared-here');
    expect(shown.profiles?.prod?.plugins?.oauth?.settings?.clientSecret).toBe(REDACTED);
    expect(shown.profiles?.dev).toEqual({ timeouts: { setup: 100 } });
    expect(shown.mcpServers).toEqual({ github: { command: 'gh' } });
    expect(JSON.stringify(shown)).not.toMatch(/shh-/);
    // The input is left as it was.
    expect(settings.plugins?.oauth?.settings?.clientSecret).toBe('shh-111');
  });
});
