/** A real launcher wired to a real sandbox (bubblewrap, the proxy, the first grant policy), in temp folders; for the sandbox tests. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createLauncher, type LauncherImpl } from '../../plugins/launcher/index.js';
import { createSandbox, probeSandbox, type SandboxImpl } from '../../plugins/sandbox/index.js';
import { createGrantPolicy } from '../../plugins/sandbox/grants/index.js';
import { grantKey } from '../../plugins/sandbox/grants/principal.js';
import { readAudit } from '../../plugins/sandbox/audit.js';
import type { SandboxLimits } from '../../plugins/sandbox/limits.js';
import { NO_PERMISSIONS, type Permissions, type PermissionsInput, permissionsSchema, type Principal } from '../../sdk/index.js';

/** Whether bwrap can run here, and if not why: the same trial the sandbox's probe makes. */
export function bwrapHere(): { ok: true } | { ok: false; why: string } {
  const trial = spawnSync('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'], { encoding: 'utf8' });
  if (trial.error) return { ok: false, why: `bwrap cannot be run: ${trial.error.message}` };
  if (trial.status !== 0) return { ok: false, why: `bwrap cannot create namespaces here: ${trial.stderr.trim()}` };
  if (spawnSync('socat', ['-V']).error) return { ok: false, why: 'socat is not installed (the network relay needs it)' };
  return { ok: true };
}

export interface SandboxRig {
  readonly root: string;
  /** PLINTH_HOME: the audit log is under it. */
  readonly home: string;
  readonly workspace: string;
  readonly pluginDir: string;
  readonly launcher: LauncherImpl;
  readonly sandbox: SandboxImpl;
  /** A downloaded plugin's principal (always confined) declaring `declared`, granted for this session as the user would. */
  principal(id: string, declared?: PermissionsInput): Principal;
  /** Grants `id` these permissions for the session, as a user answering "for this session" would (`settings:workspace`: this rig's workspace). */
  grant(id: string, permissions: Permissions): void;
  /** The audit entries of `plugin`, waiting up to 3 s for one matching `where` to appear (the proxy writes them as it refuses). */
  audited(plugin: string, where: { permission: string; target?: string }): Promise<ReturnType<typeof readAudit>>;
  close(): Promise<void>;
}

/**
 * `home` and `runtimeRoot` let two rigs share a PLINTH_HOME or the folder the private TMPDIRs live
 * in (the OS temp folder, shared by every plinth of a user), as two workspaces of one user do.
 */
export function sandboxRig(options: { bwrap?: string; hostEnv?: NodeJS.ProcessEnv; home?: string; runtimeRoot?: string; workspaceName?: string; limits?: SandboxLimits } = {}): SandboxRig {
  const root = mkdtempSync(join(tmpdir(), 'plinth-sandbox-test-'));
  const home = options.home ?? join(root, 'plinth-home');
  const workspace = join(root, options.workspaceName ?? 'workspace');
  const pluginDir = join(root, 'plugin');
  for (const dir of [home, workspace, pluginDir]) mkdirSync(dir, { recursive: true });
  let sandbox: SandboxImpl | undefined;
  const launcher = createLauncher({ sandbox: async () => sandbox, ...(options.hostEnv && { hostEnv: options.hostEnv }) });
  // No terminal in tests: what is not granted is refused (PLN_E_PERM_NOT_GRANTED); principal() grants what it declares.
  const policy = createGrantPolicy({ home, io: () => ({ input: new PassThrough(), output: new PassThrough() }) });
  sandbox = createSandbox({
    home,
    workspace,
    userHome: join(root, 'user-home'),
    runtimeRoot: options.runtimeRoot ?? join(root, 'runtime'),
    ...(options.limits !== undefined && { limits: options.limits }),
    policy,
    probe: () =>
      probeSandbox({
        ...(options.bwrap !== undefined && { program: options.bwrap }),
        run: async (file, args) => {
          const result = await launcher.run({ owner: 'sandbox', program: file, args: [...args], timeoutMs: 5000 });
          return { exitCode: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString(), ...(result.spawnError !== undefined && { spawnError: result.spawnError }) };
        },
      }),
  });
  const confined = sandbox;
  return {
    root,
    home,
    workspace,
    pluginDir,
    launcher,
    sandbox: confined,
    grant(id, permissions) {
      // The workspace's settings are granted per workspace: this rig's.
      policy.store.setSession(grantKey({ id, dir: workspace }), { version: 'test', permissions });
    },
    principal(id, declared) {
      const permissions = declared === undefined ? NO_PERMISSIONS : permissionsSchema.parse(declared);
      policy.store.setSession(id, { version: 'test', permissions });
      return { id, source: 'downloaded', dir: pluginDir, declared: permissions, label: `hook "escape" of plugin "${id}"` };
    },
    async audited(plugin, where) {
      const matches = () => readAudit(home, { plugin }).filter((e) => e.permission === where.permission && (where.target === undefined || e.target === where.target));
      for (let i = 0; i < 60 && matches().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      return matches();
    },
    async close() {
      await launcher.close();
      await confined.close();
    },
  };
}
