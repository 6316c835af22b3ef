// LaTeX normalisation applied before parsing (latex2sympy2_extended's normalize_latex with the
// configuration math-verify's LatexExtractionConfig uses: basic_latex, units, malformed_operators,
// nits, boxed extraction).

export type BoxedMode = 'all' | 'last' | 'none';

const R_LEFT = /\\m?left(\\\{|\{|\\\||\||\[|\(|\\rbracl|\\lgroup|\\lbrace|\\lbrack|\\vert|\\lvert|\\lceil|\\lfloor|\\vert|\\lvert|\\langle|\\llcorner|\\ulcorner)/g;
const R_RIGHT = /\\m?right(\\\}|\}|\\\||\||\]|\)|\\rbrack|\\rgroup|\\rbrace|\\rbrack|\\vert|\\rvert|\\rceil|\\rfloor|\\vert|\\rvert|\\rangle|\\lrcorner|\\urcorner)/g;

const UNITS = [
  'integerpoint', 'feet', 'sue', 'digit', 'pound', 'meal', 'edge', 'student', 'children ticket', 'multiple', 'east', 'degree',
  'mph', 'kmph', 'ft', 'm square', ' m east', 'sq m', 'deg', 'mile', 'q .', 'monkey', 'prime', 'ratio', 'profit of rs', 'rd',
  'o', 'gm', 'p . m', 'lb', 'tile', 'per', 'dm', 'lt', 'gain', 'ab', 'way', 'west', 'a .', 'b .', 'c .', 'd .', 'e .', 'f .',
  'g .', 'h .', 't', 'h', 'no change', 'men', 'soldier', 'pie', 'bc', 'excess', 'st', 'inches', 'noon', 'cent', 'by', 'gal',
  'kmh', 'c', 'acre', 'rise', 'a . m', 'th', 'π r 2', 'sq', 'mark', 'l', 'toy', 'coin', 'sq . m', 'gallon', '° f', 'profit',
  'minw', 'yr', 'women', 'am', 'pm', 'hr', 'cu cm', 'square', 'v â € ™', 'are', 'rupee', 'rounds', 'cubic', 'cc', 'mtr', 's',
  'ohm', 'number', 'kmph', 'day', 'hour', 'minute', 'min', 'second', 'man', 'woman', 'sec', 'cube', 'mt', 'sq inch', 'mp',
  '∏ cm ³', 'hectare', 'more', 'sec', 'unit', 'cu . m', 'cm 2', 'rs .', 'rs', 'kg', 'g', 'month', 'km', 'm', 'cm', 'mm',
  'apple', 'liter', 'loss', 'yard', 'pure', 'year', 'increase', 'decrease', 'd', 'less', 'Surface', 'litre', 'pi sq m', 's .',
  'metre', 'meter', 'inch',
];
// The alternatives are used as regex source, exactly as listed ('.' is a wildcard there too).
const UNITS_RE = new RegExp(`(\\d|\\}|\\s)\\s*(?:(?:${UNITS.join('|')})(?:s|es)?)\\s*$`);

const TO_REMOVE = /\\mathrm\{th\}|\\!\s*|\\text\s*\{\s*\}|\\\$|\$|(?<!\\)["']|\\displaystyle/g;

const REPLACEMENTS: [string, string, string][] = [
  ['math', String.raw`\\math(?:rm|it|bf)`, '\\text'],
  ['text', String.raw`\\text(?:normal|bf|it|rm)`, '\\text'],
  ['frac', String.raw`\\(?:d|t|c)frac`, '\\frac'],
  ['decimal_space', String.raw`\s\.`, ' 0.'],
  ['decimal_brace', String.raw`\{\.`, '{0.'],
  ['approx', String.raw`\~\=`, '\\approx'],
  ['comma', String.raw`\s*\{\s*,\s*\}`, ','],
  ['and_or', String.raw`(?<![a-zA-Z])(?:,?\s*(?:and|or))(?![a-zA-Z])`, ','],
  ['and_or_text', String.raw`(?:,?\s*\\text\{\s*(?:and|or)\s*\})`, ','],
  ['backslash_space', String.raw`(?<!\\)\\\s`, ' '],
  ['infinity', 'infinity', '\\infty'],
  ['dot', String.raw`,?(?:\\ldots)`, ' '],
  ['percentage', String.raw`\s*percentage`, '\\%'],
  ['percentage_in_text', String.raw`\\text\{percentage\}`, '\\%'],
  ['percent', String.raw`\s*percent`, '\\%'],
  ['percent_in_text', String.raw`\\text\{percent\}`, '\\%'],
  ['pct', String.raw`\s*pct`, '\\%'],
  ['pct_in_text', String.raw`\\text\{pct\}`, '\\%'],
  ['inf', String.raw`(?<!\\)inf(?!inity)`, '\\infty'],
  ['sqrt', ' sqrt', '\\sqrt'],
];
const REPLACE_RE = new RegExp(REPLACEMENTS.map(([name, p]) => `(?<${name}>${p})`).join('|'), 'g');

const COMMAND_SLASH_FIX = /\\\\(?=[a-zA-Z])/g;
const PERMUTATION = /\(([a-zA-Z0-9+\-*/\\ ]+?)\)_\{([a-zA-Z0-9+\-*/\\ ]+?)\}/g;
const UNIT_SUPERSCRIPT = /(\\(?:text|mbox)\{.*?\})(\^\d|\{\^\d\})?$/;

const MALFORMED: [RegExp, string][] = [
  [/\^\s?\((.*?)\)/g, '^{$1}'],
  [/sqrt\s?\((.*?)\)/g, '\\sqrt{$1}'],
  [/\\frac\s?(\d)\s?(\d+)/g, '\\frac{$1}{$2}'],
  [/\\log_\s?(\d)\s?(\d+)/g, '\\log_{$1}{$2}'],
  [/\\frac\s?\{(.*?)\}\s?(\d)/g, '\\frac{$1}{$2}'],
  [/\\frac\s?(\d)\s?\{(.*?)\}/g, '\\frac{$1}{$2}'],
  [/\\sqrt\s?(\d)/g, '\\sqrt{$1}'],
];

const VALID_SEPARATOR = /and|or|,|;/;

/** Content of \boxed{...} / \fbox{...}, scanning from the right ("last" keeps separated neighbours). */
export function extractBoxedContent(text: string, mode: 'last' | 'all'): string {
  const results: string[] = [];
  let currentPos = text.length;
  let lastBoxedStart: number | null = null;
  let maxPos = text.length;
  const isSpace = (ch: string) => /\s/.test(ch);
  for (;;) {
    const boxedIdx = currentPos > 0 ? text.lastIndexOf('\\boxed', currentPos - 6 >= 0 ? currentPos - 6 : -1) : -1;
    const fboxIdx = currentPos > 0 ? text.lastIndexOf('\\fbox', currentPos - 5 >= 0 ? currentPos - 5 : -1) : -1;
    const bIdx = boxedIdx >= 0 && boxedIdx + 6 <= currentPos ? boxedIdx : -1;
    const fIdx = fboxIdx >= 0 && fboxIdx + 5 <= currentPos ? fboxIdx : -1;
    if (bIdx < 0 && fIdx < 0) break;
    const startIdx = Math.max(bIdx, fIdx);
    const commandEnd = startIdx + (bIdx > fIdx ? 6 : 5);
    let next = commandEnd;
    while (next < maxPos && isSpace(text[next]!)) next++;
    if (next >= maxPos) break;
    if (text[next] === '{') {
      let depth = 1;
      let i = next;
      let end = -1;
      while (i + 1 < maxPos) {
        i++;
        if (text[i] === '{') depth++;
        else if (text[i] === '}') {
          depth--;
          if (depth === 0) {
            end = i;
            break;
          }
        }
      }
      if (end < 0) {
        if (results.length === 0) results.push(text.slice(next));
        break;
      }
      const content = text.slice(next + 1, end).trim();
      if (mode === 'last' && lastBoxedStart !== null) {
        const between = text.slice(end + 1, lastBoxedStart);
        const prev = results.length ? results[results.length - 1]! : '';
        const ok = between.length < 10 || (prev !== content && between.length < 70 && VALID_SEPARATOR.test(between));
        if (!ok) break;
      }
      results.push(content);
      lastBoxedStart = startIdx;
      maxPos = startIdx;
    } else {
      if (results.length === 0) results.push(text.slice(next));
      break;
    }
    currentPos = startIdx;
  }
  if (results.length === 0) return text;
  return results.reverse().join(',');
}

function fixFracs(text: string): string {
  const parts = text.split('\\frac');
  let out = parts[0]!;
  for (let k = 1; k < parts.length; k++) {
    const sub = parts[k]!.trimStart();
    out += '\\frac';
    if (sub.length > 0 && sub[0] === '{') out += sub;
    else if (sub.length < 2) return text;
    else {
      const a = sub[0]!;
      const b = sub[1]!;
      if (b !== '{') out += `{${a}}{${b}}` + sub.slice(2);
      else out += `{${a}}` + b + sub.slice(2);
    }
  }
  return out;
}

function fixSlash(text: string): string {
  const parts = text.split('/');
  if (parts.length !== 2) return text;
  const [a, b] = parts as [string, string];
  if (!/^\s*[+-]?\d+\s*$/.test(a) || !/^\s*[+-]?\d+\s*$/.test(b)) return text;
  const ai = BigInt(a.trim());
  const bi = BigInt(b.trim());
  if (text !== `${ai}/${bi}`) return text;
  return `\\frac{${ai}}{${bi}}`;
}

function fixSqrt(text: string): string {
  if (!text.includes('\\sqrt')) return text;
  const parts = text.split('\\sqrt');
  let out = parts[0]!;
  for (const p of parts.slice(1)) {
    const s = p.trimStart();
    if (s.length > 0 && s[0] !== '{' && s[0] !== '[') out += `\\sqrt{${s[0]}}` + s.slice(1);
    else out += '\\sqrt' + s;
  }
  return out;
}

export interface NormalizeOptions {
  boxed: BoxedMode;
  basicLatex?: boolean;
  units?: boolean;
  malformedOperators?: boolean;
  nits?: boolean;
}

export function normalizeLatex(input: string, opts: NormalizeOptions): string {
  let text = input;
  if (opts.boxed === 'all' || opts.boxed === 'last') text = extractBoxedContent(text, opts.boxed);
  if (opts.basicLatex !== false) {
    text = text.split('\\mathrm{T}').join('T');
    text = text.split('\\mathrm{d}').join('d').split('{\\rm d}').join('d');
    text = text.split('\\left[\\begin{matrix}').join('\\begin{bmatrix}').split('\\end{matrix}\\right]').join('\\end{bmatrix}');
    text = text.replace(R_LEFT, '$1');
    text = text.replace(R_RIGHT, '$1');
    text = text.replace(PERMUTATION, (_m, a: string, b: string) => `\\frac{(${a})!}{((${a})-(${b}))!}`);
    text = text.replace(TO_REMOVE, '');
    text = text.replace(REPLACE_RE, (...args) => {
      const groups = args[args.length - 1] as Record<string, string | undefined>;
      for (const [name, , rep] of REPLACEMENTS) if (groups[name] !== undefined) return rep;
      return args[0] as string;
    });
    text = text.replace(/\n/g, ' ').replace(/\t/g, ' ');
    if (!text.includes('matrix')) text = text.replace(COMMAND_SLASH_FIX, '\\');
  }
  if (opts.units) {
    let t = text.replace(UNIT_SUPERSCRIPT, '').trim();
    if (t !== '' && t !== text) text = t;
    for (let k = 0; k < 2; k++) {
      t = text.replace(UNITS_RE, '$1');
      if (t !== '' && t !== text) text = t;
    }
  }
  if (opts.nits) {
    if (text.length > 0 && text[0] === '.') text = '0' + text;
    if (text === '0.5') text = '\\frac{1}{2}';
  }
  if (opts.malformedOperators) {
    for (const [re, rep] of MALFORMED) text = text.replace(re, rep);
    text = text.split(' sqrt').join('\\sqrt');
    text = fixSqrt(text);
    text = fixFracs(text);
    text = fixSlash(text);
  }
  return text.trim();
}
