/**
 * One trainable trajectory per rollout, rebuilt from its captured model calls (upstream's
 * nemo_gym/token_id_capture/builder.py semantics).
 *
 * `prefix_merging` (the default): each call's parent is the earlier call whose prompt + generation
 * is the longest prefix of this call's prompt. An append-only rollout becomes one chain; a
 * rewritten or compacted prompt (or a re-templated history that drifted from the tokens the model
 * produced) has no parent and starts a new chain. Two candidate parents with identical tokens are
 * ambiguous: the call and everything below it are quarantined. Retries (siblings with the same
 * prompt) keep the one a later call extended; a retry of the last call cannot be resolved.
 * Calls are taken by increasing prompt length, so the capture's order does not matter.
 *
 * `per_call`: every call is its own trajectory.
 *
 * The main chain (the one whose first call came first) is projected onto Responses output items:
 * each call's generated item carries `prompt_token_ids` (everything before it: the root prompt, the
 * earlier generations and the prompt tokens added between calls), `generation_token_ids` and
 * `generation_log_probs`. That is the shape NeMo-RL's contiguity walk and ng-export read; the loss
 * mask follows from it (1 on generated tokens, 0 on prompt and tool tokens).
 *
 * `mask_sample: true` with a `failure_reason` whenever the sample is not known to be whole: no
 * calls, a call without token ids, a capture that lost calls, more than one chain, quarantined
 * calls, an unresolved retry.
 */
import { chatMessageToOutputItems } from '../openai/converter.js';
import { TOKEN_FIELD_KEYS } from '../openai/schemas.js';
import type { CaptureEntry, RolloutCapture } from './store.js';

type Json = Record<string, unknown>;

export const TRAJECTORY_MODES = ['prefix_merging', 'per_call'] as const;
export type TrajectoryMode = (typeof TRAJECTORY_MODES)[number];

export interface TrajectoryMetrics {
  calls: number;
  calls_without_token_ids: number;
  empty_generation_calls: number;
  roots: number;
  chains: number;
  quarantined_calls: number;
  unresolved_retries: number;
  generated_tokens_captured: number;
  generated_tokens_delivered: number;
  /** delivered / captured generated tokens (1 for a whole single chain). */
  delivered_fraction: number;
}

export interface TrajectoryChain {
  chain_id: string;
  /** The calls of the chain, root first. */
  call_ids: string[];
}

export interface Trajectory {
  rollout_id: string;
  mode: TrajectoryMode;
  /** `response.output` for the rollout: the main chain's items with token fields (empty when nothing is trainable). */
  output: Json[];
  /** per_call: one output list per call (ordered by prompt length, then call id). */
  per_call?: { call_id: string; output: Json[] }[];
  chains: TrajectoryChain[];
  quarantined: string[];
  mask_sample: boolean;
  failure_reason: string | null;
  metrics: TrajectoryMetrics;
}

interface Node {
  entry: CaptureEntry;
  prompt: number[];
  gen: number[];
  parent: Node | null;
  children: Node[];
  quarantined: boolean;
}

/**
 * Parent lookup: the earlier calls whose prompt + generation is the longest prefix of a prompt.
 * Candidates are tried longest first; in an append-only rollout the first one tried matches, so a
 * call costs one comparison of its prompt.
 */
class PrefixIndex {
  /** Added calls, longest sequence first. */
  private readonly byLength: Node[] = [];
  add(node: Node): void {
    const len = node.prompt.length + node.gen.length;
    let i = this.byLength.length;
    while (i > 0 && this.byLength[i - 1]!.prompt.length + this.byLength[i - 1]!.gen.length < len) i--;
    this.byLength.splice(i, 0, node);
  }
  /** The calls whose whole sequence is the longest prefix of `prompt` found (several: identical sequences). */
  longest(prompt: number[]): Node[] {
    let found: Node[] = [];
    let foundLength = -1;
    for (const n of this.byLength) {
      const len = n.prompt.length + n.gen.length;
      if (len < foundLength) break;
      if (len > prompt.length || !isPrefix(n, prompt)) continue;
      if (len === foundLength) found.push(n);
      else {
        found = [n];
        foundLength = len;
      }
    }
    return found;
  }
}

/** Whether the call's prompt + generation is a prefix of `ids`. */
function isPrefix(n: Node, ids: number[]): boolean {
  const p = n.prompt;
  const g = n.gen;
  // The end of the generation differs first when it differs at all: check it before the long prompt.
  for (let i = g.length - 1; i >= 0; i--) if (ids[p.length + i] !== g[i]) return false;
  for (let i = p.length - 1; i >= 0; i--) if (ids[i] !== p[i]) return false;
  return true;
}

const byPromptThenId = (a: Node, b: Node) => a.prompt.length - b.prompt.length || (a.entry.call_id < b.entry.call_id ? -1 : a.entry.call_id > b.entry.call_id ? 1 : 0);

function sameIds(a: number[], b: number[]): boolean {
  return a.length === b.length && isIdPrefix(a, b);
}

/** The call's generation as Responses items without token fields (a copy). */
function contentItems(entry: CaptureEntry): Json[] {
  if (entry.output_items) return entry.output_items.map((i) => ({ ...i }));
  if (entry.chat_message) {
    // Item ids from the call id, so that one capture always rebuilds the same items.
    let k = 0;
    return chatMessageToOutputItems(entry.chat_message, { returnTokenIdInformation: false }, () => `${entry.call_id}${k++}`) as unknown as Json[];
  }
  return [];
}

/** The call's items with the token fields put on its last item (the generation's item), prompt = `prompt`. */
function itemsWithTokens(entry: CaptureEntry, prompt: number[]): Json[] {
  const items = contentItems(entry);
  const tokens = { prompt_token_ids: prompt, generation_token_ids: entry.generation_token_ids ?? [], generation_log_probs: entry.generation_log_probs ?? [] };
  if (items.length === 0) items.push({ type: 'message', role: 'assistant', status: 'completed', content: [], ...tokens });
  else Object.assign(items[items.length - 1]!, tokens);
  return items;
}

/**
 * The trajectory of one rollout from its capture. Pure: the same capture in any order gives the
 * same result.
 */
export function buildTrajectory(capture: Pick<RolloutCapture, 'rollout_id' | 'calls'> & Partial<Pick<RolloutCapture, 'complete' | 'problems'>>, mode: TrajectoryMode = 'prefix_merging'): Trajectory {
  const reasons: string[] = [];
  const calls = capture.calls;
  if (capture.complete === false || (capture.problems?.length ?? 0) > 0) reasons.push(`the capture is incomplete: ${(capture.problems ?? []).join('; ') || 'calls were lost'}`);
  const withoutIds = calls.filter((c) => !c.has_token_ids || !c.generation_token_ids || !c.prompt_token_ids || !c.generation_log_probs);
  if (withoutIds.length) {
    const shown = withoutIds.slice(0, 3).map((c) => `${c.call_id} (${c.route}): ${c.missing_ids_reason ?? 'no token ids'}`);
    reasons.push(`${withoutIds.length} of ${calls.length} call(s) have no token ids — ${shown.join('; ')}${withoutIds.length > 3 ? '; …' : ''}`);
  }
  const lacking = new Set(withoutIds);
  const usable = calls.filter((c) => !lacking.has(c));
  const empty = usable.filter((c) => c.generation_token_ids!.length === 0);
  const nodes: Node[] = usable
    .filter((c) => c.generation_token_ids!.length > 0)
    .map((entry) => ({ entry, prompt: entry.prompt_token_ids!, gen: entry.generation_token_ids!, parent: null, children: [], quarantined: false }));
  for (const n of nodes) {
    if (n.entry.generation_log_probs!.length !== n.gen.length) {
      reasons.push(`call ${n.entry.call_id} has ${n.gen.length} generated tokens but ${n.entry.generation_log_probs!.length} log-probs`);
    }
  }
  nodes.sort(byPromptThenId);
  const metrics: TrajectoryMetrics = {
    calls: calls.length,
    calls_without_token_ids: withoutIds.length,
    empty_generation_calls: empty.length,
    roots: 0,
    chains: 0,
    quarantined_calls: 0,
    unresolved_retries: 0,
    generated_tokens_captured: nodes.reduce((s, n) => s + n.gen.length, 0),
    generated_tokens_delivered: 0,
    delivered_fraction: 0,
  };
  const finish = (t: Omit<Trajectory, 'rollout_id' | 'mode' | 'metrics' | 'mask_sample' | 'failure_reason'>): Trajectory => {
    if (calls.length === 0) reasons.push('the capture has no model calls');
    else if (nodes.length === 0 && withoutIds.length === 0) reasons.push('no call generated any tokens');
    metrics.delivered_fraction = metrics.generated_tokens_captured ? Math.round((metrics.generated_tokens_delivered / metrics.generated_tokens_captured) * 10_000) / 10_000 : 0;
    return { rollout_id: capture.rollout_id, mode, ...t, mask_sample: reasons.length > 0, failure_reason: reasons.length ? reasons.join('; ') : null, metrics };
  };

  if (mode === 'per_call') {
    const per_call = nodes.map((n) => ({ call_id: n.entry.call_id, output: itemsWithTokens(n.entry, n.prompt) }));
    metrics.roots = metrics.chains = nodes.length;
    if (nodes.length > 1) reasons.push(`per_call gives ${nodes.length} trajectories; a rollout row carries one (read per_call)`);
    const single = per_call.length === 1 ? per_call[0]!.output : [];
    metrics.generated_tokens_delivered = nodes.length === 1 ? nodes[0]!.gen.length : 0;
    return finish({ output: single, per_call, chains: nodes.map((n, i) => ({ chain_id: `call-${i}`, call_ids: [n.entry.call_id] })), quarantined: [] });
  }

  // Parents by longest prefix; identical candidates make the child (and its subtree) quarantined.
  const index = new PrefixIndex();
  const quarantined: string[] = [];
  const roots: Node[] = [];
  for (const n of nodes) {
    const candidates = index.longest(n.prompt);
    if (candidates.length) {
      n.parent = candidates[0]!;
      n.parent.children.push(n);
      if (candidates.length > 1) {
        n.quarantined = true;
        quarantined.push(n.entry.call_id);
      }
    } else roots.push(n);
    index.add(n);
  }

  // Retries: siblings with the same prompt. Keep those a later call extended; with none, keep one and call it unresolved.
  const unresolved: string[] = [];
  const groups = new Map<Node | null, Node[]>();
  for (const n of nodes) {
    const g = groups.get(n.parent);
    if (g) g.push(n);
    else groups.set(n.parent, [n]);
  }
  for (const group of groups.values()) {
    const byPrompt: Node[][] = [];
    for (const n of group) {
      const same = byPrompt.find((g) => sameIds(g[0]!.prompt, n.prompt));
      if (same) same.push(n);
      else byPrompt.push([n]);
    }
    for (const retry of byPrompt) {
      if (retry.length < 2) continue;
      const extended = retry.filter((n) => n.children.some((c) => !c.quarantined));
      const keep = new Set(extended.length ? extended : [retry[0]!]);
      if (!extended.length) unresolved.push(...retry.map((n) => n.entry.call_id));
      for (const n of retry) {
        if (!keep.has(n) && !n.quarantined) {
          n.quarantined = true;
          quarantined.push(n.entry.call_id);
        }
      }
    }
  }

  // Root-to-leaf chains without a quarantined call; the main one is the chain whose root came first.
  const paths: Node[][] = [];
  for (const leaf of nodes) {
    if (leaf.children.length) continue;
    const path: Node[] = [];
    for (let n: Node | null = leaf; n; n = n.parent) path.push(n);
    path.reverse();
    if (!path.some((n) => n.quarantined)) paths.push(path);
  }
  // Main first: the earliest root; from one root, the chain with the most generated tokens; then by the leaf's call id.
  const cmpId = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const generated = (p: Node[]) => p.reduce((n, x) => n + x.gen.length, 0);
  paths.sort(
    (a, b) =>
      a[0]!.entry.started_at - b[0]!.entry.started_at ||
      cmpId(a[0]!.entry.call_id, b[0]!.entry.call_id) ||
      generated(b) - generated(a) ||
      cmpId(a.at(-1)!.entry.call_id, b.at(-1)!.entry.call_id),
  );
  const chains: TrajectoryChain[] = paths.map((p, i) => ({ chain_id: i === 0 ? 'main' : `branch-${i - 1}`, call_ids: p.map((n) => n.entry.call_id) }));
  const output: Json[] = [];
  if (paths.length) {
    for (const n of paths[0]!) {
      output.push(...itemsWithTokens(n.entry, n.prompt));
      metrics.generated_tokens_delivered += n.gen.length;
    }
  }
  metrics.roots = roots.length;
  metrics.chains = paths.length;
  metrics.quarantined_calls = quarantined.length;
  metrics.unresolved_retries = unresolved.length;
  if (nodes.length && paths.length === 0) reasons.push('no chain is free of quarantined calls');
  if (roots.length > 1 || paths.length > 1) {
    reasons.push(
      `the calls form ${paths.length} chains from ${roots.length} root(s): a prompt that does not extend an earlier call's prompt + generation (rewritten or compacted history, re-templated tokens that drifted, a sub-agent) starts a new chain; only the main chain is in output`,
    );
  }
  if (quarantined.length) reasons.push(`${quarantined.length} call(s) quarantined (identical candidate parents or a discarded retry): ${quarantined.slice(0, 3).join(', ')}`);
  if (unresolved.length) reasons.push(`a retry of the last call cannot be resolved (${unresolved.join(', ')})`);
  return finish({ output, chains, quarantined });
}

/** True when some output item already carries generated token ids (the agent returned them itself). */
export function outputHasTokenIds(output: unknown): boolean {
  return Array.isArray(output) && output.some((i) => i !== null && typeof i === 'object' && Array.isArray((i as Json).generation_token_ids) && ((i as Json).generation_token_ids as unknown[]).length > 0);
}

/**
 * A rollout's response with the trajectory applied: a response whose output already carries token
 * ids is left as it is; otherwise its output becomes the trajectory's (when there is one), and the
 * masking decision is returned beside it.
 */
export function applyTrajectory<R extends { output?: unknown }>(response: R, trajectory: Trajectory): { response: R; mask_sample: boolean; failure_reason: string | null; replaced: boolean } {
  if (outputHasTokenIds(response.output)) return { response, mask_sample: false, failure_reason: null, replaced: false };
  if (trajectory.output.length === 0) return { response, mask_sample: true, failure_reason: trajectory.failure_reason ?? 'the capture holds no trainable tokens', replaced: false };
  return { response: { ...response, output: trajectory.output }, mask_sample: trajectory.mask_sample, failure_reason: trajectory.failure_reason, replaced: true };
}

const TOKEN_FIELDS: ReadonlySet<string> = new Set(TOKEN_FIELD_KEYS);

function isIdPrefix(prefix: number[], ids: number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (prefix[i] !== ids[i]) return false;
  return true;
}

/** Whether `ids` starts with `prompt` followed by `gen`. */
function extendsSeen(ids: number[], prompt: number[], gen: number[]): boolean {
  const p = prompt.length;
  if (p + gen.length > ids.length) return false;
  for (let i = gen.length - 1; i >= 0; i--) if (ids[p + i] !== gen[i]) return false;
  return isIdPrefix(prompt, ids);
}

/** Numbers as a JSON list body (no brackets). JSON.stringify formats doubles faster than join, and writes a non-finite number as null. */
function numbersText(xs: number[]): string {
  return xs.length === 0 ? '' : JSON.stringify(xs).slice(1, -1);
}

/**
 * The item field that marks a prompt sent as a delta (`prompt_ids=delta`): its `prompt_token_ids`
 * hold only the tokens after the previous generation item's prompt + generation.
 */
export const PROMPT_CONTINUES_KEY = 'prompt_continues_previous';

/** How a trajectory's prompts are written: each in full (NeMo-RL's shape), or as deltas of the previous one. */
export type PromptIds = 'full' | 'delta';

/**
 * Output items as JSON text. Each item's prompt_token_ids repeats every token before it, so the
 * text grows with the square of the calls; here a prompt that extends the previous item's prompt +
 * generation reuses that text (strings are joined, not copied), so the work grows with the tokens.
 * With `delta`, such a prompt is written as its new tokens only, marked `prompt_continues_previous`
 * (expandPromptDeltas restores the full form): about a quarter of the bytes for 8 calls.
 */
export function outputItemsJson(items: readonly Json[], promptIds: PromptIds = 'full'): string {
  // What the previous item's text covers: its prompt, then its generation (kept apart, never copied).
  let seenPrompt: number[] = [];
  let seenGen: number[] = [];
  let seenText = '';
  const parts: string[] = [];
  for (const item of items) {
    const prompt = item.prompt_token_ids;
    const gen = item.generation_token_ids;
    const lps = item.generation_log_probs;
    if (!Array.isArray(prompt) || !Array.isArray(gen) || !Array.isArray(lps)) {
      parts.push(JSON.stringify(item));
      continue;
    }
    const content: Json = {};
    for (const [k, v] of Object.entries(item)) if (!TOKEN_FIELDS.has(k)) content[k] = v;
    let promptText: string;
    let written: string;
    const seenLength = seenPrompt.length + seenGen.length;
    if (seenLength > 0 && extendsSeen(prompt as number[], seenPrompt, seenGen)) {
      const tailText = numbersText((prompt as number[]).slice(seenLength));
      promptText = tailText === '' ? seenText : seenText === '' ? tailText : `${seenText},${tailText}`;
      written = promptIds === 'delta' ? `"${PROMPT_CONTINUES_KEY}":true,"prompt_token_ids":[${tailText}]` : `"prompt_token_ids":[${promptText}]`;
    } else {
      promptText = numbersText(prompt as number[]);
      written = `"prompt_token_ids":[${promptText}]`;
    }
    const genText = numbersText(gen as number[]);
    const head = JSON.stringify(content);
    parts.push(`${head.length > 2 ? `${head.slice(0, -1)},` : '{'}${written},"generation_token_ids":[${genText}],"generation_log_probs":[${numbersText(lps as number[])}]}`);
    seenPrompt = prompt as number[];
    seenGen = gen as number[];
    seenText = genText === '' ? promptText : promptText === '' ? genText : `${promptText},${genText}`;
  }
  return `[${parts.join(',')}]`;
}

/**
 * A trajectory as JSON text (the same value JSON.stringify gives, made in time linear in the
 * tokens; with `delta`, `output`'s prompts as expandPromptDeltas reads them).
 */
export function trajectoryJson(t: Trajectory, promptIds: PromptIds = 'full'): string {
  const { output, ...rest } = t;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)},"output":${outputItemsJson(output, promptIds)}}`;
}

/**
 * Output items written with `prompt_ids=delta`, back in the full form (in place): each marked
 * item's prompt becomes the previous generation item's prompt + generation + its own tokens.
 * Returns a problem when the items do not read as deltas (a mark with no generation item before it).
 */
export function expandPromptDeltas(items: Json[]): string | null {
  let prev: { prompt: number[]; gen: number[] } | null = null;
  for (const [i, item] of items.entries()) {
    const prompt = item.prompt_token_ids;
    const gen = item.generation_token_ids;
    if (!Array.isArray(prompt) || !Array.isArray(gen)) {
      if (PROMPT_CONTINUES_KEY in item) return `output.${i} is marked ${PROMPT_CONTINUES_KEY} but has no token ids`;
      continue;
    }
    if (item[PROMPT_CONTINUES_KEY] === true) {
      if (prev === null) return `output.${i} is marked ${PROMPT_CONTINUES_KEY} but no generation item comes before it`;
      item.prompt_token_ids = prev.prompt.concat(prev.gen, prompt as number[]);
    }
    delete item[PROMPT_CONTINUES_KEY];
    prev = { prompt: item.prompt_token_ids as number[], gen: gen as number[] };
  }
  return null;
}
