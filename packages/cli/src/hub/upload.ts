/**
 * Publishing a dataset file to a Hub dataset repo with the client library: the repo is created
 * when absent (`repoExists`, `createRepo`), then the JSONL and its metrics document go in one
 * commit (`uploadFilesWithProgress`; the library picks the Hub's transfer: regular, LFS or Xet).
 */
import { openAsBlob } from 'node:fs';
import { HubAuthError } from '../errors.js';
import { fetchWithLimit, hubFailure, type HubContext, type HubSettings } from './hub.js';

export interface UploadRequest {
  repoId: string;
  settings: HubSettings;
  files: { pathInRepo: string; content: { file: string } | { text: string } }[];
  /** Visibility of a repo this creates (default private, as the reference implementation does). */
  private?: boolean;
  commitTitle: string;
  /** Time to wait for each answer's headers (default 60 s); the transfer itself is bounded by `budgetMs`. */
  headersTimeoutMs?: number;
  /** Time allowed for the whole upload (default 2 h). */
  budgetMs?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface UploadResult {
  created: boolean;
  commitUrl: string | undefined;
  commitOid: string | undefined;
  bytes: number;
}

export async function uploadToHub(req: UploadRequest): Promise<UploadResult> {
  const hub = await import('@huggingface/hub');
  const { hubUrl, token } = req.settings;
  const repo = { type: 'dataset' as const, name: req.repoId };
  const ctx: HubContext = { hubUrl, repoId: req.repoId, action: 'upload', hasToken: token !== undefined };
  const budget = AbortSignal.timeout(req.budgetMs ?? 2 * 3600_000);
  const limited = fetchWithLimit(req.headersTimeoutMs ?? 60_000, budget);
  if (!token) {
    throw new HubAuthError(
      `publishing to ${req.repoId} needs a Hugging Face token with write access: add \`hf_token: hf_…\` to env.yaml (created at huggingface.co/settings/tokens), or export HF_TOKEN.`,
    );
  }
  let created = false;
  try {
    if (!(await hub.repoExists({ repo, hubUrl, accessToken: token, fetch: limited }))) {
      try {
        await hub.createRepo({ repo, hubUrl, accessToken: token, visibility: req.private === false ? 'public' : 'private', fetch: limited });
        created = true;
      } catch (err) {
        // Created in between by someone else: that is the repo wanted.
        if ((err as { statusCode?: number }).statusCode !== 409) throw err;
      }
    }
    const blobs = await Promise.all(
      req.files.map(async (f) => ({ path: f.pathInRepo, content: 'file' in f.content ? await openAsBlob(f.content.file) : new Blob([f.content.text]) })),
    );
    const total = blobs.reduce((n, b) => n + b.content.size, 0);
    const sizes = new Map(blobs.map((b) => [b.path, b.content.size]));
    const uploaded = new Map<string, number>();
    const events = hub.commitIter({
      repo,
      hubUrl,
      accessToken: token,
      title: req.commitTitle,
      operations: blobs.map((b) => ({ operation: 'addOrUpdate' as const, path: b.path, content: b.content })),
      fetch: limited,
      abortSignal: budget,
    });
    let result: { commit: { oid: string; url: string } } | undefined;
    for (;;) {
      const step = await events.next();
      if (step.done) {
        result = step.value as typeof result;
        break;
      }
      const ev = step.value as { event: string; path?: string; progress?: number; state?: string };
      if (ev.event === 'fileProgress' && ev.state === 'uploading' && ev.path !== undefined) {
        uploaded.set(ev.path, (sizes.get(ev.path) ?? 0) * (ev.progress ?? 0));
        req.onProgress?.(Math.round([...uploaded.values()].reduce((a, b) => a + b, 0)), total);
      }
    }
    req.onProgress?.(total, total);
    return { created, commitUrl: result?.commit?.url, commitOid: result?.commit?.oid, bytes: total };
  } catch (err) {
    throw hubFailure(err, ctx);
  }
}
