/**
 * What `plinth ext install` takes: a plugin's name (`name`, `name@range`, `name@tag`, `@scope/name@…`)
 * looked up in a registry, `plugin@marketplace`, a git repository (its URL or GitHub's `owner/repo`,
 * `#ref`), an archive URL pinned by `--sha256`, or the path of a tarball on disk (service.ts tells those
 * apart first). What is left (another kind of URL, `github:o/r`, text that is no name) is refused here
 * before anything is fetched or locked, naming what is taken.
 */
import { PlinthError, manifestSchema, safeLine } from 'plinth/sdk';

const SUPPORTED = 'name, name@range or name@tag from a registry (lint-guard, lint-guard@^1.2, lint-guard@next, @acme/tool@1.0.0), plugin@marketplace, a git URL or GitHub\'s owner/repo (#ref or --ref), an archive URL with --sha256, or the path of a .tgz (./lint-guard-1.2.0.tgz)';

/** The refusal for `spec` when it is neither a registry name nor a tarball path (`isPath`: taken as a path), else undefined. */
export function unsupportedSource(spec: string, isPath: boolean): PlinthError | undefined {
  const shown = safeLine(spec.length > 200 ? `${spec.slice(0, 200)}…` : spec);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(spec)?.[1]?.toLowerCase();
  if (scheme !== undefined && !/^[a-z]$/i.test(scheme)) {
    // Never fetched: a URL names no registry whose keys, index and revocations plinth could check.
    const what = /^(git|git\+\w+|github|gitlab|bitbucket|gist)$/.test(scheme) || /\.git$/.test(spec) || /^https?:\/\/(www\.)?(github|gitlab|bitbucket)\./i.test(spec) ? 'a git repository' : scheme === 'file' ? 'a file: URL' : 'a URL';
    const fix = scheme === 'file' ? 'give the path itself' : what === 'a git repository' ? 'give its URL (https://…, git://…, ssh://…, file://…) or GitHub\'s owner/repo' : 'give an archive\'s URL with its --sha256, or add the registry to "registries" (or pass --registry <url>) and install the plugin by name';
    return refuse(shown, what, fix);
  }
  if (isPath) return undefined;
  const at = spec.lastIndexOf('@');
  const name = at > 0 ? spec.slice(0, at) : spec;
  if (manifestSchema.in.shape.name.safeParse(name).success) return undefined;
  return refuse(shown, 'not a plugin name', 'a plugin name is lowercase letters, digits, "-", "." or "_", optionally @scope/name; `plinth ext search <text>` lists what the registries have');
}

function refuse(shown: string, what: string, fix: string): PlinthError {
  return new PlinthError('PLN_E_MARKET_SOURCE', `"${shown}" is ${what}: plinth ext install takes ${SUPPORTED}`, {
    hint: `nothing was fetched; ${fix}`,
    details: { step: 'resolve', source: shown },
  });
}
