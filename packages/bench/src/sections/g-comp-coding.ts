/**
 * `pnpm bench` section G: comp_coding verifies per second and p99 latency at a fixed concurrency
 * on a 10-test stdio problem, sandboxed (warm runners, and one runner process per verify), beside
 * the floor measured in the same run: the same programs run with plain python3, no sandbox, same
 * parallelism (once per verify with the same grading runner, and once per test case).
 */
import { spawn, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { repoRoot } from '@nemo-gym/core/config';

const SOLUTION = 'n = int(input())\na = list(map(int, input().split()))\nprint(sum(a), max(a))\nprint(*sorted(a))';

function problem(): { inputs: string[]; outputs: string[] } {
  const inputs: string[] = [];
  const outputs: string[] = [];
  for (let t = 0; t < 10; t++) {
    const a = Array.from({ length: 50 + t * 10 }, (_, i) => ((i * 7919 + t * 104729) % 1000) - 500);
    inputs.push(`${a.length}\n${a.join(' ')}\n`);
    outputs.push(`${a.reduce((x, y) => x + y, 0)} ${Math.max(...a)}\n${[...a].sort((x, y) => x - y).join(' ')}`);
  }
  return { inputs, outputs };
}

interface Measured {
  label: string;
  n: number;
  errors: number;
  rate: number;
  p50: number;
  p99: number;
  note?: string;
}

async function drive(label: string, n: number, c: number, once: () => Promise<boolean>): Promise<Measured> {
  const lat: number[] = [];
  let errors = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        const s = performance.now();
        const ok = await once().catch(() => false);
        if (ok) lat.push(performance.now() - s);
        else errors++;
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]! : NaN);
  return { label, n, errors, rate: (n - errors) / wall, p50: pct(0.5), p99: pct(0.99) };
}

/** Runs one python3 process with stdin, resolving with its stdout. */
function python(python3: string, args: string[], stdin: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(python3, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.on('error', reject);
    p.on('close', () => resolve(out));
    p.stdin.on('error', () => {});
    p.stdin.end(stdin);
  });
}

const same = (got: string, want: string) => got.trim().split('\n').map((l) => l.trim()).join('\n') === want.trim();

async function serverRow(label: string, mode: 'warm' | 'per_verify', n: number, c: number, tests: ReturnType<typeof problem>): Promise<Measured> {
  const mod = (await import(join(repoRoot(), 'resources_servers', 'comp_coding', 'dist', 'app.js'))) as {
    server: { build: (o: { config: Record<string, unknown> }) => Promise<any> };
  };
  const app = await mod.server.build({
    config: { name: 'comp_coding', domain: 'coding', num_processes: 2, unit_test_timeout_secs: 10, debug: false, runner_mode: mode },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/verify`;
  const dispatcher = new Agent({ connections: c, keepAliveTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 });
  const body = JSON.stringify({
    responses_create_params: { input: [{ role: 'user', content: 'solve' }] },
    response: {
      id: 'r', created_at: 0, model: 'm', object: 'response', parallel_tool_calls: true, tool_choice: 'auto', tools: [],
      output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', annotations: [], text: '```python\n' + SOLUTION + '\n```' }] }],
    },
    verifier_metadata: { unit_tests: tests },
  });
  const once = async () => {
    const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher });
    const j = (await res.body.json()) as { reward?: number };
    return res.statusCode === 200 && j.reward === 1;
  };
  try {
    await drive(label, Math.min(20, n), Math.min(c, 8), once); // warm-up
    const m = await drive(label, n, c, once);
    const provider = app.ngContext?.state?.sandbox?.provider as string | undefined;
    return { ...m, label: `${label} [${provider ?? '?'}]` };
  } finally {
    await dispatcher.close();
    await app.close();
  }
}

export async function sectionCompCoding(n: number, c: number): Promise<void> {
  const root = repoRoot();
  const tests = problem();
  const python3 = execFileSync('python3', ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], { encoding: 'utf8' }).trim();
  const runner = join(root, 'resources_servers', 'comp_coding', 'python', 'lcb_runner.py');
  const rows: Measured[] = [];
  rows.push(await serverRow('comp_coding, warm runners', 'warm', n, c, tests));
  rows.push(await serverRow('comp_coding, process per verify', 'per_verify', n, c, tests));
  // Floor 1: the same grading runner, plain python3, no sandbox, one process per verify.
  let k = 0;
  rows.push(
    await drive('floor: plain python3, runner per verify', n, c, async () => {
      const nonce = `b${k++}`;
      const out = await python(python3, ['-B', runner], JSON.stringify({ code: SOLUTION, ...tests, fn_name: null, timeout: 10, nonce }));
      const line = out.trim().split('\n').at(-1) ?? '';
      const j = JSON.parse(line) as { result: unknown[] };
      return j.result.length === 10 && j.result.every((r) => r === true);
    }),
  );
  // Floor 2: the program itself, plain python3, once per test case.
  rows.push(
    await drive('floor: plain python3, process per test', n, c, async () => {
      for (let t = 0; t < tests.inputs.length; t++) {
        if (!same(await python(python3, ['-B', '-c', SOLUTION], tests.inputs[t]!), tests.outputs[t]!)) return false;
      }
      return true;
    }),
  );
  const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
  console.log(`\n== G. comp_coding: ${n} verifies of a 10-test stdio problem at concurrency ${c}, pool of 2 ==`);
  console.log(`${'how'.padEnd(52)} ${'verify/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'errors'.padStart(7)}`);
  for (const r of rows) console.log(`${r.label.padEnd(52)} ${f(r.rate).padStart(9)} ${f(r.p50).padStart(9)} ${f(r.p99).padStart(9)} ${String(r.errors).padStart(7)}`);
  const best = Math.max(rows[0]!.rate, rows[1]!.rate);
  console.log(`sandboxed (best mode) / floor (runner per verify): ${f(best / rows[2]!.rate, 2)}; / floor (process per test): ${f(best / rows[3]!.rate, 2)}`);
}
