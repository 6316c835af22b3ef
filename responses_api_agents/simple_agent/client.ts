/**
 * Talk to a running simple_agent by hand (servers started with ng-run):
 *   node responses_api_agents/simple_agent/dist/client.js [agent_name] ["your question"] [head_port]
 * Reads the server addresses from the head server, sends one /v1/responses request and prints
 * every output item of the trajectory.
 */
import { ServerClient } from '@nemo-gym/core/client';
import { DEFAULT_HEAD_PORT, DEFAULT_HOST } from '@nemo-gym/core/config';
import { describeError } from '@nemo-gym/core/errors';

const agent = process.argv[2] ?? 'simple_weather_simple_agent';
const question = process.argv[3] ?? "What's the weather like in San Francisco?";
const headPort = process.argv[4] === undefined ? DEFAULT_HEAD_PORT : Number(process.argv[4]);

try {
  const client = await ServerClient.fromHeadServer({ host: DEFAULT_HOST, port: headPort });
  const res = await client.post(agent, '/v1/responses', {
    input: [{ role: 'user', content: question }],
    tools: [{ type: 'function', name: 'get_weather', description: 'Current weather for a city', strict: true, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }],
  });
  res.raiseForStatus();
  for (const item of res.json<{ output: unknown[] }>().output) console.log(JSON.stringify(item, null, 2));
  await client.close();
} catch (err) {
  console.error(describeError(err));
  process.exitCode = 1;
}
