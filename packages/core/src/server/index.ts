/** @nemo-gym/core/server: The server runtime: the three server kinds, their config schemas, sessions, lifecycle. */
export { jsonNestingExceeds, MAX_JSON_DEPTH } from '../http/json-body.js';
export { RawJson } from '../http/raw-json.js';
export { SseReply, type SseEvent } from '../http/sse.js';
export { AgentServerConfigSchema, ModelServerConfigSchema, ResourcesServerConfigSchema } from './config.js';
export { requestSessionId, type HandlerContext } from './define.js';
export { emptyBodyDetail, notAnObjectDetail, validationDetail, validationError, type ValidationDetail } from './errors.js';
export { startHeadServer, type InstanceInfo } from './head.js';
export { configuredHeadToken, generateHeadToken, HEAD_TOKEN_ENV, HEAD_TOKEN_HELP, headTokenFor, headTokenHeaders, removeHeadTokenFile, writeHeadTokenFile } from './head-token.js';
export { BaseRunRequestSchema, BaseSeedSessionRequestSchema, BaseVerifyRequestSchema, defineAgent, defineModelServer, defineResourcesServer } from './kinds.js';
export { startIfMain } from './lifecycle.js';
export { type Logger } from './logger.js';
export { type McpMountOptions, type McpServeConfig } from './mcp.js';
export { decodeSession, type Session } from './session.js';
export { SessionStore } from './session-store.js';
export { EnvResetResponseSchema, EnvStepResponseSchema, GymnasiumServerConfigSchema, STEP_KEY_FIELD, toolOutput, type Episode, type EnvStepResponse, type StepResult } from './gymnasium.js';
export { callWithin, inputItems, itemType, offersServerTools, runToolLoop, seedRollout, verifyAnswer, verifyRollout, type ToolLoopConfig } from './tool-loop.js';
export { type ResourcesServerDescription } from './describe.js';
