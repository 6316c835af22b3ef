/**
 * `offer_server_tools` in every agent that builds model requests from a task row (simple_agent has
 * its own tests): a row that lists no tools, with the setting on (in the agent's block or as the
 * global setting), gets the resources server's tools (GET /ng_tools) in the model request — or,
 * for remote_agent, in the request to the user's service; for an in-process agent, in `ctx.tools`
 * and `ctx.params.tools`, and so in the requests the three framework examples make. Off (the
 * default): the row as it is, upstream's behaviour.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BaseSeedSessionRequestSchema, BaseVerifyRequestSchema, defineInProcessAgent, defineResourcesServer, GymnasiumServerConfigSchema, ResourcesServerConfigSchema } from '@nemo-gym/core/server';
import { globalConfigFor, startStubServer, startTestServer, textResponse, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { server as aiSdkAgent } from '../responses_api_agents/ai_sdk_agent/app.js';
import { server as gymnasiumAgent } from '../responses_api_agents/gymnasium_agent/app.js';
import { server as langgraphAgent } from '../responses_api_agents/langgraph_agent/app.js';
import { server as openaiAgentsAgent } from '../responses_api_agents/openai_agents_agent/app.js';
import { server as remoteAgent } from '../responses_api_agents/remote_agent/app.js';
import { server as userSimulationAgent } from '../responses_api_agents/user_simulation_agent/app.js';

type Json = Record<string, any>;

const ANY_OBJECT = BaseSeedSessionRequestSchema.loose();
const weatherTools = {
  get_weather: { description: 'The weather in a city.', body: ANY_OBJECT, handler: () => ({ weather: 'cold' }) },
  get_time: { description: 'The time in a city.', body: ANY_OBJECT, handler: () => ({ time: '12:00' }) },
};
const SERVER_TOOLS = ['get_weather', 'get_time'];

const weather = defineResourcesServer({
  className: 'OfferWeather',
  configSchema: ResourcesServerConfigSchema,
  tools: weatherTools,
  verify: { body: BaseVerifyRequestSchema.loose(), handler: (body) => ({ ...body, reward: 1 }) },
});

/** A Gymnasium-style environment that declares the same tools; one step ends the episode. */
const gym = defineResourcesServer({
  className: 'OfferGym',
  configSchema: GymnasiumServerConfigSchema,
  tools: weatherTools,
  gymnasium: {
    reset: () => ({ observation: null, info: {} }),
    step: () => ({ reward: 1, terminated: true, info: {} }),
  },
});

/** The in-process agent records what it was given and makes no model call. */
const seenByInProcess: { tools: string[]; paramsTools: string[] }[] = [];
const inProcess = defineInProcessAgent({
  className: 'OfferInProcess',
  agent: async (ctx) => {
    seenByInProcess.push({ tools: ctx.tools.map((t) => t.name), paramsTools: (ctx.params.tools ?? []).map((t) => String(t.name)) });
    return 'done';
  },
});

let resources: TestServer;
let gymResources: TestServer;
/** Policy model, and the remote agent's service: every request recorded. */
let policy: StubServer;
let service: StubServer;
/** The simulated user: stops at once. */
let user: StubServer;
const started: TestServer[] = [];

beforeAll(async () => {
  resources = await startTestServer(weather, { config: { name: 'weather', domain: 'agent' }, listen: true });
  gymResources = await startTestServer(gym, { config: { name: 'gym', domain: 'games' }, listen: true });
  policy = await startStubServer({ '/v1/responses': () => ({ json: textResponse('It is cold.') }) });
  service = await startStubServer({ '/v1/responses': () => ({ json: textResponse('It is cold.') }) });
  user = await startStubServer({ '/v1/responses': () => ({ json: textResponse('Thanks. ###STOP###') }) });
});

afterAll(async () => {
  for (const s of started) await s.close();
  await resources?.close();
  await gymResources?.close();
  await policy?.close();
  await service?.close();
  await user?.close();
});

const servers = () =>
  globalConfigFor({
    weather: { kind: 'resources_servers', impl: 'offer_weather', port: resources.port },
    gym: { kind: 'resources_servers', impl: 'offer_gym', port: gymResources.port },
    policy_model: { kind: 'responses_api_models', impl: 'stub', port: policy.port },
    user_model: { kind: 'responses_api_models', impl: 'stub', port: user.port },
  });

const resourcesRef = (name: string) => ({ type: 'resources_servers', name });
const modelRef = (name: string) => ({ type: 'responses_api_models', name });

interface Case {
  agent: Parameters<typeof startTestServer>[0];
  config: Json;
  row: Json;
  /** Tool names of the request(s) the agent built for the rollout just run. */
  offered(): string[][];
}

const bareInput = [{ role: 'user', content: 'Weather in Oslo?' }];
const namesOf = (body: Json | undefined) => ((body?.tools ?? []) as { name: string }[]).map((t) => t.name);
/** The requests a stub got since `from`. */
const since = (stub: StubServer, from: number) => stub.requestsTo('/v1/responses').slice(from);

/** An agent whose requests go to the stub `stubOf()` gives (started in beforeAll): the case reads their tools. */
function requestsCase(stubOf: () => StubServer, agent: Case['agent'], config: () => Json, row: Json = { responses_create_params: { input: bareInput } }): () => Case {
  return () => {
    const stub = stubOf();
    const from = stub.requestsTo('/v1/responses').length;
    return { agent, config: config(), row, offered: () => since(stub, from).map((r) => namesOf(r.body)) };
  };
}
const toPolicy = () => policy;

const weatherPolicy = { resources_server: resourcesRef('weather'), model_server: modelRef('policy_model') };

const CASES: Record<string, () => Case> = {
  in_process: () => {
    const from = seenByInProcess.length;
    return {
      agent: inProcess,
      config: { ...weatherPolicy, capture: false },
      row: { responses_create_params: { input: bareInput } },
      offered: () => seenByInProcess.slice(from).flatMap((s) => [s.tools, s.paramsTools]),
    };
  },
  // The three framework examples are in-process agents: the framework's own request carries the tools.
  ai_sdk_agent: requestsCase(toPolicy, aiSdkAgent, () => ({ ...weatherPolicy, capture: false })),
  langgraph_agent: requestsCase(toPolicy, langgraphAgent, () => ({ ...weatherPolicy, capture: false })),
  openai_agents_agent: requestsCase(toPolicy, openaiAgentsAgent, () => ({ ...weatherPolicy, capture: false })),
  remote_agent: requestsCase(() => service, remoteAgent, () => ({ resources_server: resourcesRef('weather'), agent_base_url: service.url })),
  user_simulation_agent: requestsCase(toPolicy, userSimulationAgent, () => ({ ...weatherPolicy, user_model_server: modelRef('user_model') }), { responses_create_params: { input: bareInput }, user_instructions: 'You want the weather in Oslo.' }),
  gymnasium_agent: requestsCase(toPolicy, gymnasiumAgent, () => ({ resources_server: resourcesRef('gym'), model_server: modelRef('policy_model') })),
};

/** Runs one rollout of `name` with `agentSetting` in its block and `globalSetting` as the global one. */
async function offeredIn(name: string, agentSetting: boolean | undefined, globalSetting: boolean | undefined, row?: Json): Promise<string[][]> {
  const c = CASES[name]!();
  const agent = await startTestServer(c.agent, {
    config: { name: `${name}_agent`, ...c.config, ...(agentSetting === undefined ? {} : { offer_server_tools: agentSetting }) },
    globalConfig: { ...servers(), ...(globalSetting === undefined ? {} : { offer_server_tools: globalSetting }) },
  });
  started.push(agent);
  const r = await agent.post('/run', row ?? c.row);
  expect(r.status, r.text).toBe(200);
  expect(r.json.reward).toBe(1);
  const offered = c.offered();
  expect(offered.length).toBeGreaterThan(0);
  return offered;
}

describe.each(Object.keys(CASES))('%s, a row without tools', (name) => {
  it("gets the resources server's tools with offer_server_tools: true in the agent's block", async () => {
    for (const tools of await offeredIn(name, true, undefined)) expect(tools).toEqual(SERVER_TOOLS);
  });

  it('gets them with the global setting on, unless the block turns it off', async () => {
    for (const tools of await offeredIn(name, undefined, true)) expect(tools).toEqual(SERVER_TOOLS);
    for (const tools of await offeredIn(name, false, true)) expect(tools).toEqual([]);
  });

  it("gets none by default (upstream's behaviour)", async () => {
    for (const tools of await offeredIn(name, undefined, undefined)) expect(tools).toEqual([]);
  });

  it('a row that lists tools keeps its own', async () => {
    const own = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: true }];
    const row = { ...CASES[name]!().row };
    row.responses_create_params = { ...row.responses_create_params, tools: own };
    for (const tools of await offeredIn(name, true, undefined, row)) expect(tools).toEqual(['get_weather']);
  });
});
