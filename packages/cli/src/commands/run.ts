/**
 * ng-run: merge the config, start the head server, start every server instance as its own
 * Node process (output prefixed with the instance name), wait until all answer, print a table,
 * and keep them running. A child that dies stops everything with a non-zero exit (unless other
 * replicas of its instance still run); SIGINT (Ctrl-C), SIGTERM or SIGHUP, the exit of the package
 * runner that started it, or `POST /stop` to the head server (ng-stop), stops every child (process
 * group, SIGKILL after a grace period).
 *
 * One config describes a deployment over several hosts:
 * - `num_replicas: N` in an instance's block starts N processes of it on this host (the first on
 *   its configured port, the others on free ports); clients route new sessions among them.
 * - `+only=[a,b]` starts only those instances; an instance whose `host` is not an address of this
 *   machine is left to the ng-run on that host. When the head server already runs (another host,
 *   or `+only` on this one), this ng-run joins it: it registers its servers there instead of
 *   starting a head server, and stops when that head server goes away.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { stringify } from 'yaml';
import { fetchGlobalConfig, sleep } from '@nemo-gym/core/client';
import { findOpenPort, instanceConfig, listLaunchable, publicConfig, repoRoot, type ConfigDict } from '@nemo-gym/core/config';
import { ConfigError, HeadTokenError } from '@nemo-gym/core/errors';
import { configuredHeadToken, generateHeadToken, HEAD_TOKEN_ENV, HEAD_TOKEN_HELP, headTokenFor, headTokenHeaders, removeHeadTokenFile, startHeadServer, writeHeadTokenFile, type InstanceInfo } from '@nemo-gym/core/server';
import { serverNodeArgs, type CommandSpec } from '../runtime.js';
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
  /** Index among this host's replicas of the instance. */
  replica: number;
  /** Replicas of the instance on this host. */
  replicas: number;
  startedAt: number;
}

/** True when `host` is an address this machine listens on (loopback, any, or one of its interfaces). */
export function isLocalHost(host: string): boolean {
  if (host === 'localhost' || host === '0.0.0.0' || host === '::' || host === '::1' || host.startsWith('127.')) return true;
  if (host === hostname()) return true;
  return Object.values(networkInterfaces()).some((list) => (list ?? []).some((a) => a.address === host));
}

function replicaCount(name: string, inner: ConfigDict): number {
  const n = inner.num_replicas ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1024) {
    throw new ConfigError(`Server instance \`${name}\`: num_replicas must be a whole number from 1 to 1024, got ${JSON.stringify(n)}.`);
  }
  return n;
}

function onlyList(config: ConfigDict): string[] | null {
  const only = config.only;
  if (only === undefined || only === null) return null;
  const list = Array.isArray(only) ? only.map(String) : [String(only)];
  return list;
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
  /** Called when the head server receives POST /stop (ng-stop). */
  onStopRequest?: (why: string) => void;
}

export class ServerFleet {
  readonly servers: LaunchedServer[] = [];
  private head?: Awaited<ReturnType<typeof startHeadServer>>;
  private stopping = false;
  /** Set when this ng-run joined a head server another one started. */
  joined: string | null = null;
  /** Instances of the config this ng-run leaves to others (+only, or another host). */
  readonly elsewhere: string[] = [];
  /** The deployment token (see head-token.ts): this run's own, or the one of the head server it joins. */
  private token: string | null = null;

  constructor(
    readonly config: ConfigDict,
    private readonly options: StartOptions = {},
  ) {}

  private write(line: string): void {
    (this.options.out ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
  }

  /** What GET /server_instances lists for this ng-run's servers. */
  instances(): InstanceInfo[] {
    return this.servers.map((s) => ({
      name: s.name,
      server_type: s.serverType,
      impl: s.impl,
      url: s.url,
      pid: s.child.pid ?? null,
      replica: s.replica,
      host: hostname(),
      state: s.exited ? 'exited' : 'running',
      exit_code: s.exited?.code ?? null,
      signal: s.exited?.signal ?? null,
      started_at: s.startedAt,
    }));
  }

  async start(): Promise<void> {
    const root = repoRoot();
    const head = this.config.head_server as { host: string; port: number };
    const only = onlyList(this.config);
    const all = listLaunchable(this.config);
    if (only) {
      const unknown = only.filter((n) => !all.some((l) => l.name === n));
      if (unknown.length) throw new ConfigError(`+only names ${unknown.map((n) => `\`${n}\``).join(', ')}, not server instances of this config (it has: ${all.map((l) => l.name).join(', ') || 'none'}).`);
    }
    const launchable = all.filter((l) => (only ? only.includes(l.name) : true) && isLocalHost(String(l.inner.host ?? '127.0.0.1')));
    for (const l of all) if (!launchable.includes(l)) this.elsewhere.push(l.name);
    // Join a running head server when this ng-run starts part of a deployment.
    const headLocal = isLocalHost(head.host);
    if (only || !headLocal) {
      const answering = await fetchGlobalConfig(head).then(
        () => true,
        () => false,
      );
      if (answering) {
        this.joined = `http://${head.host}:${head.port}`;
        this.token = headTokenFor(this.config, head.host, head.port);
      }
      else if (!headLocal) {
        throw new ConfigError(`The head server http://${head.host}:${head.port} does not answer, and it is on another host: start ng-run there first (the full config, or +only=[…]), then this one.`);
      }
    }
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
      const count = replicaCount(l.name, l.inner);
      return { ...l, script, count, ports: [Number(l.inner.port)] };
    });
    // Replicas after the first listen on free ports; every replicated or remote instance lists
    // its replicas here so clients route among them (and ask the head server for the others).
    const taken = Array.isArray(this.config.disallowed_ports) ? this.config.disallowed_ports.map(Number) : [];
    // Configured ports are not bound yet: the OS could hand one out again.
    for (const l of all) if (l.inner.port) taken.push(Number(l.inner.port));
    taken.push(Number(head.port));
    for (const p of plans) {
      while (p.ports.length < p.count) {
        const port = await findOpenPort(taken);
        taken.push(port);
        p.ports.push(port);
      }
      if (p.count > 1 || 'num_replicas' in p.inner || this.joined || this.elsewhere.length > 0) p.inner.replicas = p.ports.map((port) => `${String(p.inner.host)}:${port}`);
    }
    for (const l of all) if (this.elsewhere.includes(l.name)) l.inner.replicas = [];
    if (!this.joined) {
      this.token = configuredHeadToken(this.config) ?? generateHeadToken();
      try {
        this.head = await startHeadServer(this.config, head.host, head.port, { instances: () => this.instances(), onStop: this.options.onStopRequest, token: this.token });
      } catch (err) {
        throw new ConfigError(`Could not start the head server on ${head.host}:${head.port} (${(err as Error).message}). Is another ng-run running? Stop it, or set +head_server.port=<free port>.`);
      }
      // ng-stop and ng-run +only on this host read it from there when no token is configured.
      writeHeadTokenFile(head.host, head.port, this.token);
    }
    // Each server gets the public (masked) config plus its own block complete: a secret
    // reaches only the process whose own config uses it.
    const pub = publicConfig(this.config);
    for (const p of plans) for (let replica = 0; replica < p.count; replica++) this.spawnServer(root, pub, p, replica, p.ports[replica]!);
  }

  private spawnServer(root: string, pub: ConfigDict, p: { name: string; serverType: string; impl: string; inner: ConfigDict; script: string; count: number }, replica: number, port: number): void {
    {
      const host = String(p.inner.host);
      const own = instanceConfig(this.config, p.name, pub);
      if (replica > 0) {
        const block = own[p.name] as Record<string, Record<string, Record<string, unknown>>>;
        own[p.name] = { [p.serverType]: { [p.impl]: { ...block[p.serverType]![p.impl]!, port } } };
      }
      const tag = p.count > 1 ? `${p.name}#${replica}` : p.name;
      const nodeArgs = serverNodeArgs();
      const child = spawn(process.execPath, [...nodeArgs, p.script], {
        cwd: join(root, p.serverType, p.impl),
        env: {
          ...process.env,
          NEMO_GYM_CONFIG_DICT: stringify(own, { aliasDuplicateObjects: false, lineWidth: 0 }),
          NEMO_GYM_CONFIG_PATH: p.name,
          NEMO_GYM_ROOT: root,
          NEMO_GYM_EXIT_ON_STDIN_CLOSE: '1',
          NEMO_GYM_LOG_PREFIXED: '1',
          ...(this.token ? { [HEAD_TOKEN_ENV]: this.token } : {}),
        },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      const server: LaunchedServer = { name: p.name, serverType: p.serverType, impl: p.impl, host, port, url: `http://${host}:${port}`, script: p.script, child, logTail: [], exited: null, replica, replicas: p.count, startedAt: Date.now() };
      const onLine = (line: string) => {
        server.logTail.push(line);
        if (server.logTail.length > TAIL) server.logTail.shift();
        this.write(`(${tag}) ${line}`);
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
    const ready = new Set<LaunchedServer>();
    while (ready.size < this.servers.length) {
      const dead = this.servers.find((s) => s.exited);
      if (dead) throw new ConfigError(this.describeFailure(dead, `exited during start-up (${dead.exited!.signal ?? `code ${dead.exited!.code}`})`));
      if (Date.now() > deadline) {
        const slow = this.servers.filter((s) => !ready.has(s));
        throw new ConfigError(slow.map((s) => this.describeFailure(s, `did not answer within ${this.options.startupTimeoutS ?? 60} s`)).join('\n'));
      }
      await Promise.all(
        this.servers
          .filter((s) => !ready.has(s))
          .map(async (s) => {
            try {
              const res = await request(`${s.url}/`, { method: 'GET', headersTimeout: 2000, bodyTimeout: 2000 });
              await res.body.dump();
              ready.add(s);
            } catch {
              /* not up yet */
            }
          }),
      );
      if (ready.size < this.servers.length) await sleep(50);
    }
  }

  describeFailure(s: LaunchedServer, what: string): string {
    const tail = s.logTail.length ? `\nIts last log lines:\n${s.logTail.map((l) => `  | ${l}`).join('\n')}` : ' It printed nothing.';
    return `Server \`${s.name}\`${s.replicas > 1 ? ` (replica ${s.replica})` : ''} (${s.serverType}/${s.impl}) ${what}.${tail}`;
  }

  /** Tells the head server this ng-run joined about its servers. */
  async register(): Promise<void> {
    if (!this.joined) return;
    const res = await request(`${this.joined}/server_instances/register`, { method: 'POST', body: JSON.stringify({ instances: this.instances() }), headers: { 'content-type': 'application/json', ...headTokenHeaders(this.token) }, headersTimeout: 10_000, bodyTimeout: 10_000 });
    const text = await res.body.text();
    if (res.statusCode === 401) {
      throw new HeadTokenError(`The head server ${this.joined} refused to register this host's servers: ${this.token ? 'the deployment token this ng-run has is not the one the head server uses' : 'this ng-run has no deployment token for it'}. ${HEAD_TOKEN_HELP}`);
    }
    if (res.statusCode !== 200) throw new ConfigError(`The head server ${this.joined} refused to register this host's servers (HTTP ${res.statusCode}: ${text.slice(0, 300)}).`);
  }

  private async deregister(): Promise<void> {
    if (!this.joined) return;
    try {
      const res = await request(`${this.joined}/server_instances/deregister`, { method: 'POST', body: JSON.stringify({ urls: this.servers.map((s) => s.url) }), headers: { 'content-type': 'application/json', ...headTokenHeaders(this.token) }, headersTimeout: 3000, bodyTimeout: 3000 });
      await res.body.dump();
    } catch {
      /* the head server is gone already */
    }
  }

  /** Resolves when the joined head server has missed `misses` checks in a row (never when this ng-run owns the head server). */
  headGone(intervalMs = 1000, misses = 3): Promise<string> {
    const joined = this.joined;
    if (!joined) return new Promise(() => undefined);
    return new Promise((resolve) => {
      let missed = 0;
      const timer = setInterval(() => {
        void request(`${joined}/`, { method: 'GET', headersTimeout: 2000, bodyTimeout: 2000 }).then(
          async (res) => {
            const body = (await res.body.json().catch(() => ({}))) as { status?: string };
            missed = body.status === 'stopping' ? misses : 0;
            if (missed >= misses) done('is stopping');
          },
          () => {
            missed++;
            if (missed >= misses) done(`stopped answering (${misses} checks ${intervalMs} ms apart)`);
          },
        );
      }, intervalMs);
      const done = (why: string) => {
        clearInterval(timer);
        resolve(`The head server ${joined} ${why}`);
      };
    });
  }

  table(): string {
    const many = this.servers.some((s) => s.replicas > 1);
    const rows = [['instance', 'kind', 'implementation', 'url', 'pid', ...(many ? ['replica'] : [])], ...this.servers.map((s) => [s.name, s.serverType, s.impl, s.url, String(s.child.pid ?? ''), ...(many ? [String(s.replica)] : [])])];
    const head = this.config.head_server as { host: string; port: number };
    rows.push([this.joined ? '(head server, joined)' : '(head server)', '-', '-', `http://${head.host}:${head.port}`, this.joined ? '-' : String(process.pid), ...(many ? [''] : [])]);
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

  /**
   * Resolves with the first child whose exit leaves its instance without a running replica on
   * this host; the exit of a replica whose siblings still run is reported through `onReplicaExit`.
   */
  lastReplicaExit(onReplicaExit: (s: LaunchedServer) => void): Promise<LaunchedServer> {
    return new Promise((resolve) => {
      const check = (s: LaunchedServer) => {
        if (this.servers.some((o) => o.name === s.name && !o.exited)) onReplicaExit(s);
        else resolve(s);
      };
      for (const s of this.servers) {
        if (s.exited) check(s);
        else s.child.once('exit', () => setImmediate(() => check(s)));
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
    while (Date.now() < deadline && this.servers.some((s) => !s.exited && s.child.pid)) await sleep(50);
    for (const s of this.servers) {
      if (!s.exited && s.child.pid) {
        try {
          process.kill(-s.child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    await this.deregister();
    await this.head?.close();
    if (this.head && this.token) {
      const head = this.config.head_server as { host: string; port: number };
      removeHeadTokenFile(head.host, head.port, this.token);
    }
  }
}

export const runCommand: CommandSpec = {
  name: 'run',
  summary: 'Start the head server and every server instance in the merged config',
  description: 'Runs until Ctrl-C. Example: pnpm ng-run "+config_paths=[resources_servers/simple_weather/configs/simple_weather.yaml,responses_api_models/openai_model/configs/openai_model.yaml]"',
  flags: [
    { name: 'startup_timeout_s', type: 'float', description: 'seconds to wait for every server to answer (default 60)' },
    { name: 'only', type: 'list', description: 'start only these instances, e.g. +only=[math_with_judge]; with a head server already running, join it' },
  ],
  main: async (config) => {
    const started = Date.now();
    let interrupted = false;
    const fleet: ServerFleet = new ServerFleet(config, {
      startupTimeoutS: typeof config.startup_timeout_s === 'number' ? config.startup_timeout_s : 60,
      onStopRequest: (why) => onSignal(why),
    });
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
      await fleet.register();
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    const secs = ((Date.now() - started) / 1000).toFixed(2);
    process.stdout.write(`\nAll ${fleet.servers.length} server(s) ready in ${secs} s\n${fleet.table()}\n\n`);
    if (fleet.joined) process.stdout.write(`Joined the head server ${fleet.joined}: registered ${fleet.servers.length} server(s) there.\n`);
    if (fleet.elsewhere.length) process.stdout.write(`Left to other hosts or ng-run processes: ${fleet.elsewhere.join(', ')}.\n`);
    if (fleet.servers.length === 0 && !config.only) process.stdout.write('No server instances to display: give config files with "+config_paths=[...]".\n');
    void fleet.headGone().then((why) => onSignal(why));
    const dead = await fleet.lastReplicaExit((s) => {
      if (!interrupted) process.stderr.write(`${fleet.describeFailure(s, `finished unexpectedly (${s.exited?.signal ?? `exit code ${s.exited?.code}`})`)}\nIts other replicas keep serving.\n`);
    });
    if (interrupted) return new Promise<number>(() => undefined);
    process.stderr.write(`${fleet.describeFailure(dead, `finished unexpectedly (${dead.exited?.signal ?? `exit code ${dead.exited?.code}`})`)}\nStopping the other servers.\n`);
    await fleet.stop();
    return 1;
  },
};
