/**
 * ng-run: merge the config, start the head server, start every server instance as its own
 * Node process (output prefixed with the instance name), wait until all answer, print a table,
 * and keep them running. A child that dies stops everything with a non-zero exit; SIGINT (Ctrl-C),
 * SIGTERM or SIGHUP, or the exit of the package runner that started it, stops every child (process
 * group, SIGKILL after a grace period).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { stringify } from 'yaml';
import { instanceConfig, listLaunchable, publicConfig, repoRoot, type ConfigDict } from '@nemo-gym/core/config';
import { ConfigError } from '@nemo-gym/core/errors';
import { startHeadServer } from '@nemo-gym/core/server';
import type { CommandSpec } from '../runtime.js';
import { onStopRequest } from '../lifecycle.js';

export interface LaunchedServer {
  name: string;
  serverType: string;
  impl: string;
  host: string;
  port: number;
  url: string;
  script: string;
  child: ChildProcess;
  logTail: string[];
  exited: { code: number | null; signal: string | null } | null;
}

/** The compiled file for an entrypoint: `app.ts`, `app.js` or upstream's `app.py` -> dist/app.js. */
export function compiledEntrypoint(serverDir: string, entrypoint: string): string {
  if (entrypoint.startsWith('/') || entrypoint.includes('..')) {
    throw new ConfigError(`entrypoint \`${entrypoint}\` in ${serverDir} must be a relative path inside the server folder, like app.ts.`);
  }
  const base = entrypoint.replace(/\.(ts|js|mjs|py)$/, '');
  return join(serverDir, 'dist', `${base}.js`);
}

const TAIL = 30;

export interface StartOptions {
  /** Seconds to wait for every server to answer. */
  startupTimeoutS?: number;
  /** Where child output goes (default: this process's stdout). */
  out?: (line: string) => void;
}

export class ServerFleet {
  readonly servers: LaunchedServer[] = [];
  private head?: Awaited<ReturnType<typeof startHeadServer>>;
  private stopping = false;

  constructor(
    readonly config: ConfigDict,
    private readonly options: StartOptions = {},
  ) {}

  private write(line: string): void {
    (this.options.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
  }

  async start(): Promise<void> {
    const root = repoRoot();
    const head = this.config.head_server as { host: string; port: number };
    const launchable = listLaunchable(this.config);
    // Check everything before starting anything.
    const plans = launchable.map((l) => {
      const dir = join(root, l.serverType, l.impl);
      if (!existsSync(dir)) {
        throw new ConfigError(`Server instance \`${l.name}\` names the implementation folder ${l.serverType}/${l.impl}, which does not exist in ${root}. Check the spelling in its config file.`);
      }
      const script = compiledEntrypoint(dir, String(l.inner.entrypoint));
      if (!existsSync(script)) {
        throw new ConfigError(`Server instance \`${l.name}\`: ${script} is missing. Build the project first with \`pnpm build\`.`);
      }
      return { ...l, script };
    });
    try {
      this.head = await startHeadServer(this.config, head.host, head.port, () => this.servers.map((s) => ({ name: s.name, server_type: s.serverType, impl: s.impl, url: s.url, pid: s.child.pid ?? null })));
    } catch (err) {
      throw new ConfigError(`Could not start the head server on ${head.host}:${head.port} (${(err as Error).message}). Is another ng-run running? Stop it, or set +head_server.port=<free port>.`);
    }
    // Each server gets the public (masked) config plus its own block complete: a secret
    // reaches only the process whose own config uses it.
    const pub = publicConfig(this.config);
    for (const p of plans) {
      const host = String(p.inner.host);
      const port = Number(p.inner.port);
      // Extra node flags for every server, e.g. NEMO_GYM_NODE_ARGS="--max-old-space-size=8192" or "--cpu-prof".
      const nodeArgs = (process.env.NEMO_GYM_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
      const child = spawn(process.execPath, [...nodeArgs, p.script], {
        cwd: join(root, p.serverType, p.impl),
        env: {
          ...process.env,
          NEMO_GYM_CONFIG_DICT: stringify(instanceConfig(this.config, p.name, pub), { aliasDuplicateObjects: false, lineWidth: 0 }),
          NEMO_GYM_CONFIG_PATH: p.name,
          NEMO_GYM_ROOT: root,
          NEMO_GYM_EXIT_ON_STDIN_CLOSE: '1',
          NEMO_GYM_LOG_PREFIXED: '1',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      const server: LaunchedServer = { name: p.name, serverType: p.serverType, impl: p.impl, host, port, url: `http://${host}:${port}`, script: p.script, child, logTail: [], exited: null };
      const onLine = (line: string) => {
        server.logTail.push(line);
        if (server.logTail.length > TAIL) server.logTail.shift();
        this.write(`(${p.name}) ${line}`);
      };
      createInterface({ input: child.stdout! }).on('line', onLine);
      createInterface({ input: child.stderr! }).on('line', onLine);
      child.on('exit', (code, signal) => {
        server.exited = { code, signal };
      });
      this.servers.push(server);
    }
  }

  /** Resolves when every server answers GET /; rejects naming the ones that did not. */
  async waitReady(): Promise<void> {
    const deadline = Date.now() + (this.options.startupTimeoutS ?? 60) * 1000;
    const ready = new Set<string>();
    while (ready.size < this.servers.length) {
      const dead = this.servers.find((s) => s.exited);
      if (dead) throw new ConfigError(this.describeFailure(dead, `exited during start-up (${dead.exited!.signal ?? `code ${dead.exited!.code}`})`));
      if (Date.now() > deadline) {
        const slow = this.servers.filter((s) => !ready.has(s.name));
        throw new ConfigError(slow.map((s) => this.describeFailure(s, `did not answer within ${this.options.startupTimeoutS ?? 60} s`)).join('\n'));
      }
      await Promise.all(
        this.servers
          .filter((s) => !ready.has(s.name))
          .map(async (s) => {
            try {
              const res = await request(`${s.url}/`, { method: 'GET', headersTimeout: 2000, bodyTimeout: 2000 });
              await res.body.dump();
              ready.add(s.name);
            } catch {
              /* not up yet */
            }
          }),
      );
      if (ready.size < this.servers.length) await new Promise((r) => setTimeout(r, 50));
    }
  }

  describeFailure(s: LaunchedServer, what: string): string {
    const tail = s.logTail.length ? `\nIts last log lines:\n${s.logTail.map((l) => `  | ${l}`).join('\n')}` : ' It printed nothing.';
    return `Server \`${s.name}\` (${s.serverType}/${s.impl}) ${what}.${tail}`;
  }

  table(): string {
    const rows = [['instance', 'kind', 'implementation', 'url', 'pid'], ...this.servers.map((s) => [s.name, s.serverType, s.impl, s.url, String(s.child.pid ?? '')])];
    const head = this.config.head_server as { host: string; port: number };
    rows.push(['(head server)', '-', '-', `http://${head.host}:${head.port}`, String(process.pid)]);
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
  }

  /** Resolves with the first child that exits. */
  firstExit(): Promise<LaunchedServer> {
    return new Promise((resolve) => {
      for (const s of this.servers) {
        if (s.exited) return resolve(s);
        s.child.once('exit', () => resolve(s));
      }
    });
  }

  async stop(graceMs = 5000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const alive = this.servers.filter((s) => !s.exited && s.child.pid);
    for (const s of alive) {
      try {
        process.kill(-s.child.pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && this.servers.some((s) => !s.exited && s.child.pid)) await new Promise((r) => setTimeout(r, 50));
    for (const s of this.servers) {
      if (!s.exited && s.child.pid) {
        try {
          process.kill(-s.child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    await this.head?.close();
  }
}

export const runCommand: CommandSpec = {
  name: 'run',
  summary: 'Start the head server and every server instance in the merged config',
  description: 'Runs until Ctrl-C. Example: pnpm ng-run "+config_paths=[resources_servers/simple_weather/configs/simple_weather.yaml,responses_api_models/openai_model/configs/openai_model.yaml]"',
  flags: [{ name: 'startup_timeout_s', type: 'float', description: 'seconds to wait for every server to answer (default 60)' }],
  main: async (config) => {
    const started = Date.now();
    const fleet = new ServerFleet(config, { startupTimeoutS: typeof config.startup_timeout_s === 'number' ? config.startup_timeout_s : 60 });
    let interrupted = false;
    const onSignal = (why: string) => {
      if (interrupted) return;
      interrupted = true;
      process.stdout.write(`\n${why}: stopping ${fleet.servers.length} server(s)...\n`);
      void fleet.stop().then(() => {
        process.stdout.write('NeMo Gym finished.\n');
        process.exit(0);
      });
    };
    onStopRequest('ng-run', onSignal);
    try {
      await fleet.start();
      await fleet.waitReady();
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    const secs = ((Date.now() - started) / 1000).toFixed(2);
    process.stdout.write(`\nAll ${fleet.servers.length} server(s) ready in ${secs} s\n${fleet.table()}\n\n`);
    if (fleet.servers.length === 0) process.stdout.write('No server instances to display: give config files with "+config_paths=[...]".\n');
    const dead = await fleet.firstExit();
    if (interrupted) return new Promise<number>(() => undefined);
    process.stderr.write(`${fleet.describeFailure(dead, `finished unexpectedly (${dead.exited?.signal ?? `exit code ${dead.exited?.code}`})`)}\nStopping the other servers.\n`);
    await fleet.stop();
    return 1;
  },
};
