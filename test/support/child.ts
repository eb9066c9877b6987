/** A node script run as a child process that a test talks to line by line (a lock contender, a concurrent writer). */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface LineChild {
  readonly child: ChildProcess;
  /** The child's next line of output; rejects after `timeoutMs` or when the child ends, naming its stderr. */
  next(): Promise<string>;
}

/** Starts `node <script> <args>` with `env`; `name` is how failures call it. */
export function lineChild(script: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; name: string }): LineChild {
  const child = spawn(process.execPath, [script, ...args], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${options.name} said nothing; stderr: ${stderr}`)), options.timeoutMs)));
    const line = await Promise.race([lines.next(), timeout]).finally(() => clearTimeout(timer));
    if (line.done) throw new Error(`${options.name} ended (exit ${String(child.exitCode)}); stderr: ${stderr}`);
    return line.value;
  };
  return { child, next };
}
