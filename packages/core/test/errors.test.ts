/**
 * The error table: codes, templates and statuses; docs/errors.md documents exactly the codes of
 * the table; every code named anywhere in the sources is one of them; sources throw coded errors.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BadResultError, createError, describeError, errorMessage, HttpError, NgError, registerErrorCodes, ServerResponseError } from '@nemo-gym/core/errors';
import { errorDefinition, ERRORS, PoolClosedError, registeredErrors, ServerUnreachableError } from '../src/errors.js';
import { errorOwnerModules, renderErrorsDoc } from '../src/errors-doc.js';
import { ConversionError } from '@nemo-gym/core/openai';
import { statusError, transportError } from '../src/openai/upstream.js';
import { defineResourcesServer, ResourcesServerConfigSchema } from '@nemo-gym/core/server';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
// Every package's and server's own codes join the table when its src/errors.ts is loaded.
for (const rel of errorOwnerModules(ROOT)) await import(join(ROOT, rel));
const codes = registeredErrors().map((e) => e.code);

function sources(dir: string, out: string[] = []): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name === 'node_modules' || name === 'dist' || name === 'tests' || name === 'test' || name.startsWith('.')) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) sources(full, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

const GROUPS = ['packages', 'resources_servers', 'responses_api_models', 'responses_api_agents'];
const files = GROUPS.flatMap((g) => sources(join(ROOT, g)));

describe('error table', () => {
  it('fills templates in order and keeps the code, name and cause', () => {
    const Demo = createError('NG_ERR_BAD_RESULT', 'DemoError');
    const cause = new Error('root');
    const e = new Demo('a1', '[1]', { cause });
    expect(e).toBeInstanceOf(NgError);
    expect(e.code).toBe('NG_ERR_BAD_RESULT');
    expect(Demo.code).toBe('NG_ERR_BAD_RESULT');
    expect(e.name).toBe('DemoError');
    expect(e.message).toBe('agent `a1` answered /run with [1], not an object');
    expect(e.cause).toBe(cause);
    expect(describeError(new PoolClosedError())).toBe('PoolClosedError: the worker pool is closed');
    expect(new BadResultError('x', 'null').message).toBe(errorMessage('NG_ERR_BAD_RESULT', 'x', 'null'));
    const sr = new ServerResponseError('http://h/verify', 503, 'busy');
    expect([sr.code, sr.message]).toEqual(['NG_ERR_SERVER_RESPONSE', 'http://h/verify answered HTTP 503: busy']);
  });

  it('masks credentials of URLs in every error text when the error is made', () => {
    const url = 'http://u:S3CRET@h:1/v1?api_key=S3CRET&sig=S3CRET&mode=x';
    const shown = 'http://u:****@h:1/v1?api_key=****&sig=****&mode=x';
    const http = new HttpError(502, `the backend at ${url} failed`);
    expect([http.message, http.detail]).toEqual([`the backend at ${shown} failed`, `the backend at ${shown} failed`]);
    const sr = new ServerResponseError(url, 500, JSON.stringify({ detail: `at ${url}` }));
    expect(`${sr.message} ${sr.body} ${sr.url}`).not.toContain('S3CRET');
    expect(JSON.parse(sr.body)).toEqual({ detail: `at ${shown}` });
    expect(new ServerUnreachableError(url, 'ECONNREFUSED').url).toBe(shown);
    expect(describeError(new Error(`fetch ${url}`))).toBe(`Error: fetch ${shown}`);
    expect(describeError(`plain ${url}`)).toBe(`plain ${shown}`);
    const up = transportError(url, Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), undefined);
    expect(`${up.message} ${up.url} ${String(up.detail)}`).not.toContain('S3CRET');
    const st = statusError(url, 401, JSON.stringify({ error: { message: `bad token in /v1?token=S3CRET` } }));
    expect(`${st.message} ${st.upstreamBody} ${st.url}`).not.toContain('S3CRET');
  });

  it('a server answers an escaped error with the status of its table entry, others with 500', async () => {
    const server = defineResourcesServer({
      className: 'ErrorsTest',
      configSchema: ResourcesServerConfigSchema,
      tools: {
        convert: { body: z.object({}), handler: () => { throw new ConversionError('tools[0] is not a function tool'); } },
        closed: { body: z.object({}), handler: () => { throw new PoolClosedError(); } },
        teapot: { body: z.object({}), handler: () => { throw new HttpError(418, 'short'); } },
      },
      verify: { body: z.object({}).loose(), handler: () => ({ reward: 1 }) },
    });
    const app = await server.build({ config: { domain: 'other' } });
    try {
      const post = (url: string) => app.inject({ method: 'POST', url, payload: {} });
      const conv = await post('/convert');
      expect([conv.statusCode, conv.json()]).toEqual([400, { detail: 'tools[0] is not a function tool', code: 'NG_ERR_CONVERSION' }]);
      expect(ERRORS.NG_ERR_CONVERSION.status).toBe(400);
      const teapot = await post('/teapot');
      expect([teapot.statusCode, teapot.json()]).toEqual([418, { detail: 'short' }]);
      const stderr = process.stderr.write;
      process.stderr.write = () => true;
      try {
        const closed = await post('/closed');
        expect([closed.statusCode, closed.json()]).toEqual([500, { detail: 'PoolClosedError: the worker pool is closed', code: 'NG_ERR_POOL_CLOSED' }]);
      } finally {
        process.stderr.write = stderr;
      }
    } finally {
      await app.close();
    }
  });

  it('an error raised from another server\'s answer keeps the code the answer carried', () => {
    expect(new ServerResponseError('http://a/run', 502, '{"detail":"x","code":"NG_ERR_MODEL_TIMEOUT"}').code).toBe('NG_ERR_MODEL_TIMEOUT');
    expect(new ServerResponseError('http://a/run', 502, '{"detail":"x","code":"not a code"}').code).toBe('NG_ERR_SERVER_RESPONSE');
    expect(new ServerResponseError('http://a/run', 502, 'plain text').code).toBe('NG_ERR_SERVER_RESPONSE');
    expect(new PoolClosedError({ code: 'NG_ERR_TIMEOUT' }).code).toBe('NG_ERR_TIMEOUT');
  });

  it('docs/errors.md documents every code of the table and no other', () => {
    const page = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
    // The page is generated: `pnpm build && node scripts/errors-doc.mjs` after changing the table.
    expect(page).toBe(renderErrorsDoc());
    const documented = [...page.matchAll(/^### (NG_ERR_[A-Z0-9_]+)\s*$/gm)].map((m) => m[1]!);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual(codes);
    for (const code of codes) {
      const section = page.split(`### ${code}\n`)[1]!.split(/^#{2,3} /m)[0]!;
      expect(section, code).toMatch(/\*\*Meaning\.\*\* \S/);
      expect(section, code).toMatch(/\*\*Fix\.\*\* \S/);
    }
  });

  it('every NG_ERR_ code named in the sources is in the table', () => {
    const unknown: string[] = [];
    for (const f of files) {
      for (const m of readFileSync(f, 'utf8').matchAll(/NG_ERR_[A-Z0-9_]*/g)) {
        if (!errorDefinition(m[0]) && m[0] !== 'NG_ERR_') unknown.push(`${relative(ROOT, f)}: ${m[0]}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('the sources throw coded errors, not bare Error', () => {
    // Shapes that imitate other libraries' errors for code that reads them, and code that runs in
    // a browser or only in benchmarks.
    const allowed = new Set([
      'packages/core/src/client/dispatch.ts', // undici's AbortError shape
      'packages/core/src/openai/upstream.ts', // an undici-shaped ETIMEDOUT for the transport mapper
    ]);
    // The viewer's page script runs in the browser.
    const inBrowser = (rel: string) => rel.startsWith('packages/viewer/src/browser/');
    const bare: string[] = [];
    for (const f of files) {
      const rel = relative(ROOT, f);
      if (allowed.has(rel) || inBrowser(rel) || /(^|\/)(bench|fuzz)[^/]*\.ts$/.test(rel) || rel.startsWith('packages/bench/') || rel.includes('/scripts/') || rel.startsWith('packages/math-verify/')) continue;
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/new Error\(|class \w+ extends Error\b/g)) {
        if (rel === 'packages/core/src/errors.ts' && m[0].startsWith('class NgError')) continue;
        bare.push(`${rel}:${text.slice(0, m.index).split('\n').length}: ${m[0]}`);
      }
    }
    expect(bare).toEqual([]);
  });
  // Last: the code it registers stays in this process's table.
  it('a package registers its own codes: status, docs and classes without editing core; a code has one owner', async () => {
    const codes = registerErrorCodes('resources_servers/errors_test', {
      NG_ERR_ERRORS_TEST_TEAPOT: { message: 'the pot %s is a teapot', status: 418, meaning: 'A test code.', fix: 'None needed.' },
    });
    expect(codes.NG_ERR_ERRORS_TEST_TEAPOT).toBe('NG_ERR_ERRORS_TEST_TEAPOT');
    const Teapot = createError(codes.NG_ERR_ERRORS_TEST_TEAPOT, 'TeapotError');
    const e = new Teapot('p1');
    expect([e.code, e.message, e.httpStatus]).toEqual(['NG_ERR_ERRORS_TEST_TEAPOT', 'the pot p1 is a teapot', 418]);
    expect(errorDefinition('NG_ERR_ERRORS_TEST_TEAPOT')).toMatchObject({ owner: 'resources_servers/errors_test', doc: { meaning: 'A test code.' } });
    expect(renderErrorsDoc()).toContain('### NG_ERR_ERRORS_TEST_TEAPOT\n**Owner.** `resources_servers/errors_test`\n**Meaning.** A test code.\n**Fix.** None needed.\n');
    expect(() => registerErrorCodes('somebody_else', { NG_ERR_ERRORS_TEST_TEAPOT: { message: '%s', meaning: 'm', fix: 'f' } })).toThrow(/resources_servers\/errors_test owns already/);
    expect(() => registerErrorCodes('somebody_else', { NG_ERR_CONFIG: { message: '%s', meaning: 'm', fix: 'f' } })).toThrow(/core owns already/);
    expect(() => createError('NG_ERR_NOBODY_REGISTERED_THIS', 'Nope')).toThrow(/no owner registered/);
    // An escaped error of the package answers its status and {detail, code}.
    const server = defineResourcesServer({
      className: 'ErrorsTestOwner',
      configSchema: ResourcesServerConfigSchema,
      tools: { pot: { body: z.object({}), handler: () => { throw new Teapot('p2'); } } },
      verify: { body: z.object({}).loose(), handler: () => ({ reward: 1 }) },
    });
    const app = await server.build({ config: { domain: 'other' } });
    try {
      const r = await app.inject({ method: 'POST', url: '/pot', payload: {} });
      expect([r.statusCode, r.json()]).toEqual([418, { detail: 'the pot p2 is a teapot', code: 'NG_ERR_ERRORS_TEST_TEAPOT' }]);
    } finally {
      await app.close();
    }
  });
});
