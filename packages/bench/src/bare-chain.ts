/**
 * The baseline for `pnpm bench`: the same HTTP hops as a rollout through simple_agent,
 * simple_weather and openai_model, with nothing but node:http, JSON parse and stringify.
 *   role=agent:     /run -> resources /seed_session -> (model /v1/responses -> resources /<tool>)* -> resources /verify
 *   role=resources: /seed_session, /get_weather, /verify
 *   role=model:     /v1/responses -> stub /v1/responses
 */
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1]!);
const role = args.get('role')!;
const agent = new Agent({ keepAlive: true, maxSockets: Number(args.get('sockets') ?? 1024) });

function readBody(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {}));
  });
}

function post(port: number, path: string, body: unknown): Promise<any> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } }, (res) => {
      readBody(res).then(resolve, reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

function send(res: ServerResponse, obj: unknown) {
  const text = JSON.stringify(obj);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const resourcesPort = Number(args.get('resources-port') ?? 0);
const modelPort = Number(args.get('model-port') ?? 0);
const stubPort = Number(args.get('stub-port') ?? 0);

const server = createServer(async (req, res) => {
  if (req.method === 'GET') return send(res, { status: 'ok' });
  const body = await readBody(req);
  if (role === 'resources') {
    if (req.url === '/get_weather') return send(res, { city: body.city, weather_description: `The weather in ${body.city} is cold.` });
    if (req.url === '/verify') return send(res, { ...body, reward: 1.0 });
    return send(res, {});
  }
  if (role === 'model') return send(res, await post(stubPort, '/v1/responses', body));
  // agent
  await post(resourcesPort, '/seed_session', body);
  const input = [...body.responses_create_params.input];
  const outputs: any[] = [];
  let last: any;
  for (let step = 0; step < 10; step++) {
    last = await post(modelPort, '/v1/responses', { ...body.responses_create_params, input: [...input, ...outputs] });
    outputs.push(...last.output);
    const calls = last.output.filter((o: any) => o.type === 'function_call');
    if (calls.length === 0) break;
    for (const c of calls) {
      const out = await post(resourcesPort, `/${c.name}`, JSON.parse(c.arguments));
      outputs.push({ type: 'function_call_output', call_id: c.call_id, output: JSON.stringify(out) });
    }
  }
  send(res, await post(resourcesPort, '/verify', { ...body, response: { ...last, output: outputs } }));
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 0;
server.requestTimeout = 0;
server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${(server.address() as { port: number }).port}\n`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
