// Differential test against the Python libraries themselves, where they are installed
// (e.g. Debian's python3-nltk and python3-langdetect): NLTK's Punkt sentence tokenizer and
// word_tokenize built from the same punkt_tab parameters, and langdetect with seed 0, on real model
// responses from ../shared/upstream-data plus generated tricky texts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '@nemo-gym/core/config';
import { detect } from '../src/langdetect.js';
import { findPunktDir, loadPunktParams, PunktSentenceTokenizer } from '../src/punkt.js';
import { countWords } from '../src/util.js';
import { wordTokenize } from '../src/word_tokenize.js';
import { testNltkData } from './helpers.js';

const ORACLE = String.raw`
import json, os, sys, re
from collections import defaultdict
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from nltk.tokenize.destructive import NLTKWordTokenizer
import langdetect
from langdetect import DetectorFactory
d = sys.argv[1]
p = PunktParameters()
p.abbrev_types = set(l.strip() for l in open(os.path.join(d, 'abbrev_types.txt'), encoding='utf-8') if l.strip())
p.sent_starters = set(l.strip() for l in open(os.path.join(d, 'sent_starters.txt'), encoding='utf-8') if l.strip())
p.collocations = set(tuple(l.rstrip('\n').split('\t')) for l in open(os.path.join(d, 'collocations.tab'), encoding='utf-8') if l.strip())
oc = defaultdict(int)
for l in open(os.path.join(d, 'ortho_context.tab'), encoding='utf-8'):
    w, f = l.rstrip('\n').rsplit('\t', 1)
    oc[w] = int(f)
p.ortho_context = oc
punkt = PunktSentenceTokenizer(p)
tb = NLTKWordTokenizer()
DetectorFactory.seed = 0
out = {'profiles': os.path.join(os.path.dirname(langdetect.__file__), 'profiles'), 'rows': []}
for t in json.load(open(sys.argv[2], encoding='utf-8')):
    try:
        lang = langdetect.detect(t)
    except langdetect.LangDetectException:
        lang = None
    out['rows'].append({
        'sent': punkt.tokenize(t),
        'words': [w for s in punkt.tokenize(t) for w in tb.tokenize(s)],
        'lang': lang,
        'words_re': len(re.findall(r'\w+', t)),
    })
json.dump(out, open(sys.argv[3], 'w', encoding='utf-8'), ensure_ascii=False)
`;

function pythonWithLibs(): string | null {
  for (const py of ['python3', '/usr/bin/python3']) {
    const r = spawnSync(py, ['-c', 'import nltk, langdetect'], { encoding: 'utf8' });
    if (r.status === 0) return py;
  }
  return null;
}

const dataDir = testNltkData();
const python = dataDir ? pythonWithLibs() : null;
if (dataDir && !python) console.log('skipping NLTK/langdetect differential test: no python3 with nltk and langdetect');

/** Model responses recorded upstream (any server), plus generated texts with abbreviations, quotes and lists. */
function corpus(): string[] {
  const texts: string[] = [];
  const root = sharedPath('upstream-data');
  if (existsSync(root)) {
    for (const server of readdirSync(root)) {
      const f = join(root, server, 'example_rollouts.jsonl');
      if (!existsSync(f)) continue;
      for (const line of readFileSync(f, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const row = JSON.parse(line) as { response?: { output?: { content?: unknown }[] } };
        for (const item of row.response?.output ?? []) {
          if (!Array.isArray(item.content)) continue;
          // Long agent transcripts add time, not coverage: keep their first 2,000 characters.
          for (const c of item.content as { text?: unknown }[]) if (typeof c.text === 'string' && c.text.trim()) texts.push(c.text.slice(0, 2000));
        }
      }
    }
  }
  const pieces = [
    'Mr. Smith', 'went home.', 'Dr. J. R. Tolkien wrote.', 'e.g. this', 'the U.S. team', 'at 5 p.m. sharp.', 'It costs $3.50.',
    'Wait...', 'what?!', '"Stop," he said.', '(see Fig. 3)', 'No. 5 is', 'vs. them', 'Jan. 5, 2020', "can't", 'gonna', "'Tis",
    'ALL CAPS', 'pp. 23-25', 'etc.', 'Ph.D. students', 'A.', 'b.', '—dash—', 'café', 'Это тест.', '¿Qué?', '* bullet', '- item',
    '***', '\n', '\n\n', '“quoted”', '«guillemets»', '--', ';', ':', ',', 'Gen. Lee', 'Inc. said', 'Jr.', 'i.e.', '3.', 'IV.',
  ];
  let seed = 7;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  for (let i = 0; i < 100; i++) {
    const n = 1 + Math.floor(rnd() * 20);
    texts.push(Array.from({ length: n }, () => pieces[Math.floor(rnd() * pieces.length)]).join(rnd() < 0.2 ? '\n' : ' '));
  }
  return [...new Set(texts)];
}

describe.skipIf(!python)('agreement with NLTK and langdetect (Python)', () => {
  it('sent_tokenize, word_tokenize, \\w+ counts and langdetect agree on every text', { timeout: 120_000 }, () => {
    const punktDir = findPunktDir(dataDir, {});
    const punkt = new PunktSentenceTokenizer(loadPunktParams(punktDir));
    const texts = corpus();
    const dir = mkdtempSync(join(tmpdir(), 'if-oracle-'));
    writeFileSync(join(dir, 'oracle.py'), ORACLE);
    writeFileSync(join(dir, 'texts.json'), JSON.stringify(texts));
    const r = spawnSync(python!, [join(dir, 'oracle.py'), `${punktDir}/`, join(dir, 'texts.json'), join(dir, 'out.json')], {
      encoding: 'utf8',
      timeout: 110_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8')) as {
      profiles: string;
      rows: { sent: string[]; words: string[]; lang: string | null; words_re: number }[];
    };
    const mismatches: string[] = [];
    texts.forEach((t, i) => {
      const want = out.rows[i]!;
      if (JSON.stringify(punkt.tokenize(t)) !== JSON.stringify(want.sent)) mismatches.push(`sent: ${JSON.stringify(t.slice(0, 120))}`);
      if (JSON.stringify(wordTokenize(punkt, t)) !== JSON.stringify(want.words)) mismatches.push(`words: ${JSON.stringify(t.slice(0, 120))}`);
      if (countWords(t) !== want.words_re) mismatches.push(`count_words: ${JSON.stringify(t.slice(0, 120))}`);
      let lang: string | null;
      try {
        lang = detect(t, out.profiles);
      } catch {
        lang = null;
      }
      if (lang !== want.lang) mismatches.push(`lang ${lang} vs ${want.lang}: ${JSON.stringify(t.slice(0, 120))}`);
    });
    console.log(`NLTK/langdetect agreement: ${texts.length - new Set(mismatches.map((m) => m.split(': ')[1])).size}/${texts.length} texts identical`);
    expect(mismatches).toEqual([]);
  });
});
