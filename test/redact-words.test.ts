/**
 * The redactor masks secrets, not the words they happen to spell: a gateway token "plugin"
 * (a sensitive setting, so learned by the kernel's redactor) used to turn every "plugins" in
 * plinth's own output into "[redacted]s". Real CLI runs.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REDACTED } from '../internal/text/redact.js';
import { type Sandbox, describeRun, ensureBuilt, expectExit, run, sandbox } from './support/cli.js';

const boxes: Sandbox[] = [];
beforeAll(() => ensureBuilt(), 300_000);
afterAll(async () => {
  await Promise.all(boxes.map((box) => box.remove()));
});

test('a short sensitive value is masked where it stands alone, never inside a longer word', async () => {
  const box = await sandbox('plinth-redact-words-');
  boxes.push(box);
  await box.settings({ plugins: { gateway: { settings: { token: 'plugin' } } } });

  const why = await run(box, ['plugins', 'why', 'nosuch']);
  expect(why.code, describeRun(why)).not.toBe(0);
  expect(why.stderr, describeRun(why)).toContain('plinth plugins list');
  expect(why.stderr).not.toContain(`${REDACTED}s`);

  const shown = await run(box, ['config', 'show']);
  expectExit(shown, 0);
  expect(shown.stdout, describeRun(shown)).toContain('"plugins"');
  expect(shown.stdout).toContain(`"token": "${REDACTED}"`);
  expect(shown.stdout).not.toMatch(/"plugin"/);
});
