/**
 * Servers started by a package runner (`npx -y pkg`, `uvx pkg`, …) download
 * their package on a first start, which takes far longer than the connection
 * timeout allows (28 s for the README's own `npx -y` example against 10 s).
 * Such a start is still `starting`, not failed: it gets the plugin's
 * `firstStartTimeout` instead, until the same command line has connected once
 * (remembered in `<home>/mcp-runners.json`, by a hash of the command line:
 * no arguments are stored). A remembered one that times out is forgotten, so
 * the retry gets the longer limit again (the cache was cleared, a new
 * version is being fetched).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from 'plinth/sdk';
import { packageRunnerOf } from 'plinth/internal';
import type { McpServerDefinition } from 'plinth/sdk';

/**
 * The package runner a server's command line uses (`npx`, `npm exec`, `uv tool run`, …), or
 * undefined: the sdk's one list of runners (`packageRunnerOf`), which the sandbox reads too.
 */
export function packageRunner(definition: Pick<McpServerDefinition, 'command' | 'args'>): string | undefined {
  return definition.command === undefined ? undefined : packageRunnerOf(definition.command, definition.args)?.name;
}

/** The record of package-runner command lines that connected before. */
export class FirstStarts {
  #known: Promise<Set<string>> | undefined;
  #writing: Promise<void> = Promise.resolve();

  /** @param file where the hashes are kept; `timeoutMs` the limit of a first start. */
  constructor(
    private readonly file: string,
    readonly timeoutMs: number,
    private readonly onError: (message: string) => void = () => undefined,
  ) {}

  /** Whether this command line connected before. */
  async known(definition: McpServerDefinition): Promise<boolean> {
    return (await this.#load()).has(key(definition));
  }

  /** It connected: later starts get the usual limit. */
  async remember(definition: McpServerDefinition): Promise<void> {
    await this.#change((known) => known.add(key(definition)));
  }

  /** It timed out under the usual limit: it may be downloading again. */
  async forget(definition: McpServerDefinition): Promise<void> {
    await this.#change((known) => known.delete(key(definition)));
  }

  #load(): Promise<Set<string>> {
    this.#known ??= readFile(this.file, 'utf8').then(
      (text) => {
        const parsed = JSON.parse(text) as { started?: unknown };
        return new Set(Array.isArray(parsed.started) ? parsed.started.filter((k): k is string => typeof k === 'string') : []);
      },
      () => new Set<string>(),
    ).catch(() => new Set<string>());
    return this.#known;
  }

  async #change(edit: (known: Set<string>) => unknown): Promise<void> {
    const known = await this.#load();
    const before = known.size;
    edit(known);
    if (known.size === before) return;
    this.#writing = this.#writing.then(() =>
      writeFileAtomic(this.file, `${JSON.stringify({ started: [...known] })}\n`).catch((error: unknown) => {
        this.onError(`could not record a package runner's first start in ${this.file}: ${(error as Error).message}`);
      }),
    );
    await this.#writing;
  }
}

/** The command line's hash: the record never holds arguments, which may carry secrets. */
function key(definition: McpServerDefinition): string {
  return createHash('sha256').update(JSON.stringify([definition.command, ...definition.args])).digest('hex').slice(0, 32);
}
