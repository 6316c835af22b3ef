/**
 * What counts as a tool error, for the server's counts and the page's highlighting alike (this
 * module imports nothing, so the page's bundle can take it).
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Whether a function call output is an error the model was shown: the tool loop passes a failed
 * tool call on as its output, a JSON object with an `error` key (bad arguments, a tool's own
 * error) or FastAPI's `detail` (404 unknown tool, 422 bad arguments, 500).
 */
export function isToolError(output: unknown): boolean {
  if (typeof output !== 'string') return isObj(output) && ('error' in output || 'detail' in output);
  const t = output.trimStart();
  if (t.startsWith('{')) {
    try {
      const v: unknown = JSON.parse(t);
      return isObj(v) && ((v.error !== undefined && v.error !== null && v.error !== false && v.error !== '') || (v.detail !== undefined && Object.keys(v).length === 1));
    } catch {
      return false;
    }
  }
  return /^(Traceback \(most recent call last\)|Error:|Exception:)/.test(t);
}
