/**
 * google_search: multiple-choice questions answered with web tools. `search` queries Google's
 * Custom Search JSON API (or a self-hosted SearXNG), `browse` fetches a page and returns its main
 * text, and `verify` compares the `\boxed{}` option with the expected letter, parsed exactly as
 * the reference implementation does (on the Python repr of the message content).
 *
 * `browse` fetches URLs the model chooses, so it only reaches public addresses unless
 * `browse_allowed_networks` opens more (see netguard.ts in @nemo-gym/core/client).
 */
import { z } from 'zod';
import { TimeoutError } from '@nemo-gym/core/errors';
import { pyFloatFromStr } from '@nemo-gym/core/py';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema, startIfMain } from '@nemo-gym/core/server';
import { WorkerPool } from '@nemo-gym/core/workers';
import { AddressGuard, parseAllowList, type Resolver } from '@nemo-gym/core/client';
import { PageFetcher } from './src/page.js';
import { SearchClient } from './src/search.js';
import { grade } from './src/verify.js';
import type { ExtractInput } from './src/extract.js';

export const DEFAULT_GOOGLE_SEARCH_URL = 'https://www.googleapis.com/customsearch/v1';

export const GoogleSearchConfigSchema = ResourcesServerConfigSchema.extend({
  /** Which service answers `search`: Google's Custom Search JSON API or a SearXNG instance. */
  search_backend: z.enum(['google', 'searxng']).default('google'),
  /** Custom Search API key and engine id (required for the google backend; put them in env.yaml). */
  google_api_key: z.string().optional(),
  google_cx: z.string().optional(),
  /** The Custom Search endpoint (a different one only for tests or a proxy). */
  google_search_url: z.url().default(DEFAULT_GOOGLE_SEARCH_URL),
  /** Base URL of a SearXNG instance with the JSON format enabled, e.g. http://127.0.0.1:8888 */
  searxng_url: z.url().optional(),
  /** Extra query parameters for SearXNG (e.g. {categories: general, language: en}). */
  searxng_params: z.record(z.string(), z.string()).default({}),
  /** Connect, response and idle-body limit of one search call, in seconds (the reference's 10). */
  search_timeout_s: z.number().positive().default(10),
  /** Limit for a whole search call, in seconds. */
  search_total_timeout_s: z.number().positive().default(30),
  /** Connect, response and idle-body limit of a page fetch in seconds; the whole fetch gets 3x. */
  browse_timeout_s: z.number().positive().default(30),
  browse_max_redirects: z.number().int().min(0).default(2),
  /** Largest page accepted, in bytes (after decompression too). */
  browse_max_bytes: z.number().int().positive().default(20_000_000),
  /** Smallest page accepted, in bytes. */
  browse_min_bytes: z.number().int().min(0).default(10),
  browse_user_agent: z.string().default('Mozilla/5.0 (compatible; nemo-gym-browse/0.1)'),
  /**
   * Networks `browse` may reach although they are not public (CIDR or single addresses), e.g.
   * ["10.20.0.0/16"] for an intranet or ["127.0.0.1"] for local test pages. Empty by default.
   */
  browse_allowed_networks: z.array(z.string()).default([]),
  /** Worker threads that extract page text. */
  num_workers: z.number().int().positive().default(2),
  /** Time limit for extracting one page's text, in seconds. */
  extract_timeout_s: z.number().positive().default(30),
}).superRefine((cfg, ctx) => {
  const where = (key: string) => `${cfg.name}.resources_servers.google_search.${key}`;
  if (cfg.search_backend === 'google') {
    for (const key of ['google_api_key', 'google_cx'] as const) {
      const value = cfg[key];
      // `???` is the placeholder of a value that must be overridden.
      if (value === undefined || value.trim() === '' || value === '???') {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message:
            `missing: the google search backend needs ${key}. Put it in env.yaml at the repo root as ` +
            `\`${where(key)}: ...\`, or run without Google with \`search_backend: searxng\` and \`searxng_url\``,
        });
      }
    }
  } else if (cfg.searxng_url === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['searxng_url'],
      message: `missing: search_backend is searxng, so searxng_url is needed (e.g. \`${where('searxng_url')}: http://127.0.0.1:8888\`)`,
    });
  }
  try {
    parseAllowList(cfg.browse_allowed_networks);
  } catch (e) {
    ctx.addIssue({ code: 'custom', path: ['browse_allowed_networks'], message: (e as Error).message });
  }
});
export type GoogleSearchConfig = z.output<typeof GoogleSearchConfigSchema>;

export const SearchRequestSchema = z.object({ query: z.string() });
export const BrowseRequestSchema = z.object({ url: z.string() });

/** A float field; numeric strings are accepted as pydantic's lax mode does. */
const LaxFloat = z.union([
  z.number(),
  z.string().transform((s, ctx) => {
    const x = pyFloatFromStr(s);
    if (x === null) {
      ctx.addIssue({ code: 'custom', message: 'Input should be a valid number, unable to parse string as a number' });
      return z.NEVER;
    }
    return x;
  }),
]);

export const GoogleSearchVerifyRequestSchema = BaseVerifyRequestSchema.extend({
  expected_answer: z.string(),
  task_difficulty_qwen3_32b_avg_8: LaxFloat,
});

/** Model-visible texts of the browse tool (the first three are the reference's). */
export const NO_HTML = 'No HTML found';
export const NO_TEXT = 'No text found';
export const BROWSE_ERROR_PREFIX = 'Error: Unexpected error = ';

/**
 * Test hook: the resolver the address guard uses for host names (default: the system's DNS).
 * Set before `build`, e.g. to map test host names to chosen addresses without real DNS.
 */
export const testHooks: { resolver?: Resolver } = {};

export const server = defineResourcesServer({
  className: 'GoogleSearchResourcesServer',
  configSchema: GoogleSearchConfigSchema,
  setup: ({ config }) => {
    const guard = new AddressGuard(parseAllowList(config.browse_allowed_networks), testHooks.resolver);
    const search = new SearchClient(
      config.search_backend === 'google'
        ? { backend: 'google', url: config.google_search_url, apiKey: config.google_api_key!, cx: config.google_cx! }
        : { backend: 'searxng', url: config.searxng_url!, extraParams: config.searxng_params },
      { timeoutS: config.search_timeout_s, totalTimeoutS: config.search_total_timeout_s },
    );
    const pages = new PageFetcher(guard, {
      timeoutS: config.browse_timeout_s,
      maxRedirects: config.browse_max_redirects,
      maxBytes: config.browse_max_bytes,
      minBytes: config.browse_min_bytes,
      userAgent: config.browse_user_agent,
    });
    const pool = new WorkerPool(new URL('./src/extract.ts', import.meta.url), {
      size: config.num_workers,
      taskTimeoutMs: Math.round(config.extract_timeout_s * 1000),
    });
    return { search, pages, pool };
  },
  close: async ({ state }) => {
    await Promise.all([state.search.close(), state.pages.close(), state.pool.close()]);
  },
  tools: {
    search: {
      body: SearchRequestSchema,
      handler: async (body: z.output<typeof SearchRequestSchema>, ctx) => ({ search_results: await ctx.state.search.search(body.query) }),
    },
    browse: {
      body: BrowseRequestSchema,
      handler: async (body: z.output<typeof BrowseRequestSchema>, ctx) => {
        const page = await ctx.state.pages.fetch(body.url);
        if ('failure' in page) {
          if (page.failure === 'refused') return { page_content: `${BROWSE_ERROR_PREFIX}refused to fetch ${body.url}: ${page.reason}` };
          return { page_content: NO_HTML };
        }
        let text: string;
        try {
          const input: ExtractInput = { body: page.body, kind: page.kind, url: page.url };
          text = await ctx.state.pool.run<string>('extractText', [input]);
        } catch (e) {
          const timedOut = e instanceof TimeoutError || (e as { code?: unknown }).code === 'NG_ERR_TIMEOUT';
          const msg = timedOut ? `text extraction did not finish within ${ctx.config.extract_timeout_s} s` : (e as Error).message;
          return { page_content: BROWSE_ERROR_PREFIX + msg };
        }
        return { page_content: text ? text : NO_TEXT };
      },
    },
  },
  verify: {
    body: GoogleSearchVerifyRequestSchema,
    handler: (body: z.output<typeof GoogleSearchVerifyRequestSchema>) => {
      const { reward, parsed_option } = grade(body.response.output as unknown[], body.expected_answer);
      return { responses_create_params: body.responses_create_params, response: body.response, reward, parsed_option };
    },
  },
});

startIfMain(import.meta.url, server);
