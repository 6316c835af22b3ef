import { existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detect, detectLangs, LangDetectException, PyRandom } from '../src/langdetect.js';
import { pyJsonLoadable } from '@nemo-gym/core/py';
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

describe('Python json.loads acceptance', () => {
  it('json.loads accepts NaN/Infinity but not single quotes or trailing data', () => {
    expect(pyJsonLoadable('[NaN, -Infinity, "NaN"]')).toBe(true);
    expect(pyJsonLoadable('[-NaN]')).toBe(false);
    expect(pyJsonLoadable('1Infinity')).toBe(false);
    expect(pyJsonLoadable("{'a': 1}")).toBe(false);
    expect(pyJsonLoadable('{} {}')).toBe(false);
    expect(pyJsonLoadable('['.repeat(5000) + ']'.repeat(5000))).toBe(false);
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

  const debianProfiles = '/usr/lib/python3/dist-packages/langdetect/profiles';
  it.skipIf(!existsSync(debianProfiles))('uses the Python package profiles (55 languages) when given their folder', () => {
    const welsh = 'Mae hi wedi bod yn bwrw glaw drwy’r dydd yng Nghymru, ac mae’r plant yn chwarae yn y tŷ.';
    expect(detect(welsh, debianProfiles)).toBe('cy');
    expect(detect(welsh)).not.toBe('cy');
  });

  it('ignores URLs and e-mail addresses', () => {
    expect(() => detect('https://example.com/path?q=1 someone@example.org')).toThrow(LangDetectException);
  });
});
