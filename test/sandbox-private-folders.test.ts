/**
 * Private HOME and TMPDIR are per principal and per workspace (and per version of a downloaded
 * plugin): a workspace hook of one repository that plants something there (a Python `.pth`, an rc
 * file) never finds it run by the hook of another repository, under one PLINTH_HOME or two.
 * Real children under real bubblewrap, through the real launcher.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { NO_PERMISSIONS, type Principal } from '../sdk/index.js';
import { type SandboxRig, bwrapHere, sandboxRig } from './support/sandbox.js';

const here = bwrapHere();
if (!here.ok) console.warn(`private folders suite SKIPPED: ${here.why}`);

/** What the hooks plugin hands the launcher for a hook of the workspace's settings. */
const workspaceHook = (rig: SandboxRig): Principal => ({ id: 'settings:workspace', source: 'workspace', dir: rig.workspace, declared: NO_PERMISSIONS, label: 'hook "plant" from workspace settings' });

const PLANT = 'echo "import os" > "$HOME/evil.pth" && echo planted > "$TMPDIR/evil" && echo "$HOME|$TMPDIR"';
const LOOK = 'for f in "$HOME/evil.pth" "$TMPDIR/evil"; do if [ -e "$f" ]; then echo "SEEN $f"; fi; done; echo "$HOME|$TMPDIR"';

describe.skipIf(!here.ok)('private HOME and TMPDIR (real bubblewrap)', () => {
  const rigs: SandboxRig[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'plinth-private-'));
  const rig = (options: Parameters<typeof sandboxRig>[0]): SandboxRig => {
    const made = sandboxRig(options);
    rigs.push(made);
    return made;
  };
  const run = async (r: SandboxRig, script: string, actingFor: Principal = workspaceHook(r)) => {
    const result = await r.launcher.run({ owner: 'hooks', program: 'sh', args: ['-c', script], cwd: r.workspace, timeoutMs: 20_000, actingFor });
    expect(result.stderr.toString()).toBe('');
    expect(result.exitCode).toBe(0);
    return result.stdout.toString();
  };

  afterAll(async () => {
    for (const r of rigs) {
      await r.close();
      rmSync(r.root, { recursive: true, force: true });
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  test("two workspaces under one PLINTH_HOME: workspace B's hook does not see what workspace A's hook left in its HOME and TMPDIR", async () => {
    const a = rig({ workspaceName: 'repo' });
    // Same PLINTH_HOME, same OS temp folder, another repository (of the same folder name, even).
    const b = rig({ home: a.home, runtimeRoot: join(a.root, 'runtime'), workspaceName: 'repo' });
    const planted = await run(a, PLANT);
    const seen = await run(b, LOOK);
    expect(seen).not.toContain('SEEN');
    expect(seen.trim()).not.toBe(planted.trim());
    // The same workspace keeps its own folders from one launch to the next.
    expect(await run(a, LOOK)).toContain('SEEN');
  });

  test("two PLINTH_HOMEs sharing the OS temp folder: the other's TMPDIR is not this one's", async () => {
    const runtimeRoot = join(scratch, 'os-tmp');
    mkdirSync(runtimeRoot);
    const a = rig({ runtimeRoot });
    const b = rig({ runtimeRoot });
    await run(a, PLANT);
    expect(await run(b, LOOK)).not.toContain('SEEN');
  });

  test('two versions of one downloaded plugin do not share their private folders', async () => {
    const r = rig({});
    const version = (v: string): Principal => {
      const dir = join(r.root, 'plinth-home', 'plugins', '.versions', `greeter@${v}`);
      mkdirSync(dir, { recursive: true });
      r.grant('greeter', NO_PERMISSIONS);
      return { id: 'greeter', source: 'downloaded', dir, declared: NO_PERMISSIONS, label: `hook "h" of plugin "greeter" ${v}` };
    };
    await run(r, PLANT, version('1.0.0'));
    expect(await run(r, LOOK, version('1.0.1'))).not.toContain('SEEN');
  });
});
