import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server, testHooks } from '../app.js';
import { serve, type LocalServer } from './local.js';

const page = (name: string) => readFileSync(new URL(`./fixtures/pages/${name}`, import.meta.url));
const API_KEY = 'browse-test-key-91d2';
type App = Awaited<ReturnType<typeof server.build>>;

/** A long article: numbered sentences, so the cut's head and tail can be checked exactly. */
const HUGE_SENTENCES = Array.from({ length: 2400 }, (_, i) => `Sentence ${i} of the long report has seven words.`);
const HUGE = `<!DOCTYPE html><html><head><title>Long report</title></head><body><nav><a>Home</a> <a>Reports</a></nav><article><h1>Long report</h1>${HUGE_SENTENCES.map((s) => `<p>${s}</p>`).join('\n')}</article><footer>Footer text</footer></body></html>`;

let pages: LocalServer;
beforeAll(async () => {
  pages = await serve((_req, res, url) => {
    const html = (body: string | Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
      res.end(body);
    };
    switch (url.pathname) {
      case '/article':
        return html(page('news_article.html'), { 'set-cookie': 'tracker=abc123; Path=/' });
      case '/article.gz':
        return html(gzipSync(page('news_article.html')), { 'content-encoding': 'gzip' });
      case '/huge':
        return html(HUGE);
      case '/report.pdf':
        res.writeHead(200, { 'content-type': 'application/pdf' });
        return void res.end(Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 7)]));
      case '/notes.txt':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end('Lab notes\r\nThe seal was replaced on day 3.\r\n');
      case '/cp1251':
        return html(page('cp1251_article.html'), { 'content-type': 'text/html; charset=windows-1251' });
      case '/shift_jis':
        return html(page('shift_jis_article.html'), { 'content-type': 'text/html' });
      case '/empty':
        return html('<html><head><title>t</title><script>var x = 1;</script></head><body><script>render()</script></body></html>');
      case '/tiny':
        return html('<p>x</p>');
      case '/missing':
        res.writeHead(404, { 'content-type': 'text/html' });
        return void res.end('<html><body><p>Not found, sorry about that, try the home page.</p></body></html>');
      case '/hang':
        return; // never answers
      case '/headers':
        return html('<html><body><article><p>The request headers were recorded by the test server for inspection.</p></article></body></html>');
      default:
        break;
    }
    const hop = /^\/r(\d+)$/.exec(url.pathname);
    if (hop) {
      const n = Number(hop[1]);
      res.writeHead(n === 1 ? 301 : n === 2 ? 302 : 307, { location: n === 3 ? '/article' : `/r${n + 1}` });
      return void res.end();
    }
    if (url.pathname === '/to') {
      res.writeHead(302, { location: url.searchParams.get('u') ?? '/' });
      return void res.end();
    }
    res.writeHead(404);
    res.end();
  });
});
afterAll(async () => {
  await pages.close();
  delete testHooks.resolver;
});

async function build(extra: Record<string, unknown>): Promise<App> {
  return server.build({ config: { name: 'google_search', domain: 'agent', google_api_key: API_KEY, google_cx: 'cx', ...extra } });
}

async function browse(app: App, url: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/browse', payload: { url } });
  expect(res.statusCode).toBe(200);
  const body = res.json() as { page_content: string };
  expect(Object.keys(body)).toEqual(['page_content']);
  return body.page_content;
}

describe('browse: fetching and extraction (local pages, loopback allow-listed)', () => {
  let app: App;
  beforeAll(async () => {
    app = await build({ browse_allowed_networks: ['127.0.0.1'], browse_timeout_s: 0.5, browse_max_redirects: 3 });
  });
  afterAll(async () => {
    await app.close();
  });

  it('an article keeps its text and drops navigation, ads, sidebar and footer', async () => {
    const text = await browse(app, `${pages.origin}/article`);
    expect(text).toContain('have now generated electricity through ten consecutive winters');
    expect(text).toContain('Most of the early failures were traced to the shaft seals');
    expect(text).toContain('- Forecast error below two percent');
    for (const junk of ['We use cookies', 'Subscribe now', 'Why offshore wind auctions stalled', 'All rights reserved', 'Privacy policy']) expect(text).not.toContain(junk);
    expect(text.split('\n').length).toBeGreaterThan(8); // one line per block
  });

  it('gzip bodies are decompressed', async () => {
    expect(await browse(app, `${pages.origin}/article.gz`)).toContain('Copper-free antifouling coatings');
  });

  it("a page of more than 10,000 words keeps its first and last 5,000 characters around '...'", async () => {
    const text = await browse(app, `${pages.origin}/huge`);
    const full = HUGE_SENTENCES.join('\n');
    expect(full.split(/\s+/).length).toBeGreaterThan(10_000);
    expect(text.length).toBe(10_003);
    expect(text.slice(5000, 5003)).toBe('...');
    expect(text.startsWith('Sentence 0 of the long report')).toBe(true);
    expect(text.endsWith('Sentence 2399 of the long report has seven words.')).toBe(true);
    expect(text).toBe(`${full.slice(0, 5000)}...${full.slice(-5000)}`);
  });

  it('a page over the size cap is "No HTML found"', async () => {
    const small = await build({ browse_allowed_networks: ['127.0.0.1'], browse_max_bytes: 50_000 });
    try {
      expect(HUGE.length).toBeGreaterThan(50_000);
      expect(await browse(small, `${pages.origin}/huge`)).toBe('No HTML found');
      expect(await browse(small, `${pages.origin}/article`)).toContain('ten consecutive winters');
    } finally {
      await small.close();
    }
  });

  it('non-HTML files, errors, tiny bodies and silent servers are "No HTML found"', async () => {
    expect(await browse(app, `${pages.origin}/report.pdf`)).toBe('No HTML found');
    expect(await browse(app, `${pages.origin}/missing`)).toBe('No HTML found');
    expect(await browse(app, `${pages.origin}/tiny`)).toBe('No HTML found');
    expect(await browse(app, 'not a url')).toBe('No HTML found');
    const t0 = Date.now();
    expect(await browse(app, `${pages.origin}/hang`)).toBe('No HTML found');
    expect(Date.now() - t0).toBeLessThan(15_000); // the server never answers
  });

  it('plain text is returned as text', async () => {
    expect(await browse(app, `${pages.origin}/notes.txt`)).toBe('Lab notes\nThe seal was replaced on day 3.');
  });

  it('a page with no text is "No text found" (upstream raised on None here)', async () => {
    expect(await browse(app, `${pages.origin}/empty`)).toBe('No text found');
  });

  it('follows a redirect chain up to the limit, and no further', async () => {
    expect(await browse(app, `${pages.origin}/r1`)).toContain('ten consecutive winters');
    const strict = await build({ browse_allowed_networks: ['127.0.0.1'] }); // upstream's limit: 2
    try {
      expect(await browse(strict, `${pages.origin}/r2`)).toContain('ten consecutive winters');
      expect(await browse(strict, `${pages.origin}/r1`)).toBe('No HTML found');
    } finally {
      await strict.close();
    }
  });

  it('decodes a windows-1251 page (header charset) and a Shift_JIS page (meta charset)', async () => {
    const ru = await browse(app, `${pages.origin}/cp1251`);
    expect(ru).toContain('Двухлопастные приливные турбины у Оркнейских островов');
    expect(ru).not.toContain('Главная');
    const ja = await browse(app, `${pages.origin}/shift_jis`);
    expect(ja).toContain('ベリー位相は２πを法としてゲージ不変であり');
  });

  it('sends no cookie, credential or API key to pages', async () => {
    await browse(app, `${pages.origin}/article`); // sets a cookie
    await browse(app, `${pages.origin}/headers`);
    const sent = pages.seen.at(-1)!;
    expect(sent.url).toBe('/headers');
    expect(sent.headers.cookie).toBeUndefined();
    expect(sent.headers.authorization).toBeUndefined();
    for (const r of pages.seen) expect(JSON.stringify(r)).not.toContain(API_KEY);
  });
});

describe('browse: address guard', () => {
  const names: Record<string, string[]> = {
    'pages.test': ['127.0.0.1'],
    'loop.test': ['127.0.0.2'],
    'intranet.test': ['10.20.30.40'],
    'metadata.test': ['169.254.169.254'],
    'cgnat.test': ['100.64.1.1'],
    'ula.test': ['fd12:3456::1'],
    'mixed.test': ['93.184.216.34', '10.0.0.7'],
  };
  let lookups: string[];
  let app: App;
  beforeAll(async () => {
    lookups = [];
    testHooks.resolver = async (host) => {
      lookups.push(host);
      const found = names[host];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    app = await build({});
  });
  afterAll(async () => {
    await app.close();
  });

  const refused = (url: string, why: RegExp) => async () => {
    const before = pages.seen.length;
    const out = await browse(app, url);
    expect(out).toMatch(/^Error: Unexpected error = refused to fetch /);
    expect(out).toMatch(why);
    expect(pages.seen.length).toBe(before); // nothing reached a server
  };

  it('loopback by address', async () => {
    await refused(`${pages.origin}/article`, /127\.0\.0\.1 is a loopback address/)();
    await refused(`http://[::1]:${pages.port}/article`, /::1 is a loopback address/)();
    await refused(`http://2130706433:${pages.port}/article`, /127\.0\.0\.1 is a loopback address/)();
    await refused(`http://[::ffff:127.0.0.1]:${pages.port}/article`, /IPv4-mapped IPv6 \(127\.0\.0\.1\)/)();
  });
  it('private 10/8, CGNAT, IPv6 ULA and link-local', async () => {
    await refused('http://10.0.0.1/', /10\.0\.0\.1 is a private address/)();
    await refused('http://100.64.0.1/', /carrier-grade NAT/)();
    await refused('http://[fd00::1]/', /unique-local/)();
    await refused('http://[fe80::1]/', /link-local/)();
  });
  it('the cloud metadata address', refused('http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a cloud metadata address/));
  it('host names resolving to them (checked after resolution)', async () => {
    await refused(`http://loop.test:${pages.port}/article`, /loop\.test resolves to 127\.0\.0\.2, a loopback address/)();
    await refused('http://intranet.test/', /intranet\.test resolves to 10\.20\.30\.40, a private address/)();
    await refused('http://metadata.test/latest/', /cloud metadata/)();
    await refused('https://cgnat.test/', /carrier-grade NAT/)();
    await refused('http://ula.test/', /unique-local/)();
    await refused('http://mixed.test/', /mixed\.test resolves to 10\.0\.0\.7/)();
  });
  it('schemes other than http(s) and URLs with credentials', async () => {
    for (const u of ['file:///etc/passwd', 'ftp://example.org/x', 'gopher://example.org/', 'data:text/html,<p>hi</p>', 'javascript:alert(1)']) {
      expect(await browse(app, u)).toMatch(/^Error: Unexpected error = refused to fetch .*: only http and https URLs can be browsed/);
    }
    expect(await browse(app, `http://user:pw@pages.test:${pages.port}/article`)).toMatch(/with credentials/);
  });

  it('a redirect into a refused address is refused at that hop', async () => {
    const allowLoop = await build({ browse_allowed_networks: ['127.0.0.1/32'] });
    try {
      for (const [target, why] of [
        ['http://10.0.0.1/admin', /10\.0\.0\.1 is a private address/],
        ['http://169.254.169.254/latest/meta-data/iam/', /cloud metadata/],
        [`http://loop.test:${pages.port}/article`, /resolves to 127\.0\.0\.2/],
        [`http://[::1]:${pages.port}/article`, /loopback/],
        ['file:///etc/passwd', /only http and https/],
      ] as const) {
        const before = pages.seen.length;
        const out = await browse(allowLoop, `${pages.origin}/to?u=${encodeURIComponent(target)}`);
        expect(out, target).toMatch(why);
        expect(pages.seen.length).toBe(before + 1); // only the redirecting page was fetched
      }
    } finally {
      await allowLoop.close();
    }
  });

  it('allow-listed networks are reached, through the checked address of a name', async () => {
    const allowLoop = await build({ browse_allowed_networks: ['127.0.0.0/8', '::1'] });
    try {
      lookups.length = 0;
      expect(await browse(allowLoop, `http://pages.test:${pages.port}/article`)).toContain('ten consecutive winters');
      expect(lookups).toEqual(['pages.test']); // one resolution: the address checked is the one connected to
      expect(pages.seen.at(-1)!.headers.host).toBe(`pages.test:${pages.port}`);
      expect(await browse(allowLoop, `${pages.origin}/article`)).toContain('ten consecutive winters');
      // Past the guard; the page server listens on IPv4 only, so the connection itself fails.
      expect(await browse(allowLoop, `http://[::1]:${pages.port}/article`)).toBe('No HTML found');
      // Still refused: what the allow-list does not name.
      expect(await browse(allowLoop, 'http://10.0.0.1/')).toMatch(/private address/);
    } finally {
      await allowLoop.close();
    }
  });
});
