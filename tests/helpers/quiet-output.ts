/**
 * Setup file of every test file (vitest.config.ts): what a test writes straight to this process's
 * stdout or stderr — server log lines, warnings and stack traces of errors a test provokes on
 * purpose, the output of commands it runs in-process — is held while the test runs and printed
 * only when the test fails. A passing run reads clean; a failing test shows everything it wrote.
 * Set NG_TEST_OUTPUT=all to see every line as it is written.
 */
import { beforeEach } from 'vitest';

type Write = typeof process.stdout.write;
interface Held {
  stream: NodeJS.WriteStream;
  chunk: string | Uint8Array;
}

const KEY = Symbol.for('nemo-gym.quiet-output');
const state = ((globalThis as Record<symbol, unknown>)[KEY] ??= { held: null as Held[] | null, installed: false }) as { held: Held[] | null; installed: boolean };

if (!state.installed && process.env.NG_TEST_OUTPUT !== 'all') {
  state.installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream) as Write;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (state.held === null) return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
      state.held.push({ stream, chunk });
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      if (done) queueMicrotask(done);
      return true;
    }) as Write;
    (stream as unknown as Record<symbol, Write>)[KEY] = original;
  }
}

beforeEach((ctx) => {
  if (!state.installed) return;
  state.held = [];
  ctx.onTestFinished(() => {
    const held = state.held ?? [];
    state.held = null;
    if (ctx.task.result?.state !== 'fail') return;
    for (const { stream, chunk } of held) (stream as unknown as Record<symbol, Write>)[KEY]!.call(stream, chunk);
  });
});
