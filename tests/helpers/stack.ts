/** Starts `ng-run` as a user would (compiled CLI, own head port) and stops it again. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findOpenPort, repoRoot } from '@nemo-gym/core/config';

export const ROOT = repoRoot();
export const BIN = (name: string) => join(ROOT, 'packages', 'cli', 'bin', `ng-${name}.js`);

export function requireBuild(): void {
  if (!existsSync(join(ROOT, 'packages', 'cli', 'dist', 'src', 'main.js'))) {
    throw new Error('These tests run the compiled commands: run `pnpm build` first (`pnpm test` does).');
  }
}

export interface Stack {
  proc: ChildProcess;
  headPort: number;
  output: () => string;
  readyMs: number;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/**
 * ng-run on a free head port. The port is picked here and given to ng-run, so another test's
 * server can take it in between: a start that fails with EADDRINUSE on that port is tried again on
 * a new one (at most 3 attempts, each within `timeoutMs`).
 */
export async function startStack(args: string[], timeoutMs = 60_000): Promise<Stack> {
  requireBuild();
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackOnce(args, timeoutMs);
    } catch (err) {
      if (attempt >= 3 || !(err instanceof HeadPortTaken)) throw err;
    }
  }
}

class HeadPortTaken extends Error {}

async function startStackOnce(args: string[], timeoutMs: number): Promise<Stack> {
  const headPort = await findOpenPort([]);
  const started = Date.now();
  const proc = spawn(process.execPath, [BIN('run'), ...args, `+head_server.port=${headPort}`, '+head_server.host=127.0.0.1'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ng-run not ready after ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = () => {
      if (/server\(s\) ready in/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      const message = `ng-run exited with ${code} before it was ready:\n${out}`;
      reject(out.includes(`127.0.0.1:${headPort} (listen EADDRINUSE`) ? new HeadPortTaken(message) : new Error(message));
    });
  });
  return {
    proc,
    headPort,
    readyMs: Date.now() - started,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
  };
}

export function runCommand(name: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  requireBuild();
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [BIN(name), ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
