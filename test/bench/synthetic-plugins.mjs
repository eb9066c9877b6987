/**
 * Writes a folder of synthetic plugin manifests for the resolver benchmark.
 *
 * The set is meant to look like a large, healthy plugin folder, so that the
 * resolver does real work and every plugin still loads:
 * - some names have several versions (patch, minor and major bumps), some
 *   scoped (`@acme/…`), found under `@scope` folders;
 * - dependencies only point to earlier names, so they form a DAG;
 * - every range asked of a name contains that name's "target" version, the
 *   highest of one major (for about a third of multi-major names an older major
 *   than the newest), so ranges are satisfiable together and the resolver must
 *   sometimes step down from the newest version; a few ranges are open-ended;
 * - a few plugins `provide` services, are lazy with events, declare commands or
 *   settings; a few old versions reject the kernel (rejected, never excluded).
 *
 * Deterministic: the same seed writes the same files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** mulberry32: a small seeded PRNG, so every run benchmarks the same set. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['lint', 'git', 'mcp', 'shell', 'fmt', 'cache', 'audit', 'notify', 'docs', 'test', 'tool', 'guard', 'trace', 'sync', 'index'];
const SCOPES = ['@acme', '@tools', '@corp'];
const EVENTS = ['before_tool', 'after_tool', 'session_start', 'before_model', 'file_change', 'git_commit'];

/**
 * Writes `total` manifests under `root`. Returns what a correct resolution must
 * give: the distinct names (each must resolve, none excluded), how many
 * candidates are expected to be rejected (kernel mismatch), and counts.
 */
export function writeSyntheticPlugins(root, { total = 1000, seed = 0x5eed } = {}) {
  const random = prng(seed);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));

  /** @type {Array<{ name: string, folder: string, versions: number[][], target: number[] }>} */
  const names = [];
  let written = 0;
  while (written < total) {
    const i = names.length;
    const r = random();
    const count = Math.min(total - written, r < 0.6 ? 1 : r < 0.85 ? 2 : r < 0.95 ? 3 : int(4, 5));
    const versions = [];
    let v = [int(1, 2), int(0, 4), int(0, 9)];
    for (let k = 0; k < count; k++) {
      versions.push(v);
      const bump = random();
      v = bump < 0.5 ? [v[0], v[1], v[2] + 1] : bump < 0.85 ? [v[0], v[1] + 1, 0] : [v[0] + 1, 0, 0];
    }
    // The target: the highest version of the newest major, or of an older one.
    const majors = [...new Set(versions.map((x) => x[0]))];
    const major = majors.length > 1 && random() < 0.35 ? pick(majors.slice(0, -1)) : majors[majors.length - 1];
    const target = versions.filter((x) => x[0] === major).at(-1);
    const word = pick(WORDS);
    const scoped = random() < 0.15;
    const base = `${word}-${i.toString().padStart(4, '0')}`;
    names.push({ name: scoped ? `${pick(SCOPES)}/${base}` : `plugin-${base}`, folder: base, versions, target });
    written += count;
  }

  const str = (v) => v.join('.');
  // Every form contains `target`; all but the open-ended ones stop below the next major.
  const rangeFor = (target) => {
    const [M, m] = target;
    const r = random();
    if (r < 0.35) return `^${M}.${m}.0`;
    if (r < 0.55) return `^${M}.0.0`;
    if (r < 0.7) return `~${M}.${m}.0`;
    if (r < 0.8) return `>=${M}.0.0 <${M + 1}.0.0`;
    if (r < 0.9) return `${M}.x`;
    if (r < 0.97) return `>=${M}.${m}.0`;
    return '*';
  };

  let rejected = 0;
  let provides = 0;
  let edges = 0;
  for (let i = 0; i < names.length; i++) {
    const entry = names[i];
    // A name's dependencies: mostly the same for every version, older versions sometimes one fewer.
    const depCount = i < 10 ? 0 : Math.min(i, [0, 1, 1, 2, 2, 2, 3, 3, 4, 5][int(0, 9)]);
    const deps = new Set();
    while (deps.size < depCount) {
      // Favour nearby names a little (plugins stack on related ones), but reach far back too.
      const j = random() < 0.5 ? Math.max(0, i - int(1, 30)) : int(0, i - 1);
      deps.add(j);
    }
    const depList = [...deps];
    entry.versions.forEach((version, k) => {
      const isTarget = version === entry.target;
      const isNewest = k === entry.versions.length - 1;
      const dependencies = {};
      const own = !isNewest && depList.length > 1 && random() < 0.3 ? depList.slice(1) : depList;
      for (const j of own) dependencies[names[j].name] = rangeFor(names[j].target);
      edges += own.length;
      let kernel = pick(['^1.0.0', '^1.0.0', '^1.0.0', '>=1.0.0', '1.x']);
      if (!isTarget && !isNewest && random() < 0.1) {
        kernel = '^0.9.0'; // an old release made for an older kernel
        rejected++;
      }
      const manifest = {
        name: entry.name,
        version: str(version),
        description: `Synthetic plugin ${entry.name} ${str(version)} for the resolver benchmark`,
        kernel,
        main: './index.js',
        dependencies,
      };
      if (random() < 0.04) {
        manifest.provides = [`${pick(['transport', 'store', 'auth', 'search'])}:${entry.folder}`];
        provides++;
      }
      if (random() < 0.2) {
        manifest.activation = 'lazy';
        manifest.events = [pick(EVENTS)];
      }
      if (random() < 0.1) manifest.commands = { [`${entry.folder.replace(/-\d+$/, '')} run`]: { summary: 'Runs it' } };
      if (random() < 0.1) {
        manifest.settings = [
          { name: 'endpoint', type: 'string', default: 'http://localhost' },
          { name: 'token', type: 'string', sensitive: true, envVar: `TOKEN_${i}` },
        ];
      }
      const parent = entry.name.startsWith('@') ? path.join(root, entry.name.split('/')[0]) : root;
      const dir = path.join(parent, `${entry.folder}-${str(version)}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    });
  }
  return {
    manifests: written,
    names: names.map((n) => n.name),
    multiVersionNames: names.filter((n) => n.versions.length > 1).length,
    olderMajorTargets: names.filter((n) => n.target !== n.versions.at(-1)).length,
    rejectedExpected: rejected,
    provides,
    edges,
  };
}

/**
 * Writes `total` loadable plugins under `root` for the boot benchmark: each a
 * folder with a manifest.json and an index.ts (TypeScript, through jiti, as a
 * user's plugin is) that imports `plinth/sdk` and handles one event. About a
 * tenth declare settings, a tenth depend on an earlier plugin, a tenth are lazy
 * (woken by an event): the kernel does for them what it does for real ones.
 * Returns the plugin names and each entry file, and those of the eager ones
 * (what a boot imports), for a baseline importing the same files.
 */
export function writeBootPlugins(root, { total = 300, seed = 0xb007 } = {}) {
  const random = prng(seed);
  const names = [];
  const files = [];
  const eagerFiles = [];
  for (let i = 0; i < total; i++) {
    const name = `boot-${WORDS[i % WORDS.length]}-${i.toString().padStart(4, '0')}`;
    const manifest = { name, version: `1.${i % 7}.0`, description: `Synthetic plugin ${i} for the boot benchmark`, kernel: '^1.0.0', main: './index.ts' };
    const r = random();
    if (r < 0.1) manifest.settings = [{ name: 'endpoint', type: 'string', default: 'http://localhost' }, { name: 'level', type: 'number', default: 1 }];
    else if (r < 0.2 && i > 0) manifest.dependencies = { [names[Math.floor(random() * i)]]: '^1.0.0' };
    else if (r < 0.3) Object.assign(manifest, { activation: 'lazy', events: [EVENTS[i % EVENTS.length]] });
    const event = EVENTS[i % EVENTS.length];
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const code = [
      "import { definePlugin } from 'plinth/sdk';",
      '',
      `const seen: string[] = [];`,
      '',
      'export default definePlugin({',
      '  setup(kernel, ctx) {',
      `    kernel.on('${event}', (context) => {`,
      `      seen.push(String(context.tool ?? '${i}'));`,
      '      return undefined;',
      '    });',
      "    ctx.log.debug(`${ctx.name} ready`);",
      '  },',
      '});',
      '',
    ].join('\n');
    writeFileSync(path.join(dir, 'index.ts'), code);
    names.push(name);
    files.push(path.join(dir, 'index.ts'));
    if (manifest.activation !== 'lazy') eagerFiles.push(path.join(dir, 'index.ts'));
  }
  return { names, files, eagerFiles };
}
