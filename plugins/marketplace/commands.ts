/** `plinth ext search | install | outdated | update | rollback | uninstall`. */
import { type ApprovalRequest, type CommandOutput, type CommandSpec, type GrantsService, type InstallResult, type MarketNote, type MarketplaceService, PlinthError, askYesNo, formatTable, grantReviewLines, processTerminal, safeLine, whyNotAsk } from 'plinth/sdk';
import { describeDeclarations } from './declared.js';
import { progressBar } from './progress.js';

const YES = { yes: { type: 'boolean', short: 'y', description: 'Approve what the plugins declare without asking' } } as const;

/** `grants`: the sandbox's service when a plugin provides it: what an installed or updated plugin declares beyond its grant is asked about at once. */
export function marketplaceCommands(service: () => Promise<MarketplaceService>, grants: () => Promise<GrantsService | undefined> = async () => undefined): CommandSpec[] {
  const review = async (result: InstallResult, out: CommandOutput, signal: AbortSignal): Promise<void> => {
    for (const change of result.changes) for (const line of grantReviewLines(await (await grants())?.review(change.name, { signal }))) out.note(line);
  };
  return [
    {
      name: 'ext search',
      args: [{ name: 'text', required: true, description: 'Words to look for in names, keywords and descriptions', variadic: true }],
      async run({ args, json, out, signal }) {
        const result = await (await service()).search(args.join(' '), { signal });
        if (json) return out.json(result);
        printNotes(out, result.notes);
        if (result.hits.length === 0) return out.print(`No plugin matches "${safeLine(result.query)}".`);
        out.print(formatTable(['NAME', 'VERSION', 'REGISTRY', 'DESCRIPTION'], result.hits.map((h) => [safeLine(h.name), safeLine(h.version), h.registry, safeLine(h.description)])));
      },
    },
    {
      name: 'ext install',
      args: [{ name: 'plugin', required: true, description: 'name, name@range, name@tag, or the path of a .tgz' }],
      options: { registry: { type: 'string', value: '<url>', description: 'Install from this registry instead of the configured ones' }, ...YES },
      async run({ args, options, json, out, signal }) {
        const registry = typeof options.registry === 'string' ? options.registry : undefined;
        const result = await withProgress((progress) => service().then((s) => s.install(args[0]!, { ...(registry && { registry }), ...installOptions(options, out, signal, progress) })));
        report(out, json, result, 'installed');
        await review(result, out, signal);
      },
    },
    {
      name: 'ext outdated',
      async run({ json, out, signal }) {
        const result = await (await service()).outdated({ signal });
        if (json) return out.json(result);
        printNotes(out, result.notes);
        if (result.plugins.length === 0) return out.print('Every installed plugin is up to date.');
        out.print(formatTable(['NAME', 'CURRENT', 'WANTED', 'LATEST', 'RANGE', 'REGISTRY'], result.plugins.map((p) => [p.name, p.current, p.wanted, p.latest, p.range, p.registry])));
      },
    },
    {
      name: 'ext update',
      args: [{ name: 'name', description: 'The plugin to update (none, or --all: every installed plugin)' }],
      options: { all: { type: 'boolean', description: 'Update every installed plugin' }, latest: { type: 'boolean', description: 'Cross the recorded range: the newest version' }, ...YES },
      async run({ args, options, json, out, signal }) {
        if (args[0] !== undefined && options.all === true) throw new PlinthError('PLN_E_CLI_USAGE', '"ext update" takes a name or --all, not both', { hint: 'usage: plinth ext update [name|--all] [--latest]' });
        const result = await withProgress((progress) => service().then((s) => s.update(args[0] === undefined ? [] : [args[0]], { latest: options.latest === true, ...installOptions(options, out, signal, progress) })));
        report(out, json, result, 'updated');
        await review(result, out, signal);
      },
    },
    {
      name: 'ext rollback',
      args: [{ name: 'name', required: true, description: 'The plugin to take back to its previous version' }],
      async run({ args, json, out, signal }) {
        report(out, json, await (await service()).rollback(args[0]!, { signal }), 'rolled back');
      },
    },
    {
      name: 'ext uninstall',
      args: [{ name: 'name', required: true, description: 'The installed plugin to remove' }],
      async run({ args, json, out }) {
        const result = await (await service()).uninstall(args[0]!);
        if (json) return out.json(result);
        out.print(`Uninstalled ${result.name}@${result.version}.`);
      },
    },
  ];
}

function installOptions(options: Readonly<Record<string, unknown>>, out: CommandOutput, signal: AbortSignal, progress: (name: string, received: number, total: number | undefined) => void) {
  const terminal = processTerminal();
  const why = whyNotAsk(terminal);
  return {
    yes: options.yes === true,
    signal,
    progress,
    approve: async (request: ApprovalRequest) => {
      for (const line of approvalLines(request)) out.note(line);
      if (why !== undefined) return false;
      return askYesNo(`Install ${request.plugins.map((p) => `${p.name}@${p.version}`).join(', ')}? [y/N] `, terminal, signal);
    },
  };
}

/** What the user approves: each plugin's declarations, and for an update what changed. */
export function approvalLines(request: ApprovalRequest): string[] {
  const lines: string[] = [];
  for (const p of request.plugins) {
    lines.push(`${safeLine(p.name)}@${safeLine(p.version)}${p.from ? ` (now ${safeLine(p.from)})` : ''} declares:`, ...describeDeclarations(p.declarations));
    if (p.changed && p.changed.length > 0) lines.push('  What changed:', ...p.changed.map((c) => `    ${c}`));
  }
  return lines;
}

async function withProgress<T>(fn: (progress: (name: string, received: number, total: number | undefined) => void) => Promise<T>): Promise<T> {
  const bar = progressBar();
  try {
    return await fn(bar.update);
  } finally {
    bar.done();
  }
}

function report(out: CommandOutput, json: boolean, result: InstallResult, verb: string): void {
  if (json) return out.json(result);
  printNotes(out, result.notes);
  if (result.changes.length === 0) return out.print('Nothing to do: already installed.');
  for (const c of result.changes) {
    out.print(`${verb} ${c.name}@${c.to}${c.from ? ` (was ${c.from})` : ''} from ${c.registry}${c.loaded ? ', loaded' : ''}`);
  }
}

function printNotes(out: CommandOutput, notes: readonly MarketNote[]): void {
  for (const note of notes) out.note(`plinth: warning: ${note.message}`);
}
