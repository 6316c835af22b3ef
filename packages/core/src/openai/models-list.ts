/**
 * `GET /v1/models` of a model server: one cheap request to the backend (its OpenAI model list),
 * so a collection can find out before its first rollout that the backend answers and accepts the
 * key. The backend's list is passed on as it came; a failure is answered as every other backend
 * failure is (status kept, key scrubbed).
 */
import type { Dispatcher } from 'undici';
import { redactUrlCredentials } from '../config/redact.js';
import { errorBody } from '../http/error-body.js';
import { RawJson } from '../http/raw-json.js';
import { backendErrorAnswer } from './proxy.js';
import { openAIStatusError, sendToBackend } from './upstream.js';

export interface ListModelsOptions {
  headers?: Record<string, string>;
  apiKey?: string;
  dispatcher?: Dispatcher;
  /** Longest wait for the answer (default 10 s: a model list is quick or the backend is not well). */
  timeoutMs?: number;
}

/** The backend's model list (`GET <base>/models`), or the answer for its failure. */
export async function listBackendModels(baseUrl: string, opts: ListModelsOptions = {}): Promise<RawJson> {
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  const apiKey = opts.apiKey ?? '';
  try {
    const res = await sendToBackend(url, undefined, { accept: 'application/json', ...opts.headers }, {
      method: 'GET',
      dispatcher: opts.dispatcher,
      timeoutMs: opts.timeoutMs ?? 10_000,
      retry: { maxAttempts: 1 },
      apiKey,
    });
    const text = res.body.toString('utf8');
    if (res.status < 200 || res.status >= 300) return backendErrorAnswer(openAIStatusError(url, res.status, text, apiKey), url, apiKey);
    try {
      JSON.parse(text);
      return new RawJson(text);
    } catch {
      return new RawJson(errorBody(`the model backend at ${redactUrlCredentials(url)} answered its model list with a body that is not JSON`, 'NG_ERR_BAD_JSON'), 502);
    }
  } catch (err) {
    return backendErrorAnswer(err, url, apiKey);
  }
}
