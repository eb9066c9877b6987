/** The sdk's "did you mean": `closestName`. */
import { describe, expect, it } from 'vitest';
import { EVENTS } from '../sdk/index.js';
import { closestName } from '../internal/text/suggest.js';

describe('closestName', () => {
  it('suggests the known name at most 2 edits away, ignoring case', () => {
    expect(closestName('comand', ['command', 'args', 'env'])).toBe('command');
    expect(closestName('befor_tool', EVENTS)).toBe('before_tool');
    expect(closestName('TIMEOUT', ['timeout'])).toBe('timeout');
    expect(closestName('cwdd', new Set(['cwd', 'env']))).toBe('cwd');
  });

  it('suggests nothing farther than 2 edits, or from nothing', () => {
    expect(closestName('xyzzy', ['command', 'args'])).toBeUndefined();
    expect(closestName('comnd', ['command'])).toBe('command'); // 2 edits
    expect(closestName('cmd', ['command'])).toBeUndefined(); // 4 edits
    expect(closestName('anything', [])).toBeUndefined();
  });

  it('prefers the nearest; a tie goes to the first listed', () => {
    expect(closestName('arg', ['args', 'arc'])).toBe('args');
    expect(closestName('ab', ['abcd', 'xb'])).toBe('xb');
  });
});
