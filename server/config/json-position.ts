/**
 * Where a JSON text stops being JSON, as line and column (1-based), or undefined when it parses.
 * JSON.parse says where only on some inputs and in some Node versions, and its message quotes the
 * text, which may hold an RPC URL's key: this finds the place without quoting anything.
 */
export function jsonErrorPosition(text: string): { line: number; column: number; offset: number } | undefined {
  const offset = firstError(text);
  if (offset === undefined) return undefined;
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before[before.length - 1].length + 1, offset };
}

const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const STRING = /"([^"\\]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** The offset of the first character that cannot continue a JSON text; undefined if it is one. */
function firstError(text: string): number | undefined {
  let at = 0;
  const fail = (): never => {
    throw at;
  };
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at])) at++;
  };
  const match = (pattern: RegExp) => {
    pattern.lastIndex = at;
    const found = pattern.exec(text);
    if (!found) fail();
    // JSON strings hold no raw control character (below U+0020).
    const control = found![0].split("").findIndex((ch) => ch.charCodeAt(0) < 0x20);
    if (control >= 0) {
      at += control;
      fail();
    }
    at = pattern.lastIndex;
  };
  const value = (): void => {
    space();
    const c = text[at];
    if (c === "{") {
      at++;
      space();
      if (text[at] === "}") return void at++;
      for (;;) {
        space();
        if (text[at] !== '"') fail();
        match(STRING);
        space();
        if (text[at] !== ":") fail();
        at++;
        value();
        space();
        if (text[at] === "}") return void at++;
        if (text[at] !== ",") fail();
        at++;
      }
    }
    if (c === "[") {
      at++;
      space();
      if (text[at] === "]") return void at++;
      for (;;) {
        value();
        space();
        if (text[at] === "]") return void at++;
        if (text[at] !== ",") fail();
        at++;
      }
    }
    if (c === '"') return match(STRING);
    for (const word of ["true", "false", "null"]) if (text.startsWith(word, at)) return void (at += word.length);
    if (c === "-" || (c >= "0" && c <= "9")) return match(NUMBER);
    fail();
  };
  try {
    value();
    space();
    return at < text.length ? at : undefined;
  } catch (offset) {
    return offset as number;
  }
}
