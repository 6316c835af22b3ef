/** @nemo-gym/core/server: The server runtime: the three server kinds, their config schemas, sessions, lifecycle. */
export { jsonNestingExceeds, MAX_JSON_DEPTH, parseJsonBody } from '../http/json-body.js';
export { RawJson } from '../http/raw-json.js';
export { formatSseEvent, SseReply, writeSse, type SseEvent } from '../http/sse.js';
export { AgentServerConfigSchema, BaseServerConfigSchema, ModelServerConfigSchema, ResourcesServerConfigSchema } from './config.js';
export { requestSessionId, route, type BuildOptions, type HandlerContext, type Route, type ServerDefinition, type ServerDefinitionInput, type ServerKind, type SetupContext } from './define.js';
export { emptyBodyDetail, notAnObjectDetail, validationDetail, validationError, type ValidationDetail } from './errors.js';
export { startHeadServer, type InstanceInfo } from './head.js';
export { configuredHeadToken, generateHeadToken, HEAD_TOKEN_ENV, HEAD_TOKEN_HELP, headTokenFile, headTokenFor, headTokenHeaders, readHeadTokenFile, removeHeadTokenFile, tokensMatch, writeHeadTokenFile } from './head-token.js';
export { BaseRunRequestSchema, BaseSeedSessionRequestSchema, BaseVerifyRequestSchema, BaseVerifyResponseSchema, defineAgent, defineModelServer, defineResourcesServer, type AgentInput, type BaseRunRequest, type BaseVerifyRequest, type BaseVerifyResponse, type ModelServerInput, type ResourcesServerInput } from './kinds.js';
export { startIfMain } from './lifecycle.js';
export { type Logger } from './logger.js';
export { type McpMountOptions, type McpServeConfig } from './mcp.js';
export { decodeSession, encodeSession, type Session } from './session.js';
export { SessionStore, type SessionDropReason, type SessionStoreOptions } from './session-store.js';
export { EnvResetRequestSchema, EnvResetResponseSchema, EnvStepRequestSchema, EnvStepResponseSchema, GymnasiumServerConfigSchema, STEP_KEY_FIELD, toolOutput, type Episode, type EnvResetResponse, type EnvStepResponse, type GymnasiumEnv, type ResetResult, type StepResult } from './gymnasium.js';
