/** The text a judge reads: the task's instructions (its input messages) and one trajectory (a response's output items). */

type Item = Record<string, unknown>;

/** The text of a message's content: a string, or its text parts joined. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (p && typeof p === 'object' && typeof (p as Item).text === 'string' ? ((p as Item).text as string) : ''))
    .filter((t) => t)
    .join('\n');
}

/** The task as the policy saw it: each input message as `role: text`. */
export function taskInstructions(input: unknown): string {
  if (typeof input === 'string') return `user: ${input}`;
  if (!Array.isArray(input)) return '';
  const lines: string[] = [];
  for (const m of input as Item[]) {
    if (!m || typeof m !== 'object') continue;
    if ((m.type ?? 'message') !== 'message') continue;
    lines.push(`${typeof m.role === 'string' ? m.role : 'user'}: ${contentText(m.content)}`);
  }
  return lines.join('\n');
}

/** One trajectory: its messages, tool calls and tool results in order (reasoning left out); the end is kept when it is longer than `maxChars`. */
export function renderTranscript(output: unknown, maxChars: number): string {
  const lines: string[] = [];
  for (const item of Array.isArray(output) ? (output as Item[]) : []) {
    if (!item || typeof item !== 'object') continue;
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message') lines.push(`${typeof item.role === 'string' ? item.role : 'assistant'}: ${contentText(item.content)}`);
    else if (type === 'function_call') lines.push(`tool call: ${String(item.name)}(${typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? null)})`);
    else if (type === 'function_call_output') lines.push(`tool result: ${typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? null)}`);
  }
  const text = lines.join('\n');
  return text.length > maxChars ? `[…${text.length - maxChars} characters cut…]\n${text.slice(-maxChars)}` : text;
}
