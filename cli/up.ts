/**
 * `plinth up`: boot everything the configuration asks for, print a status
 * table, stay up until SIGINT, SIGTERM or SIGHUP, then shut down cleanly.
 *
 * `--once` prints the same status and exits: a check that the configuration
 * boots and its servers come up. The status waits for what it reports (each
 * MCP server's first connection attempt: a server that is slow to start is
 * waited for, up to the mcp plugin's limit; one that failed once is shown
 * with its error, not retried with backoff first), and says what the wait
 * cost: the whole time since the process started and each section's share
 * (`Status in … ms` on a terminal, `timings` with `--json`).
 */
import { type CommandOutput, type CommandSpec, EXIT } from '../sdk/commands.js';
import type { PluginStatus, StatusSection } from '../sdk/plugin.js';
import type { BootReport, Kernel, ShutdownReport } from '../kernel/kernel.js';
import { table } from './output.js';
import type { ProblemLog } from './problems.js';

/** `problemLog`: the CLI's held log lines, printed as they come once plinth is up. */
export function upCommand(kernel: Kernel, problemLog?: ProblemLog): CommandSpec {
  return {
    name: 'up',
    options: { once: { type: 'boolean', description: 'Print the status and exit instead of staying up' } },
    async run({ options, json, out, signal }) {
      const report = await kernel.boot();
      const problems = countProblems(report);
      // Background work (MCP servers, watchers, health checks) starts before the
      // status is printed, so the status shows what is really running.
      const serveStart = performance.now();
      await kernel.serve();
      const { sections, timings } = await timedSections(kernel, report, serveStart);
      if (json) out.json({ ...bootJson(report), timings, ...Object.fromEntries(sections.map((s) => [s.key, s.json])) });
      // One print, so that the problems the log held back are matched against the whole status at once.
      else out.print([...bootLines(report), ...sections.flatMap(sectionLines), '', timingLine(timings)].join('\n'));

      if (options.once !== true) {
        if (!json) out.note('plinth is up; press Ctrl-C to stop');
        // The status has shown what boot found; what goes wrong from now on is printed when it happens.
        problemLog?.live();
        await new Promise<void>((resolve) => {
          if (signal.aborted) return resolve();
          // Signal listeners do not keep Node's event loop alive: without a
          // handle, `up` would exit at once (code 13) when no plugin holds one.
          const keepAlive = setInterval(() => undefined, 2 ** 30);
          signal.addEventListener('abort', () => {
            clearInterval(keepAlive);
            resolve();
          }, { once: true });
        });
        if (!json) out.note('shutting down…');
      }
      const shutdown = await kernel.shutdown();
      if (!json) printShutdown(out, shutdown);
      return problems > 0 ? EXIT.PLUGINS : EXIT.OK;
    },
  };
}

/**
 * Where the time went until the status was ready, in ms: `wallMs` since the
 * process started (module loading included, what a user waits for), `startMs`
 * the rest of the time before `serve` that is not the boot (loading plinth's
 * modules, reading the command line and the settings), `bootMs` (the boot report's `durationMs`), `serveMs` (the
 * `serve` hook: starting background work), `statusMs` (collecting the
 * sections), and `sections`: each section's share of that, by its key (the
 * time since the previous section was added: the `status` taps run one after
 * the other, and the MCP servers' tap waits for their starts).
 */
export interface UpTimings {
  readonly wallMs: number;
  readonly startMs: number;
  readonly bootMs: number;
  readonly serveMs: number;
  readonly statusMs: number;
  readonly sections: Readonly<Record<string, number>>;
}

/** The status sections (as `kernel.statusSections()` collects them), each timed. */
async function timedSections(kernel: Kernel, report: BootReport, serveStart: number): Promise<{ sections: StatusSection[]; timings: UpTimings }> {
  const statusStart = performance.now();
  const sections: StatusSection[] = [];
  const took: Record<string, number> = {};
  let last = statusStart;
  await kernel.hooks.status.promise({
    add(section) {
      const now = performance.now();
      sections.push(section);
      took[section.key] = round((took[section.key] ?? 0) + now - last);
      last = now;
    },
  });
  const end = performance.now();
  const bootMs = round(report.durationMs);
  // performance.now() counts from the process's start; the CLI booted the kernel before this command ran.
  const startMs = round(Math.max(0, serveStart - report.durationMs));
  return { sections, timings: { wallMs: round(end), startMs, bootMs, serveMs: round(statusStart - serveStart), statusMs: round(end - statusStart), sections: took } };
}

/** `Status in 712 ms since start: 75 ms to start, boot 197 ms, MCP servers 420 ms (59%), …`. */
function timingLine(t: UpTimings): string {
  const share = (ms: number) => `${Math.round((ms / Math.max(t.wallMs, 1)) * 100)}%`;
  const parts = [`start ${t.startMs} ms`, `boot ${t.bootMs} ms`];
  if (t.serveMs >= 1) parts.push(`serve ${t.serveMs} ms`);
  const slow = Object.entries(t.sections).filter(([, ms]) => ms >= 1).sort((a, b) => b[1] - a[1]);
  for (const [key, ms] of slow) parts.push(`${key === 'mcpServers' ? 'waiting for MCP servers' : key} ${ms} ms (${share(ms)})`);
  return `Status in ${t.wallMs} ms since plinth started: ${parts.join(', ')}.`;
}

/** Plugins that should have loaded and did not, plus unreadable manifests. Disabled plugins are not problems. */
function countProblems(report: BootReport): number {
  const broken = report.plugins.filter(
    (p) => p.state === 'failed' || p.state === 'skipped' || (p.state === 'excluded' && !isDisabled(p)),
  );
  return broken.length + report.invalid.length;
}

function isDisabled(p: PluginStatus): boolean {
  return p.error?.code === 'PLN_E_PLUGIN_DISABLED' || p.error?.code === 'PLN_E_DEP_DISABLED';
}

function bootJson(report: BootReport) {
  return {
    ready: true,
    durationMs: round(report.durationMs),
    profile: report.config.profile ?? null,
    settings: report.config.files,
    plugins: report.plugins.map((p) => ({ ...p, ...(p.loadMs !== undefined && { loadMs: round(p.loadMs) }) })),
    invalid: report.invalid.map((e) => e.toJSON()),
  };
}

function bootLines(report: BootReport): string[] {
  const lines: string[] = [];
  const rows = report.plugins.map((p) => [
    p.name,
    p.version,
    p.source,
    p.state,
    p.loadMs === undefined ? '-' : `${round(p.loadMs)} ms`,
    p.error ? p.error.code : p.provides.join(', '),
  ]);
  if (rows.length === 0) lines.push('No plugins found.');
  else lines.push(table(['PLUGIN', 'VERSION', 'SOURCE', 'STATE', 'LOAD', 'PROVIDES / REASON'], rows));

  const count = (state: string) => report.plugins.filter((p) => p.state === state).length;
  const parts = [`${count('active')} active`, `${count('lazy')} lazy`];
  for (const state of ['failed', 'skipped', 'excluded']) if (count(state) > 0) parts.push(`${count(state)} ${state}`);
  if (report.invalid.length > 0) parts.push(`${report.invalid.length} plugin folder(s) not usable (invalid manifest, or a link out of its folder)`);
  lines.push('', `Ready in ${round(report.durationMs)} ms: ${parts.join(', ')}.`);
  const settings = report.config.files.filter((f) => f.exists).map((f) => `${f.scope} ${f.file}`);
  lines.push(`Settings: ${settings.length > 0 ? settings.join('; ') : 'none (embedded default)'}${report.config.profile ? `; profile ${report.config.profile}` : ''}.`);

  const reasons = report.plugins.filter((p) => p.error);
  if (reasons.length > 0 || report.invalid.length > 0) {
    lines.push('');
    for (const p of reasons) lines.push(...reason(`${p.name}: `, p.error!));
    for (const e of report.invalid) lines.push(...reason('', e));
  }
  return lines;
}

/** A plugin's reason as the status shows it: code and message, then the fix. */
function reason(prefix: string, error: { code: string; message: string; hint?: string }): string[] {
  return [`${prefix}${error.code}: ${error.message}`, ...(error.hint ? [`  fix: ${error.hint}`] : [])];
}

function sectionLines(section: StatusSection): string[] {
  if (section.line !== undefined) return ['', section.line];
  return ['', `${section.title}:`, section.rows.length > 0 ? table(section.head, section.rows) : '  none'];
}

function printShutdown(out: CommandOutput, report: ShutdownReport): void {
  const errors = report.errors.length > 0 ? `, ${report.errors.length} problem(s)` : '';
  out.note(`Stopped ${report.stopped.length} plugin(s) in ${round(report.durationMs)} ms${errors}.`);
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
