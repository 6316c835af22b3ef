/**
 * The viewer's page: static HTML, CSS and a script that renders everything from the JSON API
 * with DOM nodes and `textContent` only (no HTML is ever built from file data). The script is the
 * TypeScript module src/browser/app.ts, bundled for browsers by the build.
 */
import { readFileSync } from 'node:fs';
import { compiledPath } from '@nemo-gym/core/workers';

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
  <nav id="tabs" aria-label="Views">
    <button type="button" id="tab-rows" data-view="rows" aria-pressed="true">Rollouts</button>
    <button type="button" id="tab-tasks" data-view="tasks" aria-pressed="false">Tasks</button>
    <button type="button" id="tab-compare" data-view="compare" aria-pressed="false" hidden>Compare</button>
    <button type="button" id="tab-charts" data-view="charts" aria-pressed="false">Charts</button>
  </nav>
</header>
<main>
  <section id="summary" aria-label="Summary">
    <div id="stats" class="stats"></div>
    <figure id="chart-box">
      <figcaption>Reward distribution</figcaption>
      <div id="chart"></div>
    </figure>
    <details id="failures-box" hidden>
      <summary id="failures-title">Collection failures</summary>
      <table id="failures" class="fields"><tbody id="failures-body"></tbody></table>
    </details>
    <details id="masked-box" open hidden>
      <summary id="masked-title">Masked samples</summary>
      <table id="masked" class="fields"><tbody id="masked-body"></tbody></table>
    </details>
    <details id="metrics-box">
      <summary>Aggregate Metrics</summary>
      <pre id="metrics"></pre>
    </details>
  </section>
  <section id="browser" aria-label="Rows">
    <form id="filters" autocomplete="off">
      <label data-views="rows charts">Min reward <input id="min-reward" type="number" step="any" size="6"></label>
      <label data-views="rows charts">Max reward <input id="max-reward" type="number" step="any" size="6"></label>
      <label data-views="rows tasks charts">Agent <select id="agent"><option value="">all agents</option></select></label>
      <label data-views="rows charts">Outcome <select id="outcome">
        <option value="">all rollouts</option>
        <option value="failed">failed (reward 0)</option>
        <option value="partial">partial (0 &lt; reward &lt; 1)</option>
        <option value="passed">passed (reward 1)</option>
        <option value="invalid">invalid rows</option>
      </select></label>
      <label data-views="rows charts">Tools <select id="tool-errors">
        <option value="">all rollouts</option>
        <option value="with">with tool errors</option>
        <option value="without">without tool errors</option>
      </select></label>
      <label data-views="rows charts">Masked <select id="masked-filter">
        <option value="">all rollouts</option>
        <option value="only">masked samples only</option>
        <option value="exclude">unmasked only</option>
      </select></label>
      <label data-views="tasks">Tasks <select id="task-outcome">
        <option value="">all tasks</option>
        <option value="never">never passed</option>
        <option value="sometimes">sometimes passed</option>
        <option value="always">always passed</option>
      </select></label>
      <label data-views="compare">Change <select id="change">
        <option value="">all tasks</option>
        <option value="regressed">regressed (B &lt; A)</option>
        <option value="improved">improved (B &gt; A)</option>
        <option value="unchanged">unchanged</option>
        <option value="missing">in one file only</option>
      </select></label>
      <label data-views="">B <select id="compare-b"></select></label>
      <label class="grow" data-views="rows tasks charts">Search <input id="search" type="search" placeholder="text in the row"></label>
      <button id="apply" type="submit">Apply</button>
      <button id="reset" type="button">Reset</button>
    </form>
    <div id="compare-summary" class="stats wide" hidden></div>
    <div id="list-status" class="muted" role="status"></div>
    <div class="table-scroll">
    <table id="rows">
      <thead><tr id="rows-head"></tr></thead>
      <tbody id="rows-body"></tbody>
    </table>
    </div>
    <div class="pager">
      <button id="prev" type="button">&larr; Previous</button>
      <span id="page-info" class="muted"></span>
      <button id="next" type="button">Next &rarr;</button>
    </div>
  </section>
  <section id="charts" aria-label="Charts" hidden></section>
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
#chart { width: 640px; max-width: 100%; }
.canvas-box { position: relative; width: 100%; min-width: 0; }
#charts { grid-column: 1 / -1; min-width: 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
body.charts #detail, body.charts #browser > :not(#filters) { display: none; }
body.charts #browser { grid-area: auto; grid-column: 1 / -1; }
#charts-filter { font-weight: 600; }
.badge { display: inline-block; border-radius: 4px; padding: 0 .35rem; margin-right: .35rem; font-size: 12px; font-weight: 600; }
.badge.masked { background: #fff0d6; color: #8a5300; border: 1px solid #e8c27a; }
tbody tr.masked td { background: #fffaf0; }
.masked-note { background: #fff0d6; border: 1px solid #e8c27a; border-radius: 6px; padding: .4rem .6rem; }
.chart-row { margin: 1rem 0 1.4rem; }
.chart-row h3 { margin: 0; font-size: .95rem; }
.chart-row .question { margin: .1rem 0 .5rem; }
.chart-grid { display: grid; grid-template-columns: repeat(var(--runs, 1), minmax(0, 1fr)); gap: 1rem; }
.chart-card { min-width: 0; border: 1px solid var(--line); border-radius: 6px; padding: .4rem .6rem; }
.chart-card figcaption { font-weight: 600; color: var(--ink); overflow-wrap: anywhere; }
.chart-caption { font-size: 12px; margin: .3rem 0 0; overflow-wrap: anywhere; }
.chart-caption.error { color: #b00020; font-weight: 600; }
table.runs, table.breakdown { table-layout: auto; margin: .4rem 0; }
table.runs th, table.runs td, table.breakdown th, table.breakdown td { white-space: normal; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
table.breakdown { font-size: 12px; }
.table-scroll { overflow-x: auto; max-width: 100%; }
table.breakdown th, table.breakdown td { white-space: nowrap; overflow-wrap: normal; }
.tokens { display: flex; flex-wrap: wrap; gap: 3px; margin: .4rem 0; }
.tok { display: inline-flex; flex-direction: column; align-items: center; min-width: 2.6rem; padding: 1px 3px; border-radius: 3px; border: 1px solid var(--line); font: 11px/1.25 ui-monospace, SFMono-Regular, Menlo, monospace; }
.tok small { font-size: 10px; color: var(--muted); }
.tok.m1 { background: #e3f2cf; border-color: #a5d46a; }
.tok.m0 { background: #f1f1f3; }
.token-summary { font-weight: 600; margin: .3rem 0; }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
#metrics { max-height: 40vh; overflow: auto; background: var(--bg); padding: .5rem; border-radius: 6px; }
form#filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin-bottom: .5rem; }
form#filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
form#filters label.grow { flex: 1; min-width: 10rem; }
input, button { font: inherit; padding: .25rem .4rem; border: 1px solid var(--line); border-radius: 5px; background: #fff; }
button { cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 8px; table-layout: fixed; }
th, td { text-align: left; padding: .3rem .45rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; vertical-align: top; }
#rows td:last-child { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#rows { min-width: 54rem; }
th { overflow-wrap: normal; }
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
.bubble.toolerr { background: #fdecea; border-color: #e57373; }
.bubble.toolerr h3 { color: #b00020; }
.bubble.reasoning { background: var(--reason); margin-left: 2rem; font-style: italic; }
table.fields { table-layout: auto; margin: .4rem 0 .8rem; }
table.fields td { white-space: normal; vertical-align: top; }
table.fields td:first-child { font-weight: 600; width: 12rem; }
.error { color: #b00020; }
details.json { margin: .4rem 0; }
details.json summary { cursor: pointer; color: var(--muted); }
h2 { font-size: 1rem; margin: .2rem 0 .6rem; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; grid-template-areas: "summary" "browser" "detail"; } }
[hidden] { display: none !important; }
nav#tabs { margin-left: auto; display: flex; gap: .3rem; }
nav#tabs button { background: transparent; color: #ddd; border-color: #555; }
nav#tabs button[aria-pressed="true"] { background: var(--accent); color: #111; border-color: var(--accent); font-weight: 600; }
select { font: inherit; padding: .2rem .3rem; border: 1px solid var(--line); border-radius: 5px; background: #fff; }
th.c-num { width: 3.4rem; } th.c-small { width: 5.4rem; } th.c-id { width: 8.5rem; } th.c-mid { width: 7rem; } th.c-scores { width: 9rem; }
th button.sort { all: unset; cursor: pointer; font-weight: 600; }
th button.sort:focus-visible { outline: 2px solid var(--accent); }
th[aria-sort="ascending"] button.sort::after { content: " \\25B2"; font-size: 10px; }
th[aria-sort="descending"] button.sort::after { content: " \\25BC"; font-size: 10px; }
tbody tr.task td:first-child::before { content: "\\25B8 "; color: var(--muted); }
tbody tr.task.open td:first-child::before { content: "\\25BE "; }
tbody tr.sub td { background: #fbfbfc; font-size: 13px; }
tbody tr.sub td:first-child { padding-left: 1.4rem; }
.delta-pos { color: #3b7a00; font-weight: 600; } .delta-neg { color: #b00020; font-weight: 600; }
.stats.wide dt, .stats.wide dd { white-space: nowrap; }
.stats.wide { grid-template-columns: repeat(6, auto); justify-content: start; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .4rem .7rem; margin-bottom: .5rem; }
.side-by-side { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: .8rem; }
.side-by-side > div { min-width: 0; border-top: 3px solid var(--line); padding-top: .3rem; }
.side-by-side > div.side-a { border-top-color: #7aa7e0; } .side-by-side > div.side-b { border-top-color: var(--accent); }
.picks { display: flex; flex-wrap: wrap; gap: .25rem; margin: .2rem 0 .4rem; }
.picks button { font-size: 12px; padding: .1rem .35rem; }
.picks button[aria-pressed="true"] { background: #e3f2cf; border-color: var(--accent); }
body.compare main { grid-template-columns: minmax(420px, 2fr) minmax(560px, 3fr); }
`;

/** The page's script as the build bundled it (dist/src/browser/app.js), or null when it is not built. */
export function appJs(): string | null {
  const bundle = compiledPath(new URL('./browser/app.ts', import.meta.url));
  return bundle === null ? null : readFileSync(bundle, 'utf8');
}
