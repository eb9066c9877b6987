/**
 * Graph walks over plugin names, apart from versions: the cycles to report
 * and the load order. Roots are taken in code-point order and callers pass
 * edges sorted, so that results never depend on input order.
 */
import { byCodePoint, getOrCreate } from './collections.js';

/**
 * Tarjan's strongly connected components, keeping only the cyclic ones (more
 * than one member, or a name that depends on itself), each sorted by name.
 */
export function cyclicComponents(names: readonly string[], edges: (name: string) => readonly string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
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
  for (const name of [...names].sort(byCodePoint)) if (!index.has(name)) visit(name);
  return components;
}

/** The shortest path from `start` back to itself, as names: `[a, b, a]`. */
export function shortestCycle(start: string, next: (name: string) => readonly string[]): string[] {
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
 * Kahn's algorithm with the ready set kept as a min-heap: dependencies come
 * first and, among names that could go next, the lowest `rank` does, then the
 * smallest name, so the order never depends on input order. A name that waits
 * on a dependency outside `deps`, or on a cycle, is left out: resolution
 * removes both first.
 */
export function topologicalOrder(deps: ReadonlyMap<string, readonly string[]>, rank?: (name: string) => number): string[] {
  // Rank first, then code-point order; without ranks, names alone.
  const ranks = rank && new Map([...deps.keys()].map((name) => [name, rank(name)]));
  const before: Before = ranks
    ? (a, b) => {
        const ra = ranks.get(a) as number;
        const rb = ranks.get(b) as number;
        return ra !== rb ? ra < rb : a < b;
      }
    : (a, b) => a < b;
  const waiting = new Map<string, number>();
  const users = new Map<string, string[]>();
  const ready: string[] = [];
  for (const [name, needs] of deps) {
    waiting.set(name, needs.length);
    for (const dep of needs) getOrCreate(users, dep, () => []).push(name);
    if (needs.length === 0) heapPush(ready, name, before);
  }
  const order: string[] = [];
  for (let name = heapPop(ready, before); name !== undefined; name = heapPop(ready, before)) {
    order.push(name);
    for (const user of users.get(name) ?? []) {
      const left = (waiting.get(user) as number) - 1;
      waiting.set(user, left);
      if (left === 0) heapPush(ready, user, before);
    }
  }
  return order;
}

type Before = (a: string, b: string) => boolean;

function heapPush(heap: string[], value: string, before: Before): void {
  heap.push(value);
  for (let i = heap.length - 1; i > 0; ) {
    const parent = (i - 1) >> 1;
    if (!before(value, heap[parent] as string)) break;
    heap[i] = heap[parent] as string;
    heap[parent] = value;
    i = parent;
  }
}

function heapPop(heap: string[], before: Before): string | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length === 0 || last === undefined) return top;
  heap[0] = last;
  for (let i = 0; ; ) {
    const left = 2 * i + 1;
    const right = left + 1;
    let smallest = i;
    if (left < heap.length && before(heap[left] as string, heap[smallest] as string)) smallest = left;
    if (right < heap.length && before(heap[right] as string, heap[smallest] as string)) smallest = right;
    if (smallest === i) break;
    [heap[i], heap[smallest]] = [heap[smallest] as string, heap[i] as string];
    i = smallest;
  }
  return top;
}
