/**
 * simple_weather: the smallest complete environment. One tool, `get_weather(city)`, that always
 * reports cold weather, and a verify that gives every rollout reward 1.0.
 */
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema, startIfMain } from '@nemo-gym/core/server';

export const server = defineResourcesServer({
  className: 'SimpleWeatherResourcesServer',
  configSchema: ResourcesServerConfigSchema,
  tools: {
    get_weather: {
      body: z.object({ city: z.string() }),
      handler: ({ city }) => ({ city, weather_description: `The weather in ${city} is cold.` }),
    },
  },
  verify: {
    body: BaseVerifyRequestSchema,
    handler: (body) => ({ ...body, reward: 1.0 }),
  },
});

startIfMain(import.meta.url, server);
