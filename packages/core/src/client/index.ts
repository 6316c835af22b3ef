/** @nemo-gym/core/client: Calling other servers: ServerClient, pooled fetch, cookie headers, the retry policy type. */
export { createPool, DEFAULT_POOL, type PoolOptions } from './agent.js';
export { DEFAULT_TIMEOUTS, fetchGlobalConfig, requestFailure, ServerClient, ServerResponse, type ClientTimeouts, type RequestOptions, type ServerClientOptions } from './client.js';
export { createPooledFetch, type PooledFetchOptions } from './fetch.js';
export { DEFAULT_RETRY, isNoResend, nextRetryDelay, NO_RESEND_HEADER, passOnHeaders, retryAfterHeaders, retryPolicy, sleep, type RequestClass, type RetryPolicy } from './retry.js';
export { REPLICA_COOKIE_PREFIX, replicaCookieName, ReplicaSet, type Replica, type ReplicaSetOptions } from './replicas.js';
export { hopError, hopFailure, relayedCode, viaHop, type Hop } from './relay.js';
export { formatCookieHeader, parseCookieHeader, parseSetCookies } from '../http/cookies.js';
export { AddressGuard, AddressRefusedError, addressKind, parseAllowList, systemResolver, type Resolver } from './netguard.js';
