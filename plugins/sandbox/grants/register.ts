/**
 * Everything the grants side adds to the sandbox plugin, in one call from its
 * setup: the grant policy (returned, for the enforcement to ask before each
 * confined launch), the `capabilities` service, the `plinth perms` commands,
 * and the line `plinth up` prints when no OS sandbox is available.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type PluginContext, type PluginInfo, type PluginKernel, type SandboxAvailability, parseManifest } from 'plinth/sdk';
import { parseJsonText, readPeerFolder } from 'plinth/internal';
import semver from 'semver';
import { availabilityLine, permsCommands } from '../commands.js';
import { createCapabilityCheck } from './capabilities.js';
import { type ExtendedGrantPolicy, createGrantPolicy } from './policy.js';
import { createGrantsService } from './service.js';

export interface RegisterGrantsOptions {
  /** The sandbox's probe (found once). */
  readonly availability: () => Promise<SandboxAvailability>;
  /** Settings `answerTimeoutSeconds`: how long a launch waits for an answer to the grant question. */
  readonly answerTimeoutMs?: number;
}

export function registerGrants(kernel: PluginKernel, ctx: PluginContext, options: RegisterGrantsOptions): ExtendedGrantPolicy {
  const plugins = new Map<string, PluginInfo>();
  kernel.hooks.manifest.tap((plugin) => {
    plugins.set(plugin.name, plugin);
  });
  kernel.hooks.unload.tap((plugin) => {
    plugins.delete(plugin.name);
  });
  const policy = createGrantPolicy({
    home: ctx.paths.home,
    configLayers: () => kernel.configLayers,
    versionOf: (id) => plugins.get(id)?.version,
    ...(options.answerTimeoutMs !== undefined && { answerTimeoutMs: options.answerTimeoutMs }),
  });
  kernel.provide('capabilities', createCapabilityCheck({ home: ctx.paths.home, policy }));
  kernel.provide('grants', createGrantsService({ policy, find: async (name) => plugins.get(name) ?? foundCandidate(kernel, name) ?? (await installedSince(kernel, name, ctx.paths.workspace)) }));
  kernel.hooks.commands.tap((registry) => {
    for (const command of permsCommands({ policy, home: ctx.paths.home, workspace: ctx.paths.workspace, plugins: () => plugins, availability: options.availability, configLayers: () => kernel.configLayers })) registry.add(command);
  });
  kernel.hooks.status.tap(async (board) => {
    const availability = await options.availability();
    board.add({ key: 'sandbox', title: 'Sandbox', head: [], rows: [], json: availability, line: availabilityLine(availability) });
  });
  return policy;
}

/**
 * A plugin put into one of the kernel's plugin folders after this process discovered them: what a
 * one-shot `plinth ext install` just installed (it does not load it), to be reviewed at once.
 */
async function installedSince(kernel: PluginKernel, name: string, workspace: string): Promise<PluginInfo | undefined> {
  for (const folder of kernel.plugins.folders()) {
    const dir = join(folder.dir, name);
    const text = await readFile(join(dir, 'manifest.json'), 'utf8').catch(() => undefined);
    // A Claude Code plugin or Gemini CLI extension has no manifest.json: its manifest is made from the peer's files (with the permissions its format implies).
    const data = text === undefined ? (await readPeerFolder(dir, { workspace }, undefined, { layout: true }).catch(() => undefined))?.data : undefined;
    if (text === undefined && data === undefined) continue;
    const json = text === undefined ? { ok: true as const, value: data as unknown } : parseJsonText(text);
    if (!json.ok) return undefined;
    const parsed = parseManifest(json.value);
    // The manifest's own name must be the one asked for (a valid name is never a path like ../x).
    if (!parsed.ok || parsed.manifest.name !== name) return undefined;
    return { name, version: parsed.manifest.version, source: folder.source, dir, manifest: parsed.manifest };
  }
  return undefined;
}

/** A plugin found but not running (just enabled in the settings, say): its highest version found. */
function foundCandidate(kernel: PluginKernel, name: string): PluginInfo | undefined {
  const candidates = kernel.inspect().resolution.candidates.get(name) ?? [];
  const best = [...candidates].sort((a, b) => semver.rcompare(a.manifest.version, b.manifest.version))[0];
  return best && { name, version: best.manifest.version, source: best.source, dir: best.dir, manifest: best.manifest, ...(best.linked && { linked: true as const }) };
}
