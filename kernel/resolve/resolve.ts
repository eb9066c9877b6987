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
import { PlinthError } from '../../sdk/errors.js';
import { type Candidate, type Exclusion, type PluginSource, type Request, type Resolution, SOURCE_PRECEDENCE } from '../types.js';
import { byCodePoint, getOrCreate } from './collections.js';
import { cyclicComponents, shortestCycle, topologicalOrder } from './graph.js';
import { errorOf, kernelError, label, type MessageContext } from './messages.js';
import type { Ask, Death, Dep, Node, ResolveInput } from './types.js';

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
  private readonly messages: MessageContext;

  constructor(
    private readonly input: ResolveInput,
    private readonly kernel: SemVer,
  ) {
    this.disabled = input.disabled ?? new Map();
    const invalidFiles = new Map<string, PlinthError>();
    for (const error of input.invalid ?? []) if (error.plugin !== undefined) invalidFiles.set(error.plugin, error);
    this.messages = { kernel, invalidFiles, candidatesOf: (name) => this.list(name) };
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

  /** Every chosen plugin in a dependency cycle. */
  private cycles(): Array<[Node, Death]> {
    const edges = (name: string): string[] =>
      (this.chosen.get(name) as Node).deps.map((d) => d.name).filter((d) => this.chosen.has(d));
    const victims: Array<[Node, Death]> = [];
    for (const members of cyclicComponents([...this.chosen.keys()], edges)) {
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
      for (const node of list) if (node.death !== undefined) rejected.push({ name, candidate: node.candidate, error: errorOf(node, this.messages) });
      if (!this.chosen.has(name)) excluded.push(this.exclusion(name, list));
    }
    const requests = new Map<string, readonly Request[]>();
    for (const name of [...this.asks.keys()].sort(byCodePoint)) {
      const asks = [...(this.asks.get(name) as Map<string, Ask>).values()];
      if (asks.length === 0) continue;
      asks.sort((a, b) => byCodePoint(a.from.name, b.from.name));
      requests.set(name, asks.map((a) => ({ from: label(a.from), range: a.dep.range })));
    }
    const order = new Map([...this.chosen].map(([name, node]) => [name, node.deps.map((d) => d.name)]));
    // Where dependencies leave the order open, builtin plugins go first, then user,
    // workspace and path ones: a builtin plugin that gates loading (trust taps
    // `load`) is set up before any other plugin's code is imported.
    const rank = (name: string) => loadRank((this.chosen.get(name) as Node).candidate.source);
    return {
      plugins: topologicalOrder(order, rank).map((name) => (this.chosen.get(name) as Node).candidate),
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
    if (usable !== undefined) return { name, candidate: usable.candidate, error: errorOf(usable, this.messages) };
    const first = list[0];
    if (first?.death?.kind === 'disabled') return { name, error: errorOf(first, this.messages) };
    return { name, error: kernelError(name, list, this.kernel) };
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

/** Highest version first; on equal versions, the higher-precedence source first. */
function byRank(a: Node, b: Node): number {
  return b.version.compare(a.version) || precedence(b.candidate.source) - precedence(a.candidate.source);
}

function precedence(source: PluginSource): number {
  return SOURCE_PRECEDENCE.indexOf(source);
}

/** Load order among plugins the dependencies leave free: SOURCE_PRECEDENCE order (builtin first), an unknown source last. */
function loadRank(source: PluginSource): number {
  const index = SOURCE_PRECEDENCE.indexOf(source);
  return index === -1 ? SOURCE_PRECEDENCE.length : index;
}
