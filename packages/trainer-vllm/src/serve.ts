/**
 * The stand-in as a process, for tests written in other languages (the Python package's tests):
 *
 *   node packages/trainer-vllm/bin/trainer-vllm.js [--port N] [--mode normal|slow|hang|reset]
 *       [--delay-ms MS] [--reasoning-parser] [--model-name NAME] [--max-model-len N]
 *
 * Prints `ready <base url ending in /v1>` once it listens, then one JSON line per event on stdout:
 * `{"event":"request","call":i,"user":"…","t":ms,"chat_template_kwargs":…}` when a chat request arrives and
 * `{"event":"closed","call":i,"user":"…","t":ms}` when its client closes the connection before the
 * answer (a cancelled generation). Exits on SIGTERM or SIGINT (and, with --exit-on-stdin-close,
 * when its stdin closes).
 *
 * The built-in policy is the simple_weather one: the first model call of a conversation calls
 * get_weather (compact JSON arguments, after a short reasoning), the next one answers.
 * `slow` holds every answer `--delay-ms` (default 1000); `hang` never answers; `reset` accepts
 * connections and closes them at once without an answer (a dead backend).
 */
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { Json, JsonObject } from './tokenizer.js';
import type { ScriptedTurn } from './generation.js';
import { startTrainerVllm, type PolicyContext, type RecordedCall } from './server.js';
import { sleep } from '@nemo-gym/core/client';

function argMap(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) continue;
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out.set(a.slice(2), 'true');
    else {
      out.set(a.slice(2), next);
      i++;
    }
  }
  return out;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The text of the first user message (how a test tells rollouts apart). */
function userText(body: Json): string {
  if (!isObject(body) || !Array.isArray(body.messages)) return '';
  const m = body.messages.find((x) => isObject(x) && x.role === 'user');
  if (!isObject(m)) return '';
  const c = m.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('\n');
  return '';
}

function weatherPolicy(ctx: PolicyContext): ScriptedTurn {
  const done = ctx.messages.filter((m) => isObject(m) && m.role === 'assistant').length;
  const hasTool = (ctx.tools ?? []).some((t) => isObject(t) && isObject(t.function) && t.function.name === 'get_weather');
  if (hasTool && done === 0) return { reasoning: 'I will call get_weather.', toolCalls: [{ name: 'get_weather', arguments: { city: 'San Francisco' } }] };
  return { reasoning: 'Answer now.', content: 'It is cold; bring a jacket.' };
}

const emit = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);

async function main(): Promise<void> {
  const args = argMap(process.argv.slice(2));
  const mode = args.get('mode') ?? 'normal';
  const port = Number(args.get('port') ?? 0);
  const delayMs = Number(args.get('delay-ms') ?? 1000);
  let close: () => Promise<void>;
  if (mode === 'reset') {
    const server = createNetServer((socket) => socket.destroy());
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    const addr = server.address() as AddressInfo;
    process.stdout.write(`ready http://127.0.0.1:${addr.port}/v1\n`);
    close = () => new Promise((r) => server.close(() => r()));
  } else if (mode === 'normal' || mode === 'slow' || mode === 'hang') {
    let index = 0;
    let calls: RecordedCall[] = [];
    const standin = await startTrainerVllm({
      port,
      reasoningParser: args.has('reasoning-parser'),
      ...(args.has('model-name') ? { modelName: args.get('model-name')! } : {}),
      ...(args.has('max-model-len') ? { maxModelLen: Number(args.get('max-model-len')) } : {}),
      policy: async (ctx) => {
        if (mode === 'hang') await new Promise(() => undefined);
        if (mode === 'slow') await sleep(delayMs);
        return weatherPolicy(ctx);
      },
      onClientClosed: (call) => emit({ event: 'closed', call: calls.indexOf(call), user: userText(call.body), t: call.closedEarlyAt }),
    });
    calls = standin.calls;
    // Requests are announced as they arrive (the recorded call list grows on each).
    const timer = setInterval(() => {
      while (index < standin.calls.length) {
        const call = standin.calls[index]!;
        if (call.path === '/v1/chat/completions') emit({ event: 'request', call: index, user: userText(call.body), t: call.receivedAt, chat_template_kwargs: isObject(call.body) ? (call.body.chat_template_kwargs ?? null) : null });
        index++;
      }
    }, 20);
    timer.unref();
    process.stdout.write(`ready ${standin.url}\n`);
    close = async () => {
      clearInterval(timer);
      await standin.close();
    };
  } else {
    process.stderr.write(`trainer-vllm: --mode must be normal, slow, hang or reset, got ${mode}\n`);
    process.exit(2);
  }
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (args.has('exit-on-stdin-close')) {
    process.stdin.on('end', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }
}

await main();
