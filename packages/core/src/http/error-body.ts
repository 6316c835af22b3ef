/**
 * The body of every error answer: upstream's FastAPI shape `{"detail": …}`, plus the error's `code`
 * when it has one, so the caller (another server, the collector) knows the failure without reading
 * its text. A plain HttpError (NG_ERR_HTTP: its status says it all) answers `{detail}` alone.
 */
export function errorBody(detail: unknown, code?: string): string {
  return JSON.stringify(code === undefined || code === 'NG_ERR_HTTP' ? { detail } : { detail, code });
}
