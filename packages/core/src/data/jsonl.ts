/**
 * The one JSONL reader: lines come from `readLines` (universal newlines, streamed), each non-blank
 * line is parsed as a JSON object, and a line that is not one is reported with its number and the
 * reason, never dropped silently. Blank lines (whitespace only) are skipped.
 */
import { readFileSync } from 'node:fs';
import { BadRowError } from '../errors.js';
import { readLines, type Line } from './lines.js';

export type JsonObject = Record<string, unknown>;

/** A line parsed as a JSON object, or why it is not one. */
export type ParsedObject = { row: JsonObject } | { row: null; problem: string; /** JSON.parse's message when the text is not JSON at all. */ parseError?: string };

/** The text of one JSONL line as a JSON object: `not JSON (…)` or `a JSON array, not an object` when it is not one. */
export function parseJsonObject(text: string): ParsedObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const parseError = (err as Error).message;
    return { row: null, problem: `not JSON (${parseError})`, parseError };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return { row: value as JsonObject };
  return { row: null, problem: `a JSON ${Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value}, not an object` };
}

/**
 * `text` (the JSON text of `obj`) with `fields` added: spliced before its closing brace, so the
 * object's own bytes stay as they are, when the text is one line and `obj` has none of the fields;
 * else `obj` with the fields (theirs replacing its own) serialized again. One line, no newline.
 */
export function withJsonFields(text: string, obj: JsonObject, fields: JsonObject): string {
  const end = text.lastIndexOf('}');
  const keys = Object.keys(fields);
  const spliceable =
    end > 0 &&
    text.charCodeAt(0) === 123 /* { */ &&
    text.slice(end + 1).trim() === '' &&
    !text.includes('\n') &&
    !text.includes('\r') &&
    !keys.some((k) => Object.hasOwn(obj, k));
  if (!spliceable) return JSON.stringify({ ...obj, ...fields });
  const added = JSON.stringify(fields).slice(1, -1);
  if (!added) return text.slice(0, end + 1);
  let head = text.slice(0, end);
  // `{}` or `{ }`: nothing before the fields needs a comma.
  let i = head.length - 1;
  while (i > 0 && (head.charCodeAt(i) === 32 || head.charCodeAt(i) === 9)) i--;
  if (i === 0) head = '{';
  return `${head}${i === 0 ? '' : ','}${added}}`;
}

export type JsonlLine = Line & ParsedObject;

/** Every non-blank line of a JSONL file, in order, with its 1-based number: the row, or the problem. */
export async function* readJsonl(path: string): AsyncGenerator<JsonlLine> {
  for await (const line of readLines(path)) {
    if (!line.text.trim()) continue;
    yield { ...line, ...parseJsonObject(line.text) };
  }
}

/** `line N of <path> is not a JSON object (why)`: the message for a line that `readJsonl` could not use. */
export function jsonlProblem(path: string, line: JsonlLine & { row: null }): string {
  return `line ${line.lineNo} of ${path} is not a JSON object (${line.problem})`;
}

/**
 * The JSON objects of a small JSONL text read whole (blank lines skipped); the first line that is
 * not an object stops it with a BadRowError naming `source` and the line.
 */
export function parseJsonl(text: string, source: string): JsonObject[] {
  const rows: JsonObject[] = [];
  text.split(/\r\n|\r|\n/).forEach((t, i) => {
    if (!t.trim()) return;
    const parsed = parseJsonObject(t);
    if (parsed.row === null) throw new BadRowError(jsonlProblem(source, { lineNo: i + 1, text: t, ...parsed }));
    rows.push(parsed.row);
  });
  return rows;
}

/** `parseJsonl` of a file. */
export function readJsonlSync(path: string): JsonObject[] {
  return parseJsonl(readFileSync(path, 'utf8'), path);
}
