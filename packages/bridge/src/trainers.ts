/**
 * The record each export format writes, and how `+trainer=` renames and reshapes it to the keys
 * that trainer's own data loaders read. docs/06-training-data.md lists every mapping with
 * the trainer source file it comes from.
 */
import type { ChatConversation } from './chat.js';
import { DOUBLE, INT32, listOf, STRING, struct, type ParquetColumns } from './parquet.js';
import type { Json } from './rows.js';
import type { TokenSequence } from './tokens.js';

export const FORMATS = ['sft', 'dpo', 'rl'] as const;
export type ExportFormat = (typeof FORMATS)[number];
export const TRAINERS = ['nemo_rl', 'verl', 'openrlhf'] as const;
export type Trainer = (typeof TRAINERS)[number];

export interface RolloutIds {
  _ng_task_index: number | null;
  _ng_rollout_index: number | null;
}

/** A rollout's named reward components (`reward_components` of its /verify answer), or null. */
export type RewardComponents = Record<string, number> | null;

/** The Parquet struct of the components seen in a file (every name a nullable double). */
const componentsStruct = (names: readonly string[]) => struct(names.map((n) => [n, DOUBLE]));

const TOOL_CALL = struct([
  ['id', STRING],
  ['type', STRING],
  ['function', struct([['name', STRING], ['arguments', STRING]])],
]);
/** A chat message as a Parquet struct (content is text; tool calls keep their structure). */
const MESSAGE = struct([
  ['role', STRING],
  ['content', STRING],
  ['tool_calls', listOf(TOOL_CALL)],
  ['tool_call_id', STRING],
]);
const MESSAGES = listOf(MESSAGE);
const IDS: ParquetColumns = [['_ng_task_index', INT32], ['_ng_rollout_index', INT32]];

/** Chat content as text: a list of text parts is joined (Parquet needs one type per column). */
function messagesForParquet(messages: Json[]): Json[] {
  return messages.map((m) => {
    const c = m.content;
    if (Array.isArray(c)) return { ...m, content: c.map((p) => (p && typeof p === 'object' && typeof (p as Json).text === 'string' ? (p as Json).text : '')).join('') };
    return m;
  });
}

// ---- SFT --------------------------------------------------------------------------------------

export function sftRecord(chat: ChatConversation, reward: number | undefined, ids: RolloutIds, trainer: Trainer | undefined, components: RewardComponents = null): Json {
  // NeMo-RL (OpenAIFormatDataset: chat_key "messages", tool_key "tools") and VeRL
  // (MultiTurnSFTDataset: multiturn.messages_key "messages", multiturn.tools_key "tools") read
  // the OpenAI chat layout as it is; OpenRLHF's SFTDataset reads the whole conversation from
  // --input_key with --multiturn --apply_chat_template.
  const key = trainer === 'openrlhf' ? 'input' : 'messages';
  // No trainer's SFT loader reads reward components; they ride along beside the reward.
  return { [key]: chat.messages, tools: chat.tools, reward: reward ?? null, ...(components ? { reward_components: components } : {}), ...ids };
}

/** `components`: the names of the reward components in the file (a column only when there are some). */
export function sftColumns(trainer: Trainer | undefined, components: readonly string[] = []): ParquetColumns {
  const extra: ParquetColumns = components.length ? [['reward_components', componentsStruct(components)]] : [];
  return [[trainer === 'openrlhf' ? 'input' : 'messages', MESSAGES], ['tools', STRING], ['reward', DOUBLE], ...extra, ...IDS];
}

// ---- DPO --------------------------------------------------------------------------------------

export interface PreferencePair {
  taskIndex: number;
  prompt: Json[];
  tools: Json[];
  chosen: Json[];
  rejected: Json[];
  chosenReward: number;
  rejectedReward: number;
  chosenRolloutIndex: number | null;
  rejectedRolloutIndex: number | null;
}

export function dpoRecord(p: PreferencePair, trainer: Trainer | undefined): Json {
  const meta = {
    chosen_reward: p.chosenReward,
    rejected_reward: p.rejectedReward,
    _ng_task_index: p.taskIndex,
    chosen_rollout_index: p.chosenRolloutIndex,
    rejected_rollout_index: p.rejectedRolloutIndex,
  };
  if (trainer === 'nemo_rl') {
    // NeMo-RL's preference format (preference_datasets: "context" + ranked "completions", rank 0 preferred).
    return {
      context: p.prompt,
      completions: [
        { rank: 0, completion: p.chosen },
        { rank: 1, completion: p.rejected },
      ],
      tools: p.tools,
      ...meta,
    };
  }
  // Ours and OpenRLHF's RewardDataset with --prompt_key prompt --chosen_key chosen --rejected_key rejected.
  return { prompt: p.prompt, chosen: p.chosen, rejected: p.rejected, tools: p.tools, ...meta };
}

export function dpoColumns(trainer: Trainer | undefined): ParquetColumns {
  const meta: ParquetColumns = [
    ['tools', STRING],
    ['chosen_reward', DOUBLE],
    ['rejected_reward', DOUBLE],
    ['_ng_task_index', INT32],
    ['chosen_rollout_index', INT32],
    ['rejected_rollout_index', INT32],
  ];
  if (trainer === 'nemo_rl') {
    return [['context', MESSAGES], ['completions', listOf(struct([['rank', INT32], ['completion', MESSAGES]]))], ...meta];
  }
  return [['prompt', MESSAGES], ['chosen', MESSAGES], ['rejected', MESSAGES], ...meta];
}

export function dpoForParquet(record: Json): Json {
  const out = { ...record };
  for (const k of ['prompt', 'chosen', 'rejected', 'context'] as const) if (Array.isArray(out[k])) out[k] = messagesForParquet(out[k] as Json[]);
  if (Array.isArray(out.completions)) {
    out.completions = (out.completions as Json[]).map((c) => ({ ...c, completion: messagesForParquet(c.completion as Json[]) }));
  }
  return out;
}

export function sftForParquet(record: Json): Json {
  const out = { ...record };
  for (const k of ['messages', 'input'] as const) if (Array.isArray(out[k])) out[k] = messagesForParquet(out[k] as Json[]);
  return out;
}

// ---- RL ---------------------------------------------------------------------------------------

export function rlRecord(seq: TokenSequence, reward: number | undefined, ids: RolloutIds, trainer: Trainer | undefined, components: RewardComponents = null): Json {
  const r = reward ?? null;
  const c = components ? { reward_components: components } : {};
  switch (trainer) {
    case 'nemo_rl':
      // NeMo-RL's message_log, as nemo_rl/environments/nemo_gym.py builds it from these rows:
      // per turn a "user" message with the new prompt tokens and an "assistant" message with
      // the generated tokens and their generation_logprobs.
      return {
        message_log: seq.turns.flatMap((t) => [
          { role: 'user', token_ids: t.promptTail },
          { role: 'assistant', token_ids: t.generation, generation_logprobs: t.logprobs },
        ]),
        reward: r,
        // NeMo-RL's batch keys for reward components (build_reward_component_columns in
        // nemo_rl/environments/nemo_gym.py: `reward/<name>`, what GDPO reads).
        ...(components ? Object.fromEntries(Object.entries(components).map(([n, v]) => [`reward/${n}`, v])) : {}),
        ...ids,
      };
    case 'verl':
      // VeRL's AgentLoopOutput (verl/experimental/agent_loop/agent_loop.py): the first prompt,
      // then the response with its mask (1 = generated, 0 = tool output) and rollout log-probs.
      return {
        prompt_ids: seq.input_ids.slice(0, seq.prompt_length),
        response_ids: seq.input_ids.slice(seq.prompt_length),
        response_mask: seq.loss_mask.slice(seq.prompt_length),
        response_logprobs: seq.logprobs.slice(seq.prompt_length),
        reward_score: r,
        num_turns: seq.turns.length,
        // VeRL has no key for named components: reward extras go to extra_fields.reward_extra_info
        // (what its reward loop sets, verl/experimental/agent_loop/agent_loop.py).
        ...(components ? { extra_fields: { reward_extra_info: components } } : {}),
        ...ids,
      };
    case 'openrlhf':
      // OpenRLHF's Experience (openrlhf/trainer/ppo_utils/experience_maker.py).
      // OpenRLHF's Experience has no key for named components either; they ride along.
      return { sequences: seq.input_ids, action_mask: seq.loss_mask, rollout_log_probs: seq.logprobs, rewards: r, ...c, ...ids };
    default:
      return { input_ids: seq.input_ids, loss_mask: seq.loss_mask, logprobs: seq.logprobs, reward: r, ...c, ...ids };
  }
}

/** `components`: the names of the reward components in the file (columns only when there are some). */
export function rlColumns(trainer: Trainer | undefined, components: readonly string[] = []): ParquetColumns {
  const extra: ParquetColumns = components.length ? [['reward_components', componentsStruct(components)]] : [];
  switch (trainer) {
    case 'nemo_rl':
      return [
        ['message_log', listOf(struct([['role', STRING], ['token_ids', listOf(INT32)], ['generation_logprobs', listOf(DOUBLE)]]))],
        ['reward', DOUBLE],
        ...components.map((n): [string, typeof DOUBLE] => [`reward/${n}`, DOUBLE]),
        ...IDS,
      ];
    case 'verl':
      return [
        ['prompt_ids', listOf(INT32)],
        ['response_ids', listOf(INT32)],
        ['response_mask', listOf(INT32)],
        ['response_logprobs', listOf(DOUBLE)],
        ['reward_score', DOUBLE],
        ['num_turns', INT32],
        ...(components.length ? ([['extra_fields', struct([['reward_extra_info', componentsStruct(components)]])]] as ParquetColumns) : []),
        ...IDS,
      ];
    case 'openrlhf':
      return [['sequences', listOf(INT32)], ['action_mask', listOf(INT32)], ['rollout_log_probs', listOf(DOUBLE)], ['rewards', DOUBLE], ...extra, ...IDS];
    default:
      return [['input_ids', listOf(INT32)], ['loss_mask', listOf(INT32)], ['logprobs', listOf(DOUBLE)], ['reward', DOUBLE], ...extra, ...IDS];
  }
}
