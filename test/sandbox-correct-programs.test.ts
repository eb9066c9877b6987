/**
 * The sandbox must not change what a correct program sees: bubblewrap is the
 * boundary, and nothing added beside it may turn a missing file into an
 * exception, or refuse what the program may do inside its grants. A node
 * program that probes missing files, walks up its folders (as npm does),
 * reads /proc, starts a shell and a worker gives the same answers confined
 * (for a downloaded plugin, through the real launcher and real bubblewrap)
 * as unconfined. Skipped where bubblewrap cannot run.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type SandboxRig, bwrapHere, sandboxRig } from './support/sandbox.js';

const here = bwrapHere();
if (!here.ok) console.warn(`sandbox correct-programs suite SKIPPED: ${here.why}`);

/** What the probe reports: each answer as a value or an error code, never a message (paths differ inside). */
const PROBE = `
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { Worker } = require('worker_threads');
const code = (f) => { try { return f(); } catch (e) { return 'threw ' + e.code; } };
const answers = {};
answers.existsMissingOutside = code(() => fs.existsSync('/nonexistent-plinth-probe/config.json'));
answers.existsMissingInside = code(() => fs.existsSync(path.join(process.cwd(), 'missing.json')));
answers.existsPresent = code(() => fs.existsSync(path.join(process.cwd(), 'present.json')));
answers.lstatMissing = code(() => fs.lstatSync('/nonexistent-plinth-probe/x') && 'found');
answers.statMissingHome = code(() => fs.statSync(path.join(process.env.HOME, '.config', 'nothing-here', 'x')) && 'found');
answers.readPresent = code(() => fs.readFileSync(path.join(process.cwd(), 'present.json'), 'utf8'));
// npm walks up from its folder (lstat of each parent) to find a project and its .npmrc.
const parents = [];
for (let dir = process.cwd(); ; dir = path.dirname(dir)) { parents.push(code(() => fs.lstatSync(dir).isDirectory())); if (dir === path.dirname(dir)) break; }
answers.parentsAreFolders = parents.every((p) => p === true) ? true : parents;
answers.procSelf = code(() => fs.readFileSync('/proc/self/stat', 'utf8').length > 0);
answers.shell = code(() => spawnSync('/bin/sh', ['-c', 'echo from-a-shell'], { encoding: 'utf8' }).stdout.trim());
answers.writeTmp = code(() => { const f = path.join(require('os').tmpdir(), 'probe-' + process.pid); fs.writeFileSync(f, 'x'); fs.unlinkSync(f); return true; });
new Worker('require("worker_threads").parentPort.postMessage(6 * 7)', { eval: true }).on('message', (m) => {
  answers.worker = m;
  process.stdout.write(JSON.stringify(answers));
  process.exit(0);
}).on('error', (e) => { answers.worker = 'threw ' + e.code; process.stdout.write(JSON.stringify(answers)); });
`;

describe.skipIf(!here.ok)('a correct program sees the same confined as unconfined', () => {
  let rig: SandboxRig;
  let probe: string;

  beforeAll(() => {
    rig = sandboxRig();
    probe = join(rig.pluginDir, 'probe.js');
    writeFileSync(probe, PROBE);
    writeFileSync(join(rig.workspace, 'present.json'), '{"ok":true}');
    mkdirSync(join(rig.root, 'unconfined-home'));
  });
  afterAll(async () => {
    await rig?.close();
    rmSync(rig.root, { recursive: true, force: true });
  });

  test('missing files are missing (false, ENOENT), never ERR_ACCESS_DENIED; shells, workers and /proc work', async () => {
    const open = spawnSync(process.execPath, [probe], { cwd: rig.workspace, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(rig.root, 'unconfined-home') } });
    expect(open.status).toBe(0);
    const unconfined = JSON.parse(open.stdout) as Record<string, unknown>;
    expect(unconfined).toMatchObject({ existsMissingOutside: false, lstatMissing: 'threw ENOENT', shell: 'from-a-shell', worker: 42 });

    // A downloaded plugin granted the workspace (read) and nothing else: no `shell`.
    const result = await rig.launcher.run({ owner: 'correct-programs-test', program: process.execPath, args: [probe], cwd: rig.workspace, timeoutMs: 20_000, actingFor: rig.principal('prober', { filesystem: { read: ['${workspace}'] } }) });
    expect(result.stderr.toString()).toBe('');
    expect(JSON.parse(result.stdout.toString())).toEqual(unconfined);
  });
});
