/**
 * The hook protocol v1.0.0: the input a hook reads, and how its answer is
 * parsed and validated. Hook output is untrusted, so prototype keys are tested
 * here as well as in the red-team suite.
 */
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, buildInput, encodeInput, parseResponse, subscribedSpelling } from '../plugins/hooks/protocol.js';

const failure = (stdout: string): { failure: string; message: string } => {
  const parsed = parseResponse(stdout);
  if (parsed.ok) throw new Error(`expected a failure for ${stdout}`);
  return parsed;
};

describe('buildInput', () => {
  it('carries the version, the spelling the hook subscribed with, the context and the metadata', () => {
    const before = Date.now();
    const input = buildInput({ name: 'safety-check', version: '2.1.0' }, 'pre-tool-call', { tool: 'read-file' }, 'abc123');
    expect(input).toMatchObject({
      version: '1.0.0',
      event: 'pre-tool-call',
      context: { tool: 'read-file' },
      metadata: { hookName: 'safety-check', hookVersion: '2.1.0', sessionId: 'abc123' },
    });
    expect(PROTOCOL_VERSION).toBe('1.0.0');
    const stamp = Date.parse(input.metadata.timestamp);
    expect(stamp).toBeGreaterThanOrEqual(before - 1);
    expect(input.metadata.timestamp).toBe(new Date(stamp).toISOString());
  });

  it('leaves hookVersion and sessionId out when unknown', () => {
    const input = buildInput({ name: 'h' }, 'before_tool', {});
    expect(Object.keys(input.metadata).sort()).toEqual(['hookName', 'timestamp']);
  });

  it('finds the spelling a hook used for a canonical event', () => {
    const hook = { events: ['before_tool', 'session_start'] as const, subscribedAs: ['pre-tool-call', 'session_start'] };
    expect(subscribedSpelling(hook, 'before_tool')).toBe('pre-tool-call');
    expect(subscribedSpelling(hook, 'session_start')).toBe('session_start');
    expect(subscribedSpelling(hook, 'after_tool')).toBe('after_tool');
  });

  it('encodes the input as one line', () => {
    const line = encodeInput(buildInput({ name: 'h' }, 'custom', { text: 'two\nlines' }));
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(line).context.text).toBe('two\nlines');
  });
});

describe('parseResponse', () => {
  it('accepts the seed examples and the integration fields', () => {
    expect(parseResponse('{"allow": true, "message": "Operation approved", "metadata": {"checked": true, "duration": 0.05}}')).toEqual({
      ok: true,
      response: { allow: true, message: 'Operation approved', metadata: { checked: true, duration: 0.05 } },
    });
    const full = parseResponse(
      JSON.stringify({ allow: false, message: 'no', systemMessage: 'be careful', context: { a: 1 }, continue: false, metadata: {} }),
    );
    expect(full).toEqual({
      ok: true,
      response: { allow: false, message: 'no', systemMessage: 'be careful', context: { a: 1 }, continue: false, metadata: {} },
    });
  });

  it('ignores unknown keys and surrounding whitespace', () => {
    expect(parseResponse('\n  {"allow": false, "reason": "x", "extra": [1]}  \r\n')).toEqual({ ok: true, response: { allow: false } });
  });

  it('reports empty and whitespace-only output as invalid JSON', () => {
    expect(failure('')).toEqual({ ok: false, failure: 'invalid_json', message: 'empty output' });
    expect(failure(' \n\t ')).toMatchObject({ failure: 'invalid_json', message: 'empty output' });
  });

  it('reports JSON that does not parse, quoting the start of the output', () => {
    const bad = failure('{"allow": tru');
    expect(bad.failure).toBe('invalid_json');
    expect(bad.message).toContain('invalid JSON');
    expect(bad.message).toContain('{\\"allow\\": tru');
    // Two documents are not one: spawn mode takes the whole stdout.
    expect(failure('{"allow": true}\n{"allow": false}').failure).toBe('invalid_json');
  });

  it('reports JSON that is not a response, saying which field is wrong', () => {
    expect(failure('{"message": "hi"}')).toMatchObject({ failure: 'invalid_output', message: expect.stringContaining('"allow" is missing') });
    expect(failure('{"allow": "yes"}').message).toContain('"allow" must be a boolean (got a string)');
    expect(failure('{"allow": 1}').message).toContain('(got a number)');
    expect(failure('{"allow": true, "message": 3}').message).toContain('"message" must be a string');
    expect(failure('{"allow": true, "message": null}').message).toContain('"message" must be a string (got null)');
    expect(failure('{"allow": true, "context": [1]}').message).toContain('"context" must be an object (got an array)');
    expect(failure('{"allow": true, "metadata": "m"}').message).toContain('"metadata" must be an object');
    expect(failure('{"allow": true, "continue": "no"}').message).toContain('"continue" must be a boolean');
    expect(failure('{"allow": true, "systemMessage": {}}').message).toContain('"systemMessage" must be a string');
    for (const notAnObject of ['true', '[{"allow": true}]', 'null', '"allow"', '42']) {
      expect(failure(notAnObject).failure).toBe('invalid_output');
    }
  });

  it('drops __proto__ and constructor.prototype keys without polluting anything', () => {
    const parsed = parseResponse(
      '{"allow":true,"__proto__":{"polluted":"top"},' +
        '"metadata":{"__proto__":{"polluted":"metadata"},"constructor":{"prototype":{"polluted":"ctor"}},"kept":1},' +
        '"context":{"nested":{"__proto__":{"isAdmin":true},"ok":true},"constructor":"a plain string stays"}}',
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const { response } = parsed;
    const objects = [response, response.metadata, response.context, response.context?.nested];
    for (const value of objects) {
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.hasOwn(value as object, '__proto__')).toBe(false);
      expect((value as Record<string, unknown>).polluted).toBeUndefined();
    }
    expect(response.metadata).toEqual({ kept: 1 });
    expect(response.context).toEqual({ nested: { ok: true }, constructor: 'a plain string stays' });
    expect((response.context?.nested as Record<string, unknown>).isAdmin).toBeUndefined();
    // Nothing global changed.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    // Copying the result the usual ways is safe too.
    const copy = { ...response.metadata, ...Object.assign({}, response.context) };
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps a __proto__ that is only a string value', () => {
    const parsed = parseResponse('{"allow": true, "message": "__proto__", "metadata": {"key": "__proto__"}}');
    expect(parsed).toEqual({ ok: true, response: { allow: true, message: '__proto__', metadata: { key: '__proto__' } } });
  });
});
