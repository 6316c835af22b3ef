/**
 * Python `str.format` for the judge prompt template: `{name}` fields (optionally `{name!s}` /
 * `{name!r}`), `{{` and `}}` escapes. The template is parsed once at startup, so a template that
 * Python would reject on every request (unknown field, lone brace, format spec) is a config error.
 */
import { NgError } from '@nemo-gym/core/errors';
import { EQUIVALENCE_LLM_JUDGE_ERRORS } from './errors.js';
import { pyStrRepr } from '@nemo-gym/core/py';

export type TemplatePart = { literal: string } | { field: string; conversion: 's' | 'r' | null };

export class TemplateError extends NgError {
  override readonly name = 'TemplateError';
  constructor(message: string) {
    super(EQUIVALENCE_LLM_JUDGE_ERRORS.NG_ERR_TEMPLATE, message);
  }
}

export function parseTemplate(template: string, allowed: readonly string[]): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literal = '';
  let i = 0;
  while (i < template.length) {
    const ch = template[i]!;
    if (ch === '{') {
      if (template[i + 1] === '{') {
        literal += '{';
        i += 2;
        continue;
      }
      const close = template.indexOf('}', i + 1);
      if (close < 0) throw new TemplateError("Single '{' encountered in format string");
      const inner = template.slice(i + 1, close);
      if (inner.includes('{')) throw new TemplateError(`nested replacement fields are not supported: {${inner}}`);
      const m = /^([^!:]*)(?:!([a-z]))?(?::(.*))?$/s.exec(inner)!;
      const name = m[1]!;
      const conversion = m[2] ?? null;
      if (m[3]) throw new TemplateError(`format spec ":${m[3]}" in {${inner}} is not supported`);
      if (name === '' || /^\d+$/.test(name)) {
        throw new TemplateError(`positional field {${inner}}: use one of ${allowed.map((a) => `{${a}}`).join(', ')}`);
      }
      if (!allowed.includes(name)) {
        throw new TemplateError(`unknown field {${name}} (Python would raise KeyError('${name}')); available: ${allowed.map((a) => `{${a}}`).join(', ')}`);
      }
      if (conversion !== null && conversion !== 's' && conversion !== 'r') throw new TemplateError(`unsupported conversion !${conversion} in {${inner}}`);
      if (literal) parts.push({ literal });
      literal = '';
      parts.push({ field: name, conversion: conversion as 's' | 'r' | null });
      i = close + 1;
      continue;
    }
    if (ch === '}') {
      if (template[i + 1] === '}') {
        literal += '}';
        i += 2;
        continue;
      }
      throw new TemplateError("Single '}' encountered in format string");
    }
    literal += ch;
    i++;
  }
  if (literal) parts.push({ literal });
  return parts;
}

export function renderTemplate(parts: readonly TemplatePart[], values: Record<string, string>): string {
  let out = '';
  for (const p of parts) {
    if ('literal' in p) out += p.literal;
    else {
      const v = values[p.field] ?? '';
      out += p.conversion === 'r' ? pyStrRepr(v) : v;
    }
  }
  return out;
}
