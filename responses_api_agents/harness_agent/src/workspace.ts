// What a rollout's work folder starts from, read from the task row: files written as they are,
// a folder copied in, a tarball unpacked, and the instruction the harness is given.
import { isAbsolute, normalize, resolve } from 'node:path';
import { z } from 'zod';
import { HttpError } from '@nemo-gym/core/errors';

export const WorkspaceSchema = z
  .object({
    /** Files of the repository (relative path → text). */
    files: z.record(z.string(), z.string()).default({}),
    /** A folder copied into the repository first (absolute, or relative to the agent's `repo_root`). */
    dir: z.string().min(1).optional(),
    /** A `.tar`, `.tar.gz` / `.tgz` or `.tar.xz` unpacked into the repository first (same paths). */
    tarball: z.string().min(1).optional(),
  })
  .strict();
export type Workspace = z.output<typeof WorkspaceSchema>;

/** A relative path that stays inside its folder (no `..`, not absolute, not into `.git`). */
export function checkRelativePath(path: string, where: string): string {
  const n = normalize(path);
  if (!path || isAbsolute(path) || n === '.' || n.startsWith('..') || n.split('/').includes('.git')) {
    throw new HttpError(422, `${where}: '${path}' must be a relative path inside the repository (no '..', not absolute, not under .git)`);
  }
  return n;
}

export function resolveSource(path: string, repoRoot: string): string {
  return isAbsolute(path) ? path : resolve(repoRoot, path);
}

type Json = Record<string, unknown>;

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Json[]).map((p) => (typeof p.text === 'string' ? p.text : '')).filter(Boolean).join('\n');
}

/**
 * The harness's instruction: the row's `instruction`, else the request's `instructions` and every
 * user or system message of `responses_create_params.input`, in order.
 */
export function instructionOf(row: Json): string {
  if (typeof row.instruction === 'string' && row.instruction.trim()) return row.instruction;
  const params = (row.responses_create_params ?? {}) as Json;
  const parts: string[] = [];
  if (typeof params.instructions === 'string') parts.push(params.instructions);
  const input = params.input;
  if (typeof input === 'string') parts.push(input);
  else if (Array.isArray(input)) {
    for (const item of input as Json[]) {
      if ((item.type === undefined || item.type === 'message') && (item.role === 'user' || item.role === 'system' || item.role === 'developer')) parts.push(messageText(item.content));
    }
  }
  const text = parts.filter((p) => p.trim()).join('\n\n');
  if (!text) throw new HttpError(422, 'the row gives the harness nothing to do: set `instruction` or a user message in responses_create_params.input');
  return text;
}
