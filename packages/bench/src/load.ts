/**
 * A closed-loop HTTP load driver for the verify benchmarks: `concurrency` loops POST bodies to one
 * path over keep-alive sockets until a request count or a time budget runs out, while a prober
 * times GET / at a fixed interval (how responsive the server's event loop stays under load).
 * Plain node:http keeps the client cheap on an event loop it may share with the server.
 */
import { Agent, request as httpRequest } from 'node:http';
import { parseArgs } from 'node:util';
import { sleep } from '@nemo-gym/core/client';

/** The command-line settings every verify benchmark takes. */
export interface LoadArgs {
  concurrency: number;
  maxRequests: number;
  maxSeconds: number;
  /** `--workers N` when given (the server's own default otherwise). */
  workers: number | undefined;
}

/**
 * `[--concurrency 256] [--requests 5000] [--seconds 30] [--workers N]`; a value that is not a
 * whole number ≥ 0 (≥ 1 for concurrency) stops the benchmark with a message naming the flag.
 */
export function parseLoadArgs(argv: string[] = process.argv.slice(2)): LoadArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      concurrency: { type: 'string', default: '256' },
      requests: { type: 'string', default: '5000' },
      seconds: { type: 'string', default: '30' },
      workers: { type: 'string' },
    },
  });
  const whole = (flag: string, text: string, min: number): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${flag} must be a whole number of at least ${min}, got ${JSON.stringify(text)}`);
    return n;
  };
  return {
    concurrency: whole('concurrency', values.concurrency, 1),
    maxRequests: whole('requests', values.requests, 1),
    maxSeconds: whole('seconds', values.seconds, 1),
    workers: values.workers === undefined ? undefined : whole('workers', values.workers, 0),
  };
}

/** `--name N` on a benchmark's command line as a number; `fallback` when the flag is absent. */
export function numberArg(name: string, fallback: number, argv: readonly string[] = process.argv): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}

/** Listens on 127.0.0.1 with a free port and returns the port. */
export async function listenOnLoopback(app: { listen(opts: { host: string; port: number }): Promise<unknown>; server: { address(): unknown } }): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address() as { port?: number } | string | null;
  if (!addr || typeof addr === 'string' || typeof addr.port !== 'number') throw new Error('the benchmark server has no listening address');
  return addr.port;
}

export interface LoadOptions {
  port: number;
  /** Path every body is POSTed to. */
  path: string;
  /** Request bodies (JSON), used in turn. */
  bodies: readonly Buffer[];
  concurrency: number;
  maxRequests: number;
  maxSeconds: number;
  /** Throws when an answer does not count as a success (status, body). */
  check: (status: number, text: string) => void;
  /** Requests sent before timing starts (default 32). */
  warmup?: number;
  /** Pause between GET / probes in ms (default 50). */
  probeIntervalMs?: number;
}

export interface LoadResult {
  /** Latencies of the successful requests in ms, sorted ascending. */
  latencies: number[];
  /** Latencies of the GET / probes in ms, sorted ascending. */
  probes: number[];
  errors: number;
  elapsedSeconds: number;
}

/** The value at percentile `p` (0-100) of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function runPostLoad(opts: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency + 8 });
  const call = (method: string, path: string, body?: Buffer) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: opts.port,
          method,
          path,
          agent,
          timeout: 120_000,
          headers: body ? { 'content-type': 'application/json', 'content-length': body.length } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} on 127.0.0.1:${opts.port} got no answer in 120 s`)));
      req.on('error', reject);
      req.end(body);
    });
  const post = async (i: number) => {
    const res = await call('POST', opts.path, opts.bodies[i % opts.bodies.length]);
    opts.check(res.status, res.text);
  };

  try {
    await Promise.all(Array.from({ length: opts.warmup ?? 32 }, (_, i) => post(i)));

    const latencies: number[] = [];
    const probes: number[] = [];
    let errors = 0;
    let issued = 0;
    const start = performance.now();
    const deadline = start + opts.maxSeconds * 1000;
    let running = true;
    const prober = (async () => {
      while (running) {
        const t = performance.now();
        await call('GET', '/');
        probes.push(performance.now() - t);
        await sleep(opts.probeIntervalMs ?? 50);
      }
    })();
    const loop = async () => {
      while (issued < opts.maxRequests && performance.now() < deadline) {
        const i = issued++;
        const t = performance.now();
        try {
          await post(i);
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, loop));
    const elapsedSeconds = (performance.now() - start) / 1000;
    running = false;
    await prober;
    latencies.sort((a, b) => a - b);
    probes.sort((a, b) => a - b);
    return { latencies, probes, errors, elapsedSeconds };
  } finally {
    agent.destroy();
  }
}

/** The throughput, latency and probe lines both verify benchmarks print. */
export function loadReport(result: LoadResult, unit: string): string[] {
  const fmt = (x: number) => x.toFixed(1);
  const { latencies, probes } = result;
  return [
    `  throughput: ${(latencies.length / result.elapsedSeconds).toFixed(0)} ${unit}/s`,
    `  latency ms: p50 ${fmt(percentile(latencies, 50))}  p90 ${fmt(percentile(latencies, 90))}  p99 ${fmt(percentile(latencies, 99))}  max ${fmt(latencies[latencies.length - 1] ?? NaN)}`,
    `  GET / during load, ms: p50 ${fmt(percentile(probes, 50))}  p99 ${fmt(percentile(probes, 99))}  (${probes.length} probes)`,
  ];
}

/**
 * The verify benchmarks' load: `bodies` POSTed to /verify of the server on `port`; an answer that
 * is not a 200 with a numeric reward counts as failed, and `onReward` sees every reward.
 */
export function runVerifyLoad(port: number, bodies: Buffer[], args: Pick<LoadArgs, 'concurrency' | 'maxRequests' | 'maxSeconds'>, probeIntervalMs: number, onReward: (reward: number) => void = () => {}): Promise<LoadResult> {
  return runPostLoad({
    port,
    path: '/verify',
    bodies,
    concurrency: args.concurrency,
    maxRequests: args.maxRequests,
    maxSeconds: args.maxSeconds,
    probeIntervalMs,
    check: (status, text) => {
      const json = JSON.parse(text) as { reward?: number };
      if (status !== 200 || typeof json.reward !== 'number') throw new Error(`status ${status}`);
      onReward(json.reward);
    },
  });
}
