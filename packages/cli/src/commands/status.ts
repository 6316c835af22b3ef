/**
 * ng-status: every server process of the running deployment, as its head server lists them
 * (this host's and those other ng-run processes registered), each asked for its own state:
 * up or down, pid, URL, requests in flight, uptime; the exit code of one that ended.
 *
 * ng-stop: asks the ng-run that owns the head server to stop (POST /stop), then waits until the
 * head server is gone. ng-run processes that joined it from other hosts stop when it does.
 */
import { request } from 'undici';
import { DEFAULT_HEAD_PORT, headServerOf, originOf, type ConfigDict } from '@nemo-gym/core/config';
import { HeadServerError, HeadTokenError, ServerResponseError } from '@nemo-gym/core/errors';
import { HEAD_TOKEN_HELP, headTokenFor, headTokenHeaders, type InstanceInfo } from '@nemo-gym/core/server';
import type { CommandSpec } from '../runtime.js';
import { sleep } from '@nemo-gym/core/client';

function headOf(config: ConfigDict): { host: string; port: number; url: string } {
  const head = headServerOf(config);
  return { ...head, url: originOf(head) };
}

async function getJson(url: string, timeoutMs: number): Promise<unknown> {
  const res = await request(url, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new ServerResponseError(url, res.statusCode, text.slice(0, 300));
  return JSON.parse(text) as unknown;
}

export interface InstanceStatus {
  name: string;
  replica: number;
  server_type: string;
  impl: string;
  url: string;
  host: string | null;
  pid: number | null;
  state: 'up' | 'down' | 'exited';
  in_flight: number | null;
  uptime_s: number | null;
  exit: string | null;
  registered: boolean;
  /** Why it is down. */
  reason: string | null;
}

/** The instances a head server lists, each checked with GET /ng_status. */
export async function deploymentStatus(headUrl: string, timeoutMs = 3000): Promise<InstanceStatus[]> {
  let listed: InstanceInfo[];
  try {
    listed = (await getJson(`${headUrl}/server_instances`, timeoutMs)) as InstanceInfo[];
  } catch (err) {
    throw new HeadServerError(`${headUrl}/server_instances`, (err as Error).message);
  }
  return Promise.all(
    listed.map(async (i): Promise<InstanceStatus> => {
      const base: InstanceStatus = {
        name: i.name,
        replica: i.replica ?? 0,
        server_type: i.server_type,
        impl: i.impl,
        url: i.url,
        host: i.host ?? null,
        pid: i.pid,
        state: 'down',
        in_flight: null,
        uptime_s: i.started_at ? (Date.now() - i.started_at) / 1000 : null,
        exit: null,
        registered: i.registered === true,
        reason: null,
      };
      if (i.state === 'exited') return { ...base, state: 'exited', uptime_s: null, exit: i.signal ?? `code ${i.exit_code ?? '?'}` };
      try {
        const s = (await getJson(`${i.url}/ng_status`, timeoutMs)) as { in_flight?: number; uptime_s?: number; pid?: number; status?: string };
        return { ...base, state: s.status === 'ok' ? 'up' : 'down', in_flight: s.in_flight ?? null, uptime_s: s.uptime_s ?? base.uptime_s, pid: s.pid ?? base.pid, reason: s.status === 'ok' ? null : (s.status ?? null) };
      } catch (err) {
        const code = (err as { code?: string }).code;
        return { ...base, reason: `${(err as Error).message}${code ? ` (${code})` : ''}` };
      }
    }),
  );
}

function fmtUptime(s: number | null): string {
  if (s === null) return '-';
  if (s < 60) return `${s.toFixed(0)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function statusTable(rows: InstanceStatus[]): string {
  const table = [
    ['instance', 'replica', 'kind', 'url', 'host', 'pid', 'state', 'in flight', 'uptime', 'exit'],
    ...rows.map((r) => [r.name, String(r.replica), r.server_type, r.url, r.host ?? '-', String(r.pid ?? '-'), r.state, r.in_flight === null ? '-' : String(r.in_flight), fmtUptime(r.uptime_s), r.exit ?? '-']),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  return table.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

export const statusCommand: CommandSpec = {
  name: 'status',
  summary: 'List every server process of the running ng-run (all hosts): up or down, pid, URL, in-flight requests, uptime',
  description: `Example: pnpm ng-status +head_server.port=${DEFAULT_HEAD_PORT}. Exit code 0 when every process is up, 1 otherwise.`,
  flags: [{ name: 'json', type: 'bool', description: 'print a JSON array instead of a table' }],
  main: async (config) => {
    const head = headOf(config);
    const rows = await deploymentStatus(head.url);
    if (config.json === true) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    else {
      process.stdout.write(`Head server ${head.url}: ${rows.length} server process(es)\n${statusTable(rows)}\n`);
      for (const r of rows) if (r.state === 'down' && r.reason) process.stdout.write(`${r.name} (replica ${r.replica}, ${r.url}) is down: ${r.reason}\n`);
    }
    return rows.every((r) => r.state === 'up') ? 0 : 1;
  },
};

export const stopCommand: CommandSpec = {
  name: 'stop',
  summary: 'Stop a running ng-run cleanly through its head server',
  description: `Example: pnpm ng-stop +head_server.port=${DEFAULT_HEAD_PORT}. ng-run processes that joined it from other hosts stop too.`,
  flags: [{ name: 'timeout_s', type: 'float', description: 'seconds to wait for the head server to go away (default 30)' }],
  main: async (config) => {
    const head = headOf(config);
    const token = headTokenFor(config, head.host, head.port);
    let answer: { instances?: number };
    let status = 0;
    try {
      const res = await request(`${head.url}/stop`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', ...headTokenHeaders(token) }, headersTimeout: 10_000, bodyTimeout: 10_000 });
      const text = await res.body.text();
      status = res.statusCode;
      if (res.statusCode !== 200) throw new ServerResponseError(`${head.url}/stop`, res.statusCode, text.slice(0, 300));
      answer = JSON.parse(text) as { instances?: number };
    } catch (err) {
      if (status === 401) {
        throw new HeadTokenError(`The head server ${head.url} refused to stop: ${token ? 'the deployment token given is not the one it uses' : 'no deployment token is configured here, and no ng-run on this host wrote one for it'}. ${HEAD_TOKEN_HELP}`);
      }
      throw new HeadServerError(`${head.url}/stop`, (err as Error).message);
    }
    process.stdout.write(`Asked the ng-run of ${head.url} to stop ${answer.instances ?? '?'} server process(es)...\n`);
    const timeoutS = typeof config.timeout_s === 'number' && config.timeout_s > 0 ? config.timeout_s : 30;
    const deadline = Date.now() + timeoutS * 1000;
    while (Date.now() < deadline) {
      try {
        await getJson(`${head.url}/`, 1000);
      } catch {
        process.stdout.write('Stopped.\n');
        return 0;
      }
      await sleep(200);
    }
    process.stderr.write(`ng-stop: the head server ${head.url} still answers after ${timeoutS} s; its ng-run may be stuck. Send it SIGTERM (its pid is in ng-status) or raise +timeout_s.\n`);
    return 1;
  },
};
