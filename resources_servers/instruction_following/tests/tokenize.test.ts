import { existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detect, detectLangs, LangDetectException, PyRandom } from '../src/langdetect.js';
import { pyIsLower, pyIsUpper, pyJsonLoads, pySliceStr, pySplit, pyStrip } from '../src/py.js';
import { pyCount, pyFindall, pySearch, pySplitCount, translatePy } from '../src/pyre.js';
import { findPunktDir, loadPunktParams, nltkSearchPath, PunktDataNotFoundError, PunktSentenceTokenizer } from '../src/punkt.js';
import { countWords, splitIntoSentences } from '../src/util.js';
import { treebankTokenize, wordTokenize } from '../src/word_tokenize.js';
import { testNltkData } from './helpers.js';

const dataDir = testNltkData();
const punkt = dataDir ? new PunktSentenceTokenizer(loadPunktParams(findPunktDir(dataDir, {}))) : null;

describe.skipIf(!punkt)('Punkt sentence tokenizer (English parameters)', () => {
  const cases: [string, string[]][] = [
    ['Hello world. This is a test.', ['Hello world.', 'This is a test.']],
    // Known abbreviations followed by a capitalised name do not end a sentence.
    ['Mr. Brown met Dr. Green at noon. They talked.', ['Mr. Brown met Dr. Green at noon.', 'They talked.']],
    // "u.s" is an abbreviation; a lowercase word after it keeps the sentence going.
    ['We flew to the U.S. yesterday. It was fun.', ['We flew to the U.S. yesterday.', 'It was fun.']],
    // Closing quotes and brackets stay with the sentence they end.
    ['He said "stop." Then he left.', ['He said "stop."', 'Then he left.']],
    ['(Is it done?) Yes it is!', ['(Is it done?)', 'Yes it is!']],
    // An initial followed by a name is not a boundary.
    ['The novel was written by J. Smith in 1900. It sold well.', ['The novel was written by J. Smith in 1900.', 'It sold well.']],
    // Lowercase start after a period is still a break when nothing says otherwise.
    ['First one. second one.', ['First one.', 'second one.']],
    // Numbers with a period before a lowercase word.
    ['There were 3. then more.', ['There were 3. then more.']],
    ['   ', []],
    ['', []],
    ['No final punctuation', ['No final punctuation']],
    ['Wait... what happened? Nothing!', ['Wait... what happened?', 'Nothing!']],
  ];
  for (const [text, want] of cases) {
    it(JSON.stringify(text), () => {
      expect(punkt!.tokenize(text)).toEqual(want);
      expect(punkt!.countSentences(text)).toBe(want.length);
    });
  }

  it('keeps inner newlines and drops trailing whitespace', () => {
    expect(punkt!.tokenize('One line\ncontinues here.  \n\nNext paragraph.  ')).toEqual([
      'One line\ncontinues here.',
      'Next paragraph.',
    ]);
  });
});

describe.skipIf(!punkt)('word_tokenize (Treebank rules)', () => {
  const cases: [string, string[]][] = [
    ['Hello, world!', ['Hello', ',', 'world', '!']],
    ["I can't do it.", ['I', 'ca', "n't", 'do', 'it', '.']],
    ['"Hello," she said.', ['``', 'Hello', ',', "''", 'she', 'said', '.']],
    ["They'll cannot gonna", ['They', "'ll", 'can', 'not', 'gon', 'na']],
    ['It costs $3.88 (roughly).', ['It', 'costs', '$', '3.88', '(', 'roughly', ')', '.']],
    ['Wait... no -- yes; ok: 1,000 items', ['Wait', '...', 'no', '--', 'yes', ';', 'ok', ':', '1,000', 'items']],
    ['Mr. Smith arrived. He sat.', ['Mr.', 'Smith', 'arrived', '.', 'He', 'sat', '.']],
    ["'Tis the season", ["'T", 'is', 'the', 'season']],
    ['“Curly” quotes and «guillemets»', ['“', 'Curly', '”', 'quotes', 'and', '«', 'guillemets', '»']],
    ['USA and NASA are BIG.', ['USA', 'and', 'NASA', 'are', 'BIG', '.']],
  ];
  for (const [text, want] of cases) {
    it(JSON.stringify(text), () => {
      expect(wordTokenize(punkt!, text)).toEqual(want);
    });
  }

  it('splits only the final period of a sentence', () => {
    expect(treebankTokenize('e.g. the U.S. way.')).toEqual(['e.g.', 'the', 'U.S.', 'way', '.']);
  });
});

describe('Punkt data lookup', () => {
  it('searches NLTK_DATA entries, then the usual folders', () => {
    const path = nltkSearchPath({ NLTK_DATA: '/a:/b' });
    expect(path.slice(0, 2)).toEqual(['/a', '/b']);
    expect(path).toContain('/usr/share/nltk_data');
    expect(path).toContain('/usr/local/lib/nltk_data');
  });

  it('prefers the configured folder and reads the punkt_tab text layout', () => {
    const root = mkdtempSync(join(tmpdir(), 'nltk-'));
    const dir = join(root, 'tokenizers', 'punkt_tab', 'english');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'abbrev_types.txt'), 'etc\nfig\n');
    writeFileSync(join(dir, 'collocations.tab'), '##number##\tmay\n');
    writeFileSync(join(dir, 'sent_starters.txt'), 'however\n');
    writeFileSync(join(dir, 'ortho_context.tab'), 'however\t2\nsee\t32\n');
    expect(findPunktDir(root, { NLTK_DATA: '/nonexistent' })).toBe(dir);
    const params = loadPunktParams(dir);
    expect([...params.abbrevTypes]).toEqual(['etc', 'fig']);
    expect(params.collocations.has('##number##\tmay')).toBe(true);
    expect(params.orthoContext.get('see')).toBe(32);
    const tok = new PunktSentenceTokenizer(params);
    expect(tok.tokenize('See fig. 3 for details. Next one.')).toEqual(['See fig. 3 for details.', 'Next one.']);
  });

  it('fails with every folder searched and how to install the data', () => {
    let err: unknown;
    try {
      findPunktDir('/nonexistent/cfg', { NLTK_DATA: '/nonexistent/env' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PunktDataNotFoundError);
    const msg = (err as Error).message;
    expect(msg).toContain('/nonexistent/cfg');
    expect(msg).toContain('/nonexistent/env');
    expect(msg).toContain('punkt_tab');
    expect(msg).toContain('nltk_data_dir');
  });
});

describe('IFEval sentence splitter and word count', () => {
  it('splits like instructions_util.split_into_sentences', () => {
    expect(splitIntoSentences('Mr. Smith went to Washington. He met Dr. Who! Was it fun? Yes.')).toEqual([
      'Mr. Smith went to Washington.',
      'He met Dr. Who!',
      'Was it fun?',
      'Yes.',
    ]);
    expect(splitIntoSentences('Visit example.com today. Pi is 3.14 roughly.')).toEqual([
      'Visit example.com today.',
      'Pi is 3.14 roughly.',
    ]);
    expect(splitIntoSentences('He said "hi." Then left')).toEqual(['He said "hi".', 'Then left']);
    expect(splitIntoSentences('Wait... really')).toEqual(['Wait...', 'really']);
    expect(splitIntoSentences('')).toEqual([]);
  });

  it('counts \\w+ runs with Unicode letters and digits, not combining marks', () => {
    expect(countWords("It's a well-known café, 2024_x!")).toBe(7);
    expect(countWords('हिन्दी')).toBe(3);
  });
});

describe('Python string semantics', () => {
  it('split/strip use Python whitespace (no U+FEFF, yes U+001C and U+0085)', () => {
    expect(pySplit('a\u001cb\u0085c\ufeffd')).toEqual(['a', 'b', 'c\ufeffd']);
    expect(pyStrip('\u3000x\u00a0')).toBe('x');
    expect(pyStrip('""x""', '"')).toBe('x');
  });

  it('isupper/islower need a cased character', () => {
    expect(pyIsUpper('ABC 123')).toBe(true);
    expect(pyIsUpper('123')).toBe(false);
    expect(pyIsUpper('ǅ')).toBe(false);
    expect(pyIsLower('ß and ǆ')).toBe(true);
    expect(pyIsLower('abC')).toBe(false);
  });

  it('slices by code point with Python clamping', () => {
    expect(pySliceStr('a😀bc', 1, 3)).toBe('😀b');
    expect(pySliceStr('abc', -2, 10)).toBe('bc');
    expect(pySliceStr('abc', 2, 1)).toBe('');
  });

  it('json.loads accepts NaN/Infinity but not single quotes or trailing data', () => {
    expect(pyJsonLoads('[NaN, -Infinity, "NaN"]')).toBe(true);
    expect(pyJsonLoads('[-NaN]')).toBe(false);
    expect(pyJsonLoads('1Infinity')).toBe(false);
    expect(pyJsonLoads("{'a': 1}")).toBe(false);
    expect(pyJsonLoads('{} {}')).toBe(false);
    expect(pyJsonLoads('['.repeat(5000) + ']'.repeat(5000))).toBe(false);
  });
});

describe('Python re patterns on V8', () => {
  it('gives \\w, \\b, \\d and \\s their Unicode meaning', () => {
    expect(pyCount('\\b[a-z]+\\b', 'abc café déjà x1 y')).toBe(2);
    expect(pySearch('^\\w+$', 'naïve')).toBe(true);
    expect(pyCount('\\d', '٣4')).toBe(2);
    expect(pySearch('a\\sb', 'a\u0085b')).toBe(true);
  });

  it('keeps Python meanings of ., ^, $ and MULTILINE', () => {
    expect(pySearch('a.b', 'a\rb')).toBe(true);
    expect(pySearch('a.b', 'a\nb')).toBe(false);
    expect(pySearch('x$', 'x\n')).toBe(true);
    expect(pySearch('x$', 'x\n\n')).toBe(false);
    expect(pyCount('^-', '- a\n- b\r- c', { multiline: true })).toBe(2);
  });

  it('translates Python-only syntax and rejects what Python rejects', () => {
    expect(pyFindall('(?P<w>a)(?P=w)', 'aa aa')).toEqual(['a', 'a']);
    expect(pyFindall('(a)(b)', 'ab')).toEqual([['a', 'b']]);
    expect(pySearch('(?i)hello', 'HeLLo')).toBe(true);
    expect(pySearch('a{,2}c', 'aac')).toBe(true);
    expect(pySearch('x{y', 'x{y')).toBe(true);
    expect(pySearch('\\-\\#\\!', '-#!')).toBe(true);
    expect(pySearch('[\\w-]+@', 'a-b@')).toBe(true);
    expect(pySearch('[^\\W\\d]', '5')).toBe(false);
    expect(pySearch('[^\\W\\d]', 'é')).toBe(true);
    expect(() => translatePy('\\q')).toThrow(/bad escape/);
    expect(() => translatePy('a(?i)b')).toThrow(/global flags/);
    expect(() => translatePy('[z-a]')).toThrow(/bad character range/);
    expect(() => translatePy('(a')).toThrow();
  });

  it('iterates empty matches like Python 3.7+ (a non-empty match may start where an empty one was)', () => {
    expect(pyCount('a*?', 'baa')).toBe(6);
    expect(pyFindall('|b', 'ab')).toEqual(['', '', 'b', '']);
    expect(pyCount('', 'abc')).toBe(4);
    expect(pyCount('^', 'a😀\nb', { multiline: true })).toBe(2);
  });

  it('treats the Turkish i letters as Python IGNORECASE does', () => {
    expect(pySearch('istanbul', 'İSTANBUL', { ignoreCase: true })).toBe(true);
    expect(pyCount('[a-z]', 'ıİ', { ignoreCase: true })).toBe(2);
    expect(pyCount('[a-z]', 'ıİ')).toBe(0);
  });

  it('follows Python on repeats: assertions cannot repeat, lookarounds and comments can', () => {
    expect(() => translatePy('\\b+')).toThrow(/nothing to repeat/);
    expect(() => translatePy('^*')).toThrow(/nothing to repeat/);
    expect(pyCount('(?=a)*b', 'ab b')).toBe(2);
    expect(pyCount('a(?#note)+', 'aaa')).toBe(1);
    expect(() => translatePy('(a\\1)')).toThrow(/open group/);
  });

  it('supports atomic groups and possessive quantifiers (a keyword like C++)', () => {
    expect(pySearch('C++', 'I like C++ a lot')).toBe(true);
    expect(pyCount('C++', 'CCC c C')).toBe(2);
    expect(pyCount('a*+a', 'aaa')).toBe(0);
    expect(pyCount('(?>a|ab)c', 'abc')).toBe(0);
    expect(pyFindall('((a)\\2)++(x)', 'aaaax')).toEqual([['aa', 'a', 'x']]);
    expect(pyCount('(?>a|ab)?', 'c')).toBe(2);
  });

  it('counts re.split pieces including captured groups', () => {
    expect(pySplitCount('\\s?Section\\s?\\d+\\s?', 'Section 1 a Section 2 b')).toBe(3);
    expect(pySplitCount('(Section) (\\d)', 'x Section 1 y')).toBe(4);
  });
});

describe('language detection', () => {
  it('reproduces CPython random.Random(0) draws', () => {
    const r = new PyRandom();
    r.seed(0);
    expect(r.random()).toBe(0.8444218515250481);
    expect(r.gauss(0, 1)).toBeCloseTo(0.05219198828260849, 15);
    expect(r.gauss(0, 1)).toBeCloseTo(-1.0434089742005737, 15);
    expect([0, 1, 2, 3, 4].map(() => r.randbelow(37))).toEqual([16, 32, 31, 25, 19]);
  });

  it('detects common languages and is deterministic', () => {
    expect(detect('The weather today is lovely and the children are playing in the park.')).toBe('en');
    expect(detect("Aujourd'hui il fait beau et les enfants jouent dans le parc.")).toBe('fr');
    expect(detect('Hoy hace buen tiempo y los niños juegan en el parque.')).toBe('es');
    expect(detect('Сегодня хорошая погода, и дети играют в парке.')).toBe('ru');
    expect(detect('今日はいい天気で、子供たちは公園で遊んでいます。')).toBe('ja');
    const a = detectLangs('ciao hello hola');
    expect(detectLangs('ciao hello hola')).toEqual(a);
  });

  it('raises when the text has no features (digits, punctuation, nothing)', () => {
    expect(() => detect('1234 !!! ...')).toThrow(LangDetectException);
    expect(() => detect('')).toThrow(LangDetectException);
  });

  const pyProfiles = '/usr/lib/python3/dist-packages/langdetect/profiles';
  it.skipIf(!existsSync(pyProfiles))('uses the Python package profiles (55 languages) when given their folder', () => {
    const welsh = 'Mae hi wedi bod yn bwrw glaw drwy’r dydd yng Nghymru, ac mae’r plant yn chwarae yn y tŷ.';
    expect(detect(welsh, pyProfiles)).toBe('cy');
    expect(detect(welsh)).not.toBe('cy');
  });

  it('ignores URLs and e-mail addresses', () => {
    expect(() => detect('https://example.com/path?q=1 someone@example.org')).toThrow(LangDetectException);
  });
});
