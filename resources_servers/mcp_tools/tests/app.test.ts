/**
 * mcp_tools over real MCP servers from npm (the reference "everything" and "filesystem" servers),
 * started over stdio, the server answering over HTTP on 127.0.0.1.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { repoRoot } from '@nemo-gym/core/config';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema } from '@nemo-gym/core/server';
import { checkExampleData, globalConfigFor, startStubServer, startTestServer, textResponse, type TestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const PKG = join(repoRoot(), 'resources_servers', 'mcp_tools', 'node_modules', '@modelcontextprotocol');
const EVERYTHING = { command: process.execPath, args: [join(PKG, 'server-everything', 'dist', 'index.js'), 'stdio'] };
const filesystem = (dir: string) => ({ command: process.execPath, args: [join(PKG, 'server-filesystem', 'dist', 'index.js'), dir], cwd: dir });
const SUM_MODULE = 'resources_servers/mcp_tools/examples/sum_in_answer.mjs';
const base = { name: 'mcp_tools', domain: 'agent' };

/** Pids of live processes whose command line holds `marker` (the servers this test started). */
function pidsWith(marker: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker)) out.push(Number(p));
    } catch {
      // gone already
    }
  }
  return out;
}

const open: TestServer[] = [];
async function start(config: Record<string, unknown>, globalConfig?: Record<string, unknown>): Promise<TestServer> {
  const s = await startTestServer(server, { config: { ...base, ...config }, listen: true, ...(globalConfig ? { globalConfig } : {}) });
  open.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

const verifyRow = (text: string, fields: Record<string, unknown> = {}) => ({ responses_create_params: { input: [{ role: 'user', content: 'q' }] }, response: textResponse(text), ...fields });

/** A resources server of ours serving its one tool over MCP (Streamable HTTP, in this process). */
const Shout = defineResourcesServer({
  className: 'ShoutServer',
  configSchema: ResourcesServerConfigSchema,
  tools: { shout: { body: z.object({ text: z.string() }), handler: ({ text }, ctx) => ({ loud: text.toUpperCase(), session: ctx.sessionId }) } },
  verify: { body: BaseVerifyRequestSchema, handler: (body) => ({ ...body, reward: 1 }) },
});
const startShout = () => startTestServer(Shout, { config: { name: 'shout', domain: 'other', mcp: { enabled: true } }, listen: true });
/** One such server shared by the tests that only need some MCP server to talk to. */
let sharedShout: Promise<TestServer> | undefined;
const shout = () => (sharedShout ??= startShout().then((s) => (open.push(s), s)));

/** One everything server (echo and get-sum, as the example config offers) shared by several tests. */
let shared: Promise<TestServer> | undefined;
const everything = () => (shared ??= start({ mcp_servers: { everything: { ...EVERYTHING, include: ['echo', 'get-sum'] } }, verify: { type: 'module', path: SUM_MODULE } }));

describe('the everything server over stdio', () => {
  it('offers the included tools in the Responses function tool format, with the MCP input schemas', async () => {
    const s = await everything();
    const res = await fetch(`${s.url}/tools`);
    const { tools } = (await res.json()) as { tools: Record<string, any>[] };
    expect(tools.map((t) => t.name)).toEqual(['echo', 'get-sum']);
    expect(tools[1]).toMatchObject({
      type: 'function',
      strict: false,
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    });
    expect(tools[1]!.parameters.$schema).toBeUndefined();
    expect(typeof tools[1]!.description).toBe('string');

    // Tool calls reach the server in this rollout's session and its text comes back.
    const sess = s.session();
    await sess.post('/seed_session', {});
    expect((await sess.post('/echo', { message: 'hello MCP' })).json).toEqual({ output: 'Echo: hello MCP' });
    expect((await sess.post('/get-sum', { a: 2, b: 40 })).json).toEqual({ output: 'The sum of 2 and 40 is 42.' });
    // Bad arguments: the server's own validation error, as a tool error the model reads.
    const bad = await sess.post('/get-sum', { a: 'two' });
    expect(bad.status).toBe(200);
    expect(bad.json.error).toMatch(/a|b/);
    expect(bad.json.output).toBeUndefined();
    const unknown = await sess.post('/get-env', {});
    expect(unknown.status).toBe(404);
    expect(unknown.json.detail).toBe('Unknown tool `get-env`. The tools are: echo, get-sum.');

    // Verify: the module asks get-sum for the answer and looks for it in the final text.
    const good = await sess.post('/verify', verifyRow('It is 42.', { verify_arguments: { a: 2, b: 40 } }));
    expect([good.status, good.json.reward, good.json.expected_sum]).toEqual([200, 1, '42']);
    const wrong = await s.post('/verify', verifyRow('It is 41.', { verify_arguments: { a: 2, b: 40 } }));
    expect(wrong.json.reward).toBe(0);
  });

  it('long outputs are cut with a note, slow tools time out with a clear text, env values reach the server', async () => {
    const s = await start({
      mcp_servers: { everything: { ...EVERYTHING, env: { MCP_TEST_SETTING: 'visible-to-server' }, include: ['echo', 'get-env', 'trigger-long-running-operation'] } },
      verify: { type: 'module', path: SUM_MODULE },
      max_output_chars: 1000,
      tool_timeout_s: 0.5,
    });
    const sess = s.session();
    const long = await sess.post('/echo', { message: 'x'.repeat(2000) });
    expect(long.json.output).toBe(`Echo: ${'x'.repeat(994)}\n[output cut: 1006 more characters; the limit is 1000]`);
    const started = Date.now();
    const slow = await sess.post('/trigger-long-running-operation', { duration: 5, steps: 1 });
    expect(slow.status).toBe(504);
    expect(slow.json.error).toBe(
      'MCP tool `trigger-long-running-operation` on server `everything` did not answer within 0.5 s; the call was cancelled and the server process stopped; a later call starts it afresh, without the state of earlier calls.',
    );
    expect(Date.now() - started).toBeLessThan(3000);
    // A timeout is the model's problem, not the server's: the session goes on, on a fresh process.
    expect((await sess.post('/echo', { message: 'still here' })).json.output).toBe('Echo: still here');
    const env = await s.session().post('/get-env', {});
    expect(env.json.output).toContain('visible-to-server');
  });

  it('a server that cannot start is a config error naming it, with its stderr and no secret; so are tools that are not there', async () => {
    const secret = 'canary-secret-value-1234';
    const failing = {
      command: process.execPath,
      args: ['-e', 'console.error("boom, token is " + process.env.SERVICE_TOKEN); process.exit(3)'],
      env: { SERVICE_TOKEN: secret },
    };
    const err = await start({ mcp_servers: { broken: failing }, verify: { type: 'module', path: SUM_MODULE } }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/could not start MCP server `broken`.*boom, token is \*\*\*\*.*Check mcp_servers\.broken/s);
    expect(err?.message).not.toContain(secret);
    const remote = await shout();
    const badInclude = await start({ mcp_servers: { remote: { url: `${remote.url}/mcp`, include: ['nope'] } }, verify: { type: 'module', path: SUM_MODULE } }).catch((e: Error) => e);
    expect(String(badInclude)).toMatch(/include names `nope`, which that server does not offer; it offers: shout/);
    const badVerify = await start({ mcp_servers: { remote: { url: `${remote.url}/mcp` } }, verify: { type: 'mcp_tool', server: 'remote', tool: 'whisper' } }).catch((e: Error) => e);
    expect(String(badVerify)).toMatch(/verify\.tool `whisper` is not offered by MCP server `remote`; it offers: shout/);
  });
});

describe('the filesystem server: per-rollout processes, verify from a tool result, a lost server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ng-mcp-fs-'));
  const config = {
    close_grace_s: 0.1,
    mcp_servers: { files: { ...filesystem(dir), include: ['write_file', 'read_text_file'] } },
    verify: { type: 'mcp_tool', server: 'files', tool: 'read_text_file', result: 'equals' },
  };

  let fsShared: Promise<TestServer> | undefined;
  const files = () => (fsShared ??= start(config));

  it('what the model wrote is what verify reads back; each rollout has its own process, closed at verify', async () => {
    const s = await files();
    const a = s.session();
    const b = s.session();
    await a.post('/seed_session', {});
    await b.post('/seed_session', {});
    expect((await a.post('/write_file', { path: 'a.txt', content: 'alpha' })).json.output).toMatch(/Successfully wrote to a\.txt/);
    expect((await b.post('/write_file', { path: 'b.txt', content: 'beta' })).json.output).toMatch(/Successfully wrote/);
    expect(pidsWith(dir)).toHaveLength(2);
    const va = await a.post('/verify', verifyRow('done', { verify_arguments: { path: 'a.txt' }, expected_output: 'alpha' }));
    expect([va.status, va.json.reward, va.json.verify_tool_output]).toEqual([200, 1, 'alpha']);
    const vb = await b.post('/verify', verifyRow('done', { verify_arguments: { path: 'b.txt' }, expected_output: 'gamma' }));
    expect([vb.status, vb.json.reward]).toEqual([200, 0]);
    expect(pidsWith(dir)).toHaveLength(0);
    // The file the model never wrote: the read fails, which scores 0 (not a failure).
    const c = await s.post('/verify', verifyRow('done', { verify_arguments: { path: 'never.txt' }, expected_output: 'x' }));
    expect([c.status, c.json.reward]).toEqual([200, 0]);
  });

  it('a server killed mid-rollout: the model is told, verify answers 502 (not a reward), the next rollout works', async () => {
    const s = await files();
    const crashed = s.session();
    await crashed.post('/write_file', { path: 'c.txt', content: 'gamma' });
    const [pid] = pidsWith(dir);
    process.kill(pid!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    const after = await crashed.post('/read_text_file', { path: 'c.txt' });
    expect(after.status).toBe(502);
    expect(after.json.error).toMatch(/^MCP server `files` \(`.*`, pid \d+\) (closed the connection|failed \(.*\)) during this rollout.*This rollout cannot be scored\.$/s);
    const v = await crashed.post('/verify', verifyRow('done', { verify_arguments: { path: 'c.txt' }, expected_output: 'gamma' }));
    expect(v.status).toBe(502);
    expect(v.json.detail).toMatch(/during this rollout.*not scored/s);
    // The next rollout starts a fresh process and scores normally.
    const next = s.session();
    await next.post('/write_file', { path: 'd.txt', content: 'delta' });
    const ok = await next.post('/verify', verifyRow('done', { verify_arguments: { path: 'd.txt' }, expected_output: 'delta' }));
    expect([ok.status, ok.json.reward]).toEqual([200, 1]);
  });

  it('an idle rollout session is closed with its process; a late call is told why', async () => {
    const s = await start({ ...config, session_idle_ttl_s: 0.3 });
    const sess = s.session();
    await sess.post('/write_file', { path: 'e.txt', content: 'e' });
    expect(pidsWith(dir)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 400));
    const late = await sess.post('/read_text_file', { path: 'e.txt' });
    expect(late.status).toBe(410);
    expect(late.json.detail).toMatch(/idle longer than session_idle_ttl_s \(0\.3 s\)/);
    for (let i = 0; i < 50 && pidsWith(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(pidsWith(dir)).toHaveLength(0);
  });
});

describe('a Streamable HTTP MCP server (a resources server of ours with mcp enabled)', () => {
  it('tools and verify over HTTP, one MCP session per rollout; the endpoint going away fails the rollout', async () => {
    const remote = await startShout();
    let remoteOpen = true;
    try {
      const s = await start({
        mcp_servers: { remote: { url: `${remote.url}/mcp`, prefix: 'remote_' } },
        verify: { type: 'mcp_tool', server: 'remote', tool: 'shout', result: 'contains' },
      });
      expect(((await (await fetch(`${s.url}/tools`)).json()) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['remote_shout']);
      const a = s.session();
      const b = s.session();
      const first = JSON.parse((await a.post('/remote_shout', { text: 'hi' })).json.output);
      const again = JSON.parse((await a.post('/remote_shout', { text: 'there' })).json.output);
      const other = JSON.parse((await b.post('/remote_shout', { text: 'x' })).json.output);
      expect([first.loud, again.loud]).toEqual(['HI', 'THERE']);
      // One MCP session, hence one session of the remote server, per rollout.
      expect(again.session).toBe(first.session);
      expect(other.session).not.toBe(first.session);
      const v = await a.post('/verify', verifyRow('done', { verify_arguments: { text: 'abc' }, expected_output: 'ABC' }));
      expect([v.status, v.json.reward]).toEqual([200, 1]);

      await remote.close();
      remoteOpen = false;
      const lost = await b.post('/remote_shout', { text: 'y' });
      expect(lost.status).toBe(502);
      expect(lost.json.error).toMatch(/^MCP server `remote` \(http:\/\/127\.0\.0\.1:\d+\/mcp\) failed \(.*\) during this rollout/);
      const failed = await b.post('/verify', verifyRow('done', { verify_arguments: { text: 'y' }, expected_output: 'Y' }));
      expect(failed.status).toBe(502);
    } finally {
      if (remoteOpen) await remote.close();
    }
  });
});

describe('verify by an LLM judge', () => {
  it('asks the judge model server with the question, reference and answer, and reads its verdict', async () => {
    const judge = await startStubServer({
      '/v1/responses': (req) => {
        const prompt = req.body.input[0].content as string;
        return { json: textResponse(prompt.includes('Candidate answer:\nParis') ? 'Same city. [[YES]]' : '[[NO]]') };
      },
    });
    try {
      const globalConfig = globalConfigFor({ judge: { kind: 'responses_api_models', impl: 'stub', port: judge.port } });
      const s = await start(
        { mcp_servers: { remote: { url: `${(await shout()).url}/mcp` } }, verify: { type: 'judge', model_server: { type: 'responses_api_models', name: 'judge' } } },
        globalConfig,
      );
      const row = (text: string) => ({ responses_create_params: { input: [{ role: 'user', content: 'Capital of France?' }] }, response: textResponse(text), expected_output: 'Paris' });
      const yes = await s.post('/verify', row('Paris'));
      expect([yes.json.reward, yes.json.judge_output]).toEqual([1, 'Same city. [[YES]]']);
      expect(judge.requests[0]!.body.input[0].content).toContain('Question:\nCapital of France?\n\nReference answer:\nParis');
      expect((await s.post('/verify', row('Lyon'))).json.reward).toBe(0);
    } finally {
      await judge.close();
    }
  });

  it('a judge that errs or answers without a label is a judge failure (NG_ERR_JUDGE_FAILED), not reward 0, unless unparseable_verdict_is_wrong', async () => {
    const judge = await startStubServer({
      '/v1/responses': (req) => {
        const prompt = req.body.input[0].content as string;
        if (prompt.includes('Candidate answer:\nerr')) return { status: 500, json: { detail: 'judge down' } };
        return { json: textResponse('Hard to say.') };
      },
    });
    try {
      const globalConfig = { ...globalConfigFor({ judge: { kind: 'responses_api_models', impl: 'stub', port: judge.port } }), http_retry_max_attempts: 1 };
      const verify = (extra: Record<string, unknown> = {}) => ({ type: 'judge', model_server: { type: 'responses_api_models', name: 'judge' }, ...extra });
      const strict = await start({ mcp_servers: { remote: { url: `${(await shout()).url}/mcp` } }, verify: verify() }, globalConfig);
      const anchor = await start({ mcp_servers: { remote: { url: `${(await shout()).url}/mcp` } }, verify: verify({ unparseable_verdict_is_wrong: true }) }, globalConfig);
      const row = (text: string) => ({ responses_create_params: { input: [{ role: 'user', content: 'Capital of France?' }] }, response: textResponse(text), expected_output: 'Paris' });
      for (const text of ['err', 'Lyon']) {
        const r = await strict.post('/verify', row(text));
        expect([r.status, r.json.code, r.json.reward]).toEqual([502, 'NG_ERR_JUDGE_FAILED', undefined]);
      }
      expect((await anchor.post('/verify', row('Lyon'))).json.reward).toBe(0);
      expect((await anchor.post('/verify', row('err'))).json.code).toBe('NG_ERR_JUDGE_FAILED');
    } finally {
      await judge.close();
    }
  });
});

describe('example data', () => {
  it('passes the example-data checks; the rows offer exactly the tools the server lists', async () => {
    const rows = checkExampleData(new URL('..', import.meta.url));
    const s = await everything();
    const { tools } = (await (await fetch(`${s.url}/tools`)).json()) as { tools: unknown[] };
    for (const row of rows) expect(row.responses_create_params.tools).toEqual(tools);
    // Every row is scored end to end in tests/mcp.test.ts; here one, with a decimal sum.
    const row = rows.find((r) => !Number.isInteger((r.verify_arguments as { a: number }).a))!;
    const v = await s.post('/verify', verifyRow('That makes 6.75 in total.', row));
    expect([v.json.reward, v.json.expected_sum]).toEqual([1, '6.75']);
  });
});
