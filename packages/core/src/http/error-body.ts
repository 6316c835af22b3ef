/**
 * The body of every error answer: upstream's FastAPI shape `{"detail": …}`, plus the error's `code`
 * when it has one, so the caller (another server, the collector) knows the failure without reading
 * its text. A plain HttpError (NG_ERR_HTTP: its status says it all) answers `{detail}` alone.
 * `extra` fields follow (never replacing `detail` or `code`).
 */
export function errorBody(detail: unknown, code?: string, extra?: Record<string, unknown>): string {
  const body: Record<string, unknown> = code === undefined || code === 'NG_ERR_HTTP' ? { detail } : { detail, code };
  for (const [k, v] of Object.entries(extra ?? {})) if (!Object.hasOwn(body, k)) body[k] = v;
  return JSON.stringify(body);
}
