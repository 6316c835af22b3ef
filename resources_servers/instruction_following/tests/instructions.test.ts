import { describe, expect, it } from 'vitest';
import { checkInstruction, INSTRUCTION_IDS, type Tools } from '../src/instructions.js';
import { findPunktDir } from '../src/punkt.js';
import { toolsFor } from '../src/verify.js';
import { testNltkData } from './helpers.js';

const dataDir = testNltkData();
const tools: Tools | null = dataDir ? toolsFor(findPunktDir(dataDir, {})) : null;

type Case = [kwargs: Record<string, unknown> | null, text: string];
interface IdCases {
  pass: Case[];
  fail: Case[];
}

const P = (kwargs: Record<string, unknown> | null, text: string): Case => [kwargs, text];

// For every instruction id: responses that follow it and responses that do not (our own cases).
const CASES: Record<string, IdCases> = {
  'keywords:existence': {
    pass: [P({ keywords: ['river', 'stone'] }, 'The RIVER carried a small stone.')],
    fail: [P({ keywords: ['river', 'stone'] }, 'The river carried sand.')],
  },
  'keywords:frequency': {
    pass: [
      P({ keyword: 'cat', frequency: 2, relation: 'at least' }, 'A cat met another Cat.'),
      P({ keyword: 'cat', frequency: 2, relation: 'less than' }, 'One cat only.'),
    ],
    fail: [
      P({ keyword: 'cat', frequency: 3, relation: 'at least' }, 'A cat met another cat.'),
      P({ keyword: 'cat', frequency: 2, relation: 'more than' }, 'cat cat cat'),
    ],
  },
  'keywords:forbidden_words': {
    pass: [P({ forbidden_words: ['red', 'blue'] }, 'The sky was bluest and the barn reddish.')],
    fail: [P({ forbidden_words: ['red', 'blue'] }, 'A Red apple.')],
  },
  'keywords:letter_frequency': {
    pass: [P({ letter: 'Z', let_frequency: 2, let_relation: 'at least' }, 'Zebras zigzag.')],
    fail: [P({ letter: 'z', let_frequency: 2, let_relation: 'less than' }, 'Zebras zigzag.')],
  },
  'language:response_language': {
    pass: [
      P({ language: 'fr' }, "Bonjour, je m'appelle Marie et j'habite à Paris depuis dix ans avec ma famille."),
      P({ language: 'de' }, '12345 !!! ???'),
    ],
    fail: [
      P({ language: 'fr' }, 'Hello, my name is Mary and I have lived in London for ten years with my family.'),
      P({ language: 'xx' }, 'Hello there, this is English.'),
    ],
  },
  'length_constraints:number_sentences': {
    pass: [
      P({ num_sentences: 3, relation: 'at least' }, 'Mr. Smith arrived. He sat down. Then he left!'),
      P({ num_sentences: 3, relation: 'less than' }, 'Dr. Jones met Mr. Brown at 5 p.m. on Friday. They talked.'),
    ],
    fail: [P({ num_sentences: 4, relation: 'at least' }, 'Mr. Smith arrived. He sat down. Then he left!')],
  },
  'length_constraints:number_paragraphs': {
    pass: [P({ num_paragraphs: 2 }, 'First part.\n***\nSecond part.\n***\n')],
    fail: [
      P({ num_paragraphs: 2 }, 'First.\n***\n\n***\nThird.'),
      P({ num_paragraphs: 3 }, 'First part.\n***\nSecond part.'),
    ],
  },
  'length_constraints:number_words': {
    pass: [P({ num_words: 4, relation: 'less than' }, "It's fine.")],
    fail: [P({ num_words: 4, relation: 'at least' }, "It's fine.")],
  },
  'length_constraints:nth_paragraph_first_word': {
    pass: [P({ num_paragraphs: 3, nth_paragraph: 2, first_word: 'Crash' }, 'One.\n\n"Crash," she said.\n\nThree.')],
    fail: [
      P({ num_paragraphs: 3, nth_paragraph: 2, first_word: 'crash' }, 'One.\n\nBoom went it.\n\nThree.'),
      P({ num_paragraphs: 2, nth_paragraph: 2, first_word: 'crash' }, 'One.\n\ncrash\n\nThree.'),
    ],
  },
  'detectable_content:number_placeholders': {
    pass: [P({ num_placeholders: 2 }, 'Dear [name], see you at [address].')],
    fail: [P({ num_placeholders: 2 }, 'Dear [name\n], see you soon.')],
  },
  'detectable_content:postscript': {
    pass: [
      P({ postscript_marker: 'P.S.' }, 'Hello.\n\np.s. bring snacks'),
      P({ postscript_marker: 'P.P.S' }, 'Hi.\nP. P. S see you'),
    ],
    fail: [P({ postscript_marker: 'P.S.' }, 'Hello. PS bring snacks')],
  },
  'detectable_format:number_bullet_lists': {
    pass: [P({ num_bullets: 3 }, 'Items:\n* one\n  * two\n- three\n**bold** line')],
    fail: [P({ num_bullets: 2 }, '* one\n* two\n* three')],
  },
  'detectable_format:constrained_response': {
    pass: [P(null, 'Thinking... My answer is maybe.')],
    fail: [P(null, 'My answer is perhaps.')],
  },
  'detectable_format:number_highlighted_sections': {
    pass: [P({ num_highlights: 2 }, 'This is *one* and **two** here.')],
    fail: [P({ num_highlights: 2 }, 'Only *one* and * * empty.')],
  },
  'detectable_format:multiple_sections': {
    pass: [P({ section_spliter: 'Section', num_sections: 2 }, 'Section 1\nIntro\nSection 2\nBody')],
    fail: [P({ section_spliter: 'SECTION', num_sections: 2 }, 'SECTION 1\nIntro\nSection 2\nBody')],
  },
  'detectable_format:json_format': {
    pass: [
      P(null, '```json\n{"a": [1, 2, {"b": null}]}\n```'),
      P(null, '{"x": NaN}'),
    ],
    fail: [P(null, "```json\n{'a': 1}\n```"), P(null, '')],
  },
  'detectable_format:title': {
    pass: [P(null, '<<My Title>>\nBody')],
    fail: [P(null, '<<   >> body'), P(null, '<<broken\ntitle>>')],
  },
  'combination:two_responses': {
    pass: [P(null, 'First answer.\n******\nSecond answer.')],
    fail: [P(null, 'Same.\n******\nSame.'), P(null, 'A\n******\n\n******\nB')],
  },
  'combination:repeat_prompt': {
    pass: [P({ prompt_to_repeat: 'Write a poem about tea.' }, 'write a poem about TEA. Leaves in water...')],
    fail: [P({ prompt_to_repeat: 'Write a poem about tea.' }, 'Here is a poem about tea.'), P({}, 'anything')],
  },
  'startend:end_checker': {
    pass: [P({ end_phrase: 'Any other questions?' }, 'Done here. any other questions?"  ')],
    fail: [P({ end_phrase: 'Any other questions?' }, 'Any other questions? Bye.')],
  },
  'change_case:capital_word_frequency': {
    pass: [P({ capital_frequency: 2, capital_relation: 'at least' }, 'This is VERY IMPORTANT news.')],
    fail: [P({ capital_frequency: 2, capital_relation: 'less than' }, 'This is VERY IMPORTANT news.')],
  },
  'change_case:english_capital': {
    pass: [P(null, 'THIS IS A SHOUTED ENGLISH SENTENCE ABOUT THE WEATHER.')],
    fail: [P(null, 'THIS IS Almost all capitals.')],
  },
  'change_case:english_lowercase': {
    pass: [P(null, 'this is a quiet sentence written in english about the weather today.')],
    fail: [P(null, 'this is quiet but has One capital.')],
  },
  'punctuation:no_comma': {
    pass: [P(null, 'No commas here，only a full-width one.')],
    fail: [P(null, 'Well, yes.')],
  },
  'startend:quotation': {
    pass: [P(null, '  "Quoted answer."  ')],
    fail: [P(null, '"'), P(null, '"Half quoted.')],
  },
  'copy:repeat_phrase': {
    pass: [
      P(
        { phrase: 'The early bird catches the worm', small_n: 2 },
        'The early cat catches the worm. Later: The early bird eats the worm.',
      ),
    ],
    fail: [
      P({ phrase: 'The early bird catches the worm', small_n: 2 }, 'The early bird catches the worm. The early bird catches the worm.'),
      P({ phrase: 'The early bird catches the worm', small_n: 2 }, 'The early cat catches the worm.'),
    ],
  },
  'copy:copy': {
    pass: [P({ prompt_to_repeat: 'Copy me exactly.' }, '  copy ME exactly. ')],
    fail: [P({ prompt_to_repeat: 'Copy me exactly.' }, 'Copy me exactly!')],
  },
  'new:copy_span_idx': {
    pass: [
      P({ prompt_to_repeat: 'Hello wonderful world', n_start: 6, n_end: 15 }, 'WONDERFUL'),
      P({ prompt_to_repeat: 'Hello wonderful world', n_start: 0, n_end: 5 }, 'hello'),
    ],
    fail: [P({ prompt_to_repeat: 'Hello wonderful world', n_start: 6, n_end: 15 }, 'wonderful world')],
  },
  'detectable_format:sentence_hyphens': {
    pass: [P(null, 'I woke up.-I ate breakfast.-I left.')],
    fail: [P(null, 'I woke up. - I ate breakfast.')],
  },
  'keywords:no_adjacent_consecutive': {
    pass: [P(null, 'Zebras eat grass quietly')],
    fail: [P(null, 'Dogs eat fish'), P(null, 'apple Banana')],
  },
  'detectable_format:square_brackets': {
    pass: [P(null, '[Every] [word] [here]'), P(null, '')],
    fail: [P(null, '[Every] word [here]')],
  },
  'keywords:word_once': {
    pass: [P({ keyword: 'moon' }, 'The Moon rose.')],
    fail: [P({ keyword: 'moon' }, 'The moon and the moonlight.')],
  },
  'keywords:word_count_different_numbers': {
    pass: [P({ keyword: 'tree', frequency: 2, relation: 'at least' }, 'A tree and a tree.')],
    fail: [P({ keyword: 'tree', frequency: 2, relation: 'less than' }, 'A tree and a tree.')],
  },
  'keywords:exclude_word_harder': {
    pass: [P({ keyword: 'cat' }, 'The cats sleep. cat.')],
    fail: [P({ keyword: 'cat' }, 'The cat sleeps.'), P({}, 'no instruction given')],
  },
  'paragraphs:paragraphs': {
    pass: [P(null, 'First paragraph.\n***\nSecond paragraph.')],
    fail: [P(null, 'Only one paragraph.'), P(null, 'A\n***\nB\n***\nC')],
  },
  'paragraphs:paragraphs2': {
    pass: [P(null, 'First paragraph.\n\nSecond paragraph.\n\n')],
    fail: [P(null, 'First.\n\n\n\nSecond.')],
  },
  'first_word:first_word_sent': {
    pass: [P({ first_word: 'so' }, 'So it begins. SO it ends!'), P({ first_word: 'so' }, '')],
    fail: [P({ first_word: 'so' }, 'So it begins. And it ends.'), P({ first_word: ['so'] }, 'So.')],
  },
  'first_word:first_word_answer': {
    pass: [P({ first_word: 'Yes' }, '  yes indeed.')],
    // The whole first whitespace token is compared, punctuation included.
    fail: [P({ first_word: 'yes' }, 'Yes, indeed.'), P({ first_word: 'yes' }, '   ')],
  },
  'last_word:last_word_sent': {
    pass: [P({ last_word: 'end' }, 'This is the END. Here is another end!'), P({ last_word: ['end'] }, 'The end.')],
    fail: [P({ last_word: 'end' }, 'This is the end. Not here.')],
  },
  'last_word:last_word_answer': {
    pass: [P({ last_word: 'contest' }, 'A new kind of contest.')],
    fail: [P({ last_word: 'contest' }, 'A contest of wills.'), P({ last_word: 'contest' }, '')],
  },
  'detectable_format:bigram_wrapping': {
    pass: [P(null, '<<I am>> <<at home>> <<alone>>')],
    fail: [P(null, '<<I am>> at home')],
  },
  'copy:copying_simple': {
    pass: [P({ prompt_to_repeat: 'Say hi.' }, 'say hi.')],
    fail: [P({ prompt_to_repeat: 'Say hi.' }, 'Hi!')],
  },
  'copy:copying_multiple': {
    pass: [P({ prompt_to_repeat: 'Say hi.', N: 3 }, 'Say hi.\n******\nsay hi.\n******\nSAY HI.')],
    fail: [P({ prompt_to_repeat: 'Say hi.', N: 3 }, 'Say hi.\n******\nSay hi.')],
  },
  'punctuation:punctuation_dot': {
    pass: [P(null, 'No dots at all here!')],
    fail: [P(null, 'One dot.')],
  },
  'punctuation:punctuation_exclamation': {
    pass: [P(null, 'Calm words.')],
    fail: [P(null, 'Wow!')],
  },
  'count:lowercase_counting': {
    pass: [P({ N: 2 }, 'THE cat SAT on THE MAT café')],
    fail: [P({ N: 2 }, 'the cat sat')],
  },
  'letters:letter_counting': {
    pass: [P({ N: 5, relation: 'less than' }, 'Hi 123 ok'), P({ N: 3, relation: 'at least' }, 'abc')],
    fail: [P({ N: 5, relation: 'at least' }, 'Hi ok'), P({ N: 5, relation: 'around' }, 'Hello world')],
  },
  'letters:letter_counting2': {
    pass: [P({ letter: 'e', let_frequency: 3, let_relation: 'at least' }, 'Everyone sees')],
    fail: [P({ letter: 'e', let_frequency: 3, let_relation: 'less than' }, 'Everyone sees')],
  },
  'count:counting_composition': {
    // word_tokenize counts the final period as a token.
    pass: [P({ n_sent: 2, n_words: 4 }, 'I like tea. You like coffee.\n***\nWe sing songs. They dance well.\n***\nBirds fly high. Fish swim deep.')],
    fail: [
      P({ n_sent: 2, n_words: 4 }, 'I like tea. You like coffee.\n***\nWe sing songs. They dance well.'),
      P({ n_sent: 2, n_words: 3 }, 'I like tea. You like coffee.\n***\nWe sing songs. They dance well.\n***\nBirds fly high. Fish swim deep.'),
      P({ n_sent: 2, n_words: 4 }, '***\nI like tea. You like coffee.\n***\nWe sing songs. They dance well.\n***\nBirds fly high. Fish swim deep.'),
    ],
  },
  'count:count_unique': {
    pass: [P(null, 'Every word differs here.')],
    fail: [P(null, 'The cat saw the dog. The end.'), P(null, 'One. Two.')],
  },
  'count:count_increment_word': {
    pass: [P({ keyword1: 'sun', keyword2: 'rain' }, 'Sun then rain and more rain.')],
    fail: [P({ keyword1: 'sun', keyword2: 'rain' }, 'Sun then rain.'), P({ keyword1: 'sun' }, 'Sun then rain and rain.')],
  },
  'keywords:palindrome': {
    pass: [P(null, 'We saw a racecar today')],
    fail: [P(null, 'No such words here')],
  },
  'keywords:keyword_specific_position': {
    pass: [P({ keyword: 'blue', n: 2, m: 3 }, 'The sky. It is blue today.')],
    fail: [P({ keyword: 'blue', n: 2, m: 3 }, 'The sky is blue. It is not blue.'), P({ keyword: 'blue', n: 3, m: 1 }, 'One. Two.')],
  },
  'keywords:start_end': {
    pass: [P(null, 'Hello there, I say hello')],
    fail: [P(null, 'Hello there, I say hello.'), P(null, 'Hello')],
  },
};

describe.skipIf(!tools)('instruction checks', () => {
  it('covers all 54 instruction ids', () => {
    expect(INSTRUCTION_IDS.length).toBe(54);
    expect(Object.keys(CASES).sort()).toEqual([...INSTRUCTION_IDS].sort());
  });

  for (const id of Object.keys(CASES)) {
    it(id, () => {
      const c = CASES[id]!;
      expect(c.pass.length).toBeGreaterThan(0);
      expect(c.fail.length).toBeGreaterThan(0);
      for (const [kw, text] of c.pass) {
        const r = checkInstruction(id, kw, text, tools!);
        expect({ text, ...r }).toEqual({ text, ok: true });
      }
      for (const [kw, text] of c.fail) {
        expect({ text, ok: checkInstruction(id, kw, text, tools!).ok }).toEqual({ text, ok: false });
      }
    });
  }

  it('counts an unknown id, a non-mapping kwargs entry and an unexpected kwarg as not followed', () => {
    expect(checkInstruction('keywords:nonexistent', {}, 'x', tools!).ok).toBe(false);
    expect(checkInstruction(7, {}, 'x', tools!).ok).toBe(false);
    expect(checkInstruction('punctuation:no_comma', [], 'no commas', tools!).ok).toBe(false);
    expect(checkInstruction('punctuation:no_comma', { extra: 1 }, 'no commas', tools!).ok).toBe(false);
    // A kwarg whose value is null is dropped before building.
    expect(checkInstruction('punctuation:no_comma', { extra: null }, 'no commas', tools!).ok).toBe(true);
  });

  it('applies Python typing to kwargs: strings are not numbers, bools are', () => {
    expect(checkInstruction('length_constraints:number_words', { num_words: '3', relation: 'at least' }, 'a b c d', tools!).ok).toBe(false);
    expect(checkInstruction('length_constraints:number_words', { num_words: true, relation: 'at least' }, 'a', tools!).ok).toBe(true);
    expect(checkInstruction('keywords:existence', { keywords: 'ab' }, 'b then a', tools!).ok).toBe(true);
    expect(checkInstruction('keywords:existence', { keywords: 'ab' }, 'b only', tools!).ok).toBe(false);
  });

  it('uses the keyword as a Python regex with Unicode classes', () => {
    expect(checkInstruction('keywords:existence', { keywords: ['caf\\w'] }, 'un café', tools!).ok).toBe(true);
    expect(checkInstruction('keywords:existence', { keywords: ['(?P<x>ab)(?P=x)'] }, 'ABAB', tools!).ok).toBe(true);
    expect(checkInstruction('keywords:existence', { keywords: ['a{'] }, 'a{', tools!).ok).toBe(true);
    expect(checkInstruction('keywords:existence', { keywords: ['(unclosed'] }, '(unclosed', tools!).ok).toBe(false);
    expect(checkInstruction('keywords:forbidden_words', { forbidden_words: ['bad'] }, 'très-bad', tools!).ok).toBe(false);
    expect(checkInstruction('keywords:forbidden_words', { forbidden_words: ['bad'] }, 'ébad', tools!).ok).toBe(true);
  });

  it('is deterministic where upstream draws random defaults', () => {
    const texts = ['one two three', 'A. B. C. D. E. F. G.', ''];
    for (const id of ['length_constraints:number_words', 'length_constraints:number_sentences', 'keywords:letter_frequency']) {
      for (const t of texts) {
        const a = checkInstruction(id, {}, t, tools!).ok;
        const b = checkInstruction(id, {}, t, tools!).ok;
        expect(a).toBe(b);
      }
    }
  });
});
