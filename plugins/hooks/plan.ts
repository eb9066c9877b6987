/**
 * The planner: in which order the hooks of one event run. A plan is a list of
 * stages: the hooks of one stage run concurrently, stages run one after the
 * other (see execute.ts).
 */
import type { HookDefinition, Strategy } from './types.js';

/** A hook the plan already knows cannot run: it is part of a dependency cycle. */
export interface PlannedFailure {
  readonly hook: HookDefinition;
  readonly failure: 'dependency_failed';
  /** Names the cycle, e.g. `a → b → a` ("→" reads "depends on"). */
  readonly message: string;
}

/** What {@link plan} returns and {@link execute} runs. */
export interface Plan {
  readonly strategy: Strategy;
  /** Hooks of one stage run concurrently; stages run in order. */
  readonly stages: readonly (readonly HookDefinition[])[];
  /** Hooks in a dependency cycle, in definition order: they fail before anything runs. */
  readonly failed: readonly PlannedFailure[];
  /** Per hook id, the ids of the planned hooks it depends on (references resolved, unknown ones dropped). */
  readonly dependencies: ReadonlyMap<string, readonly string[]>;
  /** What the planner ignored, one sentence each (a `dependsOn` naming no hook of this event, a duplicate id). */
  readonly notes: readonly string[];
}


function byDefinition(position: ReadonlyMap<string, number>) {
  return (a: HookDefinition, b: HookDefinition): number =>
    position.get(a.id)! - position.get(b.id)! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A `dependsOn` entry names a hook by id, or by name among hooks of the same source (and plugin). */
function resolveDependencies(hooks: readonly HookDefinition[], notes: string[]): Map<string, string[]> {
  const byId = new Map(hooks.map((h) => [h.id, h]));
  const dependencies = new Map<string, string[]>();
  for (const hook of hooks) {
    const ids: string[] = [];
    for (const ref of hook.dependsOn) {
      const target =
        byId.get(ref) ?? hooks.find((h) => h.name === ref && h.source === hook.source && h.plugin === hook.plugin);
      if (!target) {
        notes.push(`Hook "${hook.id}" depends on "${ref}", which is not a hook of this event (unknown, disabled or not matching); that dependency is ignored.`);
      } else if (!ids.includes(target.id)) {
        ids.push(target.id);
      }
    }
    dependencies.set(hook.id, ids);
  }
  return dependencies;
}

/** Hooks on a dependency cycle (Tarjan's strongly connected components), each with a cycle through it. */
function findCycles(hooks: readonly HookDefinition[], dependencies: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cyclic = new Map<string, string[]>();
  let counter = 0;

  const visit = (id: string): void => {
    index.set(id, counter);
    low.set(id, counter++);
    stack.push(id);
    onStack.add(id);
    for (const dep of dependencies.get(id) ?? []) {
      if (!index.has(dep)) {
        visit(dep);
        low.set(id, Math.min(low.get(id)!, low.get(dep)!));
      } else if (onStack.has(dep)) {
        low.set(id, Math.min(low.get(id)!, index.get(dep)!));
      }
    }
    if (low.get(id) !== index.get(id)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== id);
    if (component.length > 1 || (dependencies.get(id) ?? []).includes(id)) {
      const members = new Set(component);
      for (const m of component) cyclic.set(m, cycleThrough(m, members, dependencies));
    }
  };
  for (const hook of hooks) if (!index.has(hook.id)) visit(hook.id);
  return cyclic;
}

/** The shortest cycle from `start` back to itself inside one strongly connected component. */
function cycleThrough(start: string, members: ReadonlySet<string>, dependencies: ReadonlyMap<string, readonly string[]>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    for (const dep of dependencies.get(id) ?? []) {
      if (!members.has(dep)) continue;
      if (dep === start) {
        const path = [start];
        for (let at = id; at !== start; at = previous.get(at)!) path.push(at);
        return [start, ...path.slice(1).reverse(), start];
      }
      if (!previous.has(dep)) {
        previous.set(dep, id);
        queue.push(dep);
      }
    }
  }
  return [start, start]; // unreachable for a member of a cycle
}

/** Topological order, choosing among the ready hooks with `pick` (given them in definition order). */
function topological(
  hooks: readonly HookDefinition[],
  dependencies: ReadonlyMap<string, readonly string[]>,
  done: Set<string>,
  pick: (ready: readonly HookDefinition[]) => HookDefinition,
): HookDefinition[] {
  const remaining = [...hooks];
  const order: HookDefinition[] = [];
  while (remaining.length > 0) {
    const ready = remaining.filter((h) => dependencies.get(h.id)!.every((d) => done.has(d)));
    const next = pick(ready); // never empty: cycles were taken out
    order.push(next);
    done.add(next.id);
    remaining.splice(remaining.indexOf(next), 1);
  }
  return order;
}

/**
 * Orders the hooks of one event into stages. `hooks` are the hooks that match
 * the event, in definition order (disabled ones are left out here too).
 *
 * - `sequential`: one hook per stage, in definition order, after its dependencies.
 * - `priority`: one per stage, higher `priority` first, after its dependencies.
 * - `parallel`: by dependency level; stage 0 holds every hook without dependencies.
 * - `optimized` (default): hooks without dependencies marked `parallel` together
 *   first, then the others one at a time in definition order, after their dependencies.
 *
 * Ties are broken by definition order, then id. A `dependsOn` naming no hook of
 * this event is ignored (see `notes`); hooks on a dependency cycle are in `failed`.
 */
export function plan(hooks: readonly HookDefinition[], strategy: Strategy = 'optimized'): Plan {
  const notes: string[] = [];
  const list: HookDefinition[] = [];
  const seen = new Set<string>();
  for (const hook of hooks) {
    if (hook.enabled === false) continue;
    if (seen.has(hook.id)) {
      notes.push(`Hook id "${hook.id}" is defined twice (${hook.origin}); only the first definition runs.`);
      continue;
    }
    seen.add(hook.id);
    list.push(hook);
  }
  const position = new Map(list.map((h, i) => [h.id, i]));
  const compare = byDefinition(position);
  const dependencies = resolveDependencies(list, notes);
  const cycles = findCycles(list, dependencies);
  const failed: PlannedFailure[] = list
    .filter((h) => cycles.has(h.id))
    .map((hook) => ({
      hook,
      failure: 'dependency_failed',
      message: `Hook "${hook.id}" did not run: its dependencies form a cycle (${cycles.get(hook.id)!.join(' → ')}).`,
    }));
  const acyclic = list.filter((h) => !cycles.has(h.id));
  const decided = () => new Set(cycles.keys()); // cycle members are settled before stage 0
  let stages: HookDefinition[][];

  switch (strategy) {
    case 'sequential':
      stages = topological(acyclic, dependencies, decided(), (ready) => ready[0]!).map((h) => [h]);
      break;
    case 'priority':
      stages = topological(acyclic, dependencies, decided(), (ready) =>
        ready.reduce((best, h) => (h.priority > best.priority || (h.priority === best.priority && compare(h, best) < 0) ? h : best)),
      ).map((h) => [h]);
      break;
    case 'parallel': {
      const level = new Map<string, number>();
      for (const hook of topological(acyclic, dependencies, decided(), (ready) => ready[0]!)) {
        const deps = dependencies.get(hook.id)!.filter((d) => level.has(d));
        level.set(hook.id, deps.length === 0 ? 0 : Math.max(...deps.map((d) => level.get(d)! + 1)));
      }
      stages = [];
      for (const hook of acyclic) (stages[level.get(hook.id)!] ??= []).push(hook);
      break;
    }
    case 'optimized': {
      const first = acyclic.filter((h) => h.parallel && dependencies.get(h.id)!.length === 0);
      const done = decided();
      for (const h of first) done.add(h.id);
      const rest = topological(
        acyclic.filter((h) => !first.includes(h)),
        dependencies,
        done,
        (ready) => ready[0]!,
      );
      stages = [...(first.length > 0 ? [first] : []), ...rest.map((h) => [h])];
      break;
    }
    default:
      throw new TypeError(`Unknown hook strategy "${String(strategy)}"`);
  }
  return { strategy, stages: stages.map((s) => s.sort(compare)), failed, dependencies, notes };
}
