/**
 * What the user model is told, and how the conversation looks from its side: the policy's text
 * turns are its "user" turns, its own earlier turns are "assistant" turns; tool calls, tool
 * outputs, reasoning and the policy's system prompt are not shown to it.
 */

/** The signals a simulated user ends the conversation with (tau2-bench's three). */
export const DEFAULT_STOP_SIGNALS = ['###STOP###', '###TRANSFER###', '###OUT-OF-SCOPE###'] as const;

/** `{instructions}` is replaced by the row's instructions, `{stop}`, `{transfer}`, `{out_of_scope}` by the configured signals. */
export const DEFAULT_USER_SYSTEM_PROMPT = `You are role-playing a person who has contacted an assistant (a support agent, a help desk, a service) for help. The other side of this chat is that assistant. Your own situation and goal are described in the scenario below; stay in that role for the whole chat.

How to behave:
- Write exactly one chat message per turn, short and natural, as the person would type it. Never write the assistant's side, never describe what you are doing, and never mention that you are simulated or following instructions.
- Use only facts the scenario gives you. Anything the scenario does not say, you do not know: say so rather than invent it.
- Do not paste or recite the scenario. Give details one at a time, when the assistant asks for them or when they are needed to move on.
- Follow the scenario's instructions about what to accept, refuse or insist on, even when the assistant pushes back.

Ending the chat (write the signal on its own, as your whole message):
- Your goal is met, or the scenario says to end here: {stop}
- The assistant hands you over to a human or another agent: {transfer}
- The scenario gives you nothing more to go on and you cannot sensibly continue: {out_of_scope}

<scenario>
{instructions}
</scenario>`;

export interface PromptSignals {
  stop: string;
  transfer: string;
  outOfScope: string;
}

/** The user model's system prompt: `template` with its placeholders filled. */
export function userSystemPrompt(template: string, instructions: string, signals: PromptSignals): string {
  const values: Record<string, string> = { instructions, stop: signals.stop, transfer: signals.transfer, out_of_scope: signals.outOfScope };
  // One pass, so text inside the instructions is never itself read as a placeholder.
  return template.replace(/\{(instructions|stop|transfer|out_of_scope)\}/g, (_m, key: string) => values[key]!);
}

type Json = Record<string, unknown>;

/** The user's instructions from a row: `user_instructions` text, else `user_scenario` (text, or an object given as JSON). */
export function instructionsOf(row: Json): string | null {
  if (typeof row.user_instructions === 'string' && row.user_instructions.trim() !== '') return row.user_instructions;
  const scenario = row.user_scenario;
  if (typeof scenario === 'string' && scenario.trim() !== '') return scenario;
  if (scenario !== null && typeof scenario === 'object') return JSON.stringify(scenario, null, 2);
  return null;
}

/** The placeholders of a prompt template name the first three signals (tau2's order: stop, transfer, out of scope). */
export function promptSignals(signals: readonly string[]): PromptSignals {
  return { stop: signals[0] ?? '', transfer: signals[1] ?? signals[0] ?? '', outOfScope: signals[2] ?? signals[0] ?? '' };
}

/**
 * The user model's system prompt for a row: the row's own `user_system_prompt` as it is (tau2 rows
 * prepared with tau2's guidelines carry its whole simulator prompt), else `template` filled with
 * the row's instructions; null when the row gives neither.
 */
export function rowUserPrompt(row: Json, template: string, signals: readonly string[]): string | null {
  if (typeof row.user_system_prompt === 'string' && row.user_system_prompt.trim() !== '') return row.user_system_prompt;
  const instructions = instructionsOf(row);
  return instructions === null ? null : userSystemPrompt(template, instructions, promptSignals(signals));
}

/** The text of a message item: a string content, or its text parts joined. */
export function messageText(item: Json): string {
  const content = item.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content as Json[]) {
    if (part && typeof part === 'object' && (part.type === 'output_text' || part.type === 'input_text' || part.type === 'text') && typeof part.text === 'string') text += part.text;
  }
  return text;
}

/**
 * The conversation as the user model sees it: every policy text turn as a `user` message, every
 * simulated-user turn as an `assistant` message, the rest left out. Empty texts are skipped.
 */
export function flippedConversation(items: readonly unknown[]): { role: 'user' | 'assistant'; content: string }[] {
  const out: { role: 'user' | 'assistant'; content: string }[] = [];
  for (const raw of items) {
    if (raw === null || typeof raw !== 'object') continue;
    const item = raw as Json;
    if ((item.type ?? 'message') !== 'message') continue;
    if (item.role !== 'assistant' && item.role !== 'user') continue;
    const text = messageText(item);
    if (text.trim() === '') continue;
    out.push({ role: item.role === 'assistant' ? 'user' : 'assistant', content: text });
  }
  return out;
}
