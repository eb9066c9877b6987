/**
 * `plinth/testing`: a kernel for testing one plugin in a few lines: a temporary user folder, no
 * builtin plugins, logs captured, and one call to clean everything up.
 *
 * @example
 * const kernel = await createTestKernel({ pluginDirs: [pluginFolder] });
 * const decision = await kernel.emit('before_tool', { tool: 'rm' });
 * await kernel.dispose();
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BootReport, type InlinePlugin, Kernel, type ShutdownReport } from '../kernel/kernel.js';
import type { LogLevel } from '../internal/terminal/log.js';

/** What {@link createTestKernel} boots: every folder defaults to a fresh temporary one. */
export interface TestKernelOptions {
  /** Plugins given in memory. */
  plugins?: readonly InlinePlugin[];
  /** Plugin folders (a plugin folder itself, or a folder of plugins). */
  pluginDirs?: readonly string[];
  /** Written as the user's settings.json. */
  settings?: Record<string, unknown>;
  /** Load plinth's builtin plugins too (default false). */
  builtin?: boolean;
  /** Workspace folder; default a fresh one inside the temporary home. */
  workspace?: string;
  /** A named profile from the settings. */
  profile?: string;
  /** The environment plugins see; default empty, so tests do not depend on the machine. */
  env?: Record<string, string | undefined>;
  /** Default `debug`: every line is kept in `logs`. */
  logLevel?: LogLevel;
}

/** A booted kernel, with its boot report, its captured log lines and `dispose`. */
export type TestKernel = Kernel & {
  readonly report: BootReport;
  readonly logs: string[];
  /** Shuts down and removes the temporary folders. */
  dispose(): Promise<ShutdownReport>;
};

/** Creates and boots a kernel in a temporary home. */
export async function createTestKernel(options: TestKernelOptions = {}): Promise<TestKernel> {
  const home = await mkdtemp(join(tmpdir(), 'plinth-test-'));
  const workspace = options.workspace ?? join(home, 'workspace');
  await mkdir(workspace, { recursive: true });
  if (options.settings) await writeFile(join(home, 'settings.json'), JSON.stringify(options.settings, null, 2));
  const logs: string[] = [];
  const kernel = new Kernel({
    home,
    workspace,
    builtin: options.builtin ?? false,
    env: options.env ?? {},
    logLevel: options.logLevel ?? 'debug',
    logSink: (line) => logs.push(line),
    ...(options.plugins && { plugins: options.plugins }),
    ...(options.pluginDirs && { pluginDirs: options.pluginDirs }),
    ...(options.profile !== undefined && { profile: options.profile }),
  });
  const dispose = async (): Promise<ShutdownReport> => {
    try {
      return await kernel.shutdown();
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  };
  let report: BootReport;
  try {
    report = await kernel.boot();
  } catch (error) {
    await dispose();
    throw error;
  }
  return Object.assign(kernel, { report, logs, dispose });
}
