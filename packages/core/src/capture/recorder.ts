/**
 * The capture of one model call, handed to the handler as `ctx.capture` when the call came through
 * `/ng-rollout/<id>/…` (and capture is on). A backend that reads exact token ids calls `record`
 * where it reads them — before its answer is streamed or converted to another dialect; when the
 * call ends without that, the server records an entry that says the backend gave no ids.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TOKEN_FIELD_KEYS } from '../openai/schemas.js';
import { approxJsonBytes, estimateEntryBytes, type CaptureEntry, type CaptureStore } from './store.js';

type Json = Record<string, unknown>;

/** What a backend records of one call. */
export interface CallTokens {
  prompt_token_ids: number[];
  generation_token_ids: number[];
  generation_log_probs: number[];
  finish_reason?: string | null;
  /** The generation as the backend's chat message (token fields are left out when kept). */
  chat_message?: Json | null;
  /** Or as Responses output items (token fields are left out when kept). */
  output_items?: Json[] | null;
  model?: string | null;
}

/** The per-rollout mark the server puts on a request whose URL had the prefix. */
export interface RolloutMark {
  rolloutId: string;
  /** Byte length of the request body (when read by the fast path), else -1. */
  bodyBytes: number;
}

const MARK = Symbol('ngRollout');

export function markRollout(req: IncomingMessage, rolloutId: string): RolloutMark {
  const mark: RolloutMark = { rolloutId, bodyBytes: -1 };
  (req as unknown as Record<symbol, RolloutMark>)[MARK] = mark;
  return mark;
}

/** The rollout mark of a request, if its URL had `/ng-rollout/<id>/`. */
export function rolloutMarkOf(req: IncomingMessage | undefined): RolloutMark | undefined {
  return req === undefined ? undefined : (req as unknown as Record<symbol, RolloutMark | undefined>)[MARK];
}

/** Call ids: a random prefix per process and a counter (unique, and cheaper than random bytes per call). */
const CALL_ID_PREFIX = randomBytes(4).toString('hex');
let callCounter = 0;

const TOKEN_KEYS: ReadonlySet<string> = new Set(TOKEN_FIELD_KEYS);

function withoutTokens(o: Json): Json {
  let has = false;
  for (const k of TOKEN_KEYS) if (k in o) has = true;
  if (!has) return o;
  const out: Json = {};
  for (const [k, v] of Object.entries(o)) if (!TOKEN_KEYS.has(k)) out[k] = v;
  return out;
}

export class CallCapture {
  readonly callId = `${CALL_ID_PREFIX}${(callCounter++).toString(16).padStart(8, '0')}`;
  readonly startedAt = Date.now();
  #done = false;

  constructor(
    private readonly store: CaptureStore,
    readonly rolloutId: string,
    readonly route: string,
    private readonly request: unknown,
    private readonly requestBytes: number,
    /** Said in the entry of a call whose backend recorded no ids. */
    private readonly noIdsReason: string,
  ) {}

  /** Whether the call's answer keeps its token ids (rollout_capture.answer_token_ids); a backend that records them leaves them out otherwise. */
  get answerTokenIds(): boolean {
    return this.store.settings.answer_token_ids;
  }

  /** True once this call has its entry. */
  get recorded(): boolean {
    return this.#done;
  }

  /** The call's exact tokens (once; later calls are ignored). Arrays are kept, not copied. */
  record(t: CallTokens): void {
    if (this.#done) return;
    this.#done = true;
    const output_items = t.output_items ? t.output_items.map(withoutTokens) : null;
    const chat_message = t.chat_message ? withoutTokens(t.chat_message) : null;
    this.store.record(
      this.entry({
        has_token_ids: true,
        missing_ids_reason: null,
        prompt_token_ids: t.prompt_token_ids,
        generation_token_ids: t.generation_token_ids,
        generation_log_probs: t.generation_log_probs,
        finish_reason: t.finish_reason ?? null,
        output_items,
        chat_message,
        model: t.model ?? null,
      }),
    );
  }

  /** An entry for a call whose backend gave no token ids. */
  recordWithoutIds(reason: string = this.noIdsReason): void {
    if (this.#done) return;
    this.#done = true;
    this.store.record(
      this.entry({
        has_token_ids: false,
        missing_ids_reason: reason,
        prompt_token_ids: null,
        generation_token_ids: null,
        generation_log_probs: null,
        finish_reason: null,
        output_items: null,
        chat_message: null,
        model: null,
      }),
    );
  }

  /** Called by the server when the answer is complete: a successful call that recorded nothing gets a no-ids entry. */
  finish(ok: boolean): void {
    if (ok) this.recordWithoutIds();
  }

  private entry(
    f: Pick<CaptureEntry, 'has_token_ids' | 'missing_ids_reason' | 'prompt_token_ids' | 'generation_token_ids' | 'generation_log_probs' | 'finish_reason' | 'output_items' | 'chat_message' | 'model'>,
  ): CaptureEntry {
    const req = this.request as Json | null;
    const outBytes = f.output_items ? approxJsonBytes(f.output_items) : f.chat_message ? approxJsonBytes(f.chat_message) : 0;
    const e: CaptureEntry = {
      rollout_id: this.rolloutId,
      call_id: this.callId,
      seq: 0,
      route: this.route,
      stream: req !== null && typeof req === 'object' && req.stream === true,
      started_at: this.startedAt,
      ended_at: Date.now(),
      request: this.store.settings.keep_requests ? this.request : null,
      bytes: 0,
      ...f,
      model: f.model ?? (req !== null && typeof req === 'object' && typeof req.model === 'string' ? req.model : null),
    };
    e.bytes = estimateEntryBytes(e, e.request === null ? 0 : Math.max(0, this.requestBytes), outBytes);
    return e;
  }
}
