/**
 * Row validation for datasets: a row is a JSON object whose `responses_create_params` passes the
 * strict Responses create-params schema. Valid rows yield the per-row metrics.
 */
import { z } from 'zod';
import { DEFAULT_IMAGE_LIMITS, imageProblems } from '../openai/images.js';
import { ResponseCreateParamsSchema } from '../openai/schemas.js';
import { countDumpWords } from '../py/dumps.js';
import { pyJsonLoads, PyJsonDecodeError, toPlain, type PyDict, type PyValue } from '../py/json.js';
import type { SampleMetrics } from './metrics.js';

export interface RowProblem {
  /** Dotted path of the failing field (`responses_create_params.input[0].role`), or "" for the whole row. */
  field: string;
  message: string;
}

export type RowCheck =
  | { ok: true; row: PyDict; metrics: SampleMetrics }
  | { ok: false; row: PyValue | undefined; problems: RowProblem[] };

function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

// Fields kept by the reference implementation's `exclude_unset` dump of each item kind; keys
// outside these lists are dropped before the words are counted.
const TOKEN_KEYS = ['prompt_token_ids', 'generation_token_ids', 'generation_log_probs'];
const CONTENT_PART_KEYS: Record<string, string[]> = {
  input_text: ['text', 'type'],
  input_image: ['detail', 'type', 'file_id', 'image_url'],
  input_file: ['type', 'file_data', 'file_id', 'file_url', 'filename'],
  output_text: ['annotations', 'text', 'type', 'logprobs'],
  refusal: ['refusal', 'type'],
};
const ITEM_KEYS: Record<string, string[]> = {
  function_call: ['arguments', 'call_id', 'name', 'type', 'id', 'status'],
  function_call_output: ['call_id', 'output', 'type', 'id', 'status'],
  reasoning: ['id', 'summary', 'type', 'encrypted_content'],
};
const FUNCTION_TOOL_KEYS = ['name', 'parameters', 'strict', 'type', 'description'];
const REASONING_PARAM_KEYS = ['effort', 'generate_summary', 'summary'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function pick(o: Obj, keys: string[]): Obj {
  const out: Obj = {};
  for (const k of keys) if (k in o) out[k] = o[k];
  return out;
}

function withTokens(o: Obj, keys: string[]): string[] {
  return TOKEN_KEYS.every((k) => k in o) ? [...TOKEN_KEYS, ...keys] : keys;
}

function pruneContent(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((part) => {
    if (!isObj(part)) return part;
    const keys = CONTENT_PART_KEYS[String(part.type)];
    return keys ? pick(part, keys) : part;
  });
}

function pruneItem(item: unknown): unknown {
  if (!isObj(item)) return item;
  const type = item.type;
  if (type === undefined || type === 'message') {
    // Message kinds: EasyInputMessage {content, role, type}; Message adds status (non-assistant);
    // OutputMessage adds id and status (assistant).
    const keys = ['content', 'role', 'type'];
    if (typeof item.content !== 'string') {
      if (item.role === 'assistant' && 'id' in item) keys.unshift('id');
      if (item.role !== 'assistant' || 'id' in item) keys.push('status');
    }
    const out = pick(item, withTokens(item, keys));
    if ('content' in out) out.content = pruneContent(out.content);
    return out;
  }
  const keys = ITEM_KEYS[String(type)];
  if (!keys) return item;
  const out = pick(item, withTokens(item, keys));
  if (type === 'reasoning' && Array.isArray(out.summary)) {
    out.summary = out.summary.map((s) => (isObj(s) ? pick(s, ['text', 'type']) : s));
  }
  return out;
}

/**
 * The create params as the reference implementation dumps them (`exclude_unset`): only keys that
 * were given, with unknown keys inside items, content parts and function tools dropped.
 */
export function createParamsDump(params: Obj): Obj {
  const out: Obj = { ...params };
  if (Array.isArray(out.input)) out.input = out.input.map(pruneItem);
  if (Array.isArray(out.tools)) {
    out.tools = out.tools.map((t) => (isObj(t) && t.type === 'function' ? pick(t, FUNCTION_TOOL_KEYS) : t));
  }
  if (isObj(out.reasoning)) out.reasoning = pick(out.reasoning, REASONING_PARAM_KEYS);
  return out;
}

/** Metrics of one valid row from its create params. */
export function sampleMetrics(params: Obj): SampleMetrics {
  const dump = createParamsDump(params);
  const tools = Array.isArray(dump.tools) ? dump.tools.length : undefined;
  let inputs = dump.input;
  if (typeof inputs === 'string') inputs = [{ role: 'user', content: inputs }];
  const userTurns = Array.isArray(inputs) ? inputs.filter((i) => isObj(i) && i.role === 'user').length : 0;
  const temperature = typeof dump.temperature === 'number' ? dump.temperature : undefined;
  const images = imageProblems(params).count;
  return { tools, turns: userTurns > 0 ? userTurns : undefined, temperature, words: countDumpWords(dump), ...(images > 0 ? { images } : {}) };
}

/** Validate parsed create params; returns problems with field paths under `responses_create_params`. */
export function checkCreateParams(value: unknown): { ok: true; params: Obj } | { ok: false; problems: RowProblem[] } {
  const r = ResponseCreateParamsSchema.safeParse(value);
  if (r.success) return { ok: true, params: r.data as Obj };
  return {
    ok: false,
    problems: r.error.issues.map((issue) => ({
      field: fieldPath(['responses_create_params', ...issue.path]),
      message: issueMessage(issue),
    })),
  };
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}: the create params are strict; remove them or move them out of responses_create_params`;
  }
  return issue.message;
}

/** Parse and validate one JSONL line. */
export function checkRow(line: string): RowCheck {
  let row: PyValue;
  try {
    row = pyJsonLoads(line);
  } catch (err) {
    const reason = err instanceof PyJsonDecodeError ? err.message : String(err);
    const blank = line.trim() === '';
    return { ok: false, row: undefined, problems: [{ field: '', message: blank ? 'blank line (not JSON)' : `not valid JSON: ${reason}` }] };
  }
  if (!(row instanceof Map)) {
    return { ok: false, row, problems: [{ field: '', message: 'row must be a JSON object with "responses_create_params"' }] };
  }
  if (!row.has('responses_create_params')) {
    return {
      ok: false,
      row,
      problems: [{ field: 'responses_create_params', message: 'missing: every row needs "responses_create_params" (the Responses API request)' }],
    };
  }
  const checked = checkCreateParams(toPlain(row.get('responses_create_params')!));
  if (!checked.ok) return { ok: false, row, problems: checked.problems };
  // Images are checked as a model server would (default limits): unreadable, oversized or
  // non-image data URLs make the row invalid here rather than fail during collection.
  const images = imageProblems(checked.params, DEFAULT_IMAGE_LIMITS).problems;
  if (images.length) return { ok: false, row, problems: images.map((p) => ({ field: `responses_create_params.${p.where}`, message: p.message })) };
  return { ok: true, row, metrics: sampleMetrics(checked.params) };
}
