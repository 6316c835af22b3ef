/**
 * The viewer page's script. The build (scripts/build.mjs) bundles it into one browser file that the
 * server sends as /app.js. It renders everything from the JSON API with DOM nodes and `textContent`
 * only (no HTML is ever built from file data).
 */
import type { HistogramBin, RowSummary } from '../rollout-index.js';
import type { ComparisonSummary, TaskComparison, TaskGroup, TaskSide } from '../tasks.js';
import { renderCharts, rewardChart, type Run } from './parts/charts.js';
import type { ChartData, MaskedCount } from '../charts.js';
import { $, api, el, fmt, message } from './parts/dom.js';
import { tokenBlock } from './parts/tokens.js';
import { isToolError } from '../tool-errors.js';

type View = 'rows' | 'tasks' | 'compare' | 'charts';
interface Filters { min: string; max: string; q: string; agent: string; outcome: string; taskOutcome: string; change: string; b: string; toolErrors: string; masked: string }
interface Sort { sort: string; order: 'asc' | 'desc' }
interface Column { label: string; sort?: string; cls?: string; title?: string }
const isColumn = (c: Column | null): c is Column => c !== null;

/** The answers of the JSON API (server.ts). */
interface Summary {
  file: string;
  compare: { a: string; b: string } | null;
  /** Every run (file) the viewer was given, A first. */
  runs: Run[];
  rows: number;
  invalidRows: number;
  rewards: { count: number; mean: number | null; min: number | null; max: number | null };
  histogram: HistogramBin[];
  metricsText: string;
  agents: string[];
  tasks: { count: number; tagged: boolean; k: number | null; passAtK: number | null; passAt1: number | null };
  collectionFailures: { count: number; byReason: { reason: string; count: number }[] };
  /** Masked samples (mask_sample: true): in the file, left out of every reward figure. */
  masked: MaskedCount;
}
interface RowsAnswer { total: number; rows: RowSummary[] }
interface TasksAnswer { total: number; tasks: TaskGroup[] }
interface CompareAnswer { total: number; tasks: TaskComparison[]; files: { a: string; b: string }; summary: ComparisonSummary }
interface RowAnswer { index: number; line: number; row: unknown; raw?: string; error: string | null; warning?: string | null }

/** What the page reads of a rollout's items and content parts (any other shape is shown as JSON). */
interface Item { type?: unknown; role?: unknown; content?: unknown; summary?: unknown; name?: unknown; call_id?: unknown; arguments?: unknown; output?: unknown }
interface Part { type?: unknown; text?: unknown; refusal?: unknown; image_url?: unknown; detail?: unknown; file_id?: unknown }
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

const PAGE = 50;
/** `chartsDrawn`: the filter (query string) the Charts view was drawn for, null before it is drawn. */
const state: { view: View; start: number; total: number; selected: number | null; summary: Summary | null; filters: Filters; sorts: Record<View, Sort>; chartsDrawn: string | null } = {
  view: 'rows', start: 0, total: 0, selected: null, summary: null, chartsDrawn: null,
  filters: { min: '', max: '', q: '', agent: '', outcome: '', taskOutcome: '', change: '', b: '', toolErrors: '', masked: '' },
  sorts: { rows: { sort: 'index', order: 'asc' }, tasks: { sort: 'task', order: 'asc' }, compare: { sort: 'delta', order: 'asc' }, charts: { sort: '', order: 'asc' } },
};

function pretty(v: unknown): string { try { return JSON.stringify(v, null, 4); } catch (e) { return String(v); } }
// ---------------------------------------------------------------- summary
function renderSummary(s: Summary): void {
  state.summary = s;
  $('file-name').textContent = s.runs.length > 1 ? s.runs.map((r) => r.file).join('  vs  ') : s.file;
  document.title = s.file + ' – rollouts viewer';
  const dl = el('dl', { className: 'stats' });
  const add = (k: string, v: string) => { dl.appendChild(el('dt', { text: k })); dl.appendChild(el('dd', { text: v })); };
  add('Rows', String(s.rows));
  add('Invalid rows', String(s.invalidRows));
  add('Rows with reward', String(s.rewards.count) + (s.masked.count ? ' (masked left out)' : ''));
  if (s.masked.count) add('Masked samples', String(s.masked.count));
  add('Mean reward', fmt(s.rewards.mean));
  add('Min / max', fmt(s.rewards.min) + ' / ' + fmt(s.rewards.max));
  if (s.tasks.count) {
    add('Tasks', String(s.tasks.count));
    if (s.tasks.k !== null) add('Rollouts per task', String(s.tasks.k));
    add(s.tasks.k !== null ? 'pass@' + s.tasks.k : 'pass@k', fmt(s.tasks.passAtK));
    add('pass@1', fmt(s.tasks.passAt1));
  }
  if (s.collectionFailures.count) add('Collection failures', String(s.collectionFailures.count));
  $('stats').replaceChildren(dl);
  rewardChart($('chart'), 'reward-chart', s.histogram);
  $('metrics').textContent = s.metricsText;
  const fb = $('failures-body');
  fb.replaceChildren();
  for (const f of s.collectionFailures.byReason) fb.appendChild(el('tr', {}, [el('td', { text: f.count + ' ×' }), el('td', { text: f.reason })]));
  const nf = s.collectionFailures.count;
  $('failures-title').textContent = 'Collection failures: ' + nf + ' rollout' + (nf === 1 ? '' : 's') + ' recorded as failed (not in the file), by reason';
  $('failures-box').hidden = !s.collectionFailures.count;
  const mb = $('masked-body');
  mb.replaceChildren(...s.masked.byReason.map((m) => el('tr', { 'data-reason': m.reason }, [el('td', { text: m.count + ' ×' }), el('td', { text: m.reason })])));
  $('masked-title').textContent = 'Masked samples: ' + s.masked.count + ' (mask_sample: true; kept in the file, left out of the reward, pass rate and every mean), by failure_reason';
  $('masked-box').hidden = !s.masked.count;
  const agent = $('agent');
  for (const a of s.agents) agent.appendChild(el('option', { value: a, text: a }));
  agent.parentElement!.setAttribute('data-views', s.agents.length > 1 ? 'rows tasks charts' : '');
  $('tab-compare').hidden = !s.compare;
  const b = $<HTMLSelectElement>('compare-b');
  for (const r of s.runs.slice(1)) b.appendChild(el('option', { value: r.name, text: r.name.toUpperCase() + ': ' + r.file }));
  b.parentElement!.setAttribute('data-views', s.runs.length > 2 ? 'compare' : '');
}

// ---------------------------------------------------------------- lists
function columns(): Column[] {
  const s: { agents: string[]; tasks: { tagged: boolean }; collectionFailures: { count: number } } = state.summary || { agents: [], tasks: { tagged: false }, collectionFailures: { count: 0 } };
  const many = s.agents.length > 1;
  if (state.view === 'rows') return ([
    { label: '#', sort: 'index', cls: 'c-num' },
    s.tasks.tagged ? { label: 'Task', sort: 'task', cls: 'c-num' } : null,
    { label: 'Reward', sort: 'reward', cls: 'c-small' },
    many ? { label: 'Agent', sort: 'agent', cls: 'c-mid' } : null,
    { label: 'Response ID', cls: 'c-id' },
    { label: 'Calls', sort: 'calls', cls: 'c-small', title: 'function calls in the response (tool errors in red)' },
    { label: 'Scores', cls: 'c-scores' },
    { label: 'First user message' },
  ] as (Column | null)[]).filter(isColumn);
  if (state.view === 'tasks') return ([
    { label: 'Task', sort: 'task', cls: 'c-small' },
    { label: 'k', sort: 'k', cls: 'c-num', title: 'rollouts with a reward' },
    { label: 'Passed', sort: 'passed', cls: 'c-small', title: 'rollouts with reward 1' },
    { label: 'mean@k', sort: 'mean', cls: 'c-small', title: 'mean reward of the task' },
    { label: 'pass@k', sort: 'pass', cls: 'c-small', title: '1 if a rollout passed (binary rewards), else the best reward' },
    s.collectionFailures.count ? { label: 'Failed', sort: 'failures', cls: 'c-small', title: 'rollouts the collector recorded as failed' } : null,
    many ? { label: 'Agents', cls: 'c-mid' } : null,
    { label: 'Prompt', sort: 'prompt' },
  ] as (Column | null)[]).filter(isColumn);
  return [
    { label: 'Task', sort: 'task', cls: 'c-small' },
    { label: 'A mean', sort: 'a', cls: 'c-small', title: 'mean reward in the first file' },
    { label: 'B mean', sort: 'b', cls: 'c-small', title: 'mean reward in the second file' },
    { label: 'Δ (B − A)', sort: 'delta', cls: 'c-mid' },
    { label: 'A pass@k', cls: 'c-small' },
    { label: 'B pass@k', cls: 'c-small' },
    { label: 'Prompt', sort: 'prompt' },
  ];
}

function renderHead(): void {
  const cur = state.sorts[state.view];
  const cells = columns().map((c) => {
    const th = el('th', c.cls ? { className: c.cls } : {});
    if (c.title) th.title = c.title;
    const sort = c.sort;
    if (sort) {
      th.setAttribute('data-sort', sort);
      th.setAttribute('aria-sort', cur.sort === sort ? (cur.order === 'asc' ? 'ascending' : 'descending') : 'none');
      const b = el('button', { type: 'button', className: 'sort', text: c.label });
      b.addEventListener('click', () => {
        state.sorts[state.view] = { sort, order: cur.sort === sort && cur.order === 'asc' ? 'desc' : 'asc' };
        state.start = 0;
        load();
      });
      th.appendChild(b);
    } else th.textContent = c.label;
    return th;
  });
  $('rows-head').replaceChildren(...cells);
}

function query(): string {
  const p = new URLSearchParams();
  const f = state.filters;
  p.set('start', String(state.start));
  p.set('limit', String(PAGE));
  p.set('sort', state.sorts[state.view].sort);
  p.set('order', state.sorts[state.view].order);
  if (state.view === 'rows') {
    if (f.min !== '') p.set('min_reward', f.min);
    if (f.max !== '') p.set('max_reward', f.max);
    if (f.outcome !== '') p.set('outcome', f.outcome);
    if (f.toolErrors !== '') p.set('tool_errors', f.toolErrors);
    if (f.masked !== '') p.set('masked', f.masked);
  }
  if (state.view === 'tasks' && f.taskOutcome !== '') p.set('outcome', f.taskOutcome);
  if (state.view !== 'compare') {
    if (f.q !== '') p.set('q', f.q);
    if (f.agent !== '') p.set('agent', f.agent);
  } else {
    if (f.change !== '') p.set('change', f.change);
    if (f.b !== '') p.set('b', f.b);
  }
  return p.toString();
}

function rewardClass(v: number | null | undefined): string { return v === null || v === undefined ? '' : v > 0 ? 'reward-pos' : 'reward-zero'; }
function taskLabel(t: { taskIndex: number | null; key: string }): string { return t.taskIndex !== null && t.taskIndex !== undefined ? String(t.taskIndex) : t.key.replace(/^p:/, '').slice(0, 6); }
function scoresText(r: RowSummary): string { return Object.keys(r.scores).map((k) => k + '=' + fmt(r.scores[k])).join(' '); }

function rowLine(r: RowSummary): HTMLTableRowElement {
  const s = state.summary;
  const scores = scoresText(r);
  const cells = [el('td', { text: String(r.index + 1) })];
  if (s && s.tasks.tagged) cells.push(el('td', { text: r.taskIndex === null ? '–' : String(r.taskIndex) }));
  cells.push(el('td', { text: fmt(r.reward), className: rewardClass(r.reward) }));
  if (s && s.agents.length > 1) cells.push(el('td', { text: r.agent || '–', title: r.agent || '' }));
  cells.push(
    el('td', { text: r.responseId || '–', title: r.responseId || '' }),
    el('td', r.toolErrors ? { text: r.toolCalls + ' (' + r.toolErrors + ' err)', className: 'error', title: r.toolErrors + ' tool error' + (r.toolErrors === 1 ? '' : 's') } : { text: String(r.toolCalls) }),
    el('td', { text: scores || '–', title: scores }),
    el('td', { text: r.error ? 'Invalid: ' + r.error : r.preview, title: r.error || r.preview }),
  );
  if (r.masked) {
    // The badge leads the message cell: masked, and why.
    const last = cells[cells.length - 1]!;
    last.prepend(el('span', { className: 'badge masked', text: 'masked: ' + (r.failureReason || 'unspecified') }));
    last.title = 'Masked sample (' + (r.failureReason || 'unspecified') + '), left out of the reward figures. ' + last.title;
  }
  const tr = el('tr', { tabindex: '0', 'data-index': String(r.index) }, cells);
  if (r.error) tr.classList.add('invalid');
  if (r.masked) tr.classList.add('masked');
  if (state.selected === r.index) tr.classList.add('selected');
  tr.addEventListener('click', () => openRow(r.index));
  tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') openRow(r.index); });
  return tr;
}

function subRow(r: RowSummary, span: number): HTMLTableRowElement {
  const parts = ['reward ' + fmt(r.reward)];
  if (r.rolloutIndex !== null) parts.unshift('rollout ' + r.rolloutIndex);
  if (r.agent) parts.push(r.agent);
  parts.push(r.toolCalls + ' calls' + (r.toolErrors ? ', ' + r.toolErrors + ' tool error' + (r.toolErrors === 1 ? '' : 's') : ''));
  const scores = scoresText(r);
  if (scores) parts.push(scores);
  if (r.error) parts.push('invalid: ' + r.error);
  if (r.masked) parts.push('masked: ' + (r.failureReason || 'unspecified'));
  const tr = el('tr', { tabindex: '0', className: 'sub', 'data-index': String(r.index), 'data-reward': r.reward === null ? '' : String(r.reward) }, [
    el('td', { text: '#' + (r.index + 1) }),
    el('td', { text: parts.join(' · '), colspan: String(span - 1), className: rewardClass(r.reward) }),
  ]);
  if (state.selected === r.index) tr.classList.add('selected');
  tr.addEventListener('click', (ev) => { ev.stopPropagation(); openRow(r.index); });
  tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') { ev.stopPropagation(); openRow(r.index); } });
  return tr;
}

async function toggleTask(tr: HTMLTableRowElement, t: TaskGroup): Promise<void> {
  if (tr.classList.contains('open')) {
    tr.classList.remove('open');
    tr.setAttribute('aria-expanded', 'false');
    while (tr.nextSibling instanceof Element && tr.nextSibling.classList.contains('sub')) tr.nextSibling.remove();
    return;
  }
  tr.classList.add('open');
  tr.setAttribute('aria-expanded', 'true');
  const p = new URLSearchParams({ task: t.key, limit: '500' });
  if (state.filters.agent !== '') p.set('agent', state.filters.agent);
  let data: RowsAnswer;
  try { data = await api<RowsAnswer>('/api/rows?' + p.toString()); }
  catch (e) { $('list-status').textContent = 'Error: ' + message(e); return; }
  const span = columns().length;
  let after: HTMLTableRowElement = tr;
  for (const r of data.rows) { const sub = subRow(r, span); after.after(sub); after = sub; }
}

function taskLine(t: TaskGroup): HTMLTableRowElement {
  const s = state.summary;
  const cells = [
    el('td', { text: taskLabel(t), title: t.key }),
    el('td', { text: String(t.k) }),
    el('td', { text: String(t.passed) }),
    el('td', { text: fmt(t.mean), className: rewardClass(t.mean) }),
    el('td', { text: fmt(t.passAtK), className: rewardClass(t.passAtK) }),
  ];
  if (s && s.collectionFailures.count) cells.push(el('td', { text: String(t.collectionFailures), className: t.collectionFailures ? 'error' : '' }));
  if (s && s.agents.length > 1) cells.push(el('td', { text: t.agents.join(', ') }));
  cells.push(el('td', { text: t.preview, title: t.preview }));
  const tr = el('tr', { tabindex: '0', className: 'task', 'data-task': t.key, 'aria-expanded': 'false' }, cells);
  tr.addEventListener('click', () => toggleTask(tr, t));
  tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') toggleTask(tr, t); });
  return tr;
}

function deltaText(d: number | null): string { return d === null ? '–' : (d > 0 ? '+' : '') + fmt(d); }

function compareLine(t: TaskComparison): HTMLTableRowElement {
  const tr = el('tr', { tabindex: '0', className: 'cmp', 'data-task': t.key }, [
    el('td', { text: taskLabel(t), title: t.key }),
    el('td', { text: t.a ? fmt(t.a.mean) : 'absent', className: t.a ? rewardClass(t.a.mean) : 'muted' }),
    el('td', { text: t.b ? fmt(t.b.mean) : 'absent', className: t.b ? rewardClass(t.b.mean) : 'muted' }),
    el('td', { text: deltaText(t.delta), className: t.delta !== null && t.delta > 0 ? 'delta-pos' : t.delta !== null && t.delta < 0 ? 'delta-neg' : '' }),
    el('td', { text: t.a ? fmt(t.a.passAtK) : '–' }),
    el('td', { text: t.b ? fmt(t.b.passAtK) : '–' }),
    el('td', { text: t.preview, title: t.preview }),
  ]);
  tr.addEventListener('click', () => openCompare(t, tr));
  tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') openCompare(t, tr); });
  return tr;
}

function renderCompareSummary(files: { a: string; b: string }, s: ComparisonSummary): void {
  const box = $('compare-summary');
  const add = (k: string, v: string) => { box.appendChild(el('dt', { text: k })); box.appendChild(el('dd', { text: v })); };
  box.replaceChildren();
  add('A', files.a); add('B', files.b); add('Matched by', s.matchedBy);
  add('Tasks A / B', s.tasksA + ' / ' + s.tasksB); add('Matched', String(s.matched)); add('Only A / only B', s.onlyA + ' / ' + s.onlyB);
  add('Mean A', fmt(s.meanA)); add('Mean B', fmt(s.meanB)); add('Mean Δ', deltaText(s.meanDelta));
  add('Improved', String(s.improved)); add('Regressed', String(s.regressed)); add('Unchanged', String(s.unchanged));
  void addComponentFigures(box, add);
}

let compareDrawn = 0;
/** Masked samples and each reward component's mean in A and in the compared run (their whole-file charts, cached on the server). */
async function addComponentFigures(box: HTMLElement, add: (k: string, v: string) => void): Promise<void> {
  const drawn = ++compareDrawn;
  let a: ChartData, b: ChartData;
  try { [a, b] = await Promise.all([api<ChartData>('/api/charts?file=a'), api<ChartData>('/api/charts?file=' + compareRun().name)]); }
  catch (e) { return; }
  // A newer comparison was drawn meanwhile.
  if (drawn !== compareDrawn || !box.isConnected) return;
  if (a.masked.count || b.masked.count) add('Masked A / B (left out)', a.masked.count + ' / ' + b.masked.count);
  const mean = (c: ChartData, name: string) => fmt(c.components.find((x) => x.name === name)?.values.mean ?? null);
  for (const name of [...new Set([...a.components, ...b.components].map((x) => x.name))].sort()) add('Component ' + name + ' A / B', mean(a, name) + ' / ' + mean(b, name));
}

/** The run compared with A in the Compare view. */
function compareRun(): Run {
  const runs = state.summary ? state.summary.runs : [];
  return runs.find((r) => r.name === state.filters.b) || runs[1] || { name: 'b', file: 'B' };
}

async function load(): Promise<void> {
  if (state.view === 'charts') return;
  renderHead();
  $('list-status').textContent = 'Loading…';
  const view = state.view;
  const path = view === 'rows' ? '/api/rows?' : view === 'tasks' ? '/api/tasks?' : '/api/compare?';
  let data: RowsAnswer | TasksAnswer | CompareAnswer;
  try { data = await api<RowsAnswer | TasksAnswer | CompareAnswer>(path + query()); }
  catch (e) { $('list-status').textContent = 'Error: ' + message(e); return; }
  if (view !== state.view) return;
  state.total = data.total;
  const body = $('rows-body');
  body.replaceChildren();
  let shown: number;
  if (view === 'rows') {
    const rows = (data as RowsAnswer).rows;
    for (const it of rows) body.appendChild(rowLine(it));
    shown = rows.length;
  } else if (view === 'tasks') {
    const tasks = (data as TasksAnswer).tasks;
    for (const it of tasks) body.appendChild(taskLine(it));
    shown = tasks.length;
  } else {
    const compared = data as CompareAnswer;
    for (const it of compared.tasks) body.appendChild(compareLine(it));
    renderCompareSummary(compared.files, compared.summary);
    shown = compared.tasks.length;
  }
  const end = Math.min(state.start + shown, data.total);
  const noun = view === 'rows' ? 'matching row' : 'task';
  $('list-status').textContent = data.total + ' ' + noun + (data.total === 1 ? '' : 's');
  $('page-info').textContent = data.total ? (state.start + 1) + '–' + end + ' of ' + data.total : '';
  $<HTMLButtonElement>('prev').disabled = state.start === 0;
  $<HTMLButtonElement>('next').disabled = end >= data.total;
}

// ---------------------------------------------------------------- rollout
function bubble(kind: string, title: string, text: string): HTMLDivElement {
  return el('div', { className: 'bubble ' + kind }, [el('h3', { text: title }), el('div', { className: 'body', text: text })]);
}
function jsonBlock(title: string, value: unknown, open: boolean): HTMLDetailsElement {
  const d = el('details', { className: 'json' }, [el('summary', { text: title }), el('pre', { text: typeof value === 'string' ? value : pretty(value) })]);
  if (open) d.open = true;
  return d;
}
function prettyMaybe(text: unknown): string {
  if (typeof text !== 'string') return pretty(text);
  try { return JSON.stringify(JSON.parse(text), null, 4); } catch (e) { return text; }
}
function partText(p: unknown): string {
  if (typeof p === 'string') return p;
  if (!p || typeof p !== 'object') return String(p);
  const part = p as Part;
  if (typeof part.text === 'string') return part.text;
  if (typeof part.refusal === 'string') return '[refusal] ' + part.refusal;
  return '[' + String(part.type || 'part') + '] ' + pretty(p);
}

function itemBubbles(m: Item, prefix: string): HTMLElement[] {
  const out: HTMLElement[] = [];
  const type = m.type || (m.role ? 'message' : undefined);
  if (type === 'message') {
    const parts: unknown[] = Array.isArray(m.content) ? m.content : [m.content];
    const role = m.role;
    const kind = role === 'user' ? 'user' : role === 'assistant' ? 'assistant' : 'system';
    const name = role === 'user' ? 'User message' : role === 'assistant' ? 'Assistant message' : 'System message';
    // Images: an inline base64 data URL of an image type, up to 8 MB, is shown as <img> (the page's
    // CSP allows data: images only); anything else, remote URLs included, is shown as text, never loaded.
    const imageUrl = new RegExp('^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$');
    for (const p of parts) {
      const part = p && typeof p === 'object' ? (p as Part) : null;
      const url = part && part.type === 'input_image' ? part.image_url : undefined;
      if (part === null || url === undefined) { out.push(bubble(kind, prefix + name, partText(p))); continue; }
      const title = prefix + name + ' - image' + (part.detail ? ' (detail ' + String(part.detail) + ')' : '');
      if (typeof url === 'string' && url.length <= 8 * 1024 * 1024 && imageUrl.test(url)) {
        const b = bubble(kind, title, '');
        b.querySelector('.body')!.appendChild(el('img', { src: url, alt: 'input image', className: 'input-image', loading: 'lazy' }));
        out.push(b);
      } else if (typeof url === 'string' && url.startsWith('data:')) {
        out.push(bubble(kind, title, '[image not shown: ' + (url.length > 8 * 1024 * 1024 ? 'larger than 8 MB' : 'not a base64 png, jpeg, gif or webp data URL') + ', ' + url.length + ' characters]'));
      } else {
        out.push(bubble(kind, title, '[remote image, not loaded] ' + String(url !== null && url !== undefined ? url : part.file_id)));
      }
    }
  } else if (type === 'reasoning') {
    const summary: unknown[] = Array.isArray(m.summary) ? m.summary : [];
    if (!summary.length) out.push(bubble('reasoning', prefix + 'Reasoning', '(no summary)'));
    for (const s of summary) {
      const text = s && typeof s === 'object' ? (s as Part).text : undefined;
      out.push(bubble('reasoning', prefix + 'Reasoning', typeof text === 'string' ? text : pretty(s)));
    }
  } else if (type === 'function_call') {
    out.push(bubble('tool', prefix + 'Function call - `' + String(m.name) + '` (tool call ID `' + String(m.call_id) + '`)',
      'Function call name `' + String(m.name) + '`\n' + prettyMaybe(m.arguments)));
  } else if (type === 'function_call_output') {
    const failed = isToolError(m.output);
    out.push(bubble(failed ? 'toolout toolerr' : 'toolout', prefix + 'Function call output' + (failed ? ' - tool error' : '') + ' (tool call ID `' + String(m.call_id) + '`)', prettyMaybe(m.output)));
  } else {
    out.push(bubble('system', prefix + 'Item - ' + String(type), pretty(m)));
  }
  return out;
}

function renderRollout(data: RowAnswer, box: HTMLElement, tag: string): void {
  box.replaceChildren();
  const row = data.row as Record<string, unknown> | null;
  const rid = row && isRecord(row.response) && row.response.id ? row.response.id : '–';
  box.appendChild(el('h2', { text: 'Sample ' + (data.index + 1) + ' - Responses ID ' + String(rid) }));
  if (data.error) box.appendChild(el('p', { className: 'error', text: 'Invalid row (line ' + data.line + '): ' + data.error }));
  if (data.warning) box.appendChild(el('p', { className: 'muted', text: 'Note (line ' + data.line + '): ' + data.warning }));
  const raw = data.row as Record<string, unknown> | null;
  if (raw && typeof raw === 'object' && raw.mask_sample === true) {
    const reason = typeof raw.failure_reason === 'string' && raw.failure_reason ? raw.failure_reason : 'unspecified';
    box.appendChild(el('p', { className: 'masked-note', id: tag ? 'masked-note-' + tag : 'masked-note' }, [
      el('span', { className: 'badge masked', text: 'masked' }),
      el('span', { text: 'Masked sample — failure_reason: ' + reason + '. Kept for inspection; left out of the reward, pass rate and every mean, and never trained on.' }),
    ]));
  }
  if (!row || typeof row !== 'object' || Array.isArray(row)) {
    box.appendChild(jsonBlock('Raw line', data.raw !== undefined ? data.raw : pretty(row), true));
    return;
  }
  // Verify fields and other metadata.
  const fields = el('table', { className: 'fields' });
  const tb = el('tbody');
  for (const k of Object.keys(row)) {
    if (k === 'responses_create_params' || k === 'response') continue;
    const v = row[k];
    if (v === null || v === undefined) continue;
    const cell = typeof v === 'object' ? el('td', {}, [el('pre', { text: pretty(v) })]) : el('td', { text: String(v) });
    tb.appendChild(el('tr', { 'data-key': k }, [el('td', { text: 'Metadata - ' + k }), cell]));
  }
  fields.appendChild(tb);
  box.appendChild(fields);
  const params = (row.responses_create_params && typeof row.responses_create_params === 'object' ? row.responses_create_params : {}) as Record<string, unknown>;
  const response = (row.response && typeof row.response === 'object' ? row.response : {}) as Record<string, unknown>;
  const sampling: Record<string, unknown> = {};
  for (const k of Object.keys(params)) if (k !== 'input' && k !== 'tools') sampling[k] = params[k];
  box.appendChild(jsonBlock('Sampling params', sampling, false));
  if (Array.isArray(params.tools) && params.tools.length) box.appendChild(jsonBlock('Tools (' + params.tools.length + ')', params.tools, false));
  const conv = el('div', { id: tag ? 'conversation-' + tag : 'conversation', className: 'conversation' });
  let input = params.input;
  if (typeof input === 'string') input = [{ role: 'user', content: input }];
  const items: unknown[] = (Array.isArray(input) ? input : []).concat(Array.isArray(response.output) ? response.output : []);
  let turn = 0, step = 0;
  for (const item of items) {
    if (!item || typeof item !== 'object') { conv.appendChild(bubble('system', 'Item', pretty(item))); continue; }
    const m = item as Item;
    if (m.role === 'user') { turn += 1; step = 0; }
    if (m.type === 'function_call') step += 1;
    for (const b of itemBubbles(m, 'Turn ' + turn + ' Step ' + step + ' - ')) conv.appendChild(b);
  }
  box.appendChild(conv);
  box.appendChild(tokenBlock(tag || 'a', data.index, tag ? 'tokens-' + tag : 'tokens'));
  box.appendChild(jsonBlock('Metadata - responses_create_params', params, false));
  box.appendChild(jsonBlock('Metadata - response', response, false));
}

async function openRow(i: number): Promise<void> {
  state.selected = i;
  history.replaceState(null, '', '#row=' + (i + 1));
  for (const tr of document.querySelectorAll('#rows-body tr')) tr.classList.toggle('selected', tr.getAttribute('data-index') === String(i));
  $('detail').replaceChildren(el('p', { className: 'muted', text: 'Loading row ' + (i + 1) + '…' }));
  try { renderRollout(await api<RowAnswer>('/api/rows/' + i), $('detail'), ''); }
  catch (e) { $('detail').replaceChildren(el('p', { className: 'error', text: 'Error: ' + message(e) })); }
}

// One side of the comparison: buttons to pick the task's rollout, and the rollout itself.
function compareSide(file: 'a' | 'b', run: string, name: string, side: TaskSide | null): HTMLDivElement {
  const box = el('div', { className: 'side-' + file, id: 'side-' + file });
  box.appendChild(el('h3', { text: file.toUpperCase() + ': ' + name }));
  if (!side) { box.appendChild(el('p', { className: 'muted', text: 'This task is not in ' + name + '.' })); return box; }
  box.appendChild(el('p', { className: 'muted', text: 'k=' + side.k + ', passed ' + side.passed + ', mean ' + fmt(side.mean) + ', pass@k ' + fmt(side.passAtK) }));
  const picks = el('div', { className: 'picks' });
  const holder = el('div');
  const show = async (i: number, button: Element) => {
    for (const b of picks.children) b.setAttribute('aria-pressed', b === button ? 'true' : 'false');
    holder.replaceChildren(el('p', { className: 'muted', text: 'Loading row ' + (i + 1) + '…' }));
    try { renderRollout(await api<RowAnswer>('/api/rows/' + i + '?file=' + run), holder, run); }
    catch (e) { holder.replaceChildren(el('p', { className: 'error', text: 'Error: ' + message(e) })); }
  };
  side.rows.forEach((i, j) => {
    const b = el('button', { type: 'button', 'data-index': String(i), text: file.toUpperCase() + (j + 1) });
    b.addEventListener('click', () => show(i, b));
    picks.appendChild(b);
  });
  box.appendChild(picks);
  box.appendChild(holder);
  if (picks.firstElementChild) show(side.rows[0]!, picks.firstElementChild);
  return box;
}

function openCompare(t: TaskComparison, tr: HTMLTableRowElement): void {
  for (const r of document.querySelectorAll('#rows-body tr')) r.classList.toggle('selected', r === tr);
  const files = { a: state.summary && state.summary.compare ? state.summary.compare.a : 'A', b: compareRun().file };
  const box = $('detail');
  box.replaceChildren(el('h2', { text: 'Task ' + taskLabel(t) + ': A ' + (t.a ? fmt(t.a.mean) : 'absent') + ' → B ' + (t.b ? fmt(t.b.mean) : 'absent') + ' (Δ ' + deltaText(t.delta) + ')' }));
  box.appendChild(el('div', { className: 'side-by-side' }, [compareSide('a', 'a', files.a, t.a), compareSide('b', compareRun().name, files.b, t.b)]));
}

// ---------------------------------------------------------------- wiring
function setView(v: View): Promise<void> {
  state.view = v;
  state.start = 0;
  for (const b of document.querySelectorAll('#tabs button')) b.setAttribute('aria-pressed', b.getAttribute('data-view') === v ? 'true' : 'false');
  for (const l of document.querySelectorAll<HTMLElement>('#filters label')) l.hidden = !(l.getAttribute('data-views') || '').split(' ').includes(v);
  $('compare-summary').hidden = v !== 'compare';
  document.body.classList.toggle('compare', v === 'compare');
  document.body.classList.toggle('charts', v === 'charts');
  $('charts').hidden = v !== 'charts';
  if (v === 'charts') return showCharts();
  return load();
}
/** The list's row filters as the charts take them (every run gets the same filter). */
function chartFilter(): string {
  const f = state.filters;
  const p = new URLSearchParams();
  if (f.min !== '') p.set('min_reward', f.min);
  if (f.max !== '') p.set('max_reward', f.max);
  if (f.agent !== '') p.set('agent', f.agent);
  if (f.outcome !== '') p.set('outcome', f.outcome);
  if (f.toolErrors !== '') p.set('tool_errors', f.toolErrors);
  if (f.masked !== '') p.set('masked', f.masked);
  if (f.q !== '') p.set('q', f.q);
  return p.toString();
}
async function showCharts(): Promise<void> {
  const filter = chartFilter();
  if (state.chartsDrawn === filter || !state.summary) return;
  state.chartsDrawn = filter;
  $('charts').removeAttribute('data-ready');
  try {
    await renderCharts($('charts'), state.summary.runs, filter);
    // A newer filter may have started drawing meanwhile: only the last one marks the view ready.
    if (state.chartsDrawn === filter) { $('charts').setAttribute('data-ready', '1'); $('charts').setAttribute('data-filter', filter); }
  }
  catch (e) { state.chartsDrawn = null; $('charts').replaceChildren(el('p', { className: 'error', text: 'Error: ' + message(e) })); }
}
function readFilters(): void {
  const value = (id: string) => $<HTMLInputElement | HTMLSelectElement>(id).value;
  state.filters = {
    min: value('min-reward').trim(), max: value('max-reward').trim(), q: value('search').trim(),
    agent: value('agent'), outcome: value('outcome'), taskOutcome: value('task-outcome'), change: value('change'), b: value('compare-b'), toolErrors: value('tool-errors'),
    masked: value('masked-filter'),
  };
}
function applyFilters(ev?: Event): void {
  if (ev) ev.preventDefault();
  readFilters();
  state.start = 0;
  if (state.view === 'charts') { void showCharts(); return; }
  load();
}
document.addEventListener('DOMContentLoaded', async () => {
  $('filters').addEventListener('submit', applyFilters);
  for (const id of ['agent', 'outcome', 'task-outcome', 'change', 'compare-b', 'tool-errors', 'masked-filter']) $(id).addEventListener('change', applyFilters);
  $('reset').addEventListener('click', () => {
    for (const id of ['min-reward', 'max-reward', 'search', 'agent', 'outcome', 'task-outcome', 'change', 'tool-errors', 'masked-filter']) $<HTMLInputElement | HTMLSelectElement>(id).value = '';
    applyFilters();
  });
  $('prev').addEventListener('click', () => { state.start = Math.max(0, state.start - PAGE); load(); });
  $('next').addEventListener('click', () => { state.start += PAGE; load(); });
  for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => setView(b.getAttribute('data-view') as View));
  try { renderSummary(await api<Summary>('/api/summary')); } catch (e) { $('stats').textContent = 'Error: ' + message(e); }
  await setView('rows');
  const m = /^#row=([0-9]+)$/.exec(location.hash);
  if (m && Number(m[1]) >= 1) await openRow(Number(m[1]) - 1);
  document.body.setAttribute('data-ready', '1');
});
