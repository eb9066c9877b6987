/**
 * The `PLN_E_…` error for each candidate that cannot load. Messages tell the
 * whole story at once (the chain down to where the trouble starts, every range
 * in a conflict, the whole cycle), so that a user can fix it without a rerun.
 */
import type { SemVer } from 'semver';
import { type ErrorCode, PlinthError } from '../../sdk/errors.js';
import type { Death, Node } from './types.js';

/** What the messages need beyond the dead node itself. */
export interface MessageContext {
  readonly kernel: SemVer;
  /** Invalid manifests by plugin name, so that a missing dependency can say it is broken rather than absent. */
  readonly invalidFiles: ReadonlyMap<string, PlinthError>;
  /** Every candidate of a name, highest version first. */
  candidatesOf(name: string): readonly Node[];
}

/** The error of a dead node, built once: the same instance is its exclusion, its rejection and its dependents' cause. */
export function errorOf(node: Node, context: MessageContext): PlinthError {
  node.error ??= describe(node, context);
  return node.error;
}

/** One error for every candidate of `name` that rejects the kernel, listing what each wants. */
export function kernelError(name: string, nodes: readonly Node[], kernel: SemVer): PlinthError {
  const wants = nodes.map((n) => `${n.candidate.manifest.version} (${n.candidate.source}) wants ${n.candidate.manifest.kernel}`);
  return new PlinthError('PLN_E_KERNEL_INCOMPATIBLE', `"${name}" does not accept kernel ${kernel.version}: ${wants.join(', ')}`, {
    plugin: name,
    hint: `install a version of "${name}" made for kernel ${kernel.version}`,
    details: {
      kernel: kernel.version,
      candidates: nodes.map((n) => ({ version: n.candidate.manifest.version, source: n.candidate.source, kernel: n.candidate.manifest.kernel })),
    },
  });
}

/** `name@version`: how a plugin is named where several versions of it may appear. */
export function label(node: Node): string {
  return `${node.name}@${node.candidate.manifest.version}`;
}

function describe(node: Node, context: MessageContext): PlinthError {
  const death = node.death as Death;
  const { name } = node;
  const base = { version: node.candidate.manifest.version, source: node.candidate.source };
  switch (death.kind) {
    case 'kernel':
      return kernelError(name, [node], context.kernel);
    case 'disabled':
      return new PlinthError('PLN_E_PLUGIN_DISABLED', `"${name}" is disabled in ${death.where}`, {
        plugin: name,
        hint: `enable "${name}" in ${death.where}`,
        details: { ...base, disabledIn: death.where },
      });
    case 'missing':
    case 'via':
      return chainError(node, context);
    case 'conflict': {
      const dep = death.dep.name;
      const wants = death.asks.map((a) => `"${label(a.from)}" wants ${a.dep.range}`).join(', ');
      const candidates = [...context.candidatesOf(dep)].reverse();
      const available = candidates.map((n) => `${n.candidate.manifest.version} (${n.candidate.source}${n.death ? `, cannot load: ${codeOf(n.death)}` : ''})`);
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
            available: candidates.map((n) => ({ version: n.candidate.manifest.version, source: n.candidate.source })),
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

/**
 * A dependency that cannot load: follows the chain down to the plugin where
 * the trouble starts, so that the message says the whole story at once.
 */
function chainError(node: Node, context: MessageContext): PlinthError {
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
    const invalid = context.invalidFiles.get(death.dep.name);
    const why = invalid === undefined ? 'which is not installed' : `which could not be loaded (${invalid.code}: ${firstLine(invalid.message)})`;
    return new PlinthError('PLN_E_DEP_MISSING', `${needs}, ${why}`, {
      plugin,
      hint: invalid === undefined ? `install "${death.dep.name}" (${death.dep.range}), or disable "${node.name}"` : `fix the manifest of "${death.dep.name}"`,
      details,
    });
  }
  const root = death.node;
  const rootError = errorOf(root, context);
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

/** Keeps a multi-line manifest error from swamping the message that quotes it. */
function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return end === -1 ? text : `${text.slice(0, end)} …`;
}
