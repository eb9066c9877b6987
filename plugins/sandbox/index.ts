/**
 * The sandbox plugin: provides `sandbox` (contract: sdk/contracts/sandbox.ts),
 * which the launcher asks before every launch that acts for a principal, and
 * (the grants side, grants/register.ts) `capabilities`, the `plinth perms`
 * commands and the sandbox line of `plinth up`. Eager, so that `plinth up`
 * can say plainly when no OS sandbox is available (the probe runs only then,
 * or at the first confined launch). Its teardown closes every per-principal
 * network proxy.
 */
import { homedir } from 'node:os';
import { definePlugin, parseSettings, type SandboxAvailability } from 'plinth/sdk';
import { z } from 'zod';
import { createSandbox } from './confine.js';
import { limitsFrom } from './limits.js';
import { readDefaultMode, registerGrants } from './grants/index.js';
import { probeSandbox } from './probe.js';

export { createSandbox, type SandboxImpl, type SandboxOptions } from './confine.js';
export { probeSandbox } from './probe.js';

const settingsSchema = z.object({
  bwrap: z.string().optional(),
  answerTimeoutSeconds: z.number().positive().max(86_400).optional(),
  maxProcesses: z.number().int().min(8).max(1_000_000).optional(),
  maxFileSizeMB: z.number().int().min(1).max(1_048_576).optional(),
  tmpSizeMB: z.number().int().min(1).max(1_048_576).optional(),
});

export default definePlugin({
  setup(kernel, ctx) {
    const settings = parseSettings('sandbox', settingsSchema, ctx.settings);
    let probed: Promise<SandboxAvailability> | undefined;
    // Found once, by running bubblewrap through the launcher (a launch without actingFor: no recursion).
    const availability = (): Promise<SandboxAvailability> =>
      (probed ??= kernel.get('launcher').then((launcher) =>
        probeSandbox({
          ...(settings.bwrap !== undefined && { program: settings.bwrap }),
          run: async (file, args) => {
            const result = await launcher.run({ owner: 'sandbox', purpose: 'bubblewrap probe', program: file, args: [...args], timeoutMs: 5000 });
            return { exitCode: result.exitCode, stdout: result.stdout.toString('utf8'), stderr: result.stderr.toString('utf8'), ...(result.spawnError !== undefined && { spawnError: result.spawnError }) };
          },
        }),
      ));
    const policy = registerGrants(kernel, ctx, { availability, ...(settings.answerTimeoutSeconds !== undefined && { answerTimeoutMs: settings.answerTimeoutSeconds * 1000 }) });
    const sandbox = createSandbox({ home: ctx.paths.home, workspace: ctx.paths.workspace, userHome: homedir(), policy, probe: availability, limits: limitsFrom(settings), log: ctx.log });
    kernel.provide('sandbox', sandbox);
    // A `sandbox.default` that is dropped (a workspace "open", a value that is neither) is said once per command, as the
    // kernel says the other ignored workspace settings, and listed by `plinth config validate`.
    for (const problem of readDefaultMode(kernel.configLayers).problems) ctx.log.warn(`${problem.code}: ${problem.message}\n  fix: ${problem.hint}`);
    kernel.hooks.validate.tap((check) => {
      for (const problem of readDefaultMode(kernel.configLayers).problems) if (check.files.includes(problem.file)) check.add(problem);
    });
    return () => sandbox.close();
  },
});
