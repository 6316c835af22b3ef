/**
 * The head server's deployment token: POST /stop and /server_instances/(de)register answer 401
 * NG_ERR_HEAD_TOKEN without it or with a wrong one (and change nothing), the right one works, the
 * token never appears in an answer or in the served config; the token file of a run is private.
 */
import { statSync } from 'node:fs';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { findOpenPort } from '@nemo-gym/core/config';
import { ConfigError } from '@nemo-gym/core/errors';
import { ERRORS } from '../src/errors.js';
import { configuredHeadToken, headTokenHeaders, removeHeadTokenFile, startHeadServer, writeHeadTokenFile } from '@nemo-gym/core/server';
import { headTokenFile, readHeadTokenFile, tokensMatch } from '../src/server/head-token.js';

const TOKEN = 'tok-0123456789abcdef-right';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function head(onStop?: (why: string) => void) {
  const port = await findOpenPort([]);
  const config = { head_server: { host: '127.0.0.1', port, token: TOKEN }, policy_api_key: 'sk-secret-value' };
  const app = await startHeadServer(config, '127.0.0.1', port, { token: TOKEN, onStop });
  closers.push(() => app.close());
  return `http://127.0.0.1:${port}`;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: JSON.parse(text) as Record<string, unknown> };
}

const instance = { name: 'env', server_type: 'resources_servers', impl: 'x', url: 'http://127.0.0.3:9001', pid: 1 };
const listed = async (base: string) => (await (await request(`${base}/server_instances`)).body.json()) as { url: string }[];

describe('head server token', () => {
  it('refuses /stop without the token or with a wrong one, with NG_ERR_HEAD_TOKEN and a fix; stops with the right one', async () => {
    const stops: string[] = [];
    const base = await head((why) => stops.push(why));
    const none = await post(`${base}/stop`, {});
    expect(none.status).toBe(401);
    expect(ERRORS.NG_ERR_HEAD_TOKEN.status).toBe(401);
    expect(none.json.code).toBe('NG_ERR_HEAD_TOKEN');
    expect(none.json.detail).toMatch(/needs the deployment token.*carried none/);
    expect(none.json.detail).toMatch(/head_server.*token.*env\.yaml/);
    // Same length, one character off; a prefix; another scheme: all refused.
    for (const headers of [headTokenHeaders(`${TOKEN.slice(0, -1)}X`), headTokenHeaders(TOKEN.slice(0, 8)), { authorization: `Basic ${TOKEN}` }]) {
      const wrong = await post(`${base}/stop`, {}, headers);
      expect(wrong.status).toBe(401);
      expect(wrong.text).not.toContain(TOKEN);
      expect(wrong.text).not.toContain(TOKEN.slice(0, 8));
    }
    expect((await request(`${base}/`)).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    expect(stops).toEqual([]);
    const ok = await post(`${base}/stop`, {}, headTokenHeaders(TOKEN));
    expect(ok.status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    expect(stops).toHaveLength(1);
  });

  it('refuses to register or deregister without the right token, and lists nothing it refused', async () => {
    const base = await head();
    expect((await post(`${base}/server_instances/register`, { instances: [instance] })).status).toBe(401);
    expect((await post(`${base}/server_instances/register`, { instances: [instance] }, headTokenHeaders('not-the-token-0123456789'))).status).toBe(401);
    expect(await listed(base)).toEqual([]);
    expect((await post(`${base}/server_instances/register`, { instances: [instance] }, headTokenHeaders(TOKEN))).json).toEqual({ registered: 1 });
    expect((await listed(base)).map((i) => i.url)).toEqual([instance.url]);
    expect((await post(`${base}/server_instances/deregister`, { urls: [instance.url] })).status).toBe(401);
    expect((await listed(base)).map((i) => i.url)).toEqual([instance.url]);
    expect((await post(`${base}/server_instances/deregister`, { urls: [instance.url] }, headTokenHeaders(TOKEN))).json).toEqual({ deregistered: 1 });
  });

  it('never serves the token in the config; a head server given no token refuses every caller', async () => {
    const base = await head();
    const yamlText = JSON.parse(await (await request(`${base}/global_config_dict_yaml`)).body.text()) as string;
    expect(yamlText).not.toContain(TOKEN);
    expect((parseYaml(yamlText) as { head_server: { token: string } }).head_server.token).toBe('****');

    const port = await findOpenPort([]);
    const app = await startHeadServer({}, '127.0.0.1', port, { onStop: () => undefined });
    closers.push(() => app.close());
    expect((await post(`http://127.0.0.1:${port}/stop`, {}, headTokenHeaders(TOKEN))).status).toBe(401);
  });

  it('compares tokens by value; takes the config before the environment; refuses a short one', () => {
    expect(tokensMatch(TOKEN, `${TOKEN}`)).toBe(true);
    expect(tokensMatch(TOKEN, `${TOKEN}x`)).toBe(false);
    expect(tokensMatch('', TOKEN)).toBe(false);
    expect(configuredHeadToken({ head_server: { token: TOKEN } }, { NEMO_GYM_HEAD_TOKEN: 'from-the-environment-1234' })).toBe(TOKEN);
    expect(configuredHeadToken({ head_server: { token: '****' } }, { NEMO_GYM_HEAD_TOKEN: 'from-the-environment-1234' })).toBe('from-the-environment-1234');
    expect(configuredHeadToken({}, {})).toBeNull();
    expect(() => configuredHeadToken({ head_server: { token: 'short' } }, {})).toThrow(ConfigError);
    expect(() => configuredHeadToken({ head_server: { token: 'short' } }, {})).toThrow(/at least 16/);
  });

  it('keeps the token file of a run private to its user and removes only its own', () => {
    const port = 40_000 + Math.floor(Math.random() * 20_000);
    const file = writeHeadTokenFile('127.0.0.9', port, TOKEN);
    expect(file).toBe(headTokenFile('127.0.0.9', port));
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    expect(readHeadTokenFile('127.0.0.9', port)).toBe(TOKEN);
    removeHeadTokenFile('127.0.0.9', port, 'another-run-token-0123');
    expect(readHeadTokenFile('127.0.0.9', port)).toBe(TOKEN);
    removeHeadTokenFile('127.0.0.9', port, TOKEN);
    expect(readHeadTokenFile('127.0.0.9', port)).toBeNull();
  });
});
