/**
 * user_simulation_agent against real servers on 127.0.0.1: a resources server defined here (it
 * records what seed, tools and verify received), and two stub model servers answering from
 * scripts, one for the policy and one for the user.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema } from '@nemo-gym/core/server';
import { functionCall, globalConfigFor, modelResponse, startStubServer, startTestServer, textResponse, type StubAnswer, type StubRequest, type StubServer, type TestServer } from '@nemo-gym/core/testing';
import { server as agentServer } from '../app.js';
import { DEFAULT_USER_SYSTEM_PROMPT, flippedConversation, instructionsOf, userSystemPrompt } from '../src/prompt.js';

type Json = Record<string, any>;

let echoVerify = true;
/** Calls of the `slow` tool waiting for the test to end. */
const releaseSlow: (() => void)[] = [];
const resourcesServer = defineResourcesServer({
  className: 'UserSimTestResources',
  configSchema: ResourcesServerConfigSchema,
  setup: () => ({ seeds: [] as Json[], calls: [] as string[], verified: [] as Json[] }),
  seedSession: {
    body: z.object({}).loose(),
    handler: (body, ctx) => {
      ctx.state.seeds.push(body);
      return {};
    },
  },
  tools: {
    lookup: { body: z.object({ q: z.string() }), handler: ({ q }, ctx) => (ctx.state.calls.push(`lookup:${q}`), { found: q }) },
    slow: { body: z.object({}), handler: () => new Promise((resolve) => releaseSlow.push(() => resolve({ late: true }))) },
    transfer_to_human_agents: { body: z.object({ summary: z.string() }), handler: (_b, ctx) => (ctx.state.calls.push('transfer'), 'Transfer successful') },
  },
  verify: {
    body: BaseVerifyRequestSchema.loose(),
    handler: (body, ctx) => {
      ctx.state.verified.push(body);
      return echoVerify ? { ...body, reward: 0.5 } : { reward: 0.5 };
    },
  },
});

type Script = (req: StubRequest, index: number) => StubAnswer | Promise<StubAnswer>;
let policyScript: Script = () => ({ json: textResponse('nothing scripted') });
let userScript: Script = () => ({ json: textResponse('###STOP###') });
let resources: TestServer<unknown, { seeds: Json[]; calls: string[]; verified: Json[] }>;
let policy: StubServer;
let user: StubServer;
const agents: TestServer[] = [];
let policySeen = 0;
let userSeen = 0;

async function buildAgent(extra: Json = {}): Promise<TestServer> {
  const agent = await startTestServer(agentServer, {
    config: {
      name: 'usersim',
      resources_server: { type: 'resources_servers', name: 'desk' },
      model_server: { type: 'responses_api_models', name: 'policy_model' },
      user_model_server: { type: 'responses_api_models', name: 'user_model' },
      ...extra,
    },
    globalConfig: globalConfigFor({
      desk: { kind: 'resources_servers', impl: 'usersim_test_resources', port: resources.port },
      policy_model: { kind: 'responses_api_models', impl: 'stub', port: policy.port },
      user_model: { kind: 'responses_api_models', impl: 'stub', port: user.port },
    }),
  });
  agents.push(agent);
  return agent;
}

/** Answers in order (the last repeats), counting from the current test's first call. */
function inOrder(server: () => StubServer, answers: unknown[]): Script {
  const base = server().requestsTo('/v1/responses').length;
  return (_req, index) => ({ json: answers[Math.min(index - base, answers.length - 1)] });
}
const policyCalls = () => policy.requestsTo('/v1/responses').slice(policySeen);
const userCalls = () => user.requestsTo('/v1/responses').slice(userSeen);

const TOKENS = { prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5] };
const tau2Row = {
  task_id: '7',
  responses_create_params: { input: [{ role: 'system', content: '<policy>Be helpful.</policy>' }, { role: 'assistant', content: 'Hi! How can I help you today?' }], tools: [] },
  user_scenario: { persona: null, instructions: { reason_for_call: 'refund' } },
  user_instructions: 'Instructions:\n\tReason for call: you want a refund for order #W1.',
};

let agent: TestServer;
beforeAll(async () => {
  resources = (await startTestServer(resourcesServer, { config: { name: 'desk', domain: 'agent' }, listen: true })) as typeof resources;
  policy = await startStubServer({ '/v1/responses': (req, i) => policyScript(req, i) });
  user = await startStubServer({ '/v1/responses': (req, i) => userScript(req, i) });
  agent = await buildAgent({ end_tools: ['transfer_to_human_agents'] });
});
afterAll(async () => {
  for (const release of releaseSlow) release();
  for (const a of agents) await a.close();
  await resources?.close();
  await policy?.close();
  await user?.close();
});
beforeEach(() => {
  policySeen = policy.requestsTo('/v1/responses').length;
  userSeen = user.requestsTo('/v1/responses').length;
  resources.context.state.calls.length = 0;
  resources.context.state.verified.length = 0;
  echoVerify = true;
});

describe('/run: a tau2-shaped row', () => {
  it('the user speaks after the greeting, from user_instructions; tools run; the stop ends it and verify gets termination_reason', async () => {
    userScript = inOrder(() => user, [textResponse('I want a refund for order #W1.'), modelResponse([{ ...textResponseItem('Thanks, bye. ###STOP###'), ...TOKENS }])]);
    policyScript = inOrder(() => policy, [modelResponse([functionCall('lookup', { q: '#W1' }, 'l')]), modelResponse([{ ...textResponseItem('Refund issued.'), ...TOKENS }])]);
    const r = await agent.post('/run', tau2Row);
    expect(r.status, r.text).toBe(200);
    expect(r.json.reward).toBe(0.5);
    expect(r.json.termination_reason).toBe('user_stop');
    expect(r.json.user_simulation).toMatchObject({ stop_signal: '###STOP###', user_turns: 2, policy_turns: 1, policy_model_calls: 2, user_model_calls: 2 });
    expect(resources.context.state.calls).toEqual(['lookup:#W1']);
    const verified = resources.context.state.verified[0]!;
    expect(verified.termination_reason).toBe('user_stop');
    expect(verified.task_id).toBe('7');

    // The user model: its system prompt holds the row's user_instructions; the greeting is its first "user" turn.
    const first = userCalls()[0]!.body;
    expect(first.input[0].role).toBe('system');
    expect(first.input[0].content).toContain('<scenario>\nInstructions:\n\tReason for call: you want a refund for order #W1.\n</scenario>');
    expect(first.input.slice(1)).toEqual([{ role: 'user', content: 'Hi! How can I help you today?' }]);
    expect(first.tools).toBeUndefined();
    const second = userCalls()[1]!.body;
    expect(second.input.slice(1)).toEqual([
      { role: 'user', content: 'Hi! How can I help you today?' },
      { role: 'assistant', content: 'I want a refund for order #W1.' },
      { role: 'user', content: 'Refund issued.' },
    ]);
    // The policy got its own system prompt and the user's turn as a user message.
    expect(policyCalls()[0]!.body.input).toEqual([...tau2Row.responses_create_params.input, { type: 'message', role: 'user', content: 'I want a refund for order #W1.' }]);

    // The user's turns carry no token ids, even the one whose answer had them; the policy's keep theirs.
    const out = r.json.response.output as Json[];
    const users = out.filter((o) => o.role === 'user');
    expect(users).toEqual([
      { type: 'message', role: 'user', content: 'I want a refund for order #W1.' },
      { type: 'message', role: 'user', content: 'Thanks, bye. ###STOP###' },
    ]);
    expect(out.find((o) => o.role === 'assistant')?.generation_token_ids).toEqual([3]);
  });

  it('without user_instructions, user_scenario (an object) is given to the user as JSON', () => {
    const { user_instructions: _drop, ...row } = tau2Row;
    expect(instructionsOf(row)).toBe(JSON.stringify(tau2Row.user_scenario, null, 2));
    expect(instructionsOf({ user_scenario: 'plain text' })).toBe('plain text');
    expect(instructionsOf({ user_instructions: '  ' })).toBeNull();
  });

  it('a row\'s own user_system_prompt (tau2\'s whole simulator prompt) is used as it is', async () => {
    userScript = inOrder(() => user, [textResponse('###STOP###')]);
    const own = 'tau2 guidelines {instructions} stay as written\n\n<scenario>\nInstructions: refund\n</scenario>';
    const r = await agent.post('/run', { ...tau2Row, user_system_prompt: own });
    expect(r.status, r.text).toBe(200);
    expect(userCalls()[0]!.body.input[0]).toEqual({ role: 'system', content: own });
  });

  it('a row without instructions is refused before anything runs (NG_ERR_USER_INSTRUCTIONS)', async () => {
    const seeds = resources.context.state.seeds.length;
    const r = await agent.post('/run', { responses_create_params: { input: 'hello' } });
    expect(r.status).toBe(422);
    expect(r.json.code).toBe('NG_ERR_USER_INSTRUCTIONS');
    expect(resources.context.state.seeds.length).toBe(seeds);
    expect(policyCalls()).toHaveLength(0);
  });

  it('a row that ends with a user message: the policy answers first', async () => {
    policyScript = inOrder(() => policy, [textResponse('Hello Sam.')]);
    userScript = inOrder(() => user, [textResponse('###OUT-OF-SCOPE###')]);
    const r = await agent.post('/run', { responses_create_params: { input: [{ role: 'user', content: 'I am Sam.' }] }, user_instructions: 'You are Sam.' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.termination_reason).toBe('user_stop');
    expect(r.json.user_simulation).toMatchObject({ stop_signal: '###OUT-OF-SCOPE###', user_turns: 1, policy_turns: 1 });
    expect(userCalls()[0]!.body.input.slice(1)).toEqual([{ role: 'assistant', content: 'I am Sam.' }, { role: 'user', content: 'Hello Sam.' }]);
  });

  it('an ending tool stops the conversation after its output; the user is not asked again', async () => {
    userScript = inOrder(() => user, [textResponse('Get me a human.')]);
    policyScript = inOrder(() => policy, [modelResponse([functionCall('transfer_to_human_agents', { summary: 'wants a human' }, 't')]), textResponse('never asked')]);
    const r = await agent.post('/run', tau2Row);
    expect(r.status, r.text).toBe(200);
    expect(r.json.termination_reason).toBe('agent_stop');
    expect(r.json.user_simulation).toMatchObject({ end_tool: 'transfer_to_human_agents', user_turns: 1 });
    expect(policyCalls()).toHaveLength(1);
    expect(userCalls()).toHaveLength(1);
    expect(r.json.response.output.at(-1)).toMatchObject({ type: 'function_call_output', call_id: 'call_t', output: '"Transfer successful"' });
  });

  it('a policy turn that hits max_steps without answering ends the conversation (max_steps)', async () => {
    const limited = await buildAgent({ max_steps: 2 });
    userScript = inOrder(() => user, [textResponse('Look it up.')]);
    policyScript = inOrder(() => policy, [modelResponse([functionCall('lookup', { q: 'x' }, 'x')])]);
    const r = await limited.post('/run', tau2Row);
    expect(r.status, r.text).toBe(200);
    expect(r.json.termination_reason).toBe('max_steps');
    expect(policyCalls()).toHaveLength(2);
  });

  it('fields the verifier does not echo are added to its answer', async () => {
    echoVerify = false;
    userScript = inOrder(() => user, [textResponse('###STOP###')]);
    const r = await agent.post('/run', tau2Row);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ reward: 0.5, termination_reason: 'user_stop', user_simulation: expect.objectContaining({ user_turns: 1, policy_turns: 0 }) });
  });
});

describe('the user model failing', () => {
  it('an answer without text is NG_ERR_USER_MODEL_FAILED (502), never a reward', async () => {
    userScript = inOrder(() => user, [modelResponse([functionCall('lookup', { q: 'x' }, 'u')])]);
    const r = await agent.post('/run', tau2Row);
    expect(r.status).toBe(502);
    expect(r.json.code).toBe('NG_ERR_USER_MODEL_FAILED');
    expect(r.json.detail).toContain('user model server `user_model` answered without any text');
    expect(resources.context.state.verified).toHaveLength(0);
  });

  it('a rate limit keeps its 429 and says not to resend the rollout', async () => {
    userScript = () => ({ status: 429, headers: { 'retry-after': '0', 'x-nemo-gym-no-resend': '1' }, json: { error: { message: 'slow down' } } });
    const r = await agent.post('/run', tau2Row);
    expect(r.status).toBe(429);
    expect(r.headers['x-nemo-gym-no-resend']).toBe('1');
    expect(resources.context.state.verified).toHaveLength(0);
  });

  it('a policy model that hangs fails within policy_timeout_s (NG_ERR_MODEL_TIMEOUT)', async () => {
    const quick = await buildAgent({ policy_timeout_s: 0.3 });
    userScript = inOrder(() => user, [textResponse('Hello?')]);
    let release: () => void = () => undefined;
    policyScript = () => new Promise((resolve) => (release = () => resolve({ json: textResponse('late') })));
    const started = Date.now();
    const r = await quick.post('/run', tau2Row);
    release();
    expect(r.status).toBe(504);
    expect(r.json.code).toBe('NG_ERR_MODEL_TIMEOUT');
    expect(r.json.detail).toContain('model server `policy_model` gave no answer within 0.3 s');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('deadlines of the policy\'s tools', () => {
  it('a tool that hangs fails the rollout within tool_timeout_s (NG_ERR_TIMEOUT); the call is not resent', async () => {
    const quick = await buildAgent({ tool_timeout_s: 0.3 });
    userScript = inOrder(() => user, [textResponse('Go.')]);
    policyScript = inOrder(() => policy, [modelResponse([functionCall('slow', {}, 's')])]);
    const before = releaseSlow.length;
    const r = await quick.post('/run', tau2Row);
    expect(r.status).toBe(504);
    expect(r.json.code).toBe('NG_ERR_TIMEOUT');
    expect(r.json.detail).toContain('tool `slow` of resources server `desk` gave no answer within 0.3 s');
    expect(releaseSlow.length - before).toBe(1);
    expect(resources.context.state.verified).toHaveLength(0);
  });
});

describe('/v1/responses and the prompt', () => {
  it('runs the conversation with metadata.user_instructions; refuses without them', async () => {
    userScript = inOrder(() => user, [textResponse('Hi'), textResponse('###STOP###')]);
    policyScript = inOrder(() => policy, [textResponse('Hello!')]);
    const r = await agent.post('/v1/responses', { input: [{ role: 'assistant', content: 'Yes?' }], metadata: { user_instructions: 'Say hi.' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.output.map((o: Json) => o.role)).toEqual(['user', 'assistant', 'user']);
    // The policy never sees the user's instructions.
    expect(JSON.stringify(policyCalls()[0]!.body)).not.toContain('Say hi.');
    const refused = await agent.post('/v1/responses', { input: 'x' });
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe('NG_ERR_USER_INSTRUCTIONS');
  });

  it('a configured prompt and signals: placeholders filled once, instructions never re-read', async () => {
    expect(userSystemPrompt('Play: {instructions} End with {stop}.', 'literal {stop} here', { stop: '<END>', transfer: 'T', outOfScope: 'O' })).toBe('Play: literal {stop} here End with <END>.');
    expect(DEFAULT_USER_SYSTEM_PROMPT).toContain('{instructions}');
    const custom = await buildAgent({ user_system_prompt: 'You are a caller. {instructions}. Say {stop} when done.', stop_signals: ['<<BYE>>'] });
    userScript = inOrder(() => user, [textResponse('Fine, ###STOP### is not my signal.'), textResponse('ok <<BYE>>')]);
    policyScript = inOrder(() => policy, [textResponse('Sure.')]);
    const r = await custom.post('/run', tau2Row);
    expect(r.status, r.text).toBe(200);
    expect(r.json.user_simulation).toMatchObject({ stop_signal: '<<BYE>>', user_turns: 2 });
    expect(userCalls()[0]!.body.input[0].content).toBe(`You are a caller. ${tau2Row.user_instructions}. Say <<BYE>> when done.`);
  });

  it('the user\'s view leaves out system prompts, tool traffic, reasoning and empty texts', () => {
    expect(
      flippedConversation([
        { role: 'system', content: 'policy' },
        { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        { type: 'reasoning', id: 'r', summary: [] },
        functionCall('lookup', {}),
        { type: 'function_call_output', call_id: 'c', output: 'x' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello' }] },
      ]),
    ).toEqual([
      { role: 'assistant', content: 'hi' },
      { role: 'user', content: 'Hello' },
    ]);
  });
});

function textResponseItem(text: string): Json {
  return (textResponse(text).output as Json[])[0]!;
}
