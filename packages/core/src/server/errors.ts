/** FastAPI-shaped validation details, so tool errors read the same to a model as upstream's. */
import type { z } from 'zod';

export interface ValidationDetail {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const p of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[p];
  }
  return node;
}

export function zodIssuesToDetail(issues: readonly z.core.$ZodIssue[], body: unknown): ValidationDetail[] {
  return issues.map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) as (string | number)[];
    const input = path.length ? valueAt(body, path.slice(0, -1)) : body;
    const own = valueAt(body, path);
    if (issue.code === 'invalid_type' && own === undefined) {
      return { type: 'missing', loc: ['body', ...path], msg: 'Field required', input: input ?? null };
    }
    if (issue.code === 'unrecognized_keys') {
      return { type: 'extra_forbidden', loc: ['body', ...path, ...issue.keys], msg: 'Extra inputs are not permitted', input: own ?? null };
    }
    const type = issue.code === 'invalid_type' ? `${issue.expected}_type` : issue.code;
    return { type, loc: ['body', ...path], msg: issue.message, input: own ?? null };
  });
}
