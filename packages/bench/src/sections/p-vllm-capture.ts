/**
 * Token capture + trajectory assembly overhead per model call, beside the same calls without
 * capture, in the same run (`pnpm bench` section P).
 *
 *   pnpm build && node packages/bench/dist/src/sections/p-vllm-capture.js [--rollouts 64] [--calls 8] [--concurrency 32] [--rounds 5]
 *
 * vllm_model (token ids on, as for training) runs in a child process whose CPU time is read
 * before and after each round; a stub plays vLLM in this process, answering with inline token ids
 * (a prompt of 1000 + 250·turn tokens, 100 generated tokens with log-probs) that chain by prefix
 * across a rollout's calls. Each round runs `rollouts` harness-like rollouts of `calls` chat calls
 * each, `concurrency` rollouts at a time, in one of these modes, which take turns round by round:
 *   plain       /v1/chat/completions (answers carry the ids, as for a native agent);
 *   capture     /ng-rollout/<id>/v1/chat/completions, then DELETE …/capture (answers without ids);
 *   assembled   the same, then GET …/trajectory?prompt_ids=delta instead, as the agents fetch it
 *               (capture + assembly + release);
 *   plain_b, capture_ids, assembled_ids   on a second server with rollout_capture.answer_token_ids: true, so
 *               that captured calls answer exactly as plain ones do.
 * `--modes a,b` runs only those modes (with the plain rounds of their server).
 * Reported: server CPU per call for each mode against the plain rounds of the same server, answer
 * bytes per call, bytes the capture held per call, and the trajectory's size.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { importBuilt } from '../built.js';
import { numberArg } from '../load.js';
import { startStubVllm, STUB_BASE_TOKENS, STUB_GEN_TOKENS, STUB_TOOL_TOKENS } from '../stub-vllm.js';

const GEN = STUB_GEN_TOKENS;
const TOOL = STUB_TOOL_TOKENS;
const BASE = STUB_BASE_TOKENS;

/** The child: vllm_model on a port, telling its CPU time on request. */
async function serve(stubUrl: string, answerIds: boolean): Promise<void> {
  const { server } = await importBuilt<typeof import('../../../../responses_api_models/vllm_model/app.js')>('responses_api_models/vllm_model/dist/app.js');
  const app = await server.build({
    config: {
      name: 'policy_model', base_url: stubUrl, api_key: 'k', model: 'm', return_token_id_information: true, uses_reasoning_parser: false, request_inline_token_ids: true, health_check_interval_s: 0,
      rollout_capture: { answer_token_ids: answerIds },
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  // Exit on SIGTERM (not die from it), so that `node --cpu-prof` writes this process's profile too.
  process.once('SIGTERM', () => process.exit(0));
  process.on('message', (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send!({ cpu: u.user + u.system, rss: process.memoryUsage().rss });
    }
  });
  process.send!({ port: (app.server.address() as AddressInfo).port });
}

async function main(): Promise<void> {
  const ROLLOUTS = numberArg('rollouts', 64);
  const CALLS = numberArg('calls', 8);
  const CONCURRENCY = numberArg('concurrency', 32);
  const ROUNDS = numberArg('rounds', 5);

  // The stub vLLM: the prompt is as long as the history (1000 + 250 tokens a turn), so a rollout's calls chain by prefix.
  const stub = await startStubVllm();
  const stubUrl = stub.url;

  // Two servers: captured calls answer without ids (the default), and with them (answer_token_ids).
  const start = async (answerIds: boolean) => {
    const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve', stubUrl, ...(answerIds ? ['--answer-ids'] : [])], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    // The child never outlives this process, whatever happens here.
    process.once('exit', () => child.kill());
    const port = await new Promise<number>((r) => child.once('message', (m) => r((m as { port: number }).port)));
    const cpu = () => new Promise<{ cpu: number; rss: number }>((r) => {
      child.once('message', (m) => r(m as { cpu: number; rss: number }));
      child.send('cpu');
    });
    return { base: `http://127.0.0.1:${port}`, cpu, child };
  };
  const servers = { plain: await start(false), withIds: await start(true) };
  const agent = new Agent({ connections: 256, keepAliveTimeout: 30_000 });
  let answerBytes = 0;
  const post = async (base: string, path: string, body: string) => {
    const res = await request(base + path, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    answerBytes += text.length;
    return text;
  };
  const tool = '{"stdout": "' + 'F'.repeat(400) + '", "exit_code": 1}';

  let heldBytesPerCall = 0;
  let trajectoryBytes = 0;
  /** One harness-like rollout: the history grows by the assistant message and a tool result each call. */
  const rollout = async (base: string, id: string | null, assemble: boolean) => {
    const messages: unknown[] = [{ role: 'system', content: 'You are a coding agent. '.repeat(40) }, { role: 'user', content: 'Fix the failing test in this repository.' }];
    for (let k = 0; k < CALLS; k++) {
      const prefix = id === null ? '' : `/ng-rollout/${id}`;
      const completion = JSON.parse(await post(base, `${prefix}/v1/chat/completions`, JSON.stringify({ model: 'm', messages }))) as { choices: { message: { content: string; tool_calls: { id: string }[] } }[] };
      const m = completion.choices[0]!.message;
      messages.push({ role: 'assistant', content: m.content, tool_calls: m.tool_calls }, { role: 'tool', tool_call_id: m.tool_calls[0]!.id, content: tool });
    }
    if (id !== null) {
      if (heldBytesPerCall === 0) {
        const cap = await request(`${base}/ng-rollout/${id}/capture`, { dispatcher: agent });
        heldBytesPerCall = ((await cap.body.json()) as { bytes: number }).bytes / CALLS;
      }
      if (!assemble) {
        const d = await request(`${base}/ng-rollout/${id}/capture`, { method: 'DELETE', dispatcher: agent });
        await d.body.text();
        return;
      }
      // As the agents fetch it: prompts as deltas (expanded on the agent side).
      const t = await request(`${base}/ng-rollout/${id}/trajectory?prompt_ids=delta`, { dispatcher: agent });
      const text = await t.body.text();
      trajectoryBytes = text.length;
      answerBytes += text.length;
      const parsed = JSON.parse(text) as { mask_sample: boolean; failure_reason: string | null };
      if (parsed.mask_sample) throw new Error(`rollout ${id} was masked: ${parsed.failure_reason}`);
    }
  };
  type Mode = 'plain' | 'capture' | 'assembled' | 'plain_b' | 'capture_ids' | 'assembled_ids';
  const bytesOf: Record<Mode, number> = { plain: 0, capture: 0, assembled: 0, plain_b: 0, capture_ids: 0, assembled_ids: 0 };
  const onSecond = (m: Mode) => m === 'plain_b' || m === 'capture_ids' || m === 'assembled_ids';
  const round = async (mode: Mode, r: number) => {
    let next = 0;
    const { base, cpu } = onSecond(mode) ? servers.withIds : servers.plain;
    answerBytes = 0;
    const before = await cpu();
    const t0 = process.hrtime.bigint();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < ROLLOUTS) {
        const i = next++;
        await rollout(base, mode === 'plain' || mode === 'plain_b' ? null : `${mode.replace('_', '')}${r}-${i}`, mode.startsWith('assembled'));
      }
    }));
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const after = await cpu();
    bytesOf[mode] = answerBytes / (ROLLOUTS * CALLS);
    return { cpuPerCall: (after.cpu - before.cpu) / (ROLLOUTS * CALLS), wall, rss: after.rss };
  };

  console.log(`vllm_model, token ids on; ${ROLLOUTS} rollouts × ${CALLS} chat calls per round, ${CONCURRENCY} rollouts at a time; prompts ${BASE}→${BASE + (CALLS - 1) * (GEN + TOOL)} tokens, ${GEN} generated`);
  const allModes: Mode[] = ['plain', 'capture', 'assembled', 'plain_b', 'capture_ids', 'assembled_ids'];
  // `--modes capture_ids,assembled_ids` runs only those (each with the plain rounds of its server).
  const asked = modesArg(allModes);
  const modes = asked === null ? allModes : allModes.filter((m) => asked.has(m) || (m === 'plain' && [...asked].some((x) => !onSecond(x as Mode))) || (m === 'plain_b' && [...asked].some((x) => onSecond(x as Mode))));
  for (const w of [998, 999]) for (const m of modes) await round(m, w); // warm-up of every path, twice
  const cpuOf: Record<Mode, number[]> = { plain: [], capture: [], assembled: [], plain_b: [], capture_ids: [], assembled_ids: [] };
  let rss = 0;
  for (let r = 0; r < ROUNDS; r++) {
    for (const m of modes) {
      const res = await round(m, r);
      cpuOf[m].push(res.cpuPerCall);
      rss = res.rss;
    }
  }
  const median = (xs: number[]) => (xs.length ? xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : Number.NaN);
  // The overhead of a round is taken against the plain round beside it, then the median of those.
  // Each server against its own plain rounds (the two are separate processes).
  const over = (m: Mode) => {
    const against = onSecond(m) ? cpuOf.plain_b : cpuOf.plain;
    return median(cpuOf[m].map((x, i) => (x - against[i]!) / against[i]!)) * 100;
  };
  const shown = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;
  console.log(`server CPU per call, median of ${ROUNDS} rounds (each against the plain round beside it; target ≤ 5 %):`);
  // One line per mode that ran (`--modes` may leave some out).
  const LABELS: Record<Mode, string> = {
    plain: 'plain /v1/chat/completions (answers carry the ids)',
    capture: 'captured, released unassembled (answers without ids)',
    assembled: 'captured + trajectory assembled (answers without ids)',
    plain_b: 'second server (answer_token_ids: true, captured calls answer as plain ones): plain',
    capture_ids: 'second server: captured, released unassembled',
    assembled_ids: 'second server: captured + trajectory assembled',
  };
  for (const m of modes) {
    const base = m === 'plain' || m === 'plain_b';
    console.log(`  ${LABELS[m].padEnd(86)} ${median(cpuOf[m]).toFixed(0)} µs${base ? '' : ` (${shown(over(m))})`}; answers ${(bytesOf[m] / 1024).toFixed(1)} KiB per call (incl. the trajectory)`);
  }
  for (const m of modes) console.log(`  rounds ${m}: ${cpuOf[m].map((x) => x.toFixed(0)).join(', ')} µs`);
  console.log(`capture bytes held per call (estimated, request body + ids + log-probs + output): ${(heldBytesPerCall / 1024).toFixed(1)} KiB; trajectory JSON per rollout: ${(trajectoryBytes / 1024).toFixed(1)} KiB; server RSS at the end ${(rss / 2 ** 20).toFixed(0)} MiB (captures released)`);
  servers.plain.child.kill();
  servers.withIds.child.kill();
  await agent.close();
  await stub.close();
}

/** `--modes a,b`: the modes to run (null: all). */
function modesArg(allModes: readonly string[]): Set<string> | null {
  const i = process.argv.indexOf('--modes');
  if (i < 0) return null;
  const names = (process.argv[i + 1] ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => !allModes.includes(n));
  if (unknown.length || names.length === 0) throw new Error(`--modes takes a comma-separated list of ${allModes.join(', ')}; got ${process.argv[i + 1] ?? '(nothing)'}`);
  return new Set(names);
}

const serveAt = process.argv.indexOf('--serve');
if (serveAt >= 0) await serve(process.argv[serveAt + 1]!, process.argv.includes('--answer-ids'));
else await main();
