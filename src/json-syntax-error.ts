/**
 * Where a JSON text stops being JSON, as `line L, column C` (both from 1). V8's own message is no
 * use for a config file: for an unexpected token it gives no position but a snippet of the text
 * around it, which may be a secret (`"apiKey": sk-proj-…` without its quotes).
 */
export function jsonSyntaxErrorPosition(text: string): string {
  const offset = firstErrorOffset(text);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

const WHITESPACE = /[ \t\n\r]*/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: a raw control character ends a JSON string, as the grammar says
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/**
 * The offset of the first character that cannot continue the JSON text (its length when the
 * text is cut short). Iterative, so a deeply nested text cannot overflow the stack.
 */
function firstErrorOffset(text: string): number {
  const closers: string[] = [];
  let at = 0;
  const take = (pattern: RegExp): boolean => {
    pattern.lastIndex = at;
    if (!pattern.test(text)) return false;
    at = pattern.lastIndex;
    return true;
  };
  let expecting: 'value' | 'first value' | 'key' | 'first key' | 'separator' = 'value';
  for (;;) {
    take(WHITESPACE);
    const char = text[at];
    if (expecting === 'value' || expecting === 'first value') {
      if (expecting === 'first value' && char === ']') {
        closers.pop();
        at++;
        expecting = 'separator';
      } else if (char === '{' || char === '[') {
        closers.push(char === '{' ? '}' : ']');
        at++;
        expecting = char === '{' ? 'first key' : 'first value';
      } else if (take(STRING) || take(SCALAR)) {
        expecting = 'separator';
      } else {
        return at;
      }
    } else if (expecting === 'key' || expecting === 'first key') {
      if (expecting === 'first key' && char === '}') {
        closers.pop();
        at++;
        expecting = 'separator';
        continue;
      }
      if (!take(STRING)) return at;
      take(WHITESPACE);
      if (text[at] !== ':') return at;
      at++;
      expecting = 'value';
    } else {
      const closer = closers.at(-1);
      if (closer === undefined || char === undefined) return at;
      if (char === ',') {
        at++;
        expecting = closer === '}' ? 'key' : 'value';
      } else if (char === closer) {
        closers.pop();
        at++;
      } else {
        return at;
      }
    }
  }
}
