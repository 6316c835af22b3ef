/**
 * A stub OpenAI Responses endpoint for benchmarks (127.0.0.1 only): the first call of a
 * conversation asks for get_weather, the second answers. `--delay-ms` holds each answer.
 * GET /stats reports requests served and the most requests in flight at once.
 */
import { createServer } from 'node:http';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1]!);
const delayMs = Number(args.get('delay-ms') ?? 0);

let inFlight = 0;
let maxInFlight = 0;
let served = 0;
let counter = 0;

function response(output: unknown[]) {
  counter++;
  return {
    id: `resp_stub_${counter}`,
    created_at: 1763700000,
    model: 'stub',
    object: 'response',
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    status: 'completed',
    usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 60 },
  };
}

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ served, maxInFlight, inFlight }));
    if (req.url === '/stats/reset') maxInFlight = inFlight;
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    inFlight++;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { input: { type?: string }[] };
    const toolDone = Array.isArray(body.input) && body.input.some((i) => i.type === 'function_call_output');
    const out = toolDone
      ? response([{ id: `msg_${counter}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'It is cold in Paris.', annotations: [] }] }])
      : response([{ type: 'function_call', id: `fc_${counter}`, call_id: `call_${counter}`, name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' }]);
    const send = () => {
      inFlight--;
      served++;
      const text = JSON.stringify(out);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  });
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 0;
server.requestTimeout = 0;
server.maxHeadersCount = 0;
server.listen(Number(args.get('port') ?? 0), '127.0.0.1', () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`ready ${addr.port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
