/**
 * What a model server keeps of each model call made through `/ng-rollout/<id>/…`, per rollout, in
 * memory and bounded: one entry per call (exact prompt and generated token ids, log-probs, finish
 * reason, timing, the request and the output it rebuilds items from), recorded where the backend's
 * token ids are read — before any streaming or dialect conversion. Entries leave when the rollout's
 * capture is fetched with release or assembled, when no call came for `ttl_s`, or when the store
 * is over `max_bytes` / `max_rollouts` (the least recently written rollout goes first). A rollout
 * that lost calls — evicted, over `max_calls_per_rollout` — is remembered as incomplete, so its
 * trajectory is masked instead of trained with a hole.
 */
import { z } from 'zod';
import { CaptureNotFoundError } from '../errors.js';

type Json = Record<string, unknown>;

/** One model call of a rollout, as captured. */
export interface CaptureEntry {
  rollout_id: string;
  /** Unique per call (random hex); ties in ordering are broken by it. */
  call_id: string;
  /** Arrival order of the call within its rollout on this server (diagnostic; the builder does not rely on it). */
  seq: number;
  /** The route called, after the prefix: `/v1/chat/completions`, `/v1/responses`, `/v1/messages`, … */
  route: string;
  model: string | null;
  stream: boolean;
  /** Epoch ms the request was received, and the entry recorded. */
  started_at: number;
  ended_at: number;
  /** True when the backend gave exact token ids for this call. */
  has_token_ids: boolean;
  /** Why there are no ids (when has_token_ids is false). */
  missing_ids_reason: string | null;
  prompt_token_ids: number[] | null;
  generation_token_ids: number[] | null;
  generation_log_probs: number[] | null;
  finish_reason: string | null;
  /** The request body the route received (the caller's dialect), kept by reference with `keep_requests`; else null. */
  request: unknown;
  /** The generation as Responses output items (token fields left off). */
  output_items: Json[] | null;
  /** The generation as the backend's chat message (token fields left off), when output_items were not made. */
  chat_message: Json | null;
  /** Estimated bytes this entry holds. */
  bytes: number;
}

/** A rollout's capture as a snapshot (the entries are the stored objects; do not change them). */
export interface RolloutCapture {
  rollout_id: string;
  calls: CaptureEntry[];
  /** False when calls were lost (limits) or could not be recorded; `problems` says which. */
  complete: boolean;
  problems: string[];
  bytes: number;
}

export const RolloutCaptureSettingsSchema = z
  .object({
    /** Record calls made through /ng-rollout/<id>/… (routing works either way). */
    enabled: z.boolean().default(true),
    /** A rollout's capture is dropped this long after its last call unless fetched. */
    ttl_s: z.number().positive().default(3600),
    /** Most bytes held by all captures (estimated); the least recently written rollout is evicted beyond it. */
    max_bytes: z.number().int().positive().default(512 * 1024 * 1024),
    /** Most rollouts held at once (the least recently written is evicted beyond it). */
    max_rollouts: z.number().int().positive().default(100_000),
    /** Most calls recorded per rollout; later ones are not kept and mark the rollout incomplete. */
    max_calls_per_rollout: z.number().int().positive().default(10_000),
    /**
     * Keep each call's request body in its entry (for inspecting what the agent sent). Off by
     * default: items are rebuilt from the output, and holding every request for the rollout's life
     * costs memory and garbage-collector time.
     */
    keep_requests: z.boolean().default(false),
    /**
     * Captured calls answer with their token ids too (as calls without the prefix do when the
     * backend returns them). Off by default: the capture holds them and the trajectory carries
     * them, and an agent that calls through the prefix does not read them.
     */
    answer_token_ids: z.boolean().default(false),
    /** The default builder mode of `GET /ng-rollout/<id>/trajectory`. */
    builder: z.enum(['prefix_merging', 'per_call']).default('prefix_merging'),
  })
  .strict();
export type RolloutCaptureSettings = z.output<typeof RolloutCaptureSettingsSchema>;

interface Held {
  calls: CaptureEntry[];
  problems: string[];
  bytes: number;
  lastWrite: number;
}

/**
 * About how many bytes a JSON value takes (strings by length, 8 a number), without writing it out:
 * a capture entry's size is estimated on every call, and JSON.stringify would cost more than the
 * recording itself.
 */
export function approxJsonBytes(v: unknown, depth = 0): number {
  if (typeof v === 'string') return v.length + 2;
  if (v === null || typeof v !== 'object') return 8;
  if (depth > 16) return 64;
  let n = 2;
  if (Array.isArray(v)) {
    for (const x of v) n += approxJsonBytes(x, depth + 1) + 1;
    return n;
  }
  for (const k of Object.keys(v)) n += k.length + 4 + approxJsonBytes((v as Record<string, unknown>)[k], depth + 1);
  return n;
}

/** Tokens of a log-prob list or id list as JSON text, roughly: 8 bytes an id, 20 a log-prob. */
export function estimateEntryBytes(e: Pick<CaptureEntry, 'prompt_token_ids' | 'generation_token_ids' | 'generation_log_probs'>, requestBytes: number, outputBytes: number): number {
  return 400 + requestBytes + outputBytes + 8 * ((e.prompt_token_ids?.length ?? 0) + (e.generation_token_ids?.length ?? 0)) + 20 * (e.generation_log_probs?.length ?? 0);
}

export class CaptureStore {
  private readonly held = new Map<string, Held>();
  /** Rollouts whose capture left without being fetched: why (bounded like the store). */
  private readonly gone = new Map<string, string>();
  private totalBytes = 0;
  private evictions = 0;

  constructor(
    readonly settings: RolloutCaptureSettings,
    /** The server's name, for messages. */
    private readonly serverName: string = 'model',
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps one call's entry (and its rollout's LRU place); evicts and expires as needed. */
  record(entry: CaptureEntry): void {
    const t = this.now();
    this.expire(t);
    const id = entry.rollout_id;
    let h = this.held.get(id);
    if (h) this.held.delete(id);
    else {
      h = { calls: [], problems: [], bytes: 0, lastWrite: t };
      const lost = this.gone.get(id);
      if (lost !== undefined) {
        this.gone.delete(id);
        h.problems.push(`earlier calls of this rollout were dropped (${lost}); the capture is incomplete`);
      }
    }
    h.lastWrite = t;
    this.held.set(id, h);
    if (h.calls.length >= this.settings.max_calls_per_rollout) {
      if (!h.problems.some((p) => p.startsWith('more than'))) h.problems.push(`more than ${this.settings.max_calls_per_rollout} calls (rollout_capture.max_calls_per_rollout); later calls were not kept`);
      return;
    }
    entry.seq = h.calls.length;
    h.calls.push(entry);
    h.bytes += entry.bytes;
    this.totalBytes += entry.bytes;
    this.evictOver(id);
  }

  /** Notes that a call of this rollout could not be recorded (its trajectory will be masked). */
  markIncomplete(rolloutId: string, problem: string): void {
    const h = this.held.get(rolloutId);
    if (h) h.problems.push(problem);
    else {
      this.held.set(rolloutId, { calls: [], problems: [problem], bytes: 0, lastWrite: this.now() });
      this.evictOver(rolloutId);
    }
  }

  /** The rollout's capture; throws CaptureNotFoundError (with why) when none is held. */
  get(rolloutId: string): RolloutCapture {
    this.expire(this.now());
    const h = this.held.get(rolloutId);
    if (!h) {
      const why = this.gone.get(rolloutId);
      throw new CaptureNotFoundError(
        `model server \`${this.serverName}\` holds no capture for rollout ${rolloutId}: ` +
          (why ?? `no model call came through /ng-rollout/${rolloutId}/…, or its capture was already released`),
      );
    }
    return { rollout_id: rolloutId, calls: h.calls.slice(), complete: h.problems.length === 0, problems: h.problems.slice(), bytes: h.bytes };
  }

  /** Drops the rollout's capture; false when none was held. */
  release(rolloutId: string): boolean {
    const h = this.held.get(rolloutId);
    if (!h) return false;
    this.drop(rolloutId, h, null);
    return true;
  }

  stats(): { rollouts: number; calls: number; bytes: number; evictions: number } {
    let calls = 0;
    for (const h of this.held.values()) calls += h.calls.length;
    return { rollouts: this.held.size, calls, bytes: this.totalBytes, evictions: this.evictions };
  }

  private drop(id: string, h: Held, why: string | null): void {
    this.held.delete(id);
    this.totalBytes -= h.bytes;
    if (why !== null) {
      this.evictions++;
      this.gone.set(id, why);
      // The reasons are bounded like the store itself (oldest forgotten first).
      while (this.gone.size > this.settings.max_rollouts) this.gone.delete(this.gone.keys().next().value as string);
    }
  }

  /** Drops captures whose last call is older than the TTL (the map is in last-write order). */
  private expire(t: number): void {
    const ttl = this.settings.ttl_s * 1000;
    for (const [id, h] of this.held) {
      if (t - h.lastWrite <= ttl) break;
      this.drop(id, h, `it expired ${this.settings.ttl_s} s after its last call (rollout_capture.ttl_s)`);
    }
  }

  /** Evicts the least recently written rollouts (never `keep`, unless it alone is over) until within the limits. */
  private evictOver(keep: string): void {
    const { max_bytes, max_rollouts } = this.settings;
    while (this.totalBytes > max_bytes || this.held.size > max_rollouts) {
      const [id, h] = this.held.entries().next().value as [string, Held];
      if (id === keep && this.held.size > 1) {
        // The current rollout is the newest, so it is last in order; this cannot happen, but never loop.
        break;
      }
      this.drop(id, h, this.totalBytes > max_bytes
        ? `it was evicted to keep captures within rollout_capture.max_bytes (${max_bytes} bytes) on model server \`${this.serverName}\``
        : `it was evicted to keep at most rollout_capture.max_rollouts (${max_rollouts}) captures on model server \`${this.serverName}\``);
    }
  }
}
