/**
 * Property names that are JavaScript prototype members (`__proto__`, `constructor`, `toString`,
 * `hasOwnProperty`, `valueOf`) are ordinary names, in schemas and in answers, through POST /verify.
 * The expected rewards are upstream's (its scoring code with openapi-schema-validator 0.6.3).
 * Schemas and answers are JSON text: a JavaScript object literal would turn `__proto__` into the
 * prototype.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../app.js';
import { scoreJson } from '../src/validate.js';

type App = Awaited<ReturnType<typeof server.build>>;
let app: App;

beforeAll(async () => {
  app = await server.build({ config: { name: 'structured_outputs', domain: 'instruction_following', num_workers: 1 } });
});
afterAll(async () => {
  await app.close();
});

async function verify(schemaStr: string, answer: string) {
  const res = await app.inject({
    method: 'POST',
    url: '/verify',
    payload: {
      responses_create_params: { input: [] },
      response: {
        id: 'r',
        created_at: 0,
        model: 'm',
        object: 'response',
        output: [{ id: 'm', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: answer, annotations: [] }] }],
        parallel_tool_calls: false,
        tool_choice: 'none',
        tools: [],
      },
      schema_str: schemaStr,
      schema_type: 'json',
    },
  });
  return { status: res.statusCode, json: res.json() as Record<string, unknown> };
}

// [name, schema_str, answer, upstream reward]
const CASES: [string, string, string, number][] = [
  ["all prototype-named properties present", "{\"type\": \"object\", \"properties\": {\"__proto__\": {\"type\": \"string\"}, \"constructor\": {\"type\": \"integer\"}, \"toString\": {\"type\": \"boolean\"}}}", "{\"__proto__\": \"x\", \"constructor\": 1, \"toString\": true}", 1],
  ["__proto__ missing", "{\"type\": \"object\", \"properties\": {\"__proto__\": {\"type\": \"string\"}, \"constructor\": {\"type\": \"integer\"}, \"toString\": {\"type\": \"boolean\"}}}", "{\"constructor\": 1, \"toString\": true}", 0],
  ["constructor missing", "{\"type\": \"object\", \"properties\": {\"__proto__\": {\"type\": \"string\"}, \"constructor\": {\"type\": \"integer\"}, \"toString\": {\"type\": \"boolean\"}}}", "{\"__proto__\": \"x\", \"toString\": true}", 0],
  ["none present", "{\"type\": \"object\", \"properties\": {\"__proto__\": {\"type\": \"string\"}, \"constructor\": {\"type\": \"integer\"}, \"toString\": {\"type\": \"boolean\"}}}", "{}", 0],
  ["__proto__ of the wrong type", "{\"type\": \"object\", \"properties\": {\"__proto__\": {\"type\": \"string\"}, \"constructor\": {\"type\": \"integer\"}, \"toString\": {\"type\": \"boolean\"}}}", "{\"__proto__\": 5, \"constructor\": 1, \"toString\": true}", 0],
  ["__proto__ holding an object", "{\"type\": \"object\", \"properties\": {\"__proto__\": {\"type\": \"string\"}, \"constructor\": {\"type\": \"integer\"}, \"toString\": {\"type\": \"boolean\"}}}", "{\"__proto__\": {\"a\": 1}, \"constructor\": 1, \"toString\": true}", 0],
  ["constructor as an extra property", "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}", "{\"a\": 1, \"constructor\": 1}", 0],
  ["__proto__ as an extra property", "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}", "{\"a\": 1, \"__proto__\": {}}", 0],
  ["required toString, absent", "{\"type\": \"object\", \"required\": [\"toString\", \"hasOwnProperty\"]}", "{}", 0],
  ["required toString, present", "{\"type\": \"object\", \"required\": [\"toString\", \"hasOwnProperty\"]}", "{\"toString\": 1, \"hasOwnProperty\": 2}", 1],
  ["$defs named __proto__", "{\"$defs\": {\"__proto__\": {\"type\": \"integer\"}}, \"$ref\": \"#/$defs/__proto__\"}", "3", 1],
  ["$defs named __proto__, wrong type", "{\"$defs\": {\"__proto__\": {\"type\": \"integer\"}}, \"$ref\": \"#/$defs/__proto__\"}", "\"3\"", 0],
  ["$ref to a missing constructor definition", "{\"$defs\": {}, \"$ref\": \"#/$defs/constructor\"}", "3", 0],
  ["const with a __proto__ key", "{\"const\": {\"__proto__\": 1}}", "{\"__proto__\": 1}", 1],
  ["const with a __proto__ key, other value", "{\"const\": {\"__proto__\": 1}}", "{\"__proto__\": 2}", 0],
  ["const with a __proto__ key, empty answer", "{\"const\": {\"__proto__\": 1}}", "{}", 0],
  ["enum of constructor objects", "{\"enum\": [{\"constructor\": \"x\"}]}", "{\"constructor\": \"x\"}", 1],
  ["patternProperties on __proto__", "{\"patternProperties\": {\"^__\": {\"type\": \"string\"}}}", "{\"__proto__\": 1}", 0],
  ["propertyNames excludes constructor", "{\"propertyNames\": {\"not\": {\"const\": \"constructor\"}}}", "{\"constructor\": 1}", 0],
  ["dependentRequired on toString", "{\"dependentRequired\": {\"toString\": [\"valueOf\"]}}", "{\"toString\": 1}", 0],
  ["dependentRequired on toString, satisfied", "{\"dependentRequired\": {\"toString\": [\"valueOf\"]}}", "{\"toString\": 1, \"valueOf\": 2}", 1],
  ["unevaluatedProperties with __proto__", "{\"allOf\": [{\"properties\": {\"__proto__\": true}}], \"unevaluatedProperties\": false}", "{\"__proto__\": 1}", 1],
  ["unevaluatedProperties with constructor not evaluated", "{\"allOf\": [{\"properties\": {\"__proto__\": true}}], \"unevaluatedProperties\": false}", "{\"__proto__\": 1, \"constructor\": 2}", 0],
  ["discriminator on constructor", "{\"oneOf\": [{\"$ref\": \"#/components/schemas/toString\"}], \"discriminator\": {\"propertyName\": \"constructor\", \"mapping\": {\"x\": \"#/components/schemas/toString\"}}, \"components\": {\"schemas\": {\"toString\": {\"type\": \"object\", \"required\": [\"constructor\"]}}}}", "{\"constructor\": \"x\"}", 1],
  ["discriminator value toString resolves implicitly", "{\"oneOf\": [{}], \"discriminator\": {\"propertyName\": \"constructor\"}, \"components\": {\"schemas\": {\"toString\": {\"type\": \"object\", \"minProperties\": 2}}}}", "{\"constructor\": \"toString\"}", 0],
  ["discriminator value valueOf does not resolve", "{\"oneOf\": [{}], \"discriminator\": {\"propertyName\": \"constructor\"}, \"components\": {\"schemas\": {}}}", "{\"constructor\": \"valueOf\"}", 0],
  ["schema properties map named __proto__ nested", "{\"type\": \"object\", \"properties\": {\"__proto__\": {\"type\": \"object\", \"properties\": {\"constructor\": {\"const\": 1}}}}}", "{\"__proto__\": {\"constructor\": 1}}", 1],
  ["schema properties map named __proto__ nested, extra", "{\"type\": \"object\", \"properties\": {\"__proto__\": {\"type\": \"object\", \"properties\": {\"constructor\": {\"const\": 1}}}}}", "{\"__proto__\": {\"constructor\": 1, \"toString\": 2}}", 0],
];

describe('prototype member names are ordinary property names', () => {
  for (const [name, schemaStr, answer, reward] of CASES) {
    it(`${name} -> ${reward}`, async () => {
      const { status, json } = await verify(schemaStr, answer);
      expect(status, JSON.stringify(json)).toBe(200);
      expect(json.reward).toBe(reward);
      // an unresolvable reference is an error (reported), not a verdict on the answer
      if (name.startsWith('$ref to a missing')) expect(json.error_message).toMatch(/unresolvable JSON pointer "\/\$defs\/constructor"/);
      else expect(json.error_message).toBeUndefined();
    });
  }

  it('a "__proto__" key in a schema or an answer never reaches Object.prototype', () => {
    const evil = '{"__proto__": {"polluted": true, "type": "string"}, "properties": {"__proto__": {"properties": {"polluted": {}}}}}';
    expect(scoreJson(evil, '{"__proto__": {"polluted": true}}').reward).toBe(1);
    expect(scoreJson('{"const": {"__proto__": {"polluted": 1}}}', '{"__proto__": {"polluted": 1}}').reward).toBe(1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).type).toBeUndefined();
  });
});
