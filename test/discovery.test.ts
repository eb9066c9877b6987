import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverPlugins } from '../kernel/discovery.js';
import { resolve } from '../kernel/resolve/index.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'plinth-discovery-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes `<root>/<rel>/manifest.json`; an object is written as JSON, a string as is. */
async function manifest(rel: string, content: Record<string, unknown> | string): Promise<string> {
  const dir = path.join(root, rel);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'manifest.json');
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return file;
}

const valid = (name: string, version = '1.0.0') => ({ name, version, kernel: '^1.0.0' });

describe('discoverPlugins', () => {
  it('finds each subfolder that holds a manifest.json', async () => {
    await manifest('builtin/alpha', valid('alpha'));
    await manifest('builtin/beta', valid('beta'));
    await mkdir(path.join(root, 'builtin/not-a-plugin'), { recursive: true });
    await writeFile(path.join(root, 'builtin/README.md'), '# not a plugin');

    const { candidates, invalid } = await discoverPlugins([{ dir: path.join(root, 'builtin'), source: 'builtin' }]);

    expect(invalid).toEqual([]);
    expect(candidates.map((c) => c.manifest.name)).toEqual(['alpha', 'beta']);
    const alpha = candidates[0];
    expect(alpha?.source).toBe('builtin');
    expect(alpha?.dir).toBe(path.join(root, 'builtin/alpha'));
    expect(alpha?.file).toBe(path.join(root, 'builtin/alpha/manifest.json'));
    expect(alpha?.manifest.activation).toBe('eager'); // schema defaults applied
  });

  it('looks one level deeper inside @scope folders', async () => {
    await manifest('user/@acme/tool', valid('@acme/tool'));
    await manifest('user/@acme/other', valid('@acme/other'));
    await manifest('user/plain', valid('plain'));

    const { candidates } = await discoverPlugins([{ dir: path.join(root, 'user'), source: 'user' }]);

    expect(candidates.map((c) => c.manifest.name)).toEqual(['@acme/other', '@acme/tool', 'plain']);
    expect(candidates[1]?.dir).toBe(path.join(root, 'user/@acme/tool'));
  });

  it('treats a folder that holds a manifest.json itself as one plugin', async () => {
    await manifest('dev/my-plugin', valid('my-plugin'));
    await manifest('dev/my-plugin/fixtures/inner', valid('inner'));

    const { candidates } = await discoverPlugins([{ dir: path.join(root, 'dev/my-plugin'), source: 'path' }]);

    expect(candidates.map((c) => [c.manifest.name, c.source])).toEqual([['my-plugin', 'path']]);
  });

  it('makes relative source folders absolute', async () => {
    await manifest('rel/a', valid('a'));
    const relative = path.relative(process.cwd(), path.join(root, 'rel'));

    const { candidates } = await discoverPlugins([{ dir: relative, source: 'path' }]);

    expect(candidates[0]?.dir).toBe(path.join(root, 'rel/a'));
  });

  it('finds nothing, silently, in a folder that does not exist', async () => {
    const result = await discoverPlugins([{ dir: path.join(root, 'nowhere'), source: 'workspace' }]);
    expect(result).toEqual({ candidates: [], invalid: [] });
  });

  it('skips dot-folders such as an install staging area', async () => {
    await manifest('user/.staging-123', valid('half-installed'));
    const { candidates } = await discoverPlugins([{ dir: path.join(root, 'user'), source: 'user' }]);
    expect(candidates).toEqual([]);
  });

  it('reports invalid JSON with file, line and column', async () => {
    // A trailing comma: on Node 20 V8 gives no position for this one.
    const file = await manifest('user/broken', '{\n  "name": "broken",\n  "provides": ["a",]\n}\n');
    await manifest('user/fine', valid('fine'));

    const { candidates, invalid } = await discoverPlugins([{ dir: path.join(root, 'user'), source: 'user' }]);

    expect(candidates.map((c) => c.manifest.name)).toEqual(['fine']);
    expect(invalid).toHaveLength(1);
    const error = invalid[0];
    expect(error?.code).toBe('PLN_E_MANIFEST_UNREADABLE');
    expect(error?.message).toContain(`${file}:3:20`);
    expect(error?.details).toMatchObject({ file, line: 3, column: 20 });
    expect(error?.message).not.toContain('is not valid JSON'); // V8's copy of the input is dropped
  });

  it('reports the position V8 gives for other JSON errors', async () => {
    const file = await manifest('user/broken', '{\n  "name": "broken"\n  "version": "1.0.0"\n}');
    const { invalid } = await discoverPlugins([{ dir: path.join(root, 'user'), source: 'user' }]);
    expect(invalid[0]?.code).toBe('PLN_E_MANIFEST_UNREADABLE');
    expect(invalid[0]?.message).toContain(`${file}:3:3`);
  });

  it('a JSON error never quotes the text around it, in the message or in --json (toJSON)', async () => {
    // V8's own message copies the input around the error; a manifest may hold a token pasted by mistake.
    await manifest('user/leaky', '{"name": "leaky", "token": s3cret-token-value}');
    const { invalid } = await discoverPlugins([{ dir: path.join(root, 'user'), source: 'user' }]);
    expect(invalid[0]?.code).toBe('PLN_E_MANIFEST_UNREADABLE');
    expect(invalid[0]?.details).toMatchObject({ line: 1, column: 28 });
    expect(JSON.stringify(invalid[0])).not.toContain('s3cret');
    expect(invalid[0]?.message).not.toContain('s3cret');
  });

  it('reports an empty manifest as invalid JSON', async () => {
    const file = await manifest('user/empty', '');
    const { invalid } = await discoverPlugins([{ dir: path.join(root, 'user'), source: 'user' }]);
    expect(invalid[0]?.code).toBe('PLN_E_MANIFEST_UNREADABLE');
    expect(invalid[0]?.message).toContain(file);
  });

  it('reports schema violations with the JSON path of each', async () => {
    const file = await manifest('user/bad', {
      name: 'bad',
      version: '1.0.0',
      kernel: '^1.0.0',
      dependencies: { mcp: 'soon' },
      provides: ['ok', 7],
    });

    const { candidates, invalid } = await discoverPlugins([{ dir: path.join(root, 'user'), source: 'user' }]);

    expect(candidates).toEqual([]);
    const error = invalid[0];
    expect(error?.code).toBe('PLN_E_MANIFEST_INVALID');
    expect(error?.plugin).toBe('bad');
    expect(error?.message).toContain(`${file}: dependencies.mcp: expected a semver range`);
    expect(error?.message).toContain(`${file}: provides[1]:`);
    expect(error?.details).toMatchObject({ file, issues: expect.arrayContaining([expect.objectContaining({ path: 'dependencies.mcp' })]) });
  });

  it('keeps the same plugin from two sources as two candidates', async () => {
    await manifest('builtin/mcp', valid('mcp', '1.0.0'));
    await manifest('workspace/mcp', valid('mcp', '1.0.0'));

    const { candidates } = await discoverPlugins([
      { dir: path.join(root, 'builtin'), source: 'builtin' },
      { dir: path.join(root, 'workspace'), source: 'workspace' },
    ]);

    expect(candidates.map((c) => [c.manifest.name, c.source])).toEqual([
      ['mcp', 'builtin'],
      ['mcp', 'workspace'],
    ]);
    // ...and resolution picks the higher-precedence one.
    const { plugins } = resolve({ candidates, kernelVersion: '1.0.0' });
    expect(plugins.map((c) => c.dir)).toEqual([path.join(root, 'workspace/mcp')]);
  });

  it('reads a thousand manifests', async () => {
    await Promise.all(Array.from({ length: 1000 }, (_, i) => manifest(`many/p${String(i).padStart(4, '0')}`, valid(`p${i}`))));
    const { candidates, invalid } = await discoverPlugins([{ dir: path.join(root, 'many'), source: 'user' }]);
    expect(invalid).toEqual([]);
    expect(candidates).toHaveLength(1000);
    expect(candidates[999]?.manifest.name).toBe('p999');
  });
});
