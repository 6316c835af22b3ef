#!/usr/bin/env node
// Peak memory of ng-export on a large rollouts file (default 1 GiB), measured, not asserted.
//
//   node packages/bench/scripts/export-memory.mjs [--gib 1] [--format rl|sft] [--out parquet|jsonl] [--keep]
//
// Writes a file of generated multi-turn tool-calling rollouts with token ids (the shape
// vllm_model records), runs the real ng-export command on it in a child process and prints that
// process's peak resident set size (getrusage maxrss) and the export rate. Run `pnpm build` first.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const gib = Number(opt('gib', '1'));
const format = opt('format', 'rl');
const out = opt('out', 'parquet');
const keep = args.includes('--keep');
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'ng-export-bench-'));
const input = join(dir, 'rollouts.jsonl');

let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const ids = (n) => Array.from({ length: n }, () => Math.floor(rand() * 150000));
const lps = (n) => Array.from({ length: n }, () => -Math.round(rand() * 5e6) / 1e6);

function rollout(task, rep) {
  // Three model calls: a 1,500-token prompt, two tool calls, a final answer.
  const output = [];
  let prompt = ids(1500);
  for (let turn = 0; turn < 3; turn++) {
    const gen = ids(300 + Math.floor(rand() * 300));
    const last = turn === 2;
    const item = last
      ? { id: `msg_${task}_${rep}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'The answer is 42. '.repeat(40), annotations: [] }] }
      : { type: 'function_call', id: `fc_${turn}`, call_id: `call_${task}_${rep}_${turn}`, name: 'lookup', arguments: JSON.stringify({ q: `query ${turn}` }), status: 'completed' };
    output.push({ prompt_token_ids: prompt, generation_token_ids: gen, generation_log_probs: lps(gen.length), ...item });
    if (!last) {
      output.push({ type: 'function_call_output', call_id: item.call_id, output: JSON.stringify({ result: 'x'.repeat(400) }) });
      prompt = [...prompt, ...gen, ...ids(120)];
    }
  }
  return {
    responses_create_params: { input: [{ role: 'user', content: `Task ${task}: `.padEnd(600, '.'), type: 'message' }], tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] },
    response: { id: `resp_${task}_${rep}`, created_at: 0, model: 'policy', object: 'response', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [] },
    reward: rand() < 0.5 ? 1 : 0,
    _ng_task_index: task,
    _ng_rollout_index: rep,
  };
}

const target = gib * 1024 ** 3;
const t0 = Date.now();
const ws = createWriteStream(input);
let bytes = 0;
let rows = 0;
while (bytes < target) {
  const line = `${JSON.stringify(rollout(Math.floor(rows / 4), rows % 4))}\n`;
  bytes += Buffer.byteLength(line);
  rows++;
  if (!ws.write(line)) await once(ws, 'drain');
}
ws.end();
await once(ws, 'finish');
console.log(`generated ${rows} rollouts, ${(statSync(input).size / 1024 ** 3).toFixed(2)} GiB in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

const output = join(dir, `${format}.${out}`);
const preload = `data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss_kib '+process.resourceUsage().maxRSS+'\\n'))`;
const t1 = Date.now();
const child = spawn(process.execPath, ['--import', preload, join(root, 'packages/cli/bin/ng-export.js'), `+input=${input}`, `+output=${output}`, `+format=${format}`], { stdio: ['ignore', 'inherit', 'pipe'] });
let stderr = '';
child.stderr.on('data', (d) => (stderr += d));
const [code] = await once(child, 'exit');
const secs = (Date.now() - t1) / 1000;
const rss = Number(/maxrss_kib (\d+)/.exec(stderr)?.[1] ?? NaN) / 1024;
process.stderr.write(stderr.replace(/maxrss_kib \d+\n/, ''));
console.log(`ng-export +format=${format} -> ${out}: exit ${code}, ${secs.toFixed(1)} s, ${(rows / secs).toFixed(0)} rollouts/s, ${(bytes / 1024 ** 2 / secs).toFixed(1)} MiB/s of input`);
console.log(`peak RSS of the export process: ${rss.toFixed(0)} MiB (output ${(statSync(output).size / 1024 ** 2).toFixed(0)} MiB)`);
if (!keep) rmSync(dir, { recursive: true, force: true });
else console.log(`kept ${dir}`);
