/**
 * Index of a rollouts JSONL file: byte offsets of every line plus a small summary per row
 * (reward, response id, a preview), built in one streaming pass. Rows are read back from disk on
 * demand, so a file of any size costs memory proportional to its row count, not its size.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { isMasked, rewardComponentsOf, usageOf } from '@nemo-gym/core/rollouts';
import { checkCreateParams, DatasetMetrics, metricsJson, sampleMetrics, type MetricsDoc } from '@nemo-gym/core/data';
import { NgError } from '@nemo-gym/core/errors';
import { VIEWER_ERRORS } from './errors.js';
import { isToolError } from './tool-errors.js';
import { type PyDict } from '@nemo-gym/core/py';

export interface RowSummary {
  index: number;
  /** 1-based line number. */
  line: number;
  reward: number | null;
  responseId: string | null;
  /** First user message (shortened). */
  preview: string;
  /** Number of function calls in the response output. */
  toolCalls: number;
  /** Other top-level numeric or boolean fields (verify metrics such as accuracy). */
  scores: Record<string, number | boolean>;
  /** Why the row is not a rollout (not JSON, no response, no numeric reward), if it is not. */
  error: string | null;
  /** Task and rollout index the collector tagged the row with (`_ng_task_index`, `_ng_rollout_index`). */
  taskIndex: number | null;
  rolloutIndex: number | null;
  /** Agent that produced the row (`_ng_agent`, else `agent_ref.name`). */
  agent: string | null;
  /** Short hash of `responses_create_params.input`: identifies the task in files without task tags. */
  promptHash: string | null;
  /** Token counts from the response's `usage`; output falls back to the generated token ids on output items. */
  inputTokens: number | null;
  outputTokens: number | null;
  /** Characters of the assistant's output text (messages, not tool calls). */
  outputChars: number;
  /** Seconds the rollout took, from its timing fields (see `latencyOf`), when it has any. */
  latencyS: number | null;
  /** Function call outputs that are errors (see `isToolError`). */
  toolErrors: number;
  /** Per tool: [name, calls, errors] (a list, never an object keyed by model-chosen names). */
  tools: [string, number, number][];
  /** Short top-level text fields of the verify answer (up to 40 characters), for grouping by any verifier field. */
  labels: Record<string, string>;
  /** A masked sample (`mask_sample: true`): kept for inspection, left out of every reward aggregate, as the collector's metrics do. */
  masked: boolean;
  /** Why the row was masked (`failure_reason`, shortened), when it is masked. */
  failureReason: string | null;
  /** Named reward components (`reward_components`), as [name, value] pairs. */
  components: readonly (readonly [string, number])[];
}

/** Keys the collector adds to each output row; bookkeeping, not scores. */
export const isTagKey = (k: string): boolean => k.startsWith('_ng_');

export interface HistogramBin {
  label: string;
  lo: number;
  hi: number;
  count: number;
}

const PREVIEW_CHARS = 160;
/** The components of the many rows that have none (one shared empty list, not one per row). */
const NO_COMPONENTS: readonly (readonly [string, number])[] = Object.freeze([]);
const MAX_SCORES = 6;
/** Text fields kept per row for grouping: at most this many, each at most this long (longer text is no category). */
const MAX_LABELS = 8;
const LABEL_CHARS = 40;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function firstUserText(params: unknown): string {
  if (!isObj(params)) return '';
  const input = params.input;
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (const item of input) {
    if (!isObj(item) || item.role !== 'user') continue;
    if (typeof item.content === 'string') return item.content;
    if (Array.isArray(item.content)) {
      for (const part of item.content) if (isObj(part) && typeof part.text === 'string') return part.text;
    }
  }
  return '';
}

/** Top-level fields read as a rollout's duration in seconds (the first present wins). */
const LATENCY_FIELDS: readonly [string, number][] = [['latency_s', 1], ['latency_ms', 1 / 1000], ['elapsed_s', 1], ['duration_s', 1]];

/**
 * Seconds a rollout took: `response.completed_at − response.created_at` (Responses API
 * timestamps, in seconds) when both are there, else the first of `latency_s`, `latency_ms`,
 * `elapsed_s`, `duration_s` at the top level; null when the row has none.
 */
export function latencyOf(row: Obj): number | null {
  const response = row.response;
  if (isObj(response) && typeof response.created_at === 'number' && typeof response.completed_at === 'number') {
    const d = response.completed_at - response.created_at;
    if (Number.isFinite(d) && d >= 0) return d;
  }
  for (const [k, scale] of LATENCY_FIELDS) {
    const v = row[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v * scale;
  }
  return null;
}

/** What the charts read of a response's output items: text length, generated tokens, tool calls and errors. */
function outputFacts(output: readonly unknown[], base: RowSummary): number {
  const names = new Map<string, string>();
  const perTool = new Map<string, [string, number, number]>();
  let generated = 0;
  let sawIds = false;
  for (const o of output) {
    if (!isObj(o)) continue;
    if (Array.isArray(o.generation_token_ids)) {
      sawIds = true;
      generated += o.generation_token_ids.length;
    }
    if (o.type === 'function_call') {
      const name = typeof o.name === 'string' ? o.name : '(unnamed)';
      if (typeof o.call_id === 'string') names.set(o.call_id, name);
      const t = perTool.get(name) ?? [name, 0, 0];
      t[1]++;
      perTool.set(name, t);
    } else if (o.type === 'function_call_output' && isToolError(o.output)) {
      base.toolErrors++;
      const name = (typeof o.call_id === 'string' ? names.get(o.call_id) : undefined) ?? '(unknown call)';
      const t = perTool.get(name) ?? [name, 0, 0];
      t[2]++;
      perTool.set(name, t);
    } else if (o.type === 'message' && o.role === 'assistant' && Array.isArray(o.content)) {
      for (const part of o.content) if (isObj(part) && typeof part.text === 'string') base.outputChars += part.text.length;
    }
  }
  base.tools = [...perTool.values()];
  return sawIds ? generated : -1;
}

function shorten(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 1)}…` : flat;
}

/**
 * Summary of one line; also feeds the aggregate metrics. The viewer shows what is in the file,
 * so create params outside the strict schema (older files carry e.g. "tool_choice": null) are
 * still summarised and counted; the schema check runs when a row is opened (see `createParamsNote`).
 */
export function summarizeLine(text: string, index: number, metrics: DatasetMetrics | null): RowSummary {
  const base: RowSummary = {
    index,
    line: index + 1,
    reward: null,
    responseId: null,
    preview: '',
    toolCalls: 0,
    scores: {},
    error: null,
    taskIndex: null,
    rolloutIndex: null,
    agent: null,
    promptHash: null,
    inputTokens: null,
    outputTokens: null,
    outputChars: 0,
    latencyS: null,
    toolErrors: 0,
    tools: [],
    labels: {},
    masked: false,
    failureReason: null,
    components: NO_COMPONENTS,
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    base.error = text.trim() === '' ? 'blank line (not JSON)' : `not valid JSON: ${err instanceof Error ? err.message : String(err)}`;
    base.preview = shorten(text);
    return base;
  }
  if (!isObj(parsed)) {
    base.error = 'row is not a JSON object';
    base.preview = shorten(text);
    return base;
  }
  const row = parsed;
  base.preview = shorten(firstUserText(row.responses_create_params));
  const response = row.response;
  if (isObj(response)) {
    if (typeof response.id === 'string') base.responseId = response.id;
    if (Array.isArray(response.output)) {
      base.toolCalls = response.output.filter((o) => isObj(o) && o.type === 'function_call').length;
      const generated = outputFacts(response.output, base);
      if (generated >= 0) base.outputTokens = generated;
    }
  }
  const usage = usageOf(row);
  if (usage) {
    base.inputTokens = usage.input;
    if (usage.output > 0 || base.outputTokens === null) base.outputTokens = usage.output;
  }
  base.latencyS = latencyOf(row);
  if (typeof row.reward === 'number' && Number.isFinite(row.reward)) base.reward = row.reward;
  if (typeof row.reward === 'boolean') base.reward = row.reward ? 1 : 0;
  if (Number.isInteger(row._ng_task_index)) base.taskIndex = row._ng_task_index as number;
  if (Number.isInteger(row._ng_rollout_index)) base.rolloutIndex = row._ng_rollout_index as number;
  if (typeof row._ng_agent === 'string') base.agent = row._ng_agent;
  else if (isObj(row.agent_ref) && typeof row.agent_ref.name === 'string') base.agent = row.agent_ref.name;
  if (isObj(row.responses_create_params) && row.responses_create_params.input !== undefined) {
    base.promptHash = createHash('sha1').update(JSON.stringify(row.responses_create_params.input)).digest('base64url').slice(0, 16);
  }
  for (const [k, v] of Object.entries(row)) {
    if (k === 'reward' || k === 'responses_create_params' || k === 'response' || isTagKey(k)) continue;
    if (Object.keys(base.scores).length >= MAX_SCORES) break;
    if (typeof v === 'number' || typeof v === 'boolean') base.scores[k] = v;
  }
  const labels = Object.create(null) as Record<string, string>;
  let nLabels = 0;
  for (const [k, v] of Object.entries(row)) {
    if (typeof v !== 'string' || v.length > LABEL_CHARS || isTagKey(k) || nLabels >= MAX_LABELS) continue;
    labels[k] = v;
    nLabels++;
  }
  base.labels = labels;
  if (isMasked(row)) {
    base.masked = true;
    base.failureReason = typeof row.failure_reason === 'string' && row.failure_reason !== '' ? shorten(row.failure_reason) : 'unspecified';
  }
  const components = rewardComponentsOf(row);
  if (components) base.components = [...components];
  const problems: string[] = [];
  if (!isObj(row.responses_create_params)) problems.push('responses_create_params: missing or not an object');
  if (!isObj(response)) problems.push('response: missing (not a rollout row)');
  if (row.reward === undefined) problems.push('reward: missing');
  else if (base.reward === null) problems.push('reward: not a number');
  base.error = problems.length ? problems.join('; ') : null;
  if (isObj(row.responses_create_params)) {
    if (metrics) {
      metrics.observeSample(sampleMetrics(row.responses_create_params));
      try {
        metrics.observeOther(new Map(Object.entries(row).filter(([k]) => !isTagKey(k))) as PyDict, `line ${index + 1}`);
      } catch {
        // A key mixing text and numbers: leave it out of the summary rather than refuse the file.
      }
    }
  }
  return base;
}

export class RolloutIndex {
  /** Start offset of every line, plus one past the end (length rows + 1). */
  private offsets: Float64Array = new Float64Array(1024);
  readonly rows: RowSummary[] = [];
  metrics: MetricsDoc = new Map();
  metricsText = '{}';
  private fh: FileHandle | null = null;

  private constructor(readonly path: string) {}

  static async build(path: string, onProgress?: (rows: number) => void): Promise<RolloutIndex> {
    const idx = new RolloutIndex(path);
    await idx.scan(onProgress);
    idx.fh = await open(path, 'r');
    return idx;
  }

  get size(): number {
    return this.rows.length;
  }

  private pushOffset(pos: number, count: number): void {
    if (count >= this.offsets.length) {
      const bigger = new Float64Array(this.offsets.length * 2);
      bigger.set(this.offsets);
      this.offsets = bigger;
    }
    this.offsets[count] = pos;
  }

  private async scan(onProgress?: (rows: number) => void): Promise<void> {
    const metrics = new DatasetMetrics();
    const stream = createReadStream(this.path, { highWaterMark: 1 << 20 });
    let pos = 0;
    let lineStart = 0;
    let pending: Buffer[] = [];
    const finishLine = (end: number) => {
      const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
      pending = [];
      let text = buf.toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      const index = this.rows.length;
      this.pushOffset(lineStart, index);
      this.rows.push(summarizeLine(text, index, metrics));
      lineStart = end + 1;
      if (onProgress && this.rows.length % 10000 === 0) onProgress(this.rows.length);
    };
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, from);
        if (nl === -1) break;
        pending.push(chunk.subarray(from, nl));
        finishLine(pos + nl);
        from = nl + 1;
      }
      if (from < chunk.length) pending.push(Buffer.from(chunk.subarray(from)));
      pos += chunk.length;
    }
    if (pending.some((b) => b.length > 0)) finishLine(pos);
    this.pushOffset(lineStart, this.rows.length);
    // Offsets of line i: [offsets[i], offsets[i+1] - 1) (the newline excluded).
    metrics.finishOther();
    this.metrics = metrics.doc();
    this.metricsText = metricsJson(this.metrics);
  }

  /** Raw text of row `i` read from disk. */
  async rowText(i: number): Promise<string> {
    if (!this.fh) throw new NgError(VIEWER_ERRORS.NG_ERR_VIEWER, 'the rollout index is closed; open the file again');
    const start = this.offsets[i]!;
    let end = this.offsets[i + 1]! - 1;
    if (i === this.rows.length - 1) {
      const st = await this.fh.stat();
      end = Math.min(st.size, Math.max(end, start));
      // The last line may or may not end with a newline.
      const probe = Buffer.alloc(end - start);
      await this.fh.read(probe, 0, probe.length, start);
      let text = probe.toString('utf8');
      if (text.endsWith('\n')) text = text.slice(0, -1);
      if (text.endsWith('\r')) text = text.slice(0, -1);
      return text;
    }
    const buf = Buffer.alloc(Math.max(0, end - start));
    await this.fh.read(buf, 0, buf.length, start);
    let text = buf.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    return text;
  }

  /**
   * Indexes of rows whose text contains `query` (case-insensitive), in file order. Searches the
   * raw line and, for lines with escapes, the decoded strings, streaming the file once.
   */
  async search(query: string): Promise<Set<number>> {
    const q = query.toLowerCase();
    // A query of plain printable ASCII (no quote or backslash) appears literally in the JSON text
    // wherever it appears in the decoded strings, so the raw line is enough. Other queries are
    // also matched against the decoded strings of lines that contain escapes.
    const plain = /^[\x20-\x7e]*$/.test(q) && !/["\\/]/.test(q);
    const hits = new Set<number>();
    const stream = createReadStream(this.path, { highWaterMark: 1 << 20 });
    let pending: Buffer[] = [];
    let index = 0;
    const test = () => {
      const text = (pending.length === 1 ? pending[0]! : Buffer.concat(pending)).toString('utf8');
      pending = [];
      if (text.toLowerCase().includes(q)) hits.add(index);
      else if (!plain && text.includes('\\')) {
        try {
          if (collectStrings(JSON.parse(text)).toLowerCase().includes(q)) hits.add(index);
        } catch {
          // not JSON: the raw text was the only thing to search
        }
      }
      index++;
    };
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, from);
        if (nl === -1) break;
        pending.push(chunk.subarray(from, nl));
        test();
        from = nl + 1;
      }
      if (from < chunk.length) pending.push(Buffer.from(chunk.subarray(from)));
    }
    if (pending.some((b) => b.length > 0)) test();
    return hits;
  }

  /** Reward distribution (masked samples left out): one bar per value when there are few distinct rewards, else 20 bins. */
  histogram(): HistogramBin[] {
    return histogramOf(this.rows.filter((r) => !r.masked && r.reward !== null).map((r) => r.reward!));
  }

  async close(): Promise<void> {
    await this.fh?.close();
    this.fh = null;
  }
}

/** Distribution of values: one bar per value when there are at most 12 distinct values, else 20 equal bins. */
export function histogramOf(values: readonly number[]): HistogramBin[] {
  if (values.length === 0) return [];
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const distinct = [...counts.keys()].sort((a, b) => a - b);
  if (distinct.length <= 12) {
    return distinct.map((v) => ({ label: formatNumber(v), lo: v, hi: v, count: counts.get(v)! }));
  }
  const min = distinct[0]!;
  const max = distinct[distinct.length - 1]!;
  const bins = 20;
  const width = (max - min) / bins;
  const out: HistogramBin[] = [];
  for (let b = 0; b < bins; b++) {
    const lo = min + b * width;
    const hi = b === bins - 1 ? max : min + (b + 1) * width;
    out.push({ label: `${formatNumber(lo)}–${formatNumber(hi)}`, lo, hi, count: 0 });
  }
  for (const v of values) {
    const b = Math.min(bins - 1, Math.floor((v - min) / width));
    out[b]!.count++;
  }
  return out;
}

function collectStrings(root: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (isObj(v)) {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x);
      }
    }
  };
  walk(root);
  return out.join('\n');
}

export function formatNumber(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
}

/** Schema problems of a row's create params (shown as a note with the rollout), or null. */
export function createParamsNote(row: unknown): string | null {
  if (!isObj(row) || !isObj(row.responses_create_params)) return null;
  const checked = checkCreateParams(row.responses_create_params);
  return checked.ok ? null : checked.problems.map((p) => `${p.field}: ${p.message}`).join('; ');
}
