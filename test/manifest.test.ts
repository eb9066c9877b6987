import { describe, expect, it } from 'vitest';
import { parseManifest } from '../sdk/manifest.js';

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
});
