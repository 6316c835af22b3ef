/**
 * The viewer's page: static HTML, CSS and a script that renders everything from the JSON API
 * with DOM nodes and `textContent` only (no HTML is ever built from file data).
 */

export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>NeMo Gym rollouts viewer</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header>
  <h1>Rollouts viewer</h1>
  <span id="file-name" class="muted"></span>
</header>
<main>
  <section id="summary" aria-label="Summary">
    <div id="stats" class="stats"></div>
    <figure id="chart-box">
      <figcaption>Reward distribution</figcaption>
      <div id="chart"></div>
    </figure>
    <details id="metrics-box">
      <summary>Aggregate Metrics</summary>
      <pre id="metrics"></pre>
    </details>
  </section>
  <section id="browser" aria-label="Rows">
    <form id="filters" autocomplete="off">
      <label>Min reward <input id="min-reward" type="number" step="any" size="6"></label>
      <label>Max reward <input id="max-reward" type="number" step="any" size="6"></label>
      <label class="grow">Search <input id="search" type="search" placeholder="text in the row"></label>
      <button id="apply" type="submit">Apply</button>
      <button id="reset" type="button">Reset</button>
    </form>
    <div id="list-status" class="muted" role="status"></div>
    <table id="rows">
      <thead><tr><th>#</th><th>Reward</th><th>Response ID</th><th title="function calls in the response">Calls</th><th>Scores</th><th>First user message</th></tr></thead>
      <tbody id="rows-body"></tbody>
    </table>
    <div class="pager">
      <button id="prev" type="button">&larr; Previous</button>
      <span id="page-info" class="muted"></span>
      <button id="next" type="button">Next &rarr;</button>
    </div>
  </section>
  <section id="detail" aria-label="Rollout">
    <p class="muted">Select a row to see the rollout.</p>
  </section>
</main>
</body>
</html>
`;

export const APP_CSS = `
:root { --bg: #f7f7f8; --card: #fff; --ink: #1d1d1f; --muted: #6b6b76; --line: #e2e2e6; --accent: #76b900;
  --user: #eef5ff; --assistant: #f4f4f6; --tool: #fff8e6; --toolout: #f1f9ec; --reason: #f6f0ff; --system: #fafafa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; align-items: baseline; gap: 1rem; padding: .6rem 1rem; background: #1d1d1f; color: #fff; }
header h1 { font-size: 1.1rem; margin: 0; }
header .muted { color: #c9c9d0; }
main { display: grid; grid-template-columns: minmax(480px, 1fr) minmax(420px, 1fr); grid-template-areas: "summary summary" "browser detail"; gap: 1rem; padding: 1rem; }
#summary { grid-area: summary; display: grid; grid-template-columns: auto minmax(0, 640px); justify-content: start; gap: 1rem; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
#metrics-box { grid-column: 1 / -1; }
#browser { grid-area: browser; min-width: 0; }
#detail { grid-area: detail; min-width: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; max-height: 85vh; overflow: auto; }
.muted { color: var(--muted); }
.stats { display: grid; grid-template-columns: auto auto; gap: .2rem 1rem; align-content: start; }
.stats dt { color: var(--muted); }
.stats dd { margin: 0; font-variant-numeric: tabular-nums; font-weight: 600; }
figure { margin: 0; }
figcaption { color: var(--muted); margin-bottom: .3rem; }
#chart svg { width: 100%; max-width: 640px; height: auto; max-height: 190px; display: block; }
#chart .bar { fill: var(--accent); }
#chart text { font-size: 11px; fill: var(--muted); }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
#metrics { max-height: 40vh; overflow: auto; background: var(--bg); padding: .5rem; border-radius: 6px; }
form#filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin-bottom: .5rem; }
form#filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
form#filters label.grow { flex: 1; min-width: 10rem; }
input, button { font: inherit; padding: .25rem .4rem; border: 1px solid var(--line); border-radius: 5px; background: #fff; }
button { cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 8px; table-layout: fixed; }
th, td { text-align: left; padding: .3rem .45rem; border-bottom: 1px solid var(--line); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
th:nth-child(1) { width: 3rem; } th:nth-child(2) { width: 4.2rem; } th:nth-child(3) { width: 8.5rem; } th:nth-child(4) { width: 3.6rem; } th:nth-child(5) { width: 9rem; }
tbody tr { cursor: pointer; }
tbody tr:hover, tbody tr:focus { background: #f0f7e6; outline: none; }
tbody tr.selected { background: #e3f2cf; }
tbody tr.invalid td { color: #b00020; }
.reward-pos { color: #3b7a00; font-weight: 600; } .reward-zero { color: #b00020; }
.pager { display: flex; gap: 1rem; align-items: center; justify-content: center; margin-top: .5rem; }
.bubble { border: 1px solid var(--line); border-radius: 8px; margin: .5rem 0; padding: .45rem .6rem; background: var(--assistant); }
.bubble h3 { margin: 0 0 .3rem; font-size: 12px; color: var(--muted); font-weight: 600; }
.bubble .body { white-space: pre-wrap; word-break: break-word; }
.bubble.user { background: var(--user); margin-right: 2rem; }
.bubble.assistant { margin-left: 2rem; }
.bubble.system { background: var(--system); }
.bubble.tool { background: var(--tool); margin-left: 2rem; }
.bubble.toolout { background: var(--toolout); margin-left: 2rem; }
.bubble.reasoning { background: var(--reason); margin-left: 2rem; font-style: italic; }
table.fields { table-layout: auto; margin: .4rem 0 .8rem; }
table.fields td { white-space: normal; vertical-align: top; }
table.fields td:first-child { font-weight: 600; width: 12rem; }
.error { color: #b00020; }
details.json { margin: .4rem 0; }
details.json summary { cursor: pointer; color: var(--muted); }
h2 { font-size: 1rem; margin: .2rem 0 .6rem; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; grid-template-areas: "summary" "browser" "detail"; } }
`;

export const APP_JS = `'use strict';
(function () {
  const PAGE = 50;
  const state = { start: 0, total: 0, selected: null, filters: { min: '', max: '', q: '' } };
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    if (attrs) for (const k of Object.keys(attrs)) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'className') node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    if (children) for (const c of children) if (c) node.appendChild(c);
    return node;
  }
  function svg(tag, attrs) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const k of Object.keys(attrs || {})) node.setAttribute(k, String(attrs[k]));
    return node;
  }
  function pretty(v) { try { return JSON.stringify(v, null, 4); } catch (e) { return String(v); } }
  function fmt(v) {
    if (v === null || v === undefined) return '–';
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
    return String(v);
  }
  async function api(path) {
    const res = await fetch(path, { headers: { accept: 'application/json' } });
    const body = await res.json();
    if (!res.ok) throw new Error(body && body.detail ? body.detail : 'HTTP ' + res.status);
    return body;
  }

  // ---------------------------------------------------------------- summary
  function renderChart(bins) {
    const box = $('chart');
    box.replaceChildren();
    if (!bins.length) { box.appendChild(el('p', { className: 'muted', text: 'No numeric rewards.' })); return; }
    const W = 640, H = 190, padL = 34, padB = 34, padT = 14;
    const maxC = Math.max.apply(null, bins.map((b) => b.count));
    const bw = (W - padL - 8) / bins.length;
    const root = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'Reward distribution', id: 'reward-chart' });
    root.appendChild(svg('line', { x1: padL, y1: H - padB, x2: W - 4, y2: H - padB, stroke: '#999' }));
    const yl = svg('text', { x: padL - 6, y: padT + 4, 'text-anchor': 'end' }); yl.textContent = String(maxC); root.appendChild(yl);
    const y0 = svg('text', { x: padL - 6, y: H - padB, 'text-anchor': 'end' }); y0.textContent = '0'; root.appendChild(y0);
    bins.forEach((b, i) => {
      const h = maxC ? ((H - padB - padT) * b.count) / maxC : 0;
      const x = padL + i * bw + 2;
      const rect = svg('rect', { x: x, y: H - padB - h, width: Math.max(1, bw - 4), height: h, class: 'bar' });
      const t = svg('title', {}); t.textContent = 'reward ' + b.label + ': ' + b.count + ' rows'; rect.appendChild(t);
      root.appendChild(rect);
      const c = svg('text', { x: x + (bw - 4) / 2, y: H - padB - h - 3, 'text-anchor': 'middle' }); c.textContent = String(b.count); root.appendChild(c);
      if (bins.length <= 12 || i % 4 === 0) {
        const lab = svg('text', { x: x + (bw - 4) / 2, y: H - padB + 14, 'text-anchor': 'middle' }); lab.textContent = b.label; root.appendChild(lab);
      }
    });
    const axis = svg('text', { x: (W + padL) / 2, y: H - 4, 'text-anchor': 'middle' }); axis.textContent = 'reward'; root.appendChild(axis);
    box.appendChild(root);
  }

  function renderSummary(s) {
    $('file-name').textContent = s.file;
    document.title = s.file + ' – rollouts viewer';
    const dl = el('dl', { className: 'stats' });
    const add = (k, v) => { dl.appendChild(el('dt', { text: k })); dl.appendChild(el('dd', { text: v })); };
    add('Rows', String(s.rows));
    add('Invalid rows', String(s.invalidRows));
    add('Rows with reward', String(s.rewards.count));
    add('Mean reward', fmt(s.rewards.mean));
    add('Min / max', fmt(s.rewards.min) + ' / ' + fmt(s.rewards.max));
    $('stats').replaceChildren(dl);
    renderChart(s.histogram);
    $('metrics').textContent = s.metricsText;
  }

  // ---------------------------------------------------------------- list
  function query() {
    const p = new URLSearchParams();
    p.set('start', String(state.start));
    p.set('limit', String(PAGE));
    if (state.filters.min !== '') p.set('min_reward', state.filters.min);
    if (state.filters.max !== '') p.set('max_reward', state.filters.max);
    if (state.filters.q !== '') p.set('q', state.filters.q);
    return p.toString();
  }

  async function loadRows() {
    $('list-status').textContent = 'Loading…';
    let data;
    try { data = await api('/api/rows?' + query()); }
    catch (e) { $('list-status').textContent = 'Error: ' + e.message; return; }
    state.total = data.total;
    const body = $('rows-body');
    body.replaceChildren();
    for (const r of data.rows) {
      const scores = Object.keys(r.scores).map((k) => k + '=' + fmt(r.scores[k])).join(' ');
      const rewardCls = r.reward === null ? '' : r.reward > 0 ? 'reward-pos' : 'reward-zero';
      const tr = el('tr', { tabindex: '0', 'data-index': String(r.index) }, [
        el('td', { text: String(r.index + 1) }),
        el('td', { text: fmt(r.reward), className: rewardCls }),
        el('td', { text: r.responseId || '–', title: r.responseId || '' }),
        el('td', { text: String(r.toolCalls) }),
        el('td', { text: scores, title: scores }),
        el('td', { text: r.error ? 'Invalid: ' + r.error : r.preview, title: r.error || r.preview }),
      ]);
      if (r.error) tr.classList.add('invalid');
      if (state.selected === r.index) tr.classList.add('selected');
      tr.addEventListener('click', () => openRow(r.index));
      tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') openRow(r.index); });
      body.appendChild(tr);
    }
    const end = Math.min(state.start + data.rows.length, data.total);
    $('list-status').textContent = data.total + ' matching row' + (data.total === 1 ? '' : 's');
    $('page-info').textContent = data.total ? (state.start + 1) + '–' + end + ' of ' + data.total : '';
    $('prev').disabled = state.start === 0;
    $('next').disabled = end >= data.total;
  }

  // ---------------------------------------------------------------- rollout
  function bubble(kind, title, text) {
    return el('div', { className: 'bubble ' + kind }, [el('h3', { text: title }), el('div', { className: 'body', text: text })]);
  }
  function jsonBlock(title, value, open) {
    const d = el('details', { className: 'json' }, [el('summary', { text: title }), el('pre', { text: typeof value === 'string' ? value : pretty(value) })]);
    if (open) d.open = true;
    return d;
  }
  function prettyMaybe(text) {
    if (typeof text !== 'string') return pretty(text);
    try { return JSON.stringify(JSON.parse(text), null, 4); } catch (e) { return text; }
  }
  function partText(p) {
    if (typeof p === 'string') return p;
    if (!p || typeof p !== 'object') return String(p);
    if (typeof p.text === 'string') return p.text;
    if (typeof p.refusal === 'string') return '[refusal] ' + p.refusal;
    return '[' + (p.type || 'part') + '] ' + pretty(p);
  }

  function itemBubbles(m, prefix) {
    const out = [];
    const type = m.type || (m.role ? 'message' : undefined);
    if (type === 'message') {
      const parts = Array.isArray(m.content) ? m.content : [m.content];
      const role = m.role;
      const kind = role === 'user' ? 'user' : role === 'assistant' ? 'assistant' : 'system';
      const name = role === 'user' ? 'User message' : role === 'assistant' ? 'Assistant message' : 'System message';
      for (const p of parts) out.push(bubble(kind, prefix + name, partText(p)));
    } else if (type === 'reasoning') {
      const summary = Array.isArray(m.summary) ? m.summary : [];
      if (!summary.length) out.push(bubble('reasoning', prefix + 'Reasoning', '(no summary)'));
      for (const s of summary) out.push(bubble('reasoning', prefix + 'Reasoning', s && typeof s.text === 'string' ? s.text : pretty(s)));
    } else if (type === 'function_call') {
      out.push(bubble('tool', prefix + 'Function call - \`' + m.name + '\` (tool call ID \`' + m.call_id + '\`)',
        'Function call name \`' + m.name + '\`\\n' + prettyMaybe(m.arguments)));
    } else if (type === 'function_call_output') {
      out.push(bubble('toolout', prefix + 'Function call output (tool call ID \`' + m.call_id + '\`)', prettyMaybe(m.output)));
    } else {
      out.push(bubble('system', prefix + 'Item - ' + String(type), pretty(m)));
    }
    return out;
  }

  function renderRollout(data) {
    const box = $('detail');
    box.replaceChildren();
    const row = data.row;
    const rid = row && row.response && row.response.id ? row.response.id : '–';
    box.appendChild(el('h2', { text: 'Sample ' + (data.index + 1) + ' - Responses ID ' + rid }));
    if (data.error) box.appendChild(el('p', { className: 'error', text: 'Invalid row (line ' + data.line + '): ' + data.error }));
    if (data.warning) box.appendChild(el('p', { className: 'muted', text: 'Note (line ' + data.line + '): ' + data.warning }));
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
    const params = row.responses_create_params && typeof row.responses_create_params === 'object' ? row.responses_create_params : {};
    const response = row.response && typeof row.response === 'object' ? row.response : {};
    const sampling = {};
    for (const k of Object.keys(params)) if (k !== 'input' && k !== 'tools') sampling[k] = params[k];
    box.appendChild(jsonBlock('Sampling params', sampling, false));
    if (Array.isArray(params.tools) && params.tools.length) box.appendChild(jsonBlock('Tools (' + params.tools.length + ')', params.tools, false));
    const conv = el('div', { id: 'conversation' });
    let input = params.input;
    if (typeof input === 'string') input = [{ role: 'user', content: input }];
    const items = (Array.isArray(input) ? input : []).concat(Array.isArray(response.output) ? response.output : []);
    let turn = 0, step = 0;
    for (const m of items) {
      if (!m || typeof m !== 'object') { conv.appendChild(bubble('system', 'Item', pretty(m))); continue; }
      if (m.role === 'user') { turn += 1; step = 0; }
      if (m.type === 'function_call') step += 1;
      for (const b of itemBubbles(m, 'Turn ' + turn + ' Step ' + step + ' - ')) conv.appendChild(b);
    }
    box.appendChild(conv);
    box.appendChild(jsonBlock('Metadata - responses_create_params', params, false));
    box.appendChild(jsonBlock('Metadata - response', response, false));
  }

  async function openRow(i) {
    state.selected = i;
    history.replaceState(null, '', '#row=' + (i + 1));
    for (const tr of document.querySelectorAll('#rows-body tr')) tr.classList.toggle('selected', tr.getAttribute('data-index') === String(i));
    $('detail').replaceChildren(el('p', { className: 'muted', text: 'Loading row ' + (i + 1) + '…' }));
    try { renderRollout(await api('/api/rows/' + i)); }
    catch (e) { $('detail').replaceChildren(el('p', { className: 'error', text: 'Error: ' + e.message })); }
  }

  // ---------------------------------------------------------------- wiring
  function applyFilters(ev) {
    if (ev) ev.preventDefault();
    state.filters = { min: $('min-reward').value.trim(), max: $('max-reward').value.trim(), q: $('search').value.trim() };
    state.start = 0;
    loadRows();
  }
  document.addEventListener('DOMContentLoaded', async () => {
    $('filters').addEventListener('submit', applyFilters);
    $('reset').addEventListener('click', () => { $('min-reward').value = ''; $('max-reward').value = ''; $('search').value = ''; applyFilters(); });
    $('prev').addEventListener('click', () => { state.start = Math.max(0, state.start - PAGE); loadRows(); });
    $('next').addEventListener('click', () => { state.start += PAGE; loadRows(); });
    try { renderSummary(await api('/api/summary')); } catch (e) { $('stats').textContent = 'Error: ' + e.message; }
    await loadRows();
    const m = /^#row=([0-9]+)$/.exec(location.hash);
    if (m && Number(m[1]) >= 1) await openRow(Number(m[1]) - 1);
    document.body.setAttribute('data-ready', '1');
  });
})();
`;
