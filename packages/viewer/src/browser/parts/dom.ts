/** DOM and API helpers the page's modules share: nodes built with `textContent` only, numbers as the page shows them. */
/** The element with this id (every id the script asks for is in the page). */
export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
export const message = (e: unknown): string => (e as Error).message;
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Record<string, string>, children?: readonly (Node | null)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') node.textContent = v;
    else if (k === 'className') node.className = v;
    else node.setAttribute(k, v);
  }
  if (children) for (const c of children) if (c) node.appendChild(c);
  return node;
}
export function fmt(v: unknown): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
  return String(v);
}
export async function api<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  const body = (await res.json()) as T & { detail?: string };
  if (!res.ok) throw new Error(body && body.detail ? body.detail : 'HTTP ' + res.status);
  return body;
}

