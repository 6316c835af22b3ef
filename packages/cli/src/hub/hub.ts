/**
 * What the dataset commands share about the Hugging Face Hub: where it is (`hf_endpoint` in the
 * config or `HF_ENDPOINT`, default the public Hub), the token (`hf_token` in env.yaml or on the
 * command line, else `HF_TOKEN`), a fetch with time limits for the client library, and the
 * translation of the library's failures into the project's coded errors. The token goes only
 * into the Authorization header the library sends; no message here contains it.
 */
import { NgError, UsageError } from '@nemo-gym/core/errors';
import { HubAuthError, HubError, HubUnreachableError } from '../errors.js';

export const PUBLIC_HUB_URL = 'https://huggingface.co';

export interface HubSettings {
  /** Base URL of the Hub (no trailing slash). */
  hubUrl: string;
  token: string | undefined;
  /** Where the token came from, for messages (never the token itself). */
  tokenSource: string | undefined;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** Hub URL and token from a merged config (env.yaml included) and the environment. */
export function hubSettings(config: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): HubSettings {
  const raw = nonEmpty(config.hf_endpoint) ?? nonEmpty(env.HF_ENDPOINT) ?? PUBLIC_HUB_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`hf_endpoint ${JSON.stringify(raw)} is not a URL; give the Hub's base URL, e.g. +hf_endpoint=${PUBLIC_HUB_URL}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`hf_endpoint ${JSON.stringify(raw)} must be an http(s) URL, e.g. ${PUBLIC_HUB_URL}.`);
  }
  const fromConfig = nonEmpty(config.hf_token);
  const fromEnv = nonEmpty(env.HF_TOKEN);
  const token = fromConfig ?? fromEnv;
  const tokenSource = fromConfig ? 'hf_token (env.yaml or the command line)' : fromEnv ? 'the HF_TOKEN environment variable' : undefined;
  // The client library refuses other tokens with a message of its own; say it here, without the token.
  if (token && !token.startsWith('hf_')) {
    throw new UsageError(`the Hugging Face token from ${tokenSource} does not start with "hf_"; copy a user access token from huggingface.co/settings/tokens.`);
  }
  return { hubUrl: url.href.replace(/\/+$/, ''), token, tokenSource };
}

/** The page of a dataset repo and the download URL of one of its files. */
export function datasetPageUrl(hubUrl: string, repoId: string): string {
  return `${hubUrl}/datasets/${repoId}`;
}

export function resolveUrl(hubUrl: string, repoId: string, path: string, revision = 'main'): string {
  return `${hubUrl}/datasets/${repoId}/resolve/${encodeURIComponent(revision)}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** The network error code behind a failed fetch (`fetch failed` hides it in `cause`), if any. */
export function networkCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    if ((e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError') return 'timed out';
  }
  if (err instanceof TypeError && /fetch failed|terminated|other side closed/i.test(err.message)) return 'connection failed';
  return undefined;
}

/** A fetch for the client library that gives up when no answer (headers) arrives within `headersMs`. */
export function fetchWithLimit(headersMs: number, outer?: AbortSignal): typeof fetch {
  return async (input, init) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${headersMs} ms`, 'TimeoutError')), headersMs);
    const onOuter = () => controller.abort(outer!.reason);
    outer?.addEventListener('abort', onOuter, { once: true });
    const signals = [controller.signal, ...(init?.signal ? [init.signal] : [])];
    try {
      return await fetch(input, { ...init, signal: AbortSignal.any(signals) });
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    }
  };
}

/** The shape of the library's HubApiError (an HTTP status and the Hub's words). */
export interface HubApiErrorLike {
  statusCode: number;
  message: string;
}

function isHubApiError(err: unknown): err is HubApiErrorLike {
  return typeof err === 'object' && err !== null && typeof (err as { statusCode?: unknown }).statusCode === 'number';
}

export interface HubContext {
  hubUrl: string;
  repoId: string;
  /** A file of the repo, when the request was about one. */
  path?: string;
  /** What was being done, e.g. "download" or "upload". */
  action: 'download' | 'upload';
  hasToken: boolean;
  /** For an unreachable Hub while downloading: where the file belongs. */
  target?: string;
}

/** The Hub's own words, without the library's "URL: …" trailer. */
function hubWords(message: string): string {
  return message.replace(/\.\s*URL: .*$/s, '').trim();
}

/** The coded error for a failure of the client library (or of fetch under it), or for an HTTP status seen on the way. */
export function hubFailure(err: unknown, ctx: HubContext): NgError {
  if (err instanceof NgError) return err;
  const what = ctx.path ? `${ctx.repoId}/${ctx.path}` : ctx.repoId;
  if (isHubApiError(err)) {
    const status = err.statusCode;
    if (status === 401 || status === 403) {
      const page = datasetPageUrl(ctx.hubUrl, ctx.repoId);
      if (!ctx.hasToken) {
        return new HubAuthError(
          `the Hugging Face Hub refused to ${ctx.action} ${what} without a token (HTTP ${status}): the dataset is gated or private, or does not exist. ` +
            `Add \`hf_token: hf_…\` to env.yaml (a token from huggingface.co/settings/tokens with ${ctx.action === 'upload' ? 'write' : 'read'} access` +
            `${ctx.action === 'download' ? `; for a gated dataset accept its conditions at ${page}` : ''}), or export HF_TOKEN.`,
        );
      }
      return new HubAuthError(
        `the Hugging Face Hub refused to ${ctx.action} ${what} with the configured token (HTTP ${status}: ${hubWords(err.message)}). ` +
          (ctx.action === 'upload'
            ? `Use a token with write access to ${ctx.repoId}'s namespace.`
            : `Check the token is valid and its account has access: for a gated dataset, accept its conditions at ${page}.`),
      );
    }
    if (status === 404) {
      return new HubError(
        `${what} was not found on the Hugging Face Hub at ${ctx.hubUrl} (HTTP 404: ${hubWords(err.message)}); check huggingface_identifier.repo_id and artifact_fpath against ${datasetPageUrl(ctx.hubUrl, ctx.repoId)}.`,
      );
    }
    return new HubError(`the Hugging Face Hub answered HTTP ${status} for ${what}: ${hubWords(err.message)}. Run the command again later.`);
  }
  const net = networkCode(err);
  if (net) {
    if (ctx.action === 'download' && ctx.path && ctx.target) {
      return new HubUnreachableError(
        `the Hugging Face Hub at ${ctx.hubUrl} is unreachable (${net}): fetch ${resolveUrl(ctx.hubUrl, ctx.repoId, ctx.path)} and save it as ${ctx.target}`,
      );
    }
    return new HubUnreachableError(`the Hugging Face Hub at ${ctx.hubUrl} is unreachable (${net}); ${ctx.action} of ${what} not done. Check the network or hf_endpoint, then run the command again.`);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new HubError(`${ctx.action} of ${what} failed: ${message}`);
}
