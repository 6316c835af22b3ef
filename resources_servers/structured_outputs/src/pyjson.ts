/**
 * Python `json.loads` for the values a verifier needs: the same grammar as JSON.parse plus the
 * `NaN`, `Infinity` and `-Infinity` literals Python accepts. JSON.parse is tried first; the slower
 * parser only runs on text JSON.parse rejects.
 */

export class PyJsonError extends Error {
  override readonly name = 'PyJsonError';
}

const WS = ' \t\n\r';
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING_BODY = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

export function pyJsonLoads(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return parseSlow(text);
  }
}

function parseSlow(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new PyJsonError(`${what} at char ${i}`);
  };
  const ws = () => {
    while (i < text.length && WS.includes(text[i]!)) i++;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('Expecting property name enclosed in double quotes');
        const key = string();
        ws();
        if (text[i] !== ':') fail("Expecting ':' delimiter");
        i++;
        Object.defineProperty(obj, key, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (c === '"') return string();
    for (const [lit, v] of [
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['-Infinity', -Infinity],
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) fail('Expecting value');
    i += m![0].length;
    return Number(m![0]);
  };
  const string = (): string => {
    STRING_BODY.lastIndex = i;
    const m = STRING_BODY.exec(text);
    if (!m) fail('Invalid string');
    i += m![0].length;
    return JSON.parse(m![0]) as string;
  };
  const out = value();
  ws();
  if (i !== text.length) fail('Extra data');
  return out;
}
