/**
 * Multiple-choice answer extraction and scoring, with the semantics of upstream's mcqa server at
 * the reference commit: Python regexes, `str.strip/split/upper/lower`, `isalpha`, dict order.
 */
import { NgError } from '@nemo-gym/core/errors';
import { MCQA_ERRORS } from './errors.js';
import { PyRegex, PyRegexError, PY_RE, pyIsAlpha, pyLen, pySplit, pyStrip } from '@nemo-gym/core/py';

export const GRADING_MODES = ['strict_single_letter_boxed', 'lenient_boxed', 'lenient_answer_colon'] as const;
export type GradingMode = (typeof GRADING_MODES)[number];

/** One options entry, e.g. `{"A": "Karyotyping"}`. */
export type OptionEntry = Record<string, string>;

/** Raised when a dataset row's `output_regex` cannot be applied (upstream crashes on these). */
export class OutputRegexError extends NgError {
  override readonly name = 'OutputRegexError';
  constructor(message: string) {
    super(MCQA_ERRORS.NG_ERR_OUTPUT_REGEX, message);
  }
}

/** Lowercase and collapse whitespace (`" ".join(s.lower().split())`). */
export function normalizeForMatch(s: string): string {
  return pySplit(s.toLowerCase()).join(' ');
}

const STRICT_BOXED = new PyRegex(String.raw`\\boxed\{\s*[^A-Za-z]*([A-Z])[^A-Za-z]*\s*\}`);
const BOXED_CONTENT = new PyRegex(String.raw`\\boxed\{\s*(.*?)\s*\}`, PY_RE.DOTALL);
const LATEX_TEXT_WRAP = new PyRegex(String.raw`\\text\{\s*(.*?)\s*\}`, PY_RE.DOTALL);
const ANSWER_COLON = new PyRegex(String.raw`(?i)answer\s*:\s*(.+)`);

interface OutputItemLike {
  type?: unknown;
  role?: unknown;
  content?: unknown;
}

/**
 * Text of every assistant message in the response output, each content part's `text` (refusals
 * have none), joined with newlines and stripped.
 */
export function extractAssistantText(output: readonly unknown[]): string {
  const texts: string[] = [];
  for (const raw of output) {
    if (!raw || typeof raw !== 'object') continue;
    const o = raw as OutputItemLike;
    if (o.type !== 'message' || o.role !== 'assistant') continue;
    if (Array.isArray(o.content)) {
      for (const c of o.content) {
        if (c && typeof c === 'object' && typeof (c as { text?: unknown }).text === 'string') {
          texts.push((c as { text: string }).text);
        }
      }
    } else if (typeof o.content === 'string') {
      texts.push(o.content);
    }
  }
  return pyStrip(texts.join('\n'));
}

/** Letters from the FIRST key of each options entry that is a single alphabetic character. */
export function allowedLetters(options: readonly OptionEntry[] | null | undefined): Set<string> {
  const letters = new Set<string>();
  for (const entry of options ?? []) {
    const keys = Object.keys(entry);
    if (keys.length === 0) continue;
    const k = keys[0]!;
    if (pyLen(k) === 1 && pyIsAlpha(k)) letters.add(k.toUpperCase());
  }
  return letters;
}

export function parseStrictBoxed(text: string, allowed: Set<string>): string | null {
  const m = STRICT_BOXED.search(text);
  if (!m) return null;
  const letter = m.groups[1]!.toUpperCase();
  return allowed.has(letter) ? letter : null;
}

/** Repeatedly unwrap a string that is entirely `\text{ ... }`. */
export function stripLatexWrappers(s: string): string {
  for (;;) {
    const m = LATEX_TEXT_WRAP.fullmatch(s);
    if (!m) return s;
    s = m.groups[1] ?? '';
  }
}

/** lenient_boxed fallback: option text contained in the first `\boxed{...}`; exactly one letter may match. */
export function matchOptionText(
  text: string,
  options: readonly OptionEntry[] | null | undefined,
  allowed: Set<string>,
): string | null {
  const boxed = BOXED_CONTENT.search(text);
  if (!boxed) return null;
  const inner = boxed.groups[1] ?? '';
  const candidates = [inner, stripLatexWrappers(inner)].map(normalizeForMatch);
  const normalizedOptions: [string, string][] = [];
  for (const entry of options ?? []) {
    for (const [k, v] of Object.entries(entry)) {
      if (pyLen(k) === 1 && allowed.has(k.toUpperCase())) {
        normalizedOptions.push([k.toUpperCase(), normalizeForMatch(v)]);
        break;
      }
    }
  }
  const matched = new Set<string>();
  for (const cand of candidates) {
    for (const [letter, opt] of normalizedOptions) {
      if (opt && cand.includes(opt)) matched.add(letter);
    }
  }
  return matched.size === 1 ? [...matched][0]! : null;
}

/** Datasets use a handful of distinct templates: compiled patterns are kept (null = Python rejects it). */
const regexCache = new Map<string, PyRegex | null>();
const REGEX_CACHE_LIMIT = 512;

function compileCached(pattern: string): PyRegex | null {
  if (regexCache.has(pattern)) return regexCache.get(pattern)!;
  let re: PyRegex | null;
  try {
    re = new PyRegex(pattern, PY_RE.IGNORECASE);
  } catch (e) {
    if (!(e instanceof PyRegexError)) {
      throw new OutputRegexError(`template_metadata.output_regex cannot be used: ${(e as Error).message}`);
    }
    re = null;
  }
  if (regexCache.size >= REGEX_CACHE_LIMIT) regexCache.delete(regexCache.keys().next().value as string);
  regexCache.set(pattern, re);
  return re;
}

/**
 * `template_metadata.output_regex` extraction: last `re.findall(regex, text, re.IGNORECASE)` item.
 * A pattern Python would reject yields null (upstream catches `re.error`); a pattern with two or
 * more groups that matches makes findall return tuples, which upstream cannot strip: that raises
 * `OutputRegexError`, as does a construct JavaScript cannot express.
 */
export function parseWithCustomRegex(
  text: string,
  pattern: string,
  allowed: Set<string>,
  options: readonly OptionEntry[] | null | undefined,
): string | null {
  const re = compileCached(pattern);
  if (re === null) return null;
  const matches = re.findall(text);
  if (matches.length === 0) return null;
  const last = matches[matches.length - 1]!;
  if (Array.isArray(last)) {
    throw new OutputRegexError(
      `template_metadata.output_regex has ${re.groups} capturing groups, so each match is a tuple and no single ` +
        `answer can be taken from it; keep one capturing group for the answer and write the others as (?:...)`,
    );
  }
  const captured = pyStrip(last).toUpperCase();
  if (pyLen(captured) === 1 && pyIsAlpha(captured)) return captured; // the regex is trusted
  const normalizedCaptured = normalizeForMatch(captured);
  for (const entry of options ?? []) {
    for (const [k, v] of Object.entries(entry)) {
      if (allowed.has(k.toUpperCase()) && normalizeForMatch(v) === normalizedCaptured) return k.toUpperCase();
    }
  }
  return null;
}

export function parseAnswerColon(
  text: string,
  options: readonly OptionEntry[] | null | undefined,
  allowed: Set<string>,
): string | null {
  const m = ANSWER_COLON.search(text);
  if (!m) return null;
  const candidate = pyStrip(stripLatexWrappers(m.groups[1] ?? ''));
  if (pyLen(candidate) === 1 && pyIsAlpha(candidate)) {
    const up = candidate.toUpperCase();
    if (allowed.has(up)) return up;
  }
  const norm = normalizeForMatch(candidate);
  for (const entry of options ?? []) {
    for (const [k, v] of Object.entries(entry)) {
      const up = k.toUpperCase();
      if (allowed.has(up) && normalizeForMatch(v) === norm) return up;
    }
  }
  return null;
}

export interface GradeInput {
  /** Assistant text, from `extractAssistantText`. */
  text: string;
  options?: readonly OptionEntry[] | null;
  expected_answer?: string | null;
  grading_mode: GradingMode;
  template_metadata?: Record<string, unknown> | null;
}

export interface GradeResult {
  reward: number;
  expected_answer: string;
  extracted_answer: string | null;
}

/** The row's `output_regex` when it has one to apply (a non-string is an `OutputRegexError`). */
export function outputRegexOf(tm: Record<string, unknown> | null | undefined): string | null {
  if (!tm || Object.keys(tm).length === 0 || !Object.prototype.hasOwnProperty.call(tm, 'output_regex')) return null;
  const pattern = tm.output_regex;
  if (typeof pattern !== 'string') {
    const kind = pattern === null ? 'null' : Array.isArray(pattern) ? 'an array' : `a ${typeof pattern}`;
    throw new OutputRegexError(`template_metadata.output_regex must be a string (a Python regular expression), got ${kind}`);
  }
  return pattern;
}

export function grade(input: GradeInput): GradeResult {
  const { text } = input;
  const options = input.options ?? null;
  const allowed = allowedLetters(options);
  let pred: string | null = null;

  const pattern = outputRegexOf(input.template_metadata);
  if (pattern !== null) pred = parseWithCustomRegex(text, pattern, allowed, options);

  if (pred === null) {
    if (input.grading_mode === 'strict_single_letter_boxed') {
      pred = parseStrictBoxed(text, allowed);
    } else if (input.grading_mode === 'lenient_boxed') {
      pred = parseStrictBoxed(text, allowed) ?? matchOptionText(text, options, allowed);
    } else {
      pred = parseAnswerColon(text, options, allowed);
    }
  }

  const gold = pyStrip(input.expected_answer ?? '').toUpperCase();
  const reward = pred !== null && gold !== '' && pred === gold ? 1.0 : 0.0;
  return { reward, expected_answer: gold, extracted_answer: pred };
}

export type GradeOutcome = { ok: true; result: GradeResult } | { ok: false; regexError: string };

/** Worker-thread entry: plain data in and out (the error class does not cross threads). */
export function gradeTask(input: GradeInput): GradeOutcome {
  try {
    return { ok: true, result: grade(input) };
  } catch (e) {
    if (e instanceof OutputRegexError) return { ok: false, regexError: e.message };
    throw e;
  }
}
