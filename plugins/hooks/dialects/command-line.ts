/**
 * A peer hook's `command`, a shell string, read without a shell. The forms real configurations
 * use — `$CLAUDE_PROJECT_DIR/.claude/hooks/x.sh`, `"${CLAUDE_PLUGIN_ROOT}"/hooks/x.py`,
 * `node ${extensionPath}/run.js`, `~/bin/hook`, quoted arguments, backslash escapes — become a
 * program and its arguments. Anything a shell would do more (pipes, `&&`, `;`, redirections,
 * subshells, command substitution, globs, other variables) makes it a shell command: it runs
 * through `sh -c` only where the user's settings allow shell commands for the hook's source.
 */

/** Values of the variables plinth expands itself; any other `$NAME` needs a shell. */
export type Expansions = Readonly<Record<string, string>>;

export type CommandLine =
  | { readonly kind: 'argv'; readonly argv: readonly string[] }
  | { readonly kind: 'shell'; /** What in the command needs a shell, for the message. */ readonly needs: string }
  | { readonly kind: 'invalid'; readonly why: string };

const SHELL_OPERATORS = new Set(['|', '&', ';', '<', '>', '(', ')', '`']);
const GLOB = new Set(['*', '?', '[']);

/** Splits and expands `command`; `home` expands a leading `~/` of a word. */
export function readCommandLine(command: string, expansions: Expansions, home: string): CommandLine {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  const variable = (): string | CommandLine => {
    // At `$`: `${NAME}` or `$NAME`; Gemini's `${/}` is the path separator.
    if (command.startsWith('${/}', i)) {
      i += 4;
      return '/';
    }
    const braced = command[i + 1] === '{';
    const match = (braced ? /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/ : /^\$([A-Za-z_][A-Za-z0-9_]*)/).exec(command.slice(i));
    if (!match) return { kind: 'shell', needs: command[i + 1] === '(' ? 'command substitution "$(…)"' : `"${command.slice(i, i + 2)}"` };
    const name = match[1]!;
    if (!Object.hasOwn(expansions, name)) return { kind: 'shell', needs: `the variable $${name}` };
    i += match[0].length;
    return expansions[name]!;
  };
  while (i < command.length) {
    const c = command[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    if (c === '~' && !inWord && (command[i + 1] === '/' || i + 1 === command.length || command[i + 1] === ' ')) {
      word += home;
      inWord = true;
      i++;
      continue;
    }
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) return { kind: 'invalid', why: 'a single quote is not closed' };
      word += command.slice(i + 1, end);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === '"') {
      inWord = true;
      i++;
      for (;;) {
        if (i >= command.length) return { kind: 'invalid', why: 'a double quote is not closed' };
        const d = command[i]!;
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < command.length && '"\\$`'.includes(command[i + 1]!)) {
          word += command[i + 1];
          i += 2;
          continue;
        }
        if (d === '`') return { kind: 'shell', needs: 'command substitution "`…`"' };
        if (d === '$') {
          const value = variable();
          if (typeof value !== 'string') return value;
          word += value;
          continue;
        }
        word += d;
        i++;
      }
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= command.length) return { kind: 'invalid', why: 'the command ends with a backslash' };
      if (command[i + 1] !== '\n') word += command[i + 1];
      inWord = true;
      i += 2;
      continue;
    }
    if (c === '$') {
      const value = variable();
      if (typeof value !== 'string') return value;
      word += value;
      inWord = true;
      continue;
    }
    if (SHELL_OPERATORS.has(c)) return { kind: 'shell', needs: `the shell operator "${c === '&' && command[i + 1] === '&' ? '&&' : c === '|' && command[i + 1] === '|' ? '||' : c}"` };
    if (GLOB.has(c)) return { kind: 'shell', needs: `the wildcard "${c}"` };
    if (c === '#' && !inWord) break; // a comment
    word += c;
    inWord = true;
    i++;
  }
  if (inWord) words.push(word);
  if (words.length === 0) return { kind: 'invalid', why: 'the command is empty' };
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) return { kind: 'shell', needs: `the variable assignment "${words[0]}"` };
  return { kind: 'argv', argv: words };
}
