/**
 * Seeded random schema/answer pairs for robustness tests: every keyword of 2020-12 and the
 * OpenAPI discriminator, with well-formed and malformed values, references that resolve and ones
 * that do not ($ref, $dynamicRef, $id, anchors, URNs, JSON pointers), prototype member names,
 * Python and broken regexes, extreme numbers, and answers that are JSON, Python-JSON or not JSON.
 */
import { mulberry32 } from '@nemo-gym/core/data';

/** Deterministic seeded PRNG (mulberry32, shared with the core). */
export const rng = mulberry32;

const NAMES = ['a', 'b', 'x_1', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'properties', '$ref', ''];
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null', 'date', 5];
const PATTERNS = ['^a', '\\d+', '^\\w+$', '(', '[a-', '^__', 'a|b', '(?i)x', '\\p{L}', '^.{0,3}$', '\\bfoo\\b', '[^\\s]', '(a)\\1', 'a{2,'];
const REFS = ['#', '#/$defs/a', '#/$defs/__proto__', '#/properties/constructor', '#/nope', '#a', '#meta', 'other.json', 'urn:x:y', 'urn:x:y#/$defs/a',
  'http://e.com/s#/$defs/b', '#/items/-1', '#/%25', '#/allOf/0', '#/allOf/9', 'https://json-schema.org/draft/2020-12/schema', '#/$defs/a/type/0', 'b.json#a', ''];
const IDS = ['http://e.com/s', 'b.json', 'urn:x:y', 'http://e.com/[x', '#frag', 'c/d.json', 5];
const NUMBERS = [0, -1, 1, 0.5, 0.1, 1e-300, 1e308, -1e308, 3, 2.5, 1e16 + 1];

export type Gen = () => number;

function pick<T>(r: Gen, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** A JSON object built with defineProperty, so `__proto__` is an ordinary own key. */
function obj(entries: [string, unknown][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

export function randomValue(r: Gen, depth = 0): unknown {
  const k = r();
  if (depth > 2 || k < 0.45) return pick(r, [null, true, false, 0, 1, -2.5, 1e308, 'a', 'ab1', '', 'é', '2024-01-01', ...NUMBERS]);
  if (k < 0.7) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
  return obj(Array.from({ length: Math.floor(r() * 4) }, () => [pick(r, NAMES), randomValue(r, depth + 1)] as [string, unknown]));
}

function schemaMap(r: Gen, depth: number): Record<string, unknown> {
  return obj(Array.from({ length: 1 + Math.floor(r() * 3) }, () => [pick(r, NAMES), randomSchema(r, depth + 1)] as [string, unknown]));
}

function schemaList(r: Gen, depth: number): unknown[] {
  return Array.from({ length: Math.floor(r() * 3) }, () => randomSchema(r, depth + 1));
}

/** A random schema (sometimes malformed). */
export function randomSchema(r: Gen, depth = 0): unknown {
  if (depth > 3 || r() < 0.15) return pick(r, [true, false, {}, { type: pick(r, TYPES) }, { $ref: pick(r, REFS) }, 7, 'str']);
  const entries: [string, unknown][] = [];
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const kw = pick(r, [
      'type', 'properties', 'required', 'additionalProperties', 'patternProperties', 'items', 'prefixItems', 'contains', 'enum', 'const',
      'minimum', 'multipleOf', 'maxLength', 'pattern', 'allOf', 'anyOf', 'oneOf', 'not', 'if', '$defs', '$ref', '$dynamicRef',
      '$dynamicAnchor', '$anchor', '$id', 'unevaluatedItems', 'unevaluatedProperties', 'dependentRequired', 'dependentSchemas',
      'propertyNames', 'discriminator', 'minContains', 'uniqueItems', 'format', '$schema', 'dependencies',
    ]);
    switch (kw) {
      case 'type':
        entries.push([kw, r() < 0.2 ? [pick(r, TYPES), pick(r, TYPES)] : pick(r, TYPES)]);
        break;
      case 'properties':
      case 'patternProperties':
      case '$defs':
      case 'dependentSchemas':
        entries.push([kw, kw === 'patternProperties' ? obj([[pick(r, PATTERNS), randomSchema(r, depth + 1)]]) : schemaMap(r, depth)]);
        break;
      case 'required':
        entries.push([kw, r() < 0.1 ? 'a' : [pick(r, NAMES), pick(r, NAMES)]]);
        break;
      case 'prefixItems':
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        entries.push([kw, r() < 0.1 ? randomSchema(r, depth + 1) : schemaList(r, depth)]);
        break;
      case 'enum':
        entries.push([kw, r() < 0.1 ? randomValue(r) : [randomValue(r), randomValue(r)]]);
        break;
      case 'const':
        entries.push([kw, randomValue(r)]);
        break;
      case 'minimum':
      case 'multipleOf':
      case 'maxLength':
      case 'minContains':
        entries.push([kw, r() < 0.1 ? 'x' : pick(r, NUMBERS)]);
        break;
      case 'pattern':
        entries.push([kw, pick(r, PATTERNS)]);
        break;
      case '$ref':
      case '$dynamicRef':
        entries.push([kw, pick(r, REFS)]);
        break;
      case '$dynamicAnchor':
      case '$anchor':
        entries.push([kw, pick(r, ['a', 'meta', 'b', '1bad'])]);
        break;
      case '$id':
        entries.push([kw, pick(r, IDS)]);
        break;
      case 'dependentRequired':
        entries.push([kw, obj([[pick(r, NAMES), [pick(r, NAMES)]]])]);
        break;
      case 'discriminator':
        entries.push([kw, r() < 0.2 ? 'x' : obj([['propertyName', pick(r, NAMES)], ['mapping', obj([[pick(r, ['a', 'x', 'toString']), pick(r, REFS)]])]])]);
        entries.push(['components', { schemas: schemaMap(r, depth) }]);
        break;
      case 'uniqueItems':
        entries.push([kw, r() < 0.8]);
        break;
      case 'format':
        entries.push([kw, pick(r, ['date', 'regex', 'email', 'uuid'])]);
        break;
      case '$schema':
        entries.push([kw, pick(r, ['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft-07/schema#', 'urn:nope', 5])]);
        break;
      case 'dependencies':
        entries.push([kw, obj([[pick(r, NAMES), [pick(r, NAMES)]]])]);
        break;
      default: // keywords whose value is one subschema
        entries.push([kw, randomSchema(r, depth + 1)]);
    }
  }
  return obj(entries);
}

/** A random answer text: usually JSON of a random value, sometimes Python-only JSON or not JSON at all. */
export function randomAnswer(r: Gen): string {
  const k = r();
  if (k < 0.08) return pick(r, ['', '{', '```json\n{}\n```', '{"a": 1,}', 'NaN', '[Infinity, -Infinity]', '{"__proto__": {"polluted": true}}']);
  const v = randomValue(r);
  return JSON.stringify(v);
}

/** `count` seeded pairs as the verify endpoint receives them. */
export function fuzzPairs(seed: number, count: number): { schemaStr: string; answer: string }[] {
  const r = rng(seed);
  return Array.from({ length: count }, () => {
    const s = randomSchema(r);
    return { schemaStr: r() < 0.03 ? '{"type": ' : JSON.stringify(s), answer: randomAnswer(r) };
  });
}
