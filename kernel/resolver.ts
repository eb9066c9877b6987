/**
 * Plugin resolution: from every candidate found on disk to the plugins that
 * load, in dependency order, with a coded reason for each one that does not.
 * Pure and synchronous; it reads manifests only and never imports plugin code.
 *
 * The model is greedy, like a package manager without backtracking search:
 * 1. A candidate is dead when it is disabled, rejects the kernel, or one of its
 *    dependencies has no live candidate in range; deaths cascade to dependents.
 * 2. Each name chooses its best live candidate that satisfies every range asked
 *    of it by the chosen plugins, which changes what those ask in turn; this is
 *    iterated until nothing changes (each name may change its mind a bounded
 *    number of times).
 * 3. A chosen plugin whose range the chosen dependency does not satisfy dies
 *    (a conflict), and so do plugins in a dependency cycle; then back to 2, where
 *    the name may fall back to a lower version. Deaths are final, so this ends.
 */
import semver from 'semver';
import type { Range, SemVer } from 'semver';
import { type ErrorCode, PlinthError } from './errors.js';
import {
  type Candidate,
  type Exclusion,
  type PluginSource,
  type Request,
  type Resolution,
  SOURCE_PRECEDENCE,
} from './types.js';

/** What `resolve` works from. */
export interface ResolveInput {
  readonly candidates: readonly Candidate[];
  /** Manifests discovery could not use; passed through, and named when a plugin needs one. */
  readonly invalid?: readonly PlinthError[];
  /** The kernel API version every `kernel` range is checked against. */
  readonly kernelVersion: string;
  /** Disabled plugin names, each with where it was disabled (e.g. `user settings`). */
  readonly disabled?: ReadonlyMap<string, string>;
}

/**
 * How often one name may switch versions while ranges settle. Ranges that pull
 * each other back and forth would otherwise never settle; the conflict check
 * then excludes whoever is left unsatisfied.
 */
const MAX_SWITCHES_PER_NAME = 32;

/**
 * Decides which plugins load and in which order. Every discovered plugin that
 * is not disabled is a root: it loads unless something prevents it, and then
 * it appears in `excluded` with a `PLN_E_…` error that names the chain.
 * The outcome does not depend on input order, except between two candidates of
 * the same name, version and source (two `path` folders): the first one wins.
 * @throws PlinthError `PLN_E_KERNEL_VERSION_INVALID` when `kernelVersion` is not semver.
 */
export function resolve(input: ResolveInput): Resolution {
  const kernel = semver.parse(input.kernelVersion);
  if (kernel === null) {
    throw new PlinthError('PLN_E_KERNEL_VERSION_INVALID', `the kernel version "${input.kernelVersion}" is not a semver version`);
  }
  return new Solver(input, kernel).run();
}

/** A candidate during resolution. */
interface Node {
  readonly candidate: Candidate;
  readonly name: string;
  readonly version: SemVer;
  /** Dependencies, sorted by name so that every walk is deterministic. */
  readonly deps: readonly Dep[];
  death: Death | undefined;
  error: PlinthError | undefined;
}

interface Dep {
  readonly name: string;
  readonly range: string;
  readonly test: Range;
}

/** A range one chosen plugin asks of another name. */
interface Ask {
  readonly from: Node;
  readonly dep: Dep;
}

/** Why a candidate cannot load. `via`: a dependency cannot load, see that node. */
type Death =
  | { readonly kind: 'kernel' }
  | { readonly kind: 'disabled'; readonly where: string }
  | { readonly kind: 'missing'; readonly dep: Dep }
  | { readonly kind: 'via'; readonly dep: Dep; readonly node: Node }
  | { readonly kind: 'conflict'; readonly dep: Dep; readonly asks: readonly Ask[]; readonly chosen: Node | undefined }
  | { readonly kind: 'cycle'; readonly cycle: readonly string[]; readonly members: readonly string[] };

class Solver {
  private readonly nodes = new Map<string, Node[]>();
  private readonly names: string[];
  /** Dependency name → live-or-dead nodes that depend on it, for cascading deaths. */
  private readonly dependents = new Map<string, Node[]>();
  private readonly chosen = new Map<string, Node>();
  /** Target name → requester name → what it asks. One entry per requester: each name has one chosen node. */
  private readonly asks = new Map<string, Map<string, Ask>>();
  private readonly switches = new Map<string, number>();
  private queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly ranges = new Map<string, Range>();
  private readonly disabled: ReadonlyMap<string, string>;
  private readonly invalidFiles = new Map<string, PlinthError>();

  constructor(
    private readonly input: ResolveInput,
    private readonly kernel: SemVer,
  ) {
    this.disabled = input.disabled ?? new Map();
    for (const error of input.invalid ?? []) if (error.plugin !== undefined) this.invalidFiles.set(error.plugin, error);
    for (const candidate of input.candidates) {
      const { manifest } = candidate;
      const deps = Object.keys(manifest.dependencies)
        .sort(byCodePoint)
        .map((name): Dep => {
          const range = manifest.dependencies[name] as string;
          return { name, range, test: this.range(range) };
        });
      const node: Node = { candidate, name: manifest.name, version: new semver.SemVer(manifest.version), deps, death: undefined, error: undefined };
      getOrCreate(this.nodes, node.name, () => []).push(node);
    }
    this.names = [...this.nodes.keys()].sort(byCodePoint);
    for (const name of this.names) {
      const list = this.nodes.get(name) as Node[];
      list.sort(byRank);
      for (const node of list) for (const dep of node.deps) getOrCreate(this.dependents, dep.name, () => []).push(node);
    }
  }

  run(): Resolution {
    this.initialDeaths();
    for (const name of this.names) this.enqueue(name);
    for (;;) {
      this.settle();
      let victims = this.conflicts();
      if (victims.length === 0) victims = this.cycles();
      if (victims.length === 0) break;
      this.bury(victims);
    }
    return this.result();
  }

  // ── 1. deaths that do not depend on choices ──────────────────────────────

  private initialDeaths(): void {
    for (const name of this.names) {
      const where = this.disabled.get(name);
      for (const node of this.list(name)) {
        if (where !== undefined) node.death = { kind: 'disabled', where };
        else if (!this.acceptsKernel(node)) node.death = { kind: 'kernel' };
      }
    }
    // Nodes are checked against the current state, and every later death
    // re-checks its dependents, so one pass in name order suffices.
    for (const name of this.names) {
      for (const node of this.list(name)) {
        if (node.death !== undefined) continue;
        const death = this.unmetDependency(node);
        if (death !== undefined) this.bury([[node, death]]);
      }
    }
  }

  /** The first dependency of `node` that cannot be met by any live candidate. */
  private unmetDependency(node: Node): Death | undefined {
    for (const dep of node.deps) {
      const list = this.nodes.get(dep.name);
      if (list === undefined) return { kind: 'missing', dep };
      const inRange = list.filter((n) => dep.test.test(n.version));
      if (inRange.some((n) => n.death === undefined)) continue;
      const target = this.disabled.has(dep.name) ? list[0] : inRange[0];
      if (target !== undefined) return { kind: 'via', dep, node: target };
      // No version in range at all, but live ones exist: leave it to the
      // conflict check, which can name every plugin that asks for this name.
      if (list.some((n) => n.death === undefined)) continue;
      return { kind: 'conflict', dep, asks: [{ from: node, dep }], chosen: undefined };
    }
    return undefined;
  }

  /** Records deaths and cascades them to dependents; a dead chosen node's name chooses again. */
  private bury(victims: ReadonlyArray<readonly [Node, Death]>): void {
    const fresh: Node[] = [];
    for (const [node, death] of victims) {
      if (node.death !== undefined) continue;
      node.death = death;
      fresh.push(node);
    }
    for (let dead = fresh.pop(); dead !== undefined; dead = fresh.pop()) {
      if (this.chosen.get(dead.name) === dead) {
        this.choose(dead.name, undefined);
        this.enqueue(dead.name);
      }
      for (const dependent of this.dependents.get(dead.name) ?? []) {
        if (dependent.death !== undefined) continue;
        const death = this.unmetDependency(dependent);
        if (death === undefined) continue;
        dependent.death = death;
        fresh.push(dependent);
      }
    }
  }

  // ── 2. choosing versions until the ranges settle ─────────────────────────

  private settle(): void {
    for (let i = 0; i < this.queue.length; i++) {
      const name = this.queue[i] as string;
      this.queued.delete(name);
      const current = this.chosen.get(name);
      const switched = this.switches.get(name) ?? 0;
      if (current !== undefined && switched >= MAX_SWITCHES_PER_NAME) continue;
      const next = this.best(name);
      if (next === current) continue;
      if (current !== undefined) this.switches.set(name, switched + 1);
      this.choose(name, next);
    }
    this.queue = [];
  }

  /**
   * The highest live candidate that satisfies every range asked of `name`;
   * when none does, the one that satisfies the most askers (highest on a tie),
   * so that a conflict excludes as few plugins as it can.
   */
  private best(name: string): Node | undefined {
    const asks = this.asks.get(name);
    let best: Node | undefined;
    let bestCount = -1;
    for (const node of this.list(name)) {
      if (node.death !== undefined) continue;
      if (asks === undefined || asks.size === 0) return node;
      let count = 0;
      for (const ask of asks.values()) if (ask.dep.test.test(node.version)) count++;
      if (count === asks.size) return node;
      if (count > bestCount) {
        best = node;
        bestCount = count;
      }
    }
    return best;
  }

  private choose(name: string, node: Node | undefined): void {
    const old = this.chosen.get(name);
    if (old !== undefined) {
      for (const dep of old.deps) {
        this.asks.get(dep.name)?.delete(name);
        this.enqueue(dep.name);
      }
    }
    if (node === undefined) {
      this.chosen.delete(name);
      return;
    }
    this.chosen.set(name, node);
    for (const dep of node.deps) {
      getOrCreate(this.asks, dep.name, () => new Map()).set(name, { from: node, dep });
      this.enqueue(dep.name);
    }
  }

  private enqueue(name: string): void {
    if (this.queued.has(name) || !this.nodes.has(name)) return;
    this.queued.add(name);
    this.queue.push(name);
  }

  // ── 3. conflicts and cycles among the chosen ─────────────────────────────

  /** Every chosen plugin whose range the chosen version of its dependency does not satisfy. */
  private conflicts(): Array<[Node, Death]> {
    const victims: Array<[Node, Death]> = [];
    for (const name of [...this.asks.keys()].sort(byCodePoint)) {
      const chosen = this.chosen.get(name);
      const asks = [...(this.asks.get(name) as Map<string, Ask>).values()].sort((a, b) => byCodePoint(a.from.name, b.from.name));
      for (const ask of asks) {
        if (chosen !== undefined && ask.dep.test.test(chosen.version)) continue;
        victims.push([ask.from, { kind: 'conflict', dep: ask.dep, asks, chosen }]);
      }
    }
    return victims;
  }

  /** Every chosen plugin in a dependency cycle (Tarjan's strongly connected components). */
  private cycles(): Array<[Node, Death]> {
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const components: string[][] = [];
    const edges = (name: string): string[] =>
      (this.chosen.get(name) as Node).deps.map((d) => d.name).filter((d) => this.chosen.has(d));
    const visit = (name: string): void => {
      index.set(name, index.size);
      low.set(name, index.get(name) as number);
      stack.push(name);
      onStack.add(name);
      for (const next of edges(name)) {
        if (!index.has(next)) {
          visit(next);
          low.set(name, Math.min(low.get(name) as number, low.get(next) as number));
        } else if (onStack.has(next)) {
          low.set(name, Math.min(low.get(name) as number, index.get(next) as number));
        }
      }
      if (low.get(name) !== index.get(name)) return;
      const component: string[] = [];
      for (let top = stack.pop(); top !== undefined; top = top === name ? undefined : stack.pop()) {
        onStack.delete(top);
        component.push(top);
      }
      if (component.length > 1 || edges(name).includes(name)) components.push(component.sort(byCodePoint));
    };
    for (const name of [...this.chosen.keys()].sort(byCodePoint)) if (!index.has(name)) visit(name);

    const victims: Array<[Node, Death]> = [];
    for (const members of components) {
      const inside = new Set(members);
      for (const name of members) {
        const cycle = shortestCycle(name, (n) => edges(n).filter((d) => inside.has(d)));
        victims.push([this.chosen.get(name) as Node, { kind: 'cycle', cycle, members }]);
      }
    }
    return victims;
  }

  // ── the outcome ──────────────────────────────────────────────────────────

  private result(): Resolution {
    const candidates = new Map<string, readonly Candidate[]>();
    const excluded: Exclusion[] = [];
    const rejected: Exclusion[] = [];
    for (const name of this.names) {
      const list = this.list(name);
      candidates.set(name, list.map((n) => n.candidate));
      for (const node of list) if (node.death !== undefined) rejected.push({ name, candidate: node.candidate, error: this.errorOf(node) });
      if (!this.chosen.has(name)) excluded.push(this.exclusion(name, list));
    }
    const requests = new Map<string, readonly Request[]>();
    for (const name of [...this.asks.keys()].sort(byCodePoint)) {
      const asks = [...(this.asks.get(name) as Map<string, Ask>).values()];
      if (asks.length === 0) continue;
      asks.sort((a, b) => byCodePoint(a.from.name, b.from.name));
      requests.set(name, asks.map((a) => ({ from: label(a.from), range: a.dep.range })));
    }
    return {
      plugins: topologicalOrder(this.chosen).map((n) => n.candidate),
      excluded,
      candidates,
      requests,
      invalid: [...(this.input.invalid ?? [])],
      rejected,
      kernelVersion: this.kernel.version,
    };
  }

  private exclusion(name: string, list: readonly Node[]): Exclusion {
    // The one a user would expect to load: the highest that accepts this kernel.
    const usable = list.find((n) => (n.death?.kind === 'disabled' ? this.acceptsKernel(n) : n.death?.kind !== 'kernel'));
    if (usable !== undefined) return { name, candidate: usable.candidate, error: this.errorOf(usable) };
    const first = list[0];
    if (first?.death?.kind === 'disabled') return { name, error: this.errorOf(first) };
    return { name, error: this.kernelError(name, list) };
  }

  private errorOf(node: Node): PlinthError {
    node.error ??= this.describe(node);
    return node.error;
  }

  private describe(node: Node): PlinthError {
    const death = node.death as Death;
    const { name } = node;
    const base = { version: node.candidate.manifest.version, source: node.candidate.source };
    switch (death.kind) {
      case 'kernel':
        return this.kernelError(name, [node]);
      case 'disabled':
        return new PlinthError('PLN_E_PLUGIN_DISABLED', `"${name}" is disabled in ${death.where}`, {
          plugin: name,
          hint: `enable "${name}" in ${death.where}`,
          details: { ...base, disabledIn: death.where },
        });
      case 'missing':
      case 'via':
        return this.chainError(node);
      case 'conflict': {
        const dep = death.dep.name;
        const wants = death.asks.map((a) => `"${label(a.from)}" wants ${a.dep.range}`).join(', ');
        const available = [...this.list(dep)].reverse().map((n) => `${n.candidate.manifest.version} (${n.candidate.source}${n.death ? `, cannot load: ${codeOf(n.death)}` : ''})`);
        // The version chosen when the conflict was found may have died since; then it explains nothing.
        const resolved = death.chosen === undefined || death.chosen.death !== undefined ? '' : `; "${dep}" resolves to ${death.chosen.candidate.manifest.version}`;
        return new PlinthError(
          'PLN_E_DEP_CONFLICT',
          `"${name}" needs "${dep}" (${death.dep.range}), but no version of "${dep}" satisfies every plugin: ${wants}; available: ${available.join(', ')}${resolved}`,
          {
            plugin: name,
            hint: `install a version of "${dep}" that satisfies every range, or update the plugins that ask for it`,
            details: {
              ...base,
              dependency: dep,
              range: death.dep.range,
              requests: death.asks.map((a) => ({ from: label(a.from), range: a.dep.range })),
              available: [...this.list(dep)].reverse().map((n) => ({ version: n.candidate.manifest.version, source: n.candidate.source })),
              ...(resolved !== '' && { resolved: death.chosen?.candidate.manifest.version }),
            },
          },
        );
      }
      case 'cycle': {
        const others = death.members.length > death.cycle.length - 1 ? ` (all in the cycle: ${death.members.join(', ')})` : '';
        return new PlinthError('PLN_E_DEP_CYCLE', `"${name}" is in a dependency cycle: ${death.cycle.join(' → ')}${others}`, {
          plugin: name,
          hint: 'a plugin cannot depend on itself, even indirectly: remove one of these dependencies',
          details: { ...base, cycle: death.cycle, members: death.members },
        });
      }
    }
  }

  private kernelError(name: string, nodes: readonly Node[]): PlinthError {
    const wants = nodes.map((n) => `${n.candidate.manifest.version} (${n.candidate.source}) wants ${n.candidate.manifest.kernel}`);
    return new PlinthError('PLN_E_KERNEL_INCOMPATIBLE', `"${name}" does not accept kernel ${this.kernel.version}: ${wants.join(', ')}`, {
      plugin: name,
      hint: `install a version of "${name}" made for kernel ${this.kernel.version}`,
      details: {
        kernel: this.kernel.version,
        candidates: nodes.map((n) => ({ version: n.candidate.manifest.version, source: n.candidate.source, kernel: n.candidate.manifest.kernel })),
      },
    });
  }

  /**
   * A dependency that cannot load: follows the chain down to the plugin where
   * the trouble starts, so that the message says the whole story at once.
   */
  private chainError(node: Node): PlinthError {
    const hops = [node];
    let from = node;
    let death = node.death as Extract<Death, { kind: 'missing' | 'via' }>;
    while (death.kind === 'via' && (death.node.death?.kind === 'via' || death.node.death?.kind === 'missing')) {
      hops.push(death.node);
      from = death.node;
      death = death.node.death;
    }
    if (death.kind === 'via') hops.push(death.node);
    const chain = [...hops.map((h) => h.name), ...(death.kind === 'missing' ? [death.dep.name] : [])];
    // Versions can pull each other round in a loop; then only versions tell the hops apart.
    const repeats = new Set(chain).size < chain.length;
    const labels = [...hops.map((h) => (repeats ? label(h) : h.name)), ...chain.slice(hops.length)];
    const first = (node.death as Extract<Death, { kind: 'missing' | 'via' }>).dep;
    const route = chain.length > 2 ? `${labels.map((n) => `"${n}"`).join(' → ')}: ` : '';
    const needs = `${route}"${from.name}" needs "${death.dep.name}" (${death.dep.range})`;
    const details = { version: node.candidate.manifest.version, source: node.candidate.source, chain, dependency: first.name, range: first.range };
    const plugin = node.name;
    if (death.kind === 'missing') {
      const invalid = this.invalidFiles.get(death.dep.name);
      const why = invalid === undefined ? 'which is not installed' : `which could not be loaded (${invalid.code}: ${firstLine(invalid.message)})`;
      return new PlinthError('PLN_E_DEP_MISSING', `${needs}, ${why}`, {
        plugin,
        hint: invalid === undefined ? `install "${death.dep.name}" (${death.dep.range}), or disable "${node.name}"` : `fix the manifest of "${death.dep.name}"`,
        details,
      });
    }
    const root = death.node;
    const rootError = this.errorOf(root);
    if (root.death?.kind === 'disabled') {
      return new PlinthError('PLN_E_DEP_DISABLED', `${needs}, which is disabled in ${root.death.where}`, {
        plugin,
        hint: `enable "${root.name}" in ${root.death.where}, or disable "${node.name}" too`,
        details: { ...details, disabled: root.name, disabledIn: root.death.where },
      });
    }
    return new PlinthError('PLN_E_DEP_EXCLUDED', `${needs}, which cannot load (${rootError.code}: ${rootError.message})`, {
      plugin,
      hint: `fix "${root.name}" first: ${rootError.hint ?? rootError.code}`,
      cause: rootError,
      details: { ...details, excluded: root.name, cause: rootError.code },
    });
  }

  private acceptsKernel(node: Node): boolean {
    return this.range(node.candidate.manifest.kernel).test(this.kernel);
  }

  private list(name: string): readonly Node[] {
    return this.nodes.get(name) ?? [];
  }

  /** Parsing a range is the costly part of `semver.satisfies`; each distinct range is parsed once. */
  private range(text: string): Range {
    return getOrCreate(this.ranges, text, () => new semver.Range(text));
  }
}

// ── explain ────────────────────────────────────────────────────────────────

/** Why one candidate was or was not chosen. */
export type CandidateStatus =
  | 'chosen'
  | 'lower'
  | 'shadowed'
  | 'unsatisfied'
  | 'kernel'
  | 'disabled'
  | 'cannot-load'
  | 'not-chosen';

/** One candidate of a plugin, and why it was or was not chosen. */
export interface CandidateExplanation {
  readonly candidate: Candidate;
  readonly status: CandidateStatus;
  /** One line for people, e.g. `does not satisfy "a@1.0.0" ^1.0.0`. */
  readonly reason: string;
  /** Why this candidate cannot load, for `kernel`, `disabled` and `cannot-load`. */
  readonly error?: PlinthError;
}

/** One dependency of a plugin and what it resolved to. */
export interface DependencyExplanation {
  readonly name: string;
  readonly range: string;
  /** The candidate that loads for it, if any. */
  readonly resolved: Candidate | undefined;
  /** Why it is not usable: its exclusion code, `PLN_E_DEP_MISSING` or `PLN_E_DEP_CONFLICT`. */
  readonly problem: ErrorCode | undefined;
}

/** Everything `plinth plugins why <name>` shows. */
export interface Explanation {
  readonly name: string;
  /** The candidate that loads, if the plugin loads. */
  readonly chosen: Candidate | undefined;
  /** Every candidate, highest version first. */
  readonly candidates: readonly CandidateExplanation[];
  /** Ranges asked of this plugin by the plugins that load. */
  readonly requestedBy: readonly Request[];
  /** Dependencies of the chosen candidate (or of the one that would have been chosen). */
  readonly dependencies: readonly DependencyExplanation[];
  /** Why the plugin does not load, if it does not. */
  readonly exclusion: PlinthError | undefined;
}

/** Explains the resolution of one plugin name; `undefined` when the name was never seen or asked for. */
export function explain(resolution: Resolution, name: string): Explanation | undefined {
  const list = resolution.candidates.get(name) ?? [];
  const requestedBy = resolution.requests.get(name) ?? [];
  if (list.length === 0 && requestedBy.length === 0) return undefined;
  const loaded = new Map(resolution.plugins.map((c) => [c.manifest.name, c]));
  const excluded = new Map(resolution.excluded.map((e) => [e.name, e]));
  const rejected = new Map(resolution.rejected.filter((r) => r.name === name).map((r) => [r.candidate, r.error]));
  const chosen = loaded.get(name);
  const exclusion = excluded.get(name);
  const reference = chosen ?? exclusion?.candidate;

  const status = (candidate: Candidate): CandidateExplanation => {
    const error = rejected.get(candidate);
    if (candidate === chosen) return { candidate, status: 'chosen', reason: 'chosen' };
    if (error?.code === 'PLN_E_KERNEL_INCOMPATIBLE') {
      return { candidate, status: 'kernel', reason: `does not accept kernel ${resolution.kernelVersion} (wants ${candidate.manifest.kernel})`, error };
    }
    if (error?.code === 'PLN_E_PLUGIN_DISABLED') return { candidate, status: 'disabled', reason: error.message, error };
    if (error !== undefined) return { candidate, status: 'cannot-load', reason: `cannot load (${error.code}): ${error.message}`, error };
    if (reference === undefined) return { candidate, status: 'not-chosen', reason: 'not chosen' };
    const refused = requestedBy.find((r) => !semver.satisfies(candidate.manifest.version, r.range));
    if (refused !== undefined) return { candidate, status: 'unsatisfied', reason: `does not satisfy "${refused.from}" ${refused.range}` };
    const chosenVersion = reference.manifest.version;
    if (semver.eq(candidate.manifest.version, chosenVersion)) {
      const reason =
        reference.source === candidate.source
          ? `same version, found first at ${reference.dir}`
          : `same version in a higher-precedence source (${reference.source})`;
      return { candidate, status: 'shadowed', reason };
    }
    if (semver.lt(candidate.manifest.version, chosenVersion)) {
      return { candidate, status: 'lower', reason: `lower than the chosen version ${chosenVersion}` };
    }
    return { candidate, status: 'not-chosen', reason: 'not chosen' };
  };

  const owner = reference ?? list[0];
  const dependencies = Object.entries(owner?.manifest.dependencies ?? {})
    .sort(([a], [b]) => byCodePoint(a, b))
    .map(([dep, range]): DependencyExplanation => {
      const resolved = loaded.get(dep);
      let problem: ErrorCode | undefined;
      if (resolved !== undefined) problem = semver.satisfies(resolved.manifest.version, range) ? undefined : 'PLN_E_DEP_CONFLICT';
      else problem = excluded.get(dep)?.error.code ?? 'PLN_E_DEP_MISSING';
      return { name: dep, range, resolved, problem };
    });

  return { name, chosen, candidates: list.map(status), requestedBy, dependencies, exclusion: exclusion?.error };
}

// ── helpers ────────────────────────────────────────────────────────────────

/** Highest version first; on equal versions, the higher-precedence source first. */
function byRank(a: Node, b: Node): number {
  return b.version.compare(a.version) || precedence(b.candidate.source) - precedence(a.candidate.source);
}

function precedence(source: PluginSource): number {
  return SOURCE_PRECEDENCE.indexOf(source);
}

/** Locale-independent, so the order is the same on every machine. */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The code a death is reported with; `via` takes its meaning from the end of the chain. */
function codeOf(death: Death): ErrorCode {
  switch (death.kind) {
    case 'kernel':
      return 'PLN_E_KERNEL_INCOMPATIBLE';
    case 'disabled':
      return 'PLN_E_PLUGIN_DISABLED';
    case 'missing':
      return 'PLN_E_DEP_MISSING';
    case 'conflict':
      return 'PLN_E_DEP_CONFLICT';
    case 'cycle':
      return 'PLN_E_DEP_CYCLE';
    case 'via': {
      const inner = codeOf(death.node.death as Death);
      if (inner === 'PLN_E_DEP_MISSING') return inner;
      if (inner === 'PLN_E_PLUGIN_DISABLED' || inner === 'PLN_E_DEP_DISABLED') return 'PLN_E_DEP_DISABLED';
      return 'PLN_E_DEP_EXCLUDED';
    }
  }
}

function label(node: Node): string {
  return `${node.name}@${node.candidate.manifest.version}`;
}

function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return end === -1 ? text : `${text.slice(0, end)} …`;
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

/** The shortest path from `start` back to itself, as names: `[a, b, a]`. */
function shortestCycle(start: string, next: (name: string) => string[]): string[] {
  const parent = new Map<string, string>();
  const frontier = [start];
  for (let i = 0; i < frontier.length; i++) {
    const at = frontier[i] as string;
    for (const to of next(at)) {
      if (to === start) {
        const path = [start];
        for (let step: string | undefined = at; step !== start && step !== undefined; step = parent.get(step)) path.push(step);
        return [start, ...path.slice(1).reverse(), start];
      }
      if (parent.has(to)) continue;
      parent.set(to, at);
      frontier.push(to);
    }
  }
  return [start, start];
}

/**
 * Kahn's algorithm with the ready set kept as a min-heap of names: dependencies
 * come first and, among plugins that could go next, the smallest name does, so
 * the order never depends on input order.
 */
function topologicalOrder(chosen: ReadonlyMap<string, Node>): Node[] {
  const waiting = new Map<string, number>();
  const users = new Map<string, string[]>();
  const ready: string[] = [];
  for (const [name, node] of chosen) {
    waiting.set(name, node.deps.length);
    for (const dep of node.deps) getOrCreate(users, dep.name, () => []).push(name);
    if (node.deps.length === 0) heapPush(ready, name);
  }
  const order: Node[] = [];
  for (let name = heapPop(ready); name !== undefined; name = heapPop(ready)) {
    order.push(chosen.get(name) as Node);
    for (const user of users.get(name) ?? []) {
      const left = (waiting.get(user) as number) - 1;
      waiting.set(user, left);
      if (left === 0) heapPush(ready, user);
    }
  }
  return order;
}

function heapPush(heap: string[], value: string): void {
  heap.push(value);
  for (let i = heap.length - 1; i > 0; ) {
    const parent = (i - 1) >> 1;
    if ((heap[parent] as string) <= value) break;
    heap[i] = heap[parent] as string;
    heap[parent] = value;
    i = parent;
  }
}

function heapPop(heap: string[]): string | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length === 0 || last === undefined) return top;
  heap[0] = last;
  for (let i = 0; ; ) {
    const left = 2 * i + 1;
    const right = left + 1;
    let smallest = i;
    if (left < heap.length && (heap[left] as string) < (heap[smallest] as string)) smallest = left;
    if (right < heap.length && (heap[right] as string) < (heap[smallest] as string)) smallest = right;
    if (smallest === i) break;
    [heap[i], heap[smallest]] = [heap[smallest] as string, heap[i] as string];
    i = smallest;
  }
  return top;
}
