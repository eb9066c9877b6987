/**
 * Parsing JSON text that a person wrote (a manifest, a settings file) with an
 * error that says where it went wrong and never quotes the text: V8's own
 * message copies the input around the error, and the input may hold a secret.
 */

/** Where JSON text goes wrong: 1-based line and column, and what is wrong there in words. */
export interface JsonTextError {
  readonly line: number;
  readonly column: number;
  readonly problem: string;
}

/**
 * `text` parsed (a byte-order mark, which editors on Windows may save, is
 * skipped), or where and why it is not strict JSON. Empty text is an error:
 * callers that read "empty" as "nothing" say so first.
 */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; error: JsonTextError } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch {
    const { offset, problem } = locateError(body);
    const before = body.slice(0, offset).split('\n');
    return { ok: false, error: { line: before.length, column: (before.at(-1)?.length ?? 0) + 1, problem } };
  }
}

/**
 * Finds where strict JSON goes wrong, with a message that never quotes the
 * text. Called only after JSON.parse has failed.
 */
function locateError(text: string): { offset: number; problem: string } {
  let i = 0;
  const fail = (problem: string): never => {
    throw { offset: i, problem };
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const describe = (): string => {
    const ch = text[i];
    if (ch === undefined) return 'unexpected end of file';
    if (ch === '/') return 'comments are not allowed in JSON';
    if (ch === "'") return 'strings must use double quotes';
    // Quoted as V8 quotes a token; anything but printable ASCII (and a backslash) by its code point,
    // so the text reads the same in a JSON document, where the CLI matches it against the log.
    const printable = ch > ' ' && ch < '\u007f' && ch !== '\\';
    return `unexpected character ${printable ? `'${ch}'` : `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`}`;
  };
  const string = (): void => {
    i++; // opening quote
    for (;;) {
      const ch = text[i];
      if (ch === undefined) fail('unterminated string');
      if (ch === '"') return void i++;
      if (ch === '\\') {
        const esc = text[i + 1] ?? '';
        if (esc === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else if (esc !== '' && '"\\/bfnrt'.includes(esc)) i += 2;
        else fail('invalid escape in string');
      } else if ((ch as string) < ' ') fail('line break or control character inside a string');
      else i++;
    }
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === '{') return members('}', () => {
      if (text[i] !== '"') fail(`expected a property name in double quotes: ${describe()}`);
      string();
      ws();
      if (text[i] !== ':') fail(`expected ':' after a property name: ${describe()}`);
      i++;
      value();
    });
    if (ch === '[') return members(']', value);
    if (ch === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (literal) return void (i += literal[0].length);
    fail(`expected a value: ${describe()}`);
  };
  const members = (close: string, member: () => void): void => {
    i++;
    ws();
    if (text[i] === close) return void i++;
    for (;;) {
      ws();
      if (text[i] === close) fail('trailing commas are not allowed in JSON');
      member();
      ws();
      if (text[i] === close) return void i++;
      if (text[i] !== ',') fail(`expected ',' or '${close}': ${describe()}`);
      i++;
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected content after the settings object: ${describe()}`);
    return { offset: i, problem: 'invalid JSON' };
  } catch (error) {
    if (error instanceof RangeError) return { offset: 0, problem: 'invalid JSON (nested too deeply)' };
    return error as { offset: number; problem: string };
  }
}
