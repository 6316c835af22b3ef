/** The three ways an mcp_tools instance scores a rollout: an MCP tool, an LLM judge, a JS module. */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ServerClient } from '@nemo-gym/core/client';
import { repoRoot } from '@nemo-gym/core/config';
import { HttpError, ServerDefinitionError } from '@nemo-gym/core/errors';
import { askJudgeForVerdict, noVerdict, outputText, verdictOf } from '@nemo-gym/core/openai';
import type { CallOutcome } from './connection.js';
import type { VerifyConfig } from './config.js';

type Json = Record<string, unknown>;

/** What a verify module's default export receives. */
export interface VerifyModuleInput {
  /** The task row as sent to /verify (its own fields, `responses_create_params`, `response`). */
  row: Json;
  /** The assistant's final text (every output_text part of the response). */
  text: string;
  /** Calls a tool of a configured MCP server in this rollout's session. */
  callTool(server: string, tool: string, args?: Json): Promise<{ text: string; isError: boolean; structured: unknown }>;
}

/** A verify module answers a reward, or an object with `reward` and any extra fields for the output row. */
export type VerifyModule = (input: VerifyModuleInput) => number | Json | Promise<number | Json>;

export interface Verifier {
  /** The reward plus extra fields for the output row. */
  /** `signal`: the verify request's own; a caller that goes away cancels a judge call. */
  score(row: Json, call: (server: string, tool: string, args: Json) => Promise<CallOutcome>, signal?: AbortSignal): Promise<{ reward: number; extra: Json }>;
}

function lastUserText(params: unknown): string {
  const input = (params as Json | undefined)?.input;
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const m = input[i] as Json;
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return (m.content as Json[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
  }
  return '';
}

/** The outcome of a call verify itself makes: a lost server or a timeout fails verify (never a reward). */
function mustAnswer(outcome: CallOutcome, what: string): { text: string; isError: boolean; structured: unknown } {
  if (outcome.kind === 'result') return outcome;
  throw new HttpError(502, `${what}: ${outcome.message}`);
}

/**
 * A verify module called a server that is not in `mcp_servers`: a mistake in the module or the
 * config, answered 500 with the names that are configured (not a rollout failure of the model's).
 */
export class UnknownMcpServerError extends HttpError {
  constructor(server: string, configured: readonly string[]) {
    super(500, `MCP server \`${server}\` is not configured in this mcp_tools instance; mcp_servers has: ${configured.map((s) => `\`${s}\``).join(', ')}. Fix the server name in the verify module, or add the server to mcp_servers.`);
    this.name = 'UnknownMcpServerError';
  }
}

export async function makeVerifier(cfg: VerifyConfig, client: ServerClient, servers: readonly string[]): Promise<Verifier> {
  if (cfg.type === 'mcp_tool') {
    return {
      async score(row, call) {
        const fromRow = row[cfg.arguments_field];
        const args = { ...cfg.arguments, ...(fromRow !== null && typeof fromRow === 'object' && !Array.isArray(fromRow) ? (fromRow as Json) : {}) };
        const what = `verify tool \`${cfg.tool}\` on MCP server \`${cfg.server}\``;
        const out = mustAnswer(await call(cfg.server, cfg.tool, args), what);
        if (cfg.result === 'number') {
          const s = out.structured as Json | undefined;
          const n = s !== null && typeof s === 'object' && typeof s.reward === 'number' ? s.reward : out.text.trim() === '' ? NaN : Number(out.text.trim());
          if (out.isError || !Number.isFinite(n)) {
            throw new HttpError(502, `${what} answered ${out.isError ? 'an error' : 'something that is not a number'}: ${out.text.slice(0, 500)} (with result: number it must answer a number, or structuredContent.reward)`);
          }
          return { reward: n, extra: { verify_tool_output: out.text } };
        }
        const expected = row[cfg.expected_field];
        if (typeof expected !== 'string') throw new HttpError(422, `the task row has no string field \`${cfg.expected_field}\` for verify (result: ${cfg.result})`);
        const text = out.text.trim();
        const ok = !out.isError && (cfg.result === 'equals' ? text === expected.trim() : text.includes(expected.trim()));
        return { reward: ok ? 1 : 0, extra: { verify_tool_output: out.text } };
      },
    };
  }
  if (cfg.type === 'judge') {
    return {
      async score(row, _call, signal) {
        const expected = row[cfg.expected_field];
        const prompt = cfg.prompt_template
          .replaceAll('{question}', lastUserText(row.responses_create_params))
          .replaceAll('{expected_answer}', typeof expected === 'string' ? expected : JSON.stringify(expected ?? ''))
          .replaceAll('{generated_answer}', outputText(row.response as Json));
        const answer = await askJudgeForVerdict(client, cfg.model_server.name, { ...cfg.responses_create_params, input: [{ role: 'user', content: prompt }] }, signal);
        const verdict = outputText(answer as Json);
        const yes = verdictOf(verdict, cfg.success_label, cfg.failure_label);
        if (yes === null && !cfg.unparseable_verdict_is_wrong) throw noVerdict(cfg.model_server.name, [cfg.success_label, cfg.failure_label], verdict);
        return { reward: yes === true ? 1 : 0, extra: { judge_output: verdict } };
      },
    };
  }
  const file = resolve(repoRoot(), cfg.path);
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    throw new ServerDefinitionError(`mcp_tools: could not load the verify module ${file} (verify.path): ${(err as Error).message}`);
  }
  if (typeof mod.default !== 'function') throw new ServerDefinitionError(`mcp_tools: the verify module ${file} must export a default function ({row, text, callTool}) => reward`);
  const fn = mod.default as VerifyModule;
  return {
    async score(row, call) {
      const out = await fn({
        row,
        text: outputText(row.response as Json),
        callTool: async (server, tool, args = {}) => {
          if (typeof server !== 'string' || !servers.includes(server)) throw new UnknownMcpServerError(String(server), servers);
          return mustAnswer(await call(server, tool, args), `tool \`${tool}\` on MCP server \`${server}\` (called by the verify module)`);
        },
      });
      const reward = typeof out === 'number' ? out : (out as Json | null)?.reward;
      if (typeof reward !== 'number' || !Number.isFinite(reward)) {
        throw new HttpError(500, `the verify module ${file} answered ${JSON.stringify(out)?.slice(0, 200)}; it must answer a finite number or {reward: number, ...}`);
      }
      const extra = typeof out === 'number' ? {} : { ...(out as Json) };
      delete extra.reward;
      return { reward, extra };
    },
  };
}
