// Running one program against its unit tests inside the sandbox, with python/lcb_runner.py.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandboxError, type Sandbox, type SandboxSession } from '@nemo-gym/sandbox';

/** LiveCodeBench's OpenAI-chat extraction: the lines strictly between the last two lines that
 * contain a triple-backtick fence; '' with fewer than two such lines. */
export function extractCode(modelOutput: string): string {
  const lines = modelOutput.split('\n');
  const fences: number[] = [];
  lines.forEach((line, i) => {
    if (line.includes('```')) fences.push(i);
  });
  if (fences.length < 2) return '';
  return lines.slice(fences.at(-2)! + 1, fences.at(-1)!).join('\n');
}

export interface UnitTests {
  inputs: string[];
  outputs: string[];
  fn_name: string | null;
}

export type ResultEntry = boolean | number;

export interface GradeOutcome {
  result: ResultEntry[];
  metadata: Record<string, unknown> | null;
  /** Seconds spent grading (after the pool slot was granted). */
  seconds: number;
  /** Seconds spent waiting for a pool slot. */
  queueSeconds: number;
}

/** Absolute path of python/lcb_runner.py, from source or from the build. */
export function runnerPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const p = join(dir, 'python', 'lcb_runner.py');
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  throw new SandboxError(`cannot find python/lcb_runner.py above ${fileURLToPath(import.meta.url)}; the comp_coding folder is incomplete`);
}

/** Upstream's global limit for one program: (timeout + 1) s per test plus 5 s. */
export function globalTimeoutS(tests: UnitTests, timeoutS: number): number {
  return (timeoutS + 1) * tests.inputs.length + 5;
}

interface Answer {
  nonce?: string;
  result?: unknown;
  metadata?: unknown;
}

function parseAnswer(text: string, nonce: string): Answer | null {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith('{')) continue;
    try {
      const msg = JSON.parse(line) as Answer;
      if (msg && msg.nonce === nonce && Array.isArray(msg.result)) return msg;
    } catch {
      // not ours
    }
  }
  return null;
}

function toOutcome(answer: Answer | null, tests: UnitTests, seconds: number, queueSeconds: number): GradeOutcome {
  if (!answer) return { result: tests.inputs.map(() => -1), metadata: null, seconds, queueSeconds };
  const result = (answer.result as unknown[]).map((r) => (typeof r === 'boolean' || typeof r === 'number' ? r : false));
  const metadata = answer.metadata && typeof answer.metadata === 'object' ? (answer.metadata as Record<string, unknown>) : null;
  return { result, metadata, seconds, queueSeconds };
}

export interface GraderOptions {
  sandbox: Sandbox;
  timeoutS: number;
  memoryBytes: number;
  mode: 'warm' | 'per_verify';
  /** Warm runners kept (default: the pool size). */
  warmRunners?: number;
}

/** Grades programs: one sandboxed runner process per verify, or a warm pool of runners that
 * fork a confined child per verify. Either way at most `pool size` gradings run at once. */
export class Grader {
  private readonly idle: SandboxSession[] = [];
  private live = 0;
  private maxLive = 0;
  private closed = false;

  constructor(private readonly o: GraderOptions) {}

  /** Most runner processes alive at once so far (warm runners plus one-shot runs). */
  get maxLiveRunners(): number {
    return Math.max(this.maxLive, this.o.sandbox.stats().maxLive);
  }

  async grade(code: string, tests: UnitTests): Promise<GradeOutcome> {
    const nonce = randomBytes(16).toString('hex');
    const request = { code, inputs: tests.inputs, outputs: tests.outputs, fn_name: tests.fn_name, timeout: this.o.timeoutS, nonce };
    const limitS = globalTimeoutS(tests, this.o.timeoutS);
    if (this.o.mode === 'per_verify') {
      const r = await this.o.sandbox.run({
        argv: ['python', runnerPath()],
        stdin: JSON.stringify(request),
        limits: { wallMs: limitS * 1000, cpuMs: limitS * 1000, memoryBytes: this.o.memoryBytes, outputBytes: 64 * 1024 * 1024 },
      });
      return toOutcome(parseAnswer(r.stdout, nonce), tests, r.durations.runMs / 1000, r.durations.queueMs / 1000);
    }
    return this.o.sandbox.pool.use(async (queueMs) => {
      const session = await this.take();
      // Timed from here: starting a runner (once per runner) is not part of this program's run.
      const t0 = performance.now();
      // The runner kills its child at the global limit; the extra seconds cover a runner that hangs.
      const reply = await session.request(request, (limitS + 5) * 1000);
      const seconds = (performance.now() - t0) / 1000;
      if (!reply.ok) {
        void this.discard(session);
        return toOutcome(null, tests, seconds, queueMs / 1000);
      }
      this.give(session);
      const answer = reply.reply as Answer;
      return toOutcome(answer.nonce === nonce ? answer : null, tests, seconds, queueMs / 1000);
    });
  }

  private async take(): Promise<SandboxSession> {
    while (this.idle.length) {
      const s = this.idle.pop()!;
      if (s.alive) return s;
      void this.discard(s);
    }
    this.live += 1;
    this.maxLive = Math.max(this.maxLive, this.live);
    try {
      const s = await this.o.sandbox.openSession({
        argv: ['python', runnerPath(), '--serve'],
        defer: true,
        limits: { memoryBytes: this.o.memoryBytes, cpuMs: 0 },
        startupTimeoutMs: 60_000,
      });
      const hello = await s.hello.catch((err: Error) => {
        void s.close();
        throw err;
      });
      if (hello.ready !== true) {
        void s.close();
        throw new SandboxError(`the grading runner did not start properly: ${JSON.stringify(hello)}`);
      }
      return s;
    } catch (err) {
      this.live -= 1;
      throw err;
    }
  }

  private give(s: SandboxSession): void {
    if (this.closed || !s.alive) {
      void this.discard(s);
      return;
    }
    this.idle.push(s);
  }

  private async discard(s: SandboxSession): Promise<void> {
    this.live -= 1;
    await s.close();
  }

  /** Starts one warm runner (checks the set-up at start-up); returns what its confinement reported. */
  async warmUp(): Promise<Record<string, unknown> | null> {
    if (this.o.mode !== 'warm') return null;
    const s = await this.take();
    const hello = await s.hello;
    this.give(s);
    return (hello.layers as Record<string, unknown>) ?? null;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = this.idle.splice(0);
    await Promise.all(all.map((s) => this.discard(s)));
  }
}
