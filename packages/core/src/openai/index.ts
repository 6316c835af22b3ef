/** @nemo-gym/core/openai: Responses API and Chat Completions schemas, converters, and helpers for model servers that call a backend. */
export { chatCompletionToResponse, chatMessageToOutputItems, noteDroppedOnce, ConversionError, copySharingTokenIds, moveThinkToReasoningContent, responsesToChatParams, wrapThink } from './converter.js';
export { backendErrorAnswer, checkBackendAnswer } from './proxy.js';
export { listBackendModels } from './models-list.js';
export { ChatCompletionCreateParamsSchema, ChatCompletionSchema, ChatMessageSchema, fullCreateParamsDump, fullResponseDump, hasTokenFields, ResponseCreateParamsSchema, ResponseSchema, type ChatCompletionCreateParams, type NeMoGymResponse, type ResponseCreateParams } from './schemas.js';
export { openAIStatusError, parseBackendJson, postJson, redactSecret, sendToBackend, UpstreamError } from './upstream.js';
export { addUsage, functionCall, messageItem, outputText, textResponse } from '../responses.js';
export { checkRequestImages, ImageLimitsFields, type ImageLimits } from './images.js';
export { ChatChunkAccumulator, chatChunks, chunkEvent, completionChunks, DONE_EVENT, openBackendStream, parseSseStream, responseEvents, ResponsesEventStream } from './stream.js';
export { ImageFetchFields, RemoteImageFetcher, type ImageFetchConfig } from './image-fetch.js';
export { askJudge, askJudgeForVerdict, judgeFailed, noVerdict, verdictOf } from './judge.js';
export { lastJsonObject } from './judge-json.js';
export { messagesToResponsesParams, type MessagesCreateParams } from './messages.js';
