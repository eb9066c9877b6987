import { describe, expect, it } from 'vitest';
import { IMPLIED_KERNEL_RANGE, parseManifest } from '../sdk/manifest.js';
import { KERNEL_API_VERSION } from '../sdk/version.js';

const base = { name: 'a', version: '1.0.0', kernel: '^1.0.0' };

describe('parseManifest', () => {
  it('reports a bad dependency name at its key, with the npm-style rule it breaks', () => {
    const parsed = parseManifest({ ...base, dependencies: { 'Bad Name': '^1.0.0', good: '^1.0.0' } });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.path)).toEqual(['dependencies.Bad Name']);
    expect(parsed.issues[0]?.message).toMatch(/npm-style/);
    expect(parsed.issues[0]?.message).not.toMatch(/Invalid key in record/);
  });

  it('reports every rule a key breaks, and the value problems beside it', () => {
    const parsed = parseManifest({ ...base, dependencies: { ['X'.repeat(215)]: '^1.0.0', b: 'not a range' } });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const long = `dependencies.${'X'.repeat(215)}`;
    expect(parsed.issues.map((i) => i.path)).toEqual([long, long, 'dependencies.b']);
    expect(parsed.issues.some((i) => i.path === long && /npm-style/.test(i.message))).toBe(true);
    expect(parsed.issues.find((i) => i.path === 'dependencies.b')?.message).toMatch(/semver range/);
  });

  it('reports a bad command name at its key', () => {
    const parsed = parseManifest({ ...base, commands: { 'Plugins List': { summary: 'x' } } });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.path)).toEqual(['commands.Plugins List']);
    expect(parsed.issues[0]?.message).toMatch(/lowercase words/);
  });

  it('takes a declaration-only manifest without kernel as made for the current major', () => {
    const parsed = parseManifest({ name: 'decl', version: '1.0.0', hooks: {}, mcpServers: {} });
    expect(parsed.ok && parsed.manifest.kernel).toBe(`^${KERNEL_API_VERSION.split('.')[0]}.0.0`);
    expect(IMPLIED_KERNEL_RANGE).toBe(`^${KERNEL_API_VERSION.split('.')[0]}.0.0`);
    const explicit = parseManifest({ name: 'decl', version: '1.0.0', kernel: '>=0.5.0' });
    expect(explicit.ok && explicit.manifest.kernel).toBe('>=0.5.0');
  });

  it('requires kernel of a plugin with main, saying what to add, alongside the other problems', () => {
    const parsed = parseManifest({ name: 'coded', version: '1.0.0', main: './index.ts', provides: 'one' });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.path).sort()).toEqual(['kernel', 'provides']);
    expect(parsed.issues.find((i) => i.path === 'kernel')?.message).toContain(`add "kernel": "${IMPLIED_KERNEL_RANGE}"`);
  });

  it('says what to add for a missing field and gives an example for a wrong one', () => {
    const missing = parseManifest({});
    expect(missing.ok).toBe(false);
    if (missing.ok) return;
    expect(missing.issues).toEqual([
      { path: 'name', message: expect.stringMatching(/^missing: add an npm-style name, e\.g\. "my-plugin"/) },
      { path: 'version', message: expect.stringMatching(/^missing: add a semver version, e\.g\. "version": "1\.0\.0"/) },
    ]);
    const wrong = parseManifest({ ...base, mcpServers: [], main: 7 });
    expect(wrong.ok).toBe(false);
    if (wrong.ok) return;
    expect(wrong.issues.find((i) => i.path === 'mcpServers')?.message).toMatch(/^expected an object keyed by server name, e\.g\./);
    expect(wrong.issues.find((i) => i.path === 'main')?.message).toMatch(/^expected the entry module, relative to manifest\.json/);
    const notObject = parseManifest(['a']);
    expect(!notObject.ok && notObject.issues).toEqual([{ path: '', message: expect.stringMatching(/^expected a JSON object/) }]);
  });
});
