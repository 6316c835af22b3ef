import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, offersServerTools, ResourcesServerConfigSchema } from '@nemo-gym/core/server';

describe('offer_server_tools', () => {
  it("an agent's own block wins; else the global setting; else off (upstream's behaviour)", () => {
    expect(offersServerTools({}, {})).toBe(false);
    expect(offersServerTools({}, { offer_server_tools: true })).toBe(true);
    expect(offersServerTools({ offer_server_tools: false }, { offer_server_tools: true })).toBe(false);
    expect(offersServerTools({ offer_server_tools: true }, {})).toBe(true);
    expect(offersServerTools({ offer_server_tools: null }, { offer_server_tools: true })).toBe(true);
  });

  it('a resources server describes its tools and verify request from its zod schemas, and serves them', async () => {
    const server = defineResourcesServer({
      className: 'Described',
      configSchema: ResourcesServerConfigSchema,
      tools: { look_up: { description: 'Looks a word up.', body: z.object({ word: z.string().describe('the word'), limit: z.number().int().default(3) }), handler: () => ({}) } },
      verify: { body: BaseVerifyRequestSchema.extend({ expected: z.string() }), handler: (b) => ({ ...b, reward: 1 }) },
    });
    const tools = server.describe!().tools;
    expect(tools).toEqual([
      {
        type: 'function',
        name: 'look_up',
        description: 'Looks a word up.',
        parameters: { type: 'object', properties: { word: { type: 'string', description: 'the word' }, limit: { type: 'integer', default: 3, minimum: -9007199254740991, maximum: 9007199254740991 } }, required: ['word'] },
        strict: false,
      },
    ]);
    const app = await server.build({ config: { name: 'd', domain: 'other' } });
    try {
      expect((await app.inject({ method: 'GET', url: '/ng_tools' })).json()).toEqual(tools);
      expect((await app.inject({ method: 'GET', url: '/ng_verify_schema' })).json().required).toEqual(['responses_create_params', 'response', 'expected']);
    } finally {
      await app.close();
    }
  });
});
