/**
 * A local `redis-server` (Debian's package) for tests, benchmarks and one-host runs: bound to
 * 127.0.0.1 on a free port, its data in a folder of its own, append-only file on and synced on
 * every write (a restart loses nothing that was acknowledged). Started and stopped here, never
 * through a system service.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '@nemo-gym/core/client';
import { findOpenPort } from '@nemo-gym/core/config';
import { QueueError } from './errors.js';

/** The redis-server binary on PATH, or null (with the reason) when there is none. */
export function findRedisServer(): { path: string } | { path: null; reason: string } {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (r.status === 0) return { path: 'redis-server' };
  return { path: null, reason: 'redis-server is not installed (Debian: apt-get install -y redis-server; .ci/run installs it)' };
}

export interface LocalRedis {
  url: string;
  port: number;
  dir: string;
  pid: number | undefined;
  /** Stops it (SIGTERM, or SIGKILL: no shutdown save) and keeps its data folder. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Starts it again on the same port with the same data folder; with `empty`, its data files are
   * deleted first, as a Redis without persistence comes back (a fault to test recovery with).
   */
  restart(options?: { empty?: boolean }): Promise<void>;
  /** Stops it and removes its data folder. */
  stop(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, 500);
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => {
      clearTimeout(timer);
      s.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    s.once('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

export async function startRedisServer(options: { port?: number; dir?: string; startTimeoutMs?: number } = {}): Promise<LocalRedis> {
  const found = findRedisServer();
  if (found.path === null) throw new QueueError(found.reason);
  const bin = found.path;
  const port = options.port ?? (await findOpenPort([]));
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ng-redis-'));
  let proc: ChildProcess | null = null;
  let log = '';
  const launch = async () => {
    log = '';
    proc = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--protected-mode', 'yes', '--daemonize', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
    proc.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
    const deadline = Date.now() + (options.startTimeoutMs ?? 10_000);
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) break;
      if (await ping(port)) return;
      await sleep(30);
    }
    proc.kill('SIGKILL');
    throw new QueueError(`redis-server on 127.0.0.1:${port} did not answer PING. Its output:\n${log}`);
  };
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const p = proc as ChildProcess | null;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill(signal);
    const timer = setTimeout(() => p.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    get pid() {
      return (proc as ChildProcess | null)?.pid;
    },
    kill,
    restart: async (restartOptions: { empty?: boolean } = {}) => {
      if (restartOptions.empty) for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
      await launch();
    },
    stop: async () => {
      await kill('SIGTERM');
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
