/** @nemo-gym/core/client: Calling other servers: ServerClient, pooled fetch, the retry policy, address guards. */
export { createPool } from './agent.js';
export { DEFAULT_TIMEOUTS, fetchGlobalConfig, requestFailure, ServerClient, ServerResponse } from './client.js';
export { createPooledFetch } from './fetch.js';
export { DEFAULT_RETRY, nextRetryDelay, passOnHeaders, retryPolicy, sleep, type RequestClass, type RetryPolicy } from './retry.js';
export { hopFailure, relayedCode, viaHop } from './relay.js';
export { AddressGuard, AddressRefusedError, parseAllowList, type Resolver } from './netguard.js';
