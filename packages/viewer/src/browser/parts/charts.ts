/**
 * The charts, drawn by Chart.js (bundled into the page's script at build) from aggregates the
 * server computed: the page never holds the file's rows. Every canvas carries its labels and
 * values in `data-labels` / `data-values` and a text `aria-label`, so what it shows can be read
 * (and tested) without pixels.
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip, type ChartDataset } from 'chart.js';
import type { Breakdown, ChartData, Distribution, RunMetrics } from '../../charts.js';
import type { HistogramBin } from '../../rollout-index.js';
import { api, el, fmt } from './dom.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

export interface Run { name: string; file: string }
export interface RunSummary {
  name: string;
  file: string;
  rows: number;
  invalidRows: number;
  rewards: { count: number; mean: number | null; min: number | null; max: number | null };
  tasks: { count: number; k: number | null; passAtK: number | null; passAt1: number | null };
  collectionFailures: { count: number; byReason: { reason: string; count: number }[] };
  /** The aggregate metrics of the run, as `ng-prepare-data` writes them. */
  metricsText: string;
}
type Charts = ChartData & { name: string; file: string };

const RED = '#c62828', AMBER = '#e0a000', GREEN = '#3d9a00', GREY = '#9aa0a6', BLUE = '#4a7fc1';

/** Red (0) through amber to green (1). */
export function valueColor(t: number): string {
  const x = Math.max(0, Math.min(1, t));
  const mix = (a: string, b: string, f: number) => {
    const pa = [1, 3, 5].map((i) => parseInt(a.slice(i, i + 2), 16));
    const pb = [1, 3, 5].map((i) => parseInt(b.slice(i, i + 2), 16));
    return '#' + pa.map((v, i) => Math.round(v + (pb[i]! - v) * f).toString(16).padStart(2, '0')).join('');
  };
  return x < 0.5 ? mix(RED, AMBER, x * 2) : mix(AMBER, GREEN, (x - 0.5) * 2);
}

interface BarSpec {
  id: string;
  label: string;
  labels: string[];
  datasets: { label: string; data: number[]; color: string | string[] }[];
  xTitle: string;
  yTitle: string;
  horizontal?: boolean;
  stacked?: boolean;
  height?: number;
  /** Fractions on the value axis (default: whole counts). */
  fractions?: boolean;
}

const live = new Map<string, Chart>();

/** A bar chart in `box` (replacing what was there): the canvas with its data in attributes. */
export function barChart(box: HTMLElement, spec: BarSpec): HTMLCanvasElement {
  live.get(spec.id)?.destroy();
  const canvas = el('canvas', { id: spec.id, role: 'img' });
  const first = spec.datasets[0]?.data ?? [];
  canvas.setAttribute('data-labels', JSON.stringify(spec.labels));
  canvas.setAttribute('data-values', JSON.stringify(first));
  if (spec.datasets.length > 1) canvas.setAttribute('data-series', JSON.stringify(spec.datasets.map((d) => ({ label: d.label, data: d.data }))));
  canvas.setAttribute('aria-label', spec.label + ': ' + spec.labels.map((l, i) => l + ' → ' + spec.datasets.map((d) => fmt(d.data[i])).join(' / ')).join('; '));
  const holder = el('div', { className: 'canvas-box' }, [canvas]);
  holder.style.height = (spec.height ?? 200) + 'px';
  box.replaceChildren(holder);
  const datasets: ChartDataset<'bar', number[]>[] = spec.datasets.map((d) => ({ label: d.label, data: d.data, backgroundColor: d.color, borderWidth: 0 }));
  const axis = (title: string, stacked: boolean) => ({ stacked, title: { display: true, text: title }, ticks: { autoSkip: true, maxRotation: 45 } });
  const value = (title: string, stacked: boolean) => ({ stacked, beginAtZero: true, title: { display: true, text: title }, ticks: spec.fractions ? {} : { precision: 0 } });
  const chart = new Chart(canvas, {
    type: 'bar',
    data: { labels: spec.labels, datasets },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      indexAxis: spec.horizontal ? 'y' : 'x',
      plugins: { legend: { display: spec.datasets.length > 1 }, tooltip: { enabled: true } },
      scales: spec.horizontal
        ? { x: value(spec.yTitle, !!spec.stacked), y: axis(spec.xTitle, !!spec.stacked) }
        : { x: axis(spec.xTitle, !!spec.stacked), y: value(spec.yTitle, !!spec.stacked) },
    },
  });
  live.set(spec.id, chart);
  return canvas;
}

/** The reward distribution, each bar coloured by its reward (red 0 → green 1, or the file's range when wider). */
export function rewardChart(box: HTMLElement, id: string, bins: readonly HistogramBin[]): void {
  if (!bins.length) { box.replaceChildren(el('p', { className: 'muted', text: 'No numeric rewards.' })); return; }
  const lo = Math.min(0, bins[0]!.lo), hi = Math.max(1, bins[bins.length - 1]!.hi);
  barChart(box, {
    id, label: 'Reward distribution (rows per reward)', xTitle: 'reward', yTitle: 'rollouts',
    labels: bins.map((b) => b.label),
    datasets: [{ label: 'rollouts', data: bins.map((b) => b.count), color: bins.map((b) => valueColor(((b.lo + b.hi) / 2 - lo) / (hi - lo || 1))) }],
  });
}

/** What a reward figure leaves out: the masked samples among the charted rows. */
function maskedNote(c: Charts): string {
  return c.masked.count ? ' · ' + c.masked.count + ' masked left out' : '';
}

function distCaption(d: Distribution, unit: string): string {
  if (!d.count) return 'no data';
  return 'n=' + d.count + ' · mean ' + fmt(d.mean) + unit + ' · p50 ' + fmt(d.p50) + unit + ' · p90 ' + fmt(d.p90) + unit + ' · p99 ' + fmt(d.p99) + unit + ' · max ' + fmt(d.max) + unit;
}

function distChart(box: HTMLElement, id: string, d: Distribution, what: string, unit: string, color: string): void {
  if (!d.count) return;
  barChart(box, { id, label: what + ' distribution', xTitle: what, yTitle: 'rollouts', labels: d.bins.map((b) => b.label), datasets: [{ label: 'rollouts', data: d.bins.map((b) => b.count), color }] });
  box.setAttribute('data-unit', unit);
}

interface Kind {
  key: string;
  title: string;
  /** The question the chart answers. */
  question: string;
  draw: (box: HTMLElement, c: Charts, caption: HTMLElement) => void;
}

const KINDS: Kind[] = [
  {
    key: 'reward', title: 'Reward distribution', question: 'How are rewards spread? Bars coloured by reward (red 0 → green 1).',
    draw: (box, c, cap) => { rewardChart(box, 'chart-reward-' + c.name, c.reward.bins); cap.textContent = distCaption(c.reward, '') + maskedNote(c); },
  },
  {
    key: 'passrate', title: 'Pass rate per task', question: 'Which tasks give training signal? Tasks by the share of their rollouts that passed: those whose rewards differ (amber, for 0/1 rewards) do; never (red) or always (green) passed give none.',
    draw: (box, c, cap) => {
      const p = c.passRate;
      if (!p.tasks) { box.replaceChildren(el('p', { className: 'muted', text: 'No tasks with rewards.' })); return; }
      barChart(box, {
        id: 'chart-passrate-' + c.name, label: 'Tasks per pass rate', xTitle: 'share of a task\'s rollouts that passed', yTitle: 'tasks',
        labels: p.bins.map((b) => b.label),
        datasets: [{ label: 'tasks', data: p.bins.map((b) => b.count), color: p.bins.map((b, i) => (i === 0 ? RED : i === p.bins.length - 1 ? GREEN : AMBER)) }],
      });
      cap.textContent = p.tasks + ' tasks · with signal ' + p.signal + ' (' + fmt((100 * p.signal) / p.tasks) + '%) · never passed ' + p.never + ' · always passed ' + p.always + maskedNote(c);
    },
  },
  {
    key: 'tokens', title: 'Output tokens per rollout', question: 'How long are generations, in tokens (usage, else the generated token ids)?',
    draw: (box, c, cap) => {
      distChart(box, 'chart-tokens-' + c.name, c.outputTokens, 'output tokens', '', BLUE);
      if (!c.outputTokens.count) box.replaceChildren(el('p', { className: 'muted', text: 'No token counts (no usage or token ids in the rows).' }));
      cap.textContent = distCaption(c.outputTokens, '') + (c.inputTokens.count ? ' | input tokens p50 ' + fmt(c.inputTokens.p50) + ', p90 ' + fmt(c.inputTokens.p90) : '');
    },
  },
  {
    key: 'length', title: 'Answer length per rollout', question: 'How long are the assistant\'s answers, in characters?',
    draw: (box, c, cap) => { distChart(box, 'chart-length-' + c.name, c.outputChars, 'characters', '', '#7b61c4'); cap.textContent = distCaption(c.outputChars, ''); },
  },
  {
    key: 'latency', title: 'Latency per rollout', question: 'How long do rollouts take (seconds)?',
    draw: (box, c, cap) => {
      distChart(box, 'chart-latency-' + c.name, c.latency, 'seconds', ' s', '#00897b');
      const col = c.collectorLatency;
      const collector = col ? 'collector: p50 ' + fmt(col.p50) + ' s · p90 ' + fmt(col.p90) + ' s · p99 ' + fmt(col.p99) + ' s · max ' + fmt(col.max) + ' s' : '';
      if (!c.latency.count) box.replaceChildren(el('p', { className: 'muted', text: 'The rows carry no timing (response.completed_at, latency_s, latency_ms, elapsed_s or duration_s).' }));
      cap.textContent = (c.latency.count ? distCaption(c.latency, ' s') : '') + (collector ? (c.latency.count ? ' | ' : '') + collector : '');
    },
  },
  {
    key: 'tools', title: 'Tool calls and errors', question: 'Where do tools fail? Errors in red, per tool, most errors first.',
    draw: (box, c, cap) => {
      if (!c.tools.length) { box.replaceChildren(el('p', { className: 'muted', text: 'No function calls.' })); cap.textContent = ''; return; }
      const tools = c.tools.slice(0, 25);
      barChart(box, {
        id: 'chart-tools-' + c.name, label: 'Calls per tool (ok, errors)', xTitle: 'tool', yTitle: 'calls', horizontal: true, stacked: true,
        height: Math.max(140, 40 + tools.length * 24),
        labels: tools.map((t) => t.name),
        datasets: [
          { label: 'errors', data: tools.map((t) => t.errors), color: RED },
          { label: 'ok', data: tools.map((t) => Math.max(0, t.calls - t.errors)), color: GREY },
        ],
      });
      const calls = c.tools.reduce((a, t) => a + t.calls, 0), errors = c.tools.reduce((a, t) => a + t.errors, 0);
      cap.textContent = calls + ' calls · ' + errors + ' errors (' + fmt(calls ? (100 * errors) / calls : 0) + '%) · ' + c.rowsWithToolErrors + ' of ' + c.rowsWithCalls + ' rollouts with calls hit a tool error';
      cap.classList.toggle('error', errors > 0);
    },
  },
];

type Present = Record<string, { mean: number; rows: number }>;

/**
 * A field's mean as the terminal summary prints it: over the rows that have it, with how many those
 * are, when some rows lack it (`mean_where_present`), else over every row.
 */
function fieldMean(m: RunMetrics, field: string): string {
  const present = (m.mean_where_present ?? {}) as Present;
  const means = (m.mean ?? {}) as Record<string, number>;
  const p = present[field];
  if (p) return fmt(p.mean) + ' (' + p.rows + ' of ' + fmt(m.rows) + ' rows)';
  return field in means ? fmt(means[field]) : '–';
}

/** A reward component's mean and pass@k (the collector's metrics over the charted rows). */
function componentFigure(m: RunMetrics, name: string): string {
  const c = ((m.reward_components ?? {}) as Record<string, Record<string, number>>)[name];
  if (!c) return '–';
  return fmt(c.mean) + Object.keys(c).filter((k) => /^pass@\d+$/.test(k)).map((k) => ' · ' + k + ' ' + fmt(c[k])).join('');
}

/** Figures of every run, one column per run (the reward figures over the charted rows, masked samples left out). */
function runsTable(summaries: readonly RunSummary[], charts: readonly Charts[], filtered: boolean): HTMLTableElement {
  const components = [...new Set(charts.flatMap((c) => c.components.map((x) => x.name)))].sort();
  const fields = [...new Set(charts.flatMap((c) => Object.keys((c.metrics.mean ?? {}) as Record<string, number>)))].filter((k) => k !== 'reward').sort();
  const lines: [string, (s: RunSummary, c: Charts) => string][] = [
    ['Rows', (s) => String(s.rows)],
    ...(filtered ? [['Rows matching the filter', (_s: RunSummary, c: Charts) => String(c.rows)] as [string, (s: RunSummary, c: Charts) => string]] : []),
    ['Invalid rows', (s) => String(s.invalidRows)],
    ['Masked (left out)', (_s, c) => String(c.masked.count) + (c.masked.count ? ': ' + c.masked.byReason.map((m) => m.reason + ' ' + m.count).join(', ') : '')],
    ['Mean reward', (_s, c) => fmt(c.reward.mean)],
    ...components.map((name) => ['Component ' + name, (_s: RunSummary, c: Charts) => componentFigure(c.metrics, name)] as [string, (s: RunSummary, c: Charts) => string]),
    ...fields.map((f) => ['Mean ' + f, (_s: RunSummary, c: Charts) => fieldMean(c.metrics, f)] as [string, (s: RunSummary, c: Charts) => string]),
    ['Tasks', (_s, c) => String(c.tasks.count)],
    ['pass@k', (_s, c) => fmt(c.tasks.passAtK) + (c.tasks.k !== null ? ' (k=' + c.tasks.k + ')' : '')],
    ['pass@1', (_s, c) => fmt(c.tasks.passAt1)],
    ['Tasks with signal', (_s, c) => c.passRate.tasks ? c.passRate.signal + ' of ' + c.passRate.tasks : '–'],
    ['Output tokens p50 / p90', (_s, c) => fmt(c.outputTokens.p50) + ' / ' + fmt(c.outputTokens.p90)],
    ['Latency p50 / p90 (s)', (_s, c) => c.latency.count ? fmt(c.latency.p50) + ' / ' + fmt(c.latency.p90) : c.collectorLatency ? fmt(c.collectorLatency.p50) + ' / ' + fmt(c.collectorLatency.p90) + ' (collector)' : '–'],
    ['Tool calls / errors', (_s, c) => { const calls = c.tools.reduce((a, t) => a + t.calls, 0); return calls + ' / ' + c.tools.reduce((a, t) => a + t.errors, 0); }],
    ['Collection failures', (s) => String(s.collectionFailures.count)],
  ];
  const head = el('tr', {}, [el('th', { text: 'Figure' }), ...summaries.map((s) => el('th', { text: s.name.toUpperCase() + ': ' + s.file, title: s.file }))]);
  const body = el('tbody', {}, lines.map(([label, f]) => el('tr', { 'data-figure': label }, [el('td', { text: label }), ...summaries.map((s, i) => el('td', { text: f(s, charts[i]!), 'data-run': s.name }))])));
  return el('table', { id: 'runs-table', className: 'runs' }, [el('thead', {}, [head]), body]);
}

function grid(n: number, children: HTMLElement[]): HTMLDivElement {
  const g = el('div', { className: 'chart-grid' }, children);
  g.style.setProperty('--runs', String(n));
  return g;
}

async function drawBreakdown(holder: HTMLElement, runs: readonly Run[], charts: readonly Charts[], by: string, filter: string): Promise<void> {
  // A run without the field (another environment, no reward components) is not asked.
  const answers = await Promise.all(runs.map((r, i) => charts[i]!.groupable.includes(by)
    ? api<Breakdown>('/api/breakdown?file=' + r.name + '&by=' + encodeURIComponent(by) + (filter ? '&' + filter : '')).catch((e: Error) => e)
    : new Error('No field ' + by + ' in this run.')));
  const cards = runs.map((r, i) => {
    const b = answers[i]!;
    const card = el('figure', { className: 'chart-card', 'data-run': r.name });
    card.appendChild(el('figcaption', { text: r.name.toUpperCase() + ': ' + r.file }));
    if (b instanceof Error) { card.appendChild(el('p', { className: 'muted', text: b.message })); return card; }
    const box = el('div');
    card.appendChild(box);
    const groups = b.groups.slice(0, 25);
    barChart(box, {
      id: 'chart-breakdown-' + r.name, label: 'Mean reward and pass rate by ' + by, xTitle: by, yTitle: 'mean reward / pass rate', fractions: true,
      labels: groups.map((g) => g.value),
      datasets: [
        { label: 'mean reward', data: groups.map((g) => g.meanReward ?? 0), color: groups.map((g) => valueColor(g.meanReward ?? 0)) },
        { label: 'pass rate', data: groups.map((g) => g.passRate ?? 0), color: BLUE },
      ],
    });
    // The masked column only when the run has masked samples.
    const anyMasked = b.groups.some((g) => g.masked > 0);
    const head = el('tr', {}, ['Value', 'Rows', ...(anyMasked ? ['Masked'] : []), 'Mean reward', 'Pass rate', 'Output tokens', 'Tool errors', 'p50 s'].map((h) => el('th', { text: h })));
    const rows = b.groups.map((g) => el('tr', { 'data-value': g.value }, [
      el('td', { text: g.value, title: g.value }), el('td', { text: String(g.rows) }), anyMasked ? el('td', { text: String(g.masked) }) : null, el('td', { text: fmt(g.meanReward) }), el('td', { text: fmt(g.passRate) }),
      el('td', { text: fmt(g.meanOutputTokens) }), el('td', { text: g.toolErrors + ' / ' + g.toolCalls, className: g.toolErrors ? 'error' : '' }), el('td', { text: fmt(g.p50LatencyS) }),
    ]));
    card.appendChild(el('div', { className: 'table-scroll' }, [el('table', { className: 'breakdown' }, [el('thead', {}, [head]), el('tbody', {}, rows)])]));
    if (b.values > b.groups.length) card.appendChild(el('p', { className: 'muted', text: b.values + ' distinct values; the largest ' + (b.groups.length - 1) + ' shown, the rest summed.' }));
    return card;
  });
  holder.replaceChildren(grid(runs.length, cards));
}

/** One chart per reward component, a card per run (the component's values over the unmasked charted rows). */
function componentRows(charts: readonly Charts[]): HTMLElement[] {
  const names = [...new Set(charts.flatMap((c) => c.components.map((x) => x.name)))].sort();
  return names.map((name, i) => {
    const cards = charts.map((c) => {
      const holder = el('div');
      const cap = el('p', { className: 'chart-caption muted' });
      const comp = c.components.find((x) => x.name === name);
      queueMicrotask(() => {
        if (!comp || !comp.values.count) { holder.replaceChildren(el('p', { className: 'muted', text: 'No rows with this component.' })); return; }
        distChart(holder, 'chart-component-' + i + '-' + c.name, comp.values, name, '', valueColor(comp.values.mean ?? 0));
        cap.textContent = distCaption(comp.values, '') + maskedNote(c);
      });
      return el('figure', { className: 'chart-card', 'data-run': c.name }, [el('figcaption', { text: c.name.toUpperCase() + ': ' + c.file }), holder, cap]);
    });
    return el('section', { className: 'chart-row', 'data-kind': 'component', 'data-component': name }, [
      el('h3', { text: 'Reward component: ' + name }),
      el('p', { className: 'muted question', text: 'How is this part of the reward spread (reward_components.' + name + ')?' }),
      grid(charts.length, cards),
    ]);
  });
}

/** What the charts are drawn from: every row, or the rows matching the list's filters. */
function filterLine(filter: string, charts: readonly Charts[]): HTMLElement {
  const text = filter
    ? 'Charts of the rows matching the filter (' + new URLSearchParams(filter).toString().replace(/&/g, ', ') + '): ' + charts.map((c) => c.name.toUpperCase() + ' ' + c.rows + ' of ' + c.totalRows).join(' · ')
    : 'Charts of every row: ' + charts.map((c) => c.name.toUpperCase() + ' ' + c.totalRows).join(' · ');
  return el('p', { id: 'charts-filter', text });
}

/**
 * The Charts view: a table of every run's figures, then each chart once per run, then the breakdown
 * by a chosen field, all over the rows matching `filter` (the list's filters as a query string).
 */
export async function renderCharts(box: HTMLElement, runs: readonly Run[], filter = ''): Promise<void> {
  const before = (document.getElementById('group-by') as HTMLSelectElement | null)?.value;
  box.replaceChildren(el('p', { className: 'muted', text: 'Loading charts…' }));
  const [summaries, charts] = await Promise.all([
    api<{ runs: RunSummary[] }>('/api/runs').then((r) => r.runs),
    Promise.all(runs.map((r) => api<Charts>('/api/charts?file=' + r.name + (filter ? '&' + filter : '')))),
  ]);
  const parts: HTMLElement[] = [filterLine(filter, charts), el('h2', { text: runs.length > 1 ? 'Runs side by side' : 'Run' }), runsTable(summaries, charts, filter !== '')];
  // Each run's aggregate metrics and collection failures by reason, collapsed.
  parts.push(grid(summaries.length, summaries.map((s) => {
    const failures = s.collectionFailures.byReason.map((f) => f.count + ' × ' + f.reason).join('\n');
    return el('div', { className: 'run-details', 'data-run': s.name }, [
      el('details', { className: 'json' }, [el('summary', { text: 'Aggregate Metrics - ' + s.name.toUpperCase() + ': ' + s.file }), el('pre', { text: s.metricsText })]),
      failures ? el('details', { className: 'json' }, [el('summary', { text: 'Collection failures by reason - ' + s.name.toUpperCase() }), el('pre', { text: failures })]) : null,
    ]);
  })));
  for (const k of KINDS) {
    const cards = charts.map((c) => {
      const holder = el('div');
      const cap = el('p', { className: 'chart-caption muted' });
      const card = el('figure', { className: 'chart-card', 'data-run': c.name }, [el('figcaption', { text: c.name.toUpperCase() + ': ' + c.file }), holder, cap]);
      // Drawn once the card is in the page (Chart.js sizes the canvas from its box).
      queueMicrotask(() => k.draw(holder, c, cap));
      return card;
    });
    parts.push(el('section', { className: 'chart-row', 'data-kind': k.key }, [el('h3', { text: k.title }), el('p', { className: 'muted question', text: k.question }), grid(charts.length, cards)]));
    if (k.key === 'reward') parts.push(...componentRows(charts));
  }
  const fields = [...new Set(charts.flatMap((c) => c.groupable))];
  const select = el('select', { id: 'group-by' }, fields.map((f) => el('option', { value: f, text: f })));
  // Redrawn for another filter: keep the field the breakdown was grouped by.
  if (before && fields.includes(before)) select.value = before;
  const holder = el('div', { id: 'breakdown' });
  select.addEventListener('change', () => { void drawBreakdown(holder, runs, charts, select.value, filter); });
  parts.push(el('section', { className: 'chart-row', 'data-kind': 'breakdown' }, [
    el('h3', { text: 'Breakdown' }),
    el('p', { className: 'muted question', text: 'How do agents, the values of any verifier field or of a reward component, differ in reward, pass rate, tokens, tool errors and latency? (Masked samples are counted per value and left out of its reward figures.)' }),
    el('label', { text: 'Group by ' }, [select]),
    holder,
  ]));
  box.replaceChildren(...parts);
  await new Promise((r) => setTimeout(r, 0));
  await drawBreakdown(holder, runs, charts, select.value, filter);
}
