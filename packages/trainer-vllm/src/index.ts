/**
 * @nemo-gym/trainer-vllm — test tooling: a stand-in for an RL trainer's vLLM server (NeMo-RL's
 * vllm_worker_async + openai_server_utils) with the real Qwen3 tokenizer and chat template.
 * Servers must not import it.
 */
export { startTrainerVllm, type Policy, type PolicyContext, type RecordedCall, type TrainerVllm, type TrainerVllmOptions } from './server.js';
export { replacePrefixTokens } from './prefix.js';
export { nemoRlContiguity, type ContiguityResult } from './contiguity.js';
export { qwenTokenizer, type ChatRenderOptions, type Json, type JsonObject, type QwenTokenizer } from './tokenizer.js';
export { parseHermesToolCalls, parseReasoning, turnText, type ParsedToolCall, type ScriptedToolCall, type ScriptedTurn } from './generation.js';
