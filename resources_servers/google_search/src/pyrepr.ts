/**
 * Python `repr()` of the values the verifier formats. The reference verifier applies its regex to
 * `str(message.content)`, i.e. to the repr of a list of pydantic content-part objects, so where a
 * `\boxed{...}` match starts and ends depends on these exact bytes (backslashes doubled, newlines
 * as `\n`, the quote Python picks, the field order of each class).
 */
import { pyRepr } from '@nemo-gym/core/py';

/** Marks a number that Python holds as a float. */
interface FloatField {
  float: true;
}

/** A pydantic class: its name and its fields in declaration order (`float` marks float fields). */
interface PyClass {
  name: string;
  fields: readonly (string | [string, FloatField])[];
}

const F: FloatField = { float: true };

/** Content parts and their nested objects, as the reference response models declare them. */
const CLASSES: Record<string, PyClass> = {
  output_text: { name: 'NeMoGymResponseOutputText', fields: ['annotations', 'text', 'type', 'logprobs'] },
  refusal: { name: 'NeMoGymResponseOutputRefusal', fields: ['refusal', 'type'] },
  file_citation: { name: 'AnnotationFileCitation', fields: ['file_id', 'filename', 'index', 'type'] },
  url_citation: { name: 'AnnotationURLCitation', fields: ['end_index', 'start_index', 'title', 'type', 'url'] },
  container_file_citation: {
    name: 'AnnotationContainerFileCitation',
    fields: ['container_id', 'end_index', 'file_id', 'filename', 'start_index', 'type'],
  },
  file_path: { name: 'AnnotationFilePath', fields: ['file_id', 'index', 'type'] },
};
const LOGPROB: PyClass = { name: 'Logprob', fields: ['token', 'bytes', ['logprob', F], 'top_logprobs'] };
const TOP_LOGPROB: PyClass = { name: 'LogprobTopLogprob', fields: ['token', 'bytes', ['logprob', F]] };

function objectRepr(cls: PyClass, obj: Record<string, unknown>, nested: (field: string, value: unknown) => string | null): string {
  const parts: string[] = [];
  const declared = new Set<string>();
  for (const f of cls.fields) {
    const [name, float] = typeof f === 'string' ? [f, false] : [f[0], true];
    declared.add(name);
    const value = obj[name];
    parts.push(`${name}=${nested(name, value) ?? pyRepr(value, float)}`);
  }
  // Extra keys (the response models allow them) follow the declared fields, as pydantic prints them.
  for (const [k, value] of Object.entries(obj)) if (!declared.has(k)) parts.push(`${k}=${pyRepr(value)}`);
  return `${cls.name}(${parts.join(', ')})`;
}

function logprobRepr(lp: unknown): string {
  if (lp === null || typeof lp !== 'object' || Array.isArray(lp)) return pyRepr(lp);
  return objectRepr(LOGPROB, lp as Record<string, unknown>, (field, value) =>
    field === 'top_logprobs' && Array.isArray(value)
      ? `[${value.map((t) => (t && typeof t === 'object' && !Array.isArray(t) ? objectRepr(TOP_LOGPROB, t as Record<string, unknown>, () => null) : pyRepr(t))).join(', ')}]`
      : null,
  );
}

/** Repr of one content part of an output message (an output_text or a refusal). */
export function contentPartRepr(part: Record<string, unknown>): string {
  const cls = CLASSES[String(part.type)];
  if (cls === undefined || (part.type !== 'output_text' && part.type !== 'refusal')) return pyRepr(part);
  const filled = part.type === 'output_text' ? { annotations: [], logprobs: null, ...part } : part;
  return objectRepr(cls, filled, (field, value) => {
    if (field === 'annotations' && Array.isArray(value)) {
      return `[${value
        .map((a) => {
          const ac = a && typeof a === 'object' && !Array.isArray(a) ? CLASSES[String((a as { type?: unknown }).type)] : undefined;
          return ac ? objectRepr(ac, a as Record<string, unknown>, () => null) : pyRepr(a);
        })
        .join(', ')}]`;
    }
    if (field === 'logprobs' && Array.isArray(value)) return `[${value.map(logprobRepr).join(', ')}]`;
    return null;
  });
}

/** Python `str(content)` of a message's content list. */
export function contentListRepr(content: readonly unknown[]): string {
  return `[${content.map((p) => (p && typeof p === 'object' && !Array.isArray(p) ? contentPartRepr(p as Record<string, unknown>) : pyRepr(p))).join(', ')}]`;
}
