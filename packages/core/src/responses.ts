/** Small helpers over Responses API objects. */

/** The OpenAI SDK's `response.output_text`: every output_text part of every message, joined with "". */
export function outputText(response: { output?: unknown } | null | undefined): string {
  const out = response?.output;
  if (!Array.isArray(out)) return '';
  let text = '';
  for (const item of out as Record<string, unknown>[]) {
    if (!item || (item.type ?? (item.role !== undefined ? 'message' : undefined)) !== 'message') continue;
    if (!Array.isArray(item.content)) continue;
    for (const part of item.content as Record<string, unknown>[]) {
      if (part && part.type === 'output_text' && typeof part.text === 'string') text += part.text;
    }
  }
  return text;
}
