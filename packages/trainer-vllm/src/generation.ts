/**
 * What a Qwen3 model writes for a scripted turn, and how vLLM's parsers read it back: the Qwen3
 * reasoning parser (`<think>…</think>` to reasoning_content) and the Hermes tool parser
 * (`<tool_call>{"name": …, "arguments": …}</tool_call>` to tool_calls, the arguments re-serialised
 * with Python's `json.dumps(..., ensure_ascii=False)`).
 */
import { randomBytes } from 'node:crypto';
import { pyJsonDumps, pyJsonLoads } from '@nemo-gym/core/py';

export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** The text the model wrote for the arguments; default JSON.stringify(arguments) (compact, as models often write it). */
  argumentsText?: string;
}

export interface ScriptedTurn {
  reasoning?: string;
  content?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default true: the generation ends with <|im_end|> (false = stopped by max_tokens). */
  eos?: boolean;
}

/** The text of a scripted turn as the Qwen3 model writes it (without the final <|im_end|>). */
export function turnText(turn: ScriptedTurn): string {
  let text = '';
  if (turn.reasoning !== undefined) text += `<think>\n${turn.reasoning}\n</think>\n\n`;
  text += turn.content ?? '';
  for (const call of turn.toolCalls ?? []) {
    const args = call.argumentsText ?? JSON.stringify(call.arguments);
    if (text !== '') text += '\n';
    text += `<tool_call>\n{"name": ${JSON.stringify(call.name)}, "arguments": ${args}}\n</tool_call>`;
  }
  return text;
}

/**
 * vLLM's Qwen3 reasoning parser: with `</think>` in the text, what precedes it (after an opening
 * `<think>`) is the reasoning and what follows is the content (null when empty). Neither part is
 * trimmed, so a content after `</think>\n\n` keeps its two newlines, as vLLM returns it.
 */
export function parseReasoning(text: string): { reasoning: string | null; content: string | null } {
  const end = text.indexOf('</think>');
  if (end < 0) return { reasoning: null, content: text };
  let reasoning = text.slice(0, end);
  const start = reasoning.indexOf('<think>');
  if (start >= 0) reasoning = reasoning.slice(start + '<think>'.length);
  const content = text.slice(end + '</think>'.length);
  return { reasoning, content: content === '' ? null : content };
}

export interface ParsedToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * vLLM's Hermes tool parser (non-streaming). Every `<tool_call>…</tool_call>` (or an unclosed last
 * one) must hold JSON with `name` and `arguments`, else nothing is a tool call and the whole text is
 * the content. The content is the text before the first `<tool_call>`, null only when that is the
 * empty string: vLLM does not trim it (`content if content else None`), so "\n\n" before a call
 * stays "\n\n".
 */
export function parseHermesToolCalls(text: string): { toolsCalled: boolean; toolCalls: ParsedToolCall[]; content: string | null } {
  const start = text.indexOf('<tool_call>');
  if (start < 0) return { toolsCalled: false, toolCalls: [], content: text };
  const calls: ParsedToolCall[] = [];
  try {
    for (const m of text.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>|<tool_call>([\s\S]*)/g)) {
      const body = m[1] ?? m[2] ?? '';
      const parsed = pyJsonLoads(body);
      const dict = parsed instanceof Map ? parsed : undefined; // a JSON object (vLLM reads `call["name"]`)
      const name = dict?.get('name');
      const args = dict?.get('arguments');
      if (typeof name !== 'string' || args === undefined) return { toolsCalled: false, toolCalls: [], content: text };
      calls.push({ id: `chatcmpl-tool-${randomBytes(16).toString('hex')}`, type: 'function', function: { name, arguments: pyJsonDumps(args, { ensureAscii: false, numbers: 'float' }) } });
    }
  } catch {
    return { toolsCalled: false, toolCalls: [], content: text };
  }
  const content = text.slice(0, start);
  return { toolsCalled: true, toolCalls: calls, content: content === '' ? null : content };
}

/** Deterministic log-probs in (-4, -0.001]: a hash of the call, position and token. */
export function fakeLogProbs(callIndex: number, ids: number[]): number[] {
  return ids.map((id, pos) => {
    let h = (Math.imul(callIndex + 1, 0x9e3779b1) ^ Math.imul(pos + 1, 0x85ebca6b) ^ Math.imul(id + 1, 0xc2b2ae35)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
    h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
    h = (h ^ (h >>> 16)) >>> 0;
    const unit = h / 0x1_0000_0000;
    return -(0.001 + unit * 3.999);
  });
}
