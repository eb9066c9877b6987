/**
 * A user's `before_tool` hook that runs but fails — it hangs past its timeout,
 * prints something that is not JSON, exits with an error, floods stdout —
 * blocks the gate event (its `onError` is `block`, the default), and the
 * decision says what happened and what fixes it: `blockedBy.code` is
 * `PLN_E_HOOK_RUN_FAILED` and `blockedBy.fix` is about the failure at hand.
 * Real node scripts, the real kernel with the builtin plugins.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestKernel, type TestKernel } from '../testing/index.js';

const kernels: TestKernel[] = [];
let folder = '';
const savedCI = process.env.CI;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'plinth-hook-failures-'));
  // Trust asks on a terminal when it has one; user hooks are trusted on first use without one.
  process.env.CI = '1';
});

afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});

afterAll(async () => {
  if (savedCI === undefined) delete process.env.CI;
  else process.env.CI = savedCI;
  await rm(folder, { recursive: true, force: true });
});

/** A hook script that reads its input, then does `body`. */
async function script(name: string, body: string): Promise<string> {
  const file = join(folder, `${name}.js`);
  await writeFile(file, `let input = ''; process.stdin.on('data', (d) => (input += d)).on('end', () => { ${body} });\n`);
  return file;
}

async function blockedBy(name: string, body: string, extra: Record<string, unknown> = {}) {
  const file = await script(name, body);
  const kernel = await createTestKernel({
    builtin: true,
    settings: {
      hooks: { before_tool: [{ name, command: 'node', args: [file], timeout: 1000, ...extra }] },
      plugins: { 'mcp-demo': { enabled: false }, health: { enabled: false } },
    },
  });
  kernels.push(kernel);
  const decision = await kernel.emit('before_tool', { tool: 'write_file' });
  expect(decision.allow).toBe(false);
  expect(decision.blockedBy).toMatchObject({ plugin: 'hooks', by: `user:${name}` });
  return decision.blockedBy!;
}

describe('a gate hook that runs and fails blocks with a code and a fix', () => {
  it('one that hangs past its timeout: raise the timeout or make it answer sooner', async () => {
    const block = await blockedBy('hangs', 'setInterval(() => {}, 1000);');
    expect(block.reason).toContain('timed out after 1000 ms');
    expect(block.code).toBe('PLN_E_HOOK_RUN_FAILED');
    expect(block.fix).toContain('"timeout"');
    expect(block.fix).toContain('plinth hooks trace');
  });

  it('one that prints something other than JSON: print one JSON response and nothing else', async () => {
    const block = await blockedBy('chatty', "process.stdout.write('all good!');");
    expect(block.code).toBe('PLN_E_HOOK_RUN_FAILED');
    expect(block.fix).toContain('{"allow": true}');
  });

  it('one that exits with an error: its stderr is the reason; fix the script or block on purpose', async () => {
    const block = await blockedBy('fails', "process.stderr.write('cannot open the policy file'); process.exit(3);");
    expect(block.reason).toContain('cannot open the policy file');
    expect(block.code).toBe('PLN_E_HOOK_RUN_FAILED');
    expect(block.fix).toContain('"allow": false');
  });

  it('one that floods stdout: print less than maxOutputBytes', async () => {
    const block = await blockedBy('floods', "process.stdout.write('x'.repeat(2 * 1024 * 1024));");
    expect(block.code).toBe('PLN_E_HOOK_RUN_FAILED');
    expect(block.fix).toContain('maxOutputBytes');
  });

  it('a hook that decides to block carries no code: it was not a failure', async () => {
    const block = await blockedBy('decides', "process.stdout.write(JSON.stringify({ allow: false, message: 'not here' }));");
    expect(block.reason).toBe('not here');
    expect(block.code).toBeUndefined();
    expect(block.fix).toBeUndefined();
  });
});
