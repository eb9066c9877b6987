/**
 * The import graph of plinth's source folders, file by file and folder by
 * folder: what `test/house-cycles.test.ts` checks. Specifiers are read with a
 * real parser (oxc, through vite): static imports, `import type`, `export … from`
 * and `import()` with a literal; an import written inside a template string
 * (the scaffold's generated files) is text, not an import.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { parseSync } from 'vite';

const SOURCE = /\.(?:[mc]?ts|[mc]?js)$/;

/** What the package's own name resolves to inside it (package.json `exports`, tsconfig `paths`). */
const SELF: Readonly<Record<string, string>> = {
  plinth: 'kernel/index.ts',
  'plinth/sdk': 'sdk/index.ts',
  'plinth/testing': 'testing/index.ts',
  'plinth/internal': 'internal/index.ts',
};

/** One import of one file of another. */
export interface FileEdge {
  /** Paths relative to the root, with `/`. */
  readonly from: string;
  readonly to: string;
  readonly specifier: string;
}

/** Every source file under `folders` (relative to `root`), without node_modules. */
export function sourceFiles(root: string, folders: readonly string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
      return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
    });
  return folders.filter((f) => existsSync(join(root, f))).flatMap((f) => walk(join(root, f)));
}

/** The module specifiers a file imports; a computed `import()` is not one. */
export function specifiersOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const parsed = parseSync(file, source);
  const found = parsed.module.staticImports.map((i) => i.moduleRequest.value);
  for (const exported of parsed.module.staticExports) {
    for (const entry of exported.entries) if (entry.moduleRequest) found.push(entry.moduleRequest.value);
  }
  for (const dynamic of parsed.module.dynamicImports) {
    const literal = /^(['"`])([^'"`$]*)\1$/.exec(source.slice(dynamic.moduleRequest.start, dynamic.moduleRequest.end).trim());
    if (literal) found.push(literal[2]!);
  }
  return found;
}

/** The file a specifier names, relative to `root`; undefined for packages and Node's modules. */
export function resolveSpecifier(root: string, from: string, specifier: string): string | undefined {
  const self = SELF[specifier];
  if (self !== undefined) return self;
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const target = resolve(dirname(from), specifier);
  // TypeScript sources are imported by their emitted name (`./x.js` is `./x.ts`).
  const tries = [target, target.replace(/\.([mc]?)js$/, '.$1ts'), `${target}.ts`, join(target, 'index.ts')];
  const found = tries.find((path) => existsSync(path) && statSync(path).isFile()) ?? target;
  return relative(root, found).split(sep).join('/');
}

/** Every import between files of `folders`. */
export function fileEdges(root: string, folders: readonly string[]): FileEdge[] {
  return sourceFiles(root, folders).flatMap((file) => {
    const from = relative(root, file).split(sep).join('/');
    return specifiersOf(file).flatMap((specifier) => {
      const to = resolveSpecifier(root, file, specifier);
      return to === undefined ? [] : [{ from, to, specifier }];
    });
  });
}

/** The folder a file counts as: `plugins/<name>` for a plugin's files, else its top-level folder. */
export function houseNode(path: string): string {
  const [top, second] = path.split('/');
  return top === 'plugins' && second !== undefined && path.split('/').length > 2 ? `plugins/${second}` : top!;
}

/** One import cycle between folders, each hop with one file import that makes it. */
export interface FolderCycle {
  /** `[a, b, a]`. */
  readonly nodes: readonly string[];
  readonly hops: readonly FileEdge[];
}

/**
 * The import cycles between folders: in each group of folders that import each
 * other round (a strongly connected component of more than one), the shortest
 * cycle through each folder, each cycle once (written from its first folder by name).
 */
export function folderCycles(edges: readonly FileEdge[]): FolderCycle[] {
  const example = new Map<string, FileEdge>();
  const next = new Map<string, Set<string>>();
  for (const edge of edges) {
    const a = houseNode(edge.from);
    const b = houseNode(edge.to);
    if (a === b) continue;
    if (!next.has(a)) next.set(a, new Set());
    next.get(a)!.add(b);
    if (!example.has(`${a}\0${b}`)) example.set(`${a}\0${b}`, edge);
  }
  const out = (node: string) => [...(next.get(node) ?? [])].sort();
  const cycles = new Map<string, FolderCycle>();
  for (const members of components([...next.keys()].sort(), out)) {
    const inside = new Set(members);
    for (const start of members) {
      const found = shortestCycle(start, (n) => out(n).filter((m) => inside.has(m))).slice(0, -1);
      const first = found.indexOf([...found].sort()[0]!);
      const ring = [...found.slice(first), ...found.slice(0, first)];
      const nodes = [...ring, ring[0]!];
      cycles.set(nodes.join('\0'), { nodes, hops: nodes.slice(1).map((to, i) => example.get(`${nodes[i]}\0${to}`)!) });
    }
  }
  return [...cycles.values()];
}

/** A cycle as a person reads it: `a → b → a (a/x.ts imports b/y.ts; …)`. */
export function describeCycle(cycle: FolderCycle): string {
  return `${cycle.nodes.join(' → ')} (${cycle.hops.map((h) => `${h.from} imports ${h.to}`).join('; ')})`;
}

/** Tarjan's strongly connected components with more than one member, each sorted. */
function components(nodes: readonly string[], out: (node: string) => readonly string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const to of out(node)) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    for (let top = stack.pop(); top !== undefined; top = top === node ? undefined : stack.pop()) members.push(top);
    if (members.length > 1) found.push(members.sort());
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** The shortest path from `start` back to it: `[start, …, start]`. */
function shortestCycle(start: string, out: (node: string) => readonly string[]): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const at = queue[i]!;
    for (const to of out(at)) {
      if (to === start) {
        const path = [at];
        while (path[0] !== start) path.unshift(parent.get(path[0]!)!);
        return [...path, start];
      }
      if (parent.has(to) || to === start) continue;
      parent.set(to, at);
      queue.push(to);
    }
  }
  return [start, start];
}
