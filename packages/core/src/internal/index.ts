/**
 * @nemo-gym/core/internal: building blocks of the public modules, exported for the core's own tests
 * and tools. Not a stable API: names here may change or move without notice.
 */
export { sharedPool } from '../client/agent.js';
export { type RequestFailure } from '../client/client.js';
export { dispatchRequest, splitUrl, type CollectedResponse, type DispatchOptions, type ResponseHeaders } from '../client/dispatch.js';
export { backoffDelay, classifyRequest, errorCode, isConnectFailure, isRetryableTransportError, NO_RETRY, NOT_PROCESSED_STATUSES, parseRetryAfter, retryAfterMs, retryDecision, withRetries, type AttemptOutcome, type AttemptState, type RetryDecision, type RetryInfo, type RetryResult } from '../client/retry.js';
export { asServerRef, checkInstance, GitlabIdentifierSchema, HuggingFaceIdentifierSchema, isAlmostServer, LICENSES, type InstanceCheck, type InstanceIssue } from '../config/instances.js';
export { hasInterpolation, resolveValue } from '../config/interpolate.js';
export { mergeAll, mergeInto, MISSING, sourceOf, type Provenance } from '../config/merge.js';
export { applyDeletes, applyOverrides, parseArgs, parseOverrideValue } from '../config/overrides.js';
export { formatAlmostServers, resetGlobalConfigCache } from '../config/parse.js';
export { diffMetrics, diffValues, numericClose } from '../data/compare.js';
export { AvgMinMax, MetricFloat, NUMBER_OF_EXAMPLES, NUMBER_OF_TOOLS, NUMBER_OF_TURNS, NUMBER_OF_WORDS, RESERVED_METRIC_KEYS, StringCounter, summaryDoc, TEMPERATURE, type AvgMinMaxSummary } from '../data/metrics.js';
export { DataPrepareEngine, inScopeTypes, type AgentDatasets, type BadRow, type DatasetReport, type DatasetSpec, type DatasetType } from '../data/prepare.js';
export { countDumpWords, type PyDumpsOptions } from '../py/dumps.js';
export { TDigest } from '../data/tdigest.js';
export { createParamsDump } from '../data/validate.js';
export { fromOpenAIClientError, statusError, transportError } from '../openai/upstream.js';
export { passAtKUnbiased } from '../rollouts/metrics.js';
export { defineServer } from '../server/define.js';
export { errorAnswer, jsonInvalid, zodIssuesToDetail } from '../server/errors.js';
export { fullVerifyDump } from '../server/kinds.js';
export { startServer, type BuiltApp } from '../server/lifecycle.js';
export { makeLogger } from '../server/logger.js';
export { formatSetCookie, newSessionId, SESSION_MAX_AGE_S, sessionCookies, type SessionCookies } from '../server/session.js';
