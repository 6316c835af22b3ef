/**
 * multineedle: multi-step tool use. The model looks up the value of each relevant synonym with
 * `get_synonym_value` and submits the values, in order, with `extract_synonym_values`; the reward
 * is 1.0 when the last submitted list equals the expected one.
 */
import { z } from 'zod';
import { BaseVerifyRequestSchema, defineResourcesServer, ResourcesServerConfigSchema, startIfMain } from '@nemo-gym/core/server';
import { LaxInt } from '@nemo-gym/core/py';
import { score, synonymValue } from './src/score.js';

export const MultiNeedleRunFieldsSchema = z.object({
  id: LaxInt,
  expected_synonym_values: z
    .array(LaxInt)
    .min(1, 'expected_synonym_values must hold at least one value (set_overlap divides by its length)'),
  expected_synonyms: z.array(z.string()),
  minefield_label: z.string(),
  minefield_label_value: LaxInt,
});

export const MultiNeedleVerifyRequestSchema = BaseVerifyRequestSchema.extend(MultiNeedleRunFieldsSchema.shape);

export const server = defineResourcesServer({
  className: 'MultiNeedleResourcesServer',
  configSchema: ResourcesServerConfigSchema,
  tools: {
    get_synonym_value: {
      body: z.object({ synonym: z.string() }),
      handler: ({ synonym }) => ({ synonym_value: synonymValue(synonym) }),
    },
    extract_synonym_values: {
      body: z.object({ synonym_values: z.array(LaxInt) }),
      handler: () => ({ success: true }),
    },
  },
  verify: {
    body: MultiNeedleVerifyRequestSchema,
    handler: (body) => ({
      responses_create_params: body.responses_create_params,
      response: body.response,
      ...score(body.response.output as unknown[], body.expected_synonym_values, body.minefield_label, body.minefield_label_value),
    }),
  },
});

startIfMain(import.meta.url, server);
