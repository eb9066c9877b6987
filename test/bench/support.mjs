/** What every benchmark here shares: its two options and the order statistics it reports. */
import { spawn } from 'node:child_process';

/** `--json` (one JSON document on stdout) and `--quick` (a smoke run; its figures mean nothing); anything else exits 2. */
export function benchOptions(name) {
  const args = new Set(process.argv.slice(2));
  for (const arg of args) {
    if (!['--json', '--quick'].includes(arg)) {
      process.stderr.write(`${name}: unknown option ${arg} (use --json, --quick)\n`);
      process.exit(2);
    }
  }
  return { json: args.has('--json'), quick: args.has('--quick') };
}

/** The q-quantile of `values`, interpolated between neighbours; NaN for none. */
export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

export const median = (values) => quantile(values, 0.5);

/** The median time of `rounds` sequential runs of `fn`, in ms. */
export async function timed(fn, rounds) {
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return median(times);
}

/** `buffer` parsed as one JSON document, or undefined while it is not whole. */
export function jsonDocument(buffer) {
  try {
    return JSON.parse(buffer);
  } catch {
    return undefined;
  }
}

/** A child's stdout, once `pick` finds what it waits for in it (60 s at most; its stderr tail in the error). */
export function printed(child, pick, what) {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 60 s: ${stderr}`)), 60_000);
    child.stdout.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      const found = pick(buffer);
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${stderr}`));
    });
  });
}

/** Runs `command args` as a whole process (stdout ignored); resolves with ms from spawn to exit, rejects on a non-zero exit with the end of its stderr. */
export function timeProcess(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - start) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${err.slice(0, 400)}`))));
  });
}
