/** `plinth trust list | approve | revoke`. */
import { type CommandSpec, PlinthError, type PluginInfo } from 'plinth/sdk';
import { closestName } from 'plinth/internal';
import { TRUST_KINDS } from './fingerprint.js';
import { trustSourceOf } from './gate.js';
import { changes } from './snapshot.js';
import { type TrustKind, type TrustRecord, type TrustRequest, type TrustStore, findEntry, putEntry, removeEntry } from './store.js';
import type { TrustService } from 'plinth/sdk';
import { type CommandContext, approveCommand, describeSubject, printable, shortFingerprint, shownLines } from './verdict.js';

const KIND_ARGS = [
  { name: 'kind', required: true, description: `What it is: ${TRUST_KINDS.join(', ')}` },
  { name: 'id', required: true, description: 'Its id: a hook id (e.g. workspace:lint-guard), a plugin name, a server name' },
] as const;

export interface TrustCommandsOptions {
  readonly store: TrustStore;
  readonly service: TrustService;
  readonly where: () => CommandContext;
  /** Every plugin the kernel resolved, by name (from the `manifest` hook): `trust approve plugin` fingerprints it itself. */
  readonly plugins: () => ReadonlyMap<string, PluginInfo>;
}

/** The commands the manifest declares. */
export function trustCommands({ store, service, where, plugins }: TrustCommandsOptions): CommandSpec[] {
  return [
    {
      name: 'trust list',
      async run({ json, out }) {
        const data = await store.read();
        const requests = data.requests.map((r) => ({ ...r, approveCommand: approveCommand(r.kind, r.id, where(), process.env, r.workspace) }));
        if (json) return out.json({ file: store.file, approvals: data.approvals, requests });
        if (data.approvals.length === 0 && requests.length === 0) {
          out.print(`Nothing approved or pinned yet (${store.file}).`);
          return;
        }
        if (data.approvals.length > 0) {
          const rows = data.approvals.map((r) => [r.kind, printable(r.id), r.source, r.how, shortFingerprint(r.fingerprint), when(r.at), printable(r.workspace ?? '-'), printable(firstLine(r.summary))]);
          out.print(table(['KIND', 'ID', 'SOURCE', 'STATE', 'FINGERPRINT', 'SINCE', 'WORKSPACE', 'SUMMARY'], rows));
        }
        if (requests.length > 0) {
          if (data.approvals.length > 0) out.print('');
          out.print('Waiting for approval:');
          const rows = requests.map((r) => [r.kind, printable(r.id), r.source, r.state, shortFingerprint(r.fingerprint), r.approveCommand]);
          out.print(table(['KIND', 'ID', 'SOURCE', 'STATE', 'FINGERPRINT', 'APPROVE WITH'], rows));
          // What each would run, to review before approving it.
          for (const r of requests) {
            if (r.shown === undefined) continue;
            const previous = findEntry(data.approvals, r);
            const changed = previous ? changes(previous.shown, r.shown) : [];
            out.print(['', `${describeSubject(r)}:`, ...shownLines(r.shown, '  '), ...(changed.length > 0 ? ['  What changed:', ...changed.map((line) => `    ${printable(line)}`)] : [])].join('\n'));
          }
        }
      },
    },
    {
      name: 'trust approve',
      args: KIND_ARGS,
      async run({ args, json, out }) {
        const kind = kindArg(args[0], 'trust approve');
        const id = args[1]!;
        const here = { kind, id, workspace: where().workspace };
        const before = await store.read();
        const previous = findEntry(before.approvals, here) ?? findEntry(before.approvals, { kind, id });
        const plugin = kind === 'plugin' ? plugins().get(id) : undefined;
        const source = plugin ? trustSourceOf(plugin.source) : undefined;
        let approved: TrustRecord | undefined;
        if (plugin && source !== undefined) {
          // This command does not load plugins (it is standalone), so nothing refused this one in this run: approve its folder as it is now.
          const verdict = await service.approve(await service.pluginSubject(plugin, source));
          const after = await store.read();
          approved = findEntry(after.approvals, here) ?? findEntry(after.approvals, { kind, id });
          if (approved?.fingerprint !== verdict.fingerprint) approved = undefined;
        } else if (plugin) {
          if (json) return out.json({ approved: null, needless: true });
          out.print(`plugin "${printable(id)}" is a ${plugin.source} plugin: it needs no approval.`);
          return;
        } else {
          // Approves the subject exactly as it was when it was refused: the fingerprint recorded then (this workspace's, for a workspace subject).
          approved = await store.update((data) => {
            const request = findEntry(data.requests, here) ?? findEntry(data.requests, { kind, id });
            if (!request) return { changed: false, result: undefined };
            const record: TrustRecord = { ...pick(request), how: 'approved', at: new Date().toISOString() };
            putEntry(data.approvals, record);
            removeEntry(data.requests, request);
            return { changed: true, result: record };
          });
        }
        if (!approved) {
          const approvals = (await store.read()).approvals;
          const existing = findEntry(approvals, here) ?? findEntry(approvals, { kind, id });
          if (existing?.how === 'approved') {
            if (json) return out.json({ approved: existing, already: true });
            out.print(`${describeSubject(existing)} is already approved (fingerprint ${shortFingerprint(existing.fingerprint)}).`);
            return;
          }
          const waiting = (await store.read()).requests.filter((r) => r.kind === kind).map((r) => r.id);
          const near = existing ? undefined : closestName(id, kind === 'plugin' ? [...waiting, ...[...plugins().values()].filter((p) => trustSourceOf(p.source) !== undefined).map((p) => p.name)] : waiting);
          throw new PlinthError('PLN_E_TRUST_NOT_FOUND', `no ${kind} "${id}" is waiting for approval${existing ? ` (it is ${existing.how} at fingerprint ${shortFingerprint(existing.fingerprint)})` : ''}`, {
            plugin: 'trust',
            hint: near
              ? `did you mean "${near}"? plinth trust approve ${kind} ${near}`
              : kind === 'hook'
                ? `approve a hook as it is now with \`plinth hooks trust ${id}\``
                : 'plinth records a subject when it refuses to run it; run what uses it first, then approve it. `plinth trust list` shows what waits',
          });
        }
        const changed = previous && previous.fingerprint !== approved.fingerprint && approved.shown ? changes(previous.shown, approved.shown) : [];
        if (json) return out.json({ approved, ...(previous && previous.fingerprint !== approved.fingerprint && { changed }) });
        out.print(`Approved ${describeSubject(approved)} (fingerprint ${shortFingerprint(approved.fingerprint)}): ${printable(firstLine(approved.summary))}`);
        if (approved.shown) out.print(shownLines(approved.shown, '  ').join('\n'));
        if (changed.length > 0) out.print(['Changed since the previous approval:', ...changed.map((line) => `  ${printable(line)}`)].join('\n'));
      },
    },
    {
      name: 'trust revoke',
      args: KIND_ARGS,
      async run({ args, json, out }) {
        const kind = kindArg(args[0], 'trust revoke');
        const id = args[1]!;
        const approvals = (await store.read()).approvals;
        const before = findEntry(approvals, { kind, id, workspace: where().workspace }) ?? findEntry(approvals, { kind, id });
        const revoked = await service.revoke(kind, id);
        if (!revoked) {
          const near = closestName(id, approvals.filter((a) => a.kind === kind).map((a) => a.id));
          throw new PlinthError('PLN_E_TRUST_NOT_FOUND', `nothing is approved or pinned for ${kind} "${id}"`, {
            plugin: 'trust',
            hint: near ? `did you mean "${near}"? plinth trust revoke ${kind} ${near}` : '`plinth trust list` shows every approval and pin',
          });
        }
        if (json) return out.json({ revoked: { kind, id } });
        const next = before?.source === 'user' ? 'it will be pinned again the next time it runs' : 'it will need approval again before it runs';
        out.print(`Revoked ${before ? describeSubject(before) : `${kind} "${printable(id)}"`}: ${next}.`);
      },
    },
  ];
}

function kindArg(value: string | undefined, command: string): TrustKind {
  if ((TRUST_KINDS as readonly unknown[]).includes(value)) return value as TrustKind;
  const near = value === undefined ? undefined : closestName(value, TRUST_KINDS);
  throw new PlinthError('PLN_E_CLI_USAGE', `unknown kind "${value ?? ''}": expected ${TRUST_KINDS.join(', ')}`, {
    plugin: 'trust',
    hint: `${near ? `did you mean "${near}"? ` : ''}usage: plinth ${command} <kind> <id>`,
  });
}

function pick(request: TrustRequest) {
  const { kind, id, source, fingerprint, summary, workspace, shown } = request;
  return { kind, id, source, fingerprint, summary, ...(workspace !== undefined && { workspace }), ...(shown !== undefined && { shown }) };
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/** `2026-01-26 14:03` in UTC, as recorded. */
function when(iso: string): string {
  return iso.slice(0, 16).replace('T', ' ');
}

function table(head: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}
