#!/usr/bin/env node
/**
 * The API report: every name a third party can import from plinth's package
 * entry points, each with its declaration as the built `.d.ts` has it, so that
 * a change to the public API shows as a diff of `docs/api/*.api.md` in review
 * (what API Extractor does, over plinth's own layout: TypeScript 7 has no
 * compiler API to give it). The `.d.ts` files are read with oxc, through vite.
 *
 *   node docs/api/report.mjs          writes the reports (after `npm run build`)
 *   node docs/api/report.mjs --check  exits 1, naming each report that differs
 *
 * A declaration without a doc comment is marked `// (undocumented)`; a type a
 * public declaration names but no entry point exports, `// (forgotten)`: a
 * third party can meet it but not name it. test/api-report.test.ts keeps both
 * lists empty and the reports current.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync } from 'vite';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The package folder being reported on; set by `reports()`. */
let root = ROOT;

/** The package's entry points (package.json `exports`) and the report each gets. */
export const ENTRIES = [
  { specifier: 'plinth', types: 'dist/kernel/index.d.ts', report: 'plinth.api.md' },
  { specifier: 'plinth/sdk', types: 'dist/sdk/index.d.ts', report: 'plinth-sdk.api.md' },
  { specifier: 'plinth/testing', types: 'dist/testing/index.d.ts', report: 'plinth-testing.api.md' },
];

const DECLARATIONS = new Set([
  'TSInterfaceDeclaration',
  'TSTypeAliasDeclaration',
  'TSDeclareFunction',
  'FunctionDeclaration',
  'ClassDeclaration',
  'TSEnumDeclaration',
  'VariableDeclaration',
  'TSModuleDeclaration',
]);

const modules = new Map();

/** A parsed `.d.ts`: its declarations by name, its imports and its exports. */
function moduleOf(file) {
  const cached = modules.get(file);
  if (cached) return cached;
  const source = readFileSync(file, 'utf8');
  const { program, comments, errors } = parseSync(file, source, { lang: 'dts' });
  if (errors.length > 0) throw new Error(`${relative(root, file)}: ${errors[0].message}`);
  const module = { file, source, program, comments, locals: new Map(), imports: new Map(), exports: new Map(), stars: [], augmentations: [] };
  const declare = (name, statement, node) => {
    const list = module.locals.get(name) ?? [];
    list.push({ statement, node });
    module.locals.set(name, list);
  };
  const declareAll = (statement, node) => {
    if (node.type === 'VariableDeclaration') for (const d of node.declarations) declare(d.id.name, statement, node);
    else if (node.type === 'TSModuleDeclaration' && node.id.type === 'Literal') module.augmentations.push(statement);
    else if (node.id?.name) declare(node.id.name, statement, node);
  };
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration') {
      const from = target(file, statement.source.value);
      for (const s of statement.specifiers) {
        const imported = s.type === 'ImportSpecifier' ? s.imported.name : s.type === 'ImportDefaultSpecifier' ? 'default' : '*';
        module.imports.set(s.local.name, { from, imported });
      }
    } else if (statement.type === 'ExportAllDeclaration') {
      module.stars.push(target(file, statement.source.value));
    } else if (statement.type === 'ExportNamedDeclaration') {
      if (statement.declaration) {
        declareAll(statement, statement.declaration);
        const node = statement.declaration;
        const names = node.type === 'VariableDeclaration' ? node.declarations.map((d) => d.id.name) : node.id?.name ? [node.id.name] : [];
        for (const name of names) module.exports.set(name, { local: name, typeOnly: false });
      }
      const from = statement.source ? target(file, statement.source.value) : undefined;
      for (const s of statement.specifiers) {
        const typeOnly = statement.exportKind === 'type' || s.exportKind === 'type';
        module.exports.set(s.exported.name, from ? { from, imported: s.local.name, typeOnly } : { local: s.local.name, typeOnly });
      }
    } else if (DECLARATIONS.has(statement.type)) {
      declareAll(statement, statement);
    }
  }
  modules.set(file, module);
  return module;
}

/** The file a relative specifier names, or undefined for a package (not plinth's). */
function target(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  return resolve(dirname(from), specifier).replace(/\.js$/, '.d.ts');
}

/** The declaration `name` stands for in `file`, following re-exports and imports: `{ file, name }`, or `{ external }`. */
function resolveName(file, name, seen = new Set()) {
  const key = `${file}#${name}`;
  if (seen.has(key)) throw new Error(`export cycle at ${key}`);
  seen.add(key);
  const module = moduleOf(file);
  const exported = module.exports.get(name);
  if (exported?.from) return resolveName(exported.from, exported.imported, seen);
  const local = exported ? exported.local : name;
  if (module.locals.has(local)) return { file, name: local };
  const imported = module.imports.get(local);
  if (imported) return imported.from ? resolveName(imported.from, imported.imported, seen) : { external: true };
  if (!exported) {
    for (const star of module.stars) {
      if (exportedNames(star).has(name)) return resolveName(star, name, seen);
    }
  }
  return undefined;
}

/** Every name a module exports, `export *` included: name → type-only. */
function exportedNames(file) {
  const module = moduleOf(file);
  const names = new Map();
  for (const star of module.stars) for (const [name, typeOnly] of exportedNames(star)) if (name !== 'default') names.set(name, typeOnly);
  for (const [name, { typeOnly }] of module.exports) names.set(name, typeOnly);
  return names;
}

/** The doc comment right before a statement, if any. */
function docComment(module, statement) {
  const before = module.comments.filter((c) => c.end <= statement.start && c.type === 'Block' && c.value.startsWith('*'));
  const last = before.at(-1);
  return last && module.source.slice(last.end, statement.start).trim() === '' ? last : undefined;
}

/** A statement's text without its comments, dedented, one line per line. */
function textOf(module, statement) {
  let text = '';
  let at = statement.start;
  for (const c of module.comments) {
    if (c.start < statement.start || c.end > statement.end) continue;
    text += module.source.slice(at, c.start);
    at = c.end;
  }
  text += module.source.slice(at, statement.end);
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .join('\n');
}

/** Calls `visit` on every AST node under `node`, `node` included. */
function walk(node, visit) {
  if (Array.isArray(node)) return node.forEach((child) => walk(child, visit));
  if (!node || typeof node !== 'object') return;
  if (typeof node.type === 'string') visit(node);
  for (const [key, child] of Object.entries(node)) if (key !== 'type') walk(child, visit);
}

/**
 * The names a declaration refers to, its own type parameters left out: `types` as types
 * (references, `extends`, `implements`), `values` through `typeof` (a zod schema whose
 * inferred type is exported, say).
 */
function referencedNames(node) {
  const types = new Set();
  const values = new Set();
  const params = new Set();
  const add = (set, node) => {
    const name = leftmost(node);
    if (name) set.add(name);
  };
  walk(node, (value) => {
    if (value.type === 'TSTypeParameter') params.add(value.name.name);
    if (value.type === 'TSTypeReference') add(types, value.typeName);
    if (value.type === 'TSTypeQuery') add(values, value.exprName);
    if (value.type === 'TSInterfaceHeritage' || value.type === 'TSClassImplements') add(types, value.expression);
    if (value.type === 'ClassDeclaration' && value.superClass) add(types, value.superClass);
  });
  const own = (set) => [...set].filter((name) => !params.has(name));
  return { types: own(types), values: own(values) };
}

function leftmost(node) {
  if (!node) return undefined;
  if (node.type === 'Identifier') return node.name;
  if (node.type === 'TSQualifiedName' || node.type === 'MemberExpression') return leftmost(node.left ?? node.object);
  return undefined;
}

/** `import("./x.js").Name` types: the files and names they point at. */
function importTypes(node, file) {
  const found = [];
  walk(node, (value) => {
    if (value.type !== 'TSImportType') return;
    const specifier = value.argument?.literal?.value ?? value.source?.value ?? value.argument?.value;
    const from = typeof specifier === 'string' ? target(file, specifier) : undefined;
    const name = value.qualifier ? leftmost(value.qualifier) : undefined;
    if (from && name) found.push({ from, name });
  });
  return found;
}

const keyOf = (declared) => `${declared.file}#${declared.name}`;
const rel = (file) => relative(root, file).replace(/\\/g, '/');

/** What every entry point exports, resolved: `{ entry, names: [{ name, typeOnly, declared }] }`. */
function surface(entries) {
  return entries.map((entry) => {
    const file = join(root, entry.types);
    if (!existsSync(file)) throw new Error(`${entry.types} is missing: run \`npm run build\` first`);
    const names = [...exportedNames(file)].sort(([a], [b]) => a.localeCompare(b)).map(([name, typeOnly]) => ({ name, typeOnly, declared: resolveName(file, name) }));
    return { entry, file, names };
  });
}

/**
 * The report of each entry point of the package at `options.root` (plinth's own by default),
 * with its undocumented and forgotten names.
 */
export function reports(options = {}) {
  root = options.root ?? ROOT;
  modules.clear();
  const all = surface(options.entries ?? ENTRIES);
  const publicKeys = new Set(all.flatMap(({ names }) => names.filter((n) => n.declared && !n.declared.external).map((n) => keyOf(n.declared))));
  return all.map(({ entry, file, names }) => {
    const undocumented = [];
    const forgotten = new Map();
    const madeOf = new Map();
    const blocks = [];
    /** Records `ref` (seen in `file`, named by the export `by`) in `into` when it resolves to a plinth declaration no entry point exports. */
    const notPublic = (file, ref, by, into) => {
      const found = resolveName(file, ref);
      if (found && !found.external && !publicKeys.has(keyOf(found)) && !into.has(keyOf(found))) into.set(keyOf(found), { ...found, ref, by });
    };
    const unresolved = names.filter((n) => !n.declared).map((n) => n.name);
    if (unresolved.length > 0) throw new Error(`${entry.specifier}: cannot find the declaration of ${unresolved.join(', ')}`);
    for (const { name, typeOnly, declared } of names) {
      if (declared.external) {
        blocks.push(`// ${name}: re-exported from a dependency`);
        continue;
      }
      const module = moduleOf(declared.file);
      const lines = [];
      const alias = declared.name === name ? '' : ` (exported as ${name})`;
      let documented = false;
      const statements = [...new Set(module.locals.get(declared.name).map((d) => d.statement))];
      for (const statement of statements) {
        if (docComment(module, statement)) documented = true;
        const { types, values } = referencedNames(statement);
        for (const ref of types) notPublic(declared.file, ref, name, forgotten);
        for (const ref of values) notPublic(declared.file, ref, name, madeOf);
        for (const { from, name: imported } of importTypes(statement, declared.file)) notPublic(from, imported, name, forgotten);
        lines.push(textOf(module, statement));
      }
      if (!documented) undocumented.push(name);
      const notes = [`// ${rel(declared.file).replace(/^dist\//, '').replace(/\.d\.ts$/, '.ts')}${alias}${typeOnly ? ', type only' : ''}`];
      if (!documented) notes.push('// (undocumented)');
      blocks.push([...notes, ...lines].join('\n'));
    }
    const augmentations = reachableAugmentations(file);
    const header = [
      `# API report: ${entry.specifier}`,
      '',
      `Generated by \`npm run api-report\` from ${entry.types}: do not edit. Every name below is a promise to`,
      'third parties; a change here is a change to the public API, to be reviewed as such.',
      '',
      `${names.length} exports (${names.filter((n) => !n.typeOnly && isValue(n.declared)).length} values).`,
      '',
    ];
    const warnings = [...forgotten.values()].map((f) => `// (forgotten) ${f.ref} (${rel(f.file)}), named by ${f.by}`).sort();
    const body = ['```ts', ...warnings, ...(warnings.length ? [''] : []), blocks.join('\n\n'), '```'];
    // What the exports are made of but do not export (the schemas behind `z.infer` types): shown so a change to them shows too.
    for (const made of madeOf.values()) {
      const module = moduleOf(made.file);
      for (const ref of module.locals.get(made.name).flatMap((d) => referencedNames(d.statement).values)) {
        const found = resolveName(made.file, ref);
        if (found && !found.external && !publicKeys.has(keyOf(found)) && !madeOf.has(keyOf(found))) madeOf.set(keyOf(found), { ...found, ref, by: made.name });
      }
    }
    const parts = [...madeOf.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((made) => {
        const module = moduleOf(made.file);
        const statements = [...new Set(module.locals.get(made.name).map((d) => d.statement))];
        return [`// ${rel(made.file).replace(/^dist\//, '').replace(/\.d\.ts$/, '.ts')}, not exported (typeof in ${made.by})`, ...statements.map((st) => textOf(module, st))].join('\n');
      });
    const made = parts.length
      ? ['', '## Not exported, named through `typeof`', '', 'Values the exported types are made of (the zod schemas behind `z.infer` types): a change to one is a change to the API.', '', '```ts', parts.join('\n\n'), '```']
      : [];
    const merged = augmentations.length
      ? ['', '## Declaration merges', '', 'Loaded with this entry point: what they add to the sdk\'s `Services` (and other merged interfaces).', '', '```ts', augmentations.join('\n\n'), '```']
      : [];
    const text = `${[...header, ...body, ...made, ...merged].join('\n')}\n`;
    return { entry, text, undocumented, forgotten: warnings.map((w) => w.replace('// (forgotten) ', '')), exports: names.length };
  });
}

function isValue(declared) {
  if (!declared || declared.external) return false;
  const kinds = moduleOf(declared.file).locals.get(declared.name).map((d) => d.node.type);
  return kinds.some((kind) => !['TSInterfaceDeclaration', 'TSTypeAliasDeclaration'].includes(kind));
}

/** The `declare module` blocks of every plinth `.d.ts` the entry point's declarations import, transitively. */
function reachableAugmentations(file) {
  const seen = new Set();
  const queue = [file];
  const found = [];
  while (queue.length > 0) {
    const next = queue.shift();
    if (seen.has(next) || !existsSync(next)) continue;
    seen.add(next);
    const module = moduleOf(next);
    for (const statement of module.augmentations) found.push(`// ${rel(next).replace(/^dist\//, '').replace(/\.d\.ts$/, '.ts')}\n${textOf(module, statement)}`);
    for (const { from } of module.imports.values()) if (from) queue.push(from);
    for (const e of module.exports.values()) if (e.from) queue.push(e.from);
    queue.push(...module.stars);
    for (const { from } of importTypes(module.program, next)) queue.push(from);
  }
  return found.sort();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const { entry, text, undocumented, forgotten, exports } of reports()) {
    const path = join(ROOT, 'docs', 'api', entry.report);
    const current = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const summary = `${entry.specifier}: ${exports} exports, ${undocumented.length} undocumented, ${forgotten.length} forgotten`;
    if (check) {
      if (current !== text) {
        stale++;
        console.error(`${summary}; docs/api/${entry.report} is out of date: run \`npm run api-report\` and review the diff`);
      } else console.log(`${summary}; docs/api/${entry.report} is current`);
    } else {
      if (current !== text) writeFileSync(path, text);
      console.log(`${summary}; docs/api/${entry.report} ${current === text ? 'unchanged' : 'written'}`);
    }
  }
  if (stale > 0) process.exitCode = 1;
}
