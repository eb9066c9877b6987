/**
 * `plinth config validate` asks each plugin that owns a section of the settings (`configKeys`:
 * `hooks`, `mcpServers`, …) to check it, through the kernel's `validate` hook: a hook or an MCP
 * server entry that a run refuses (and that blocks every tool call, for a hook on a gate event) is
 * a problem there, with its file and JSON path, never "Settings are valid". An owner that could not
 * start, or whose check failed, is a problem too.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createTestKernel, type TestKernel } from '../testing/index.js';
import { type Sandbox, describeRun, ensureBuilt, expectExit, json, run, sandbox } from './support/cli.js';

const TEST_TIMEOUT = 60_000;
const boxes: Sandbox[] = [];
const kernels: TestKernel[] = [];

beforeAll(() => ensureBuilt(), 300_000);
afterEach(async () => {
  await Promise.all(kernels.splice(0).map((kernel) => kernel.dispose()));
});
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

interface Validation {
  valid: boolean;
  problems: Array<{ code: string; message: string; file?: string; path?: string; hint?: string }>;
}

describe('plinth config validate: sections checked by their owners', () => {
  test('an invalid hook, an unrunnable hook and invalid MCP server entries: exit 3, each with its file and JSON path', async () => {
    const place = await sandbox('plinth-validate-');
    boxes.push(place);
    const file = join(place.home, 'settings.json');
    await place.settings({
      hooks: {
        before_tool: [
          { name: 'typo', command: 'node', args: ['guard.js'], nonsense: 1 },
          // Valid as written, but its script is not there: a run blocks every tool call.
          { name: 'missing-script', command: 'node', args: [join(place.workspace, 'nowhere.js')] },
        ],
      },
      mcpServers: { bad: { command: 5 }, orphan: { enabled: false } },
    });

    const text = await run(place, ['config', 'validate']);
    expectExit(text, 3);
    expect(text.stdout).not.toContain('Settings are valid');
    for (const fragment of ['hooks.before_tool[0].nonsense', 'missing-script', 'mcpServers.bad.command', 'mcpServers.orphan']) {
      expect(text.stdout, describeRun(text)).toContain(fragment);
    }
    expect(text.stdout).toContain('fix: ');

    const asJson = await run(place, ['config', 'validate', '--json']);
    expectExit(asJson, 3);
    const report = json<Validation>(asJson);
    expect(report.valid).toBe(false);
    const rows = report.problems.map((p) => [p.code, p.file, p.path ?? null]);
    expect(rows).toContainEqual(['PLN_E_HOOK_INVALID', file, 'hooks.before_tool[0].nonsense']);
    expect(rows).toContainEqual(['PLN_E_HOOK_UNRUNNABLE', file, 'hooks.before_tool[1]']);
    expect(rows).toContainEqual(['PLN_E_MCP_SERVER_INVALID', file, 'mcpServers.bad.command']);
    expect(rows).toContainEqual(['PLN_E_MCP_SERVER_INVALID', file, 'mcpServers.orphan']);
    expect(report.problems.find((p) => p.code === 'PLN_E_HOOK_UNRUNNABLE')?.message).toContain('missing-script');

    // Fixed, the same sections are valid again.
    await place.settings({ hooks: { before_tool: [] }, mcpServers: { ok: { command: 'node', args: ['server.js'] } } });
    const good = await run(place, ['config', 'validate', '--json']);
    expectExit(good, 0);
    expect(json<Validation>(good)).toMatchObject({ valid: true, problems: [] });
  }, TEST_TIMEOUT);
});

describe('kernel.validateSettings()', () => {
  test('a lazy owner is set up and asked; an owner that failed, or whose check throws, is a problem; unused sections are not checked', async () => {
    const asked: string[] = [];
    const kernel = await createTestKernel({
      settings: { widgets: { size: 'huge' }, gadgets: {}, gizmos: {} },
      plugins: [
        {
          manifest: { name: 'widgets', activation: 'lazy', configKeys: ['widgets'] },
          setup(k) {
            k.hooks.validate.tap((check) => {
              asked.push('widgets');
              check.add({ code: 'PLN_E_WIDGET_SIZE', message: `${check.files[0]}: widgets.size: expected a number`, file: check.files[0]!, path: 'widgets.size' });
            });
          },
        },
        {
          manifest: { name: 'gadgets', configKeys: ['gadgets'] },
          setup() {
            throw new Error('gadget store unreachable');
          },
        },
        {
          manifest: { name: 'gizmos', configKeys: ['gizmos'] },
          setup(k) {
            k.hooks.validate.tap(() => {
              throw new Error('checker crashed');
            });
          },
        },
        {
          manifest: { name: 'unused', activation: 'lazy', configKeys: ['doodads'] },
          setup: () => void asked.push('unused'),
        },
      ],
    });
    kernels.push(kernel);
    expect(kernel.status().find((p) => p.name === 'widgets')?.state).toBe('lazy');

    const problems = await kernel.validateSettings();
    expect(asked).toEqual(['widgets']);
    expect(kernel.status().find((p) => p.name === 'widgets')?.state).toBe('active');
    const codes = problems.map((p) => p.code).sort();
    expect(codes).toEqual(['PLN_E_CONFIG_UNCHECKED', 'PLN_E_HOOK_FAILED', 'PLN_E_WIDGET_SIZE']);
    const unchecked = problems.find((p) => p.code === 'PLN_E_CONFIG_UNCHECKED')!;
    expect(unchecked.message).toContain('"gadgets"');
    expect(unchecked.message).toContain('failed');
    expect(problems.find((p) => p.code === 'PLN_E_HOOK_FAILED')!.message).toContain('gizmos');
  });
});
