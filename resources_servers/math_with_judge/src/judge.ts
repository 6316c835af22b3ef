// The LLM-judge half of math_with_judge: prompt, request and verdict parsing.
import { verdictOf } from '@nemo-gym/core/openai';

export const JUDGE_SYSTEM_MESSAGE = `Please act as an impartial judge and evaluate the equivalence of the solutions given by two AI assistants to the mathematical problem displayed below. You will be given AI assistant A's answer and AI assistant B's answer. Your job is to evaluate whether assistant A's answer is equivalent to assistant B's answer.

Consider the mathematical equivalence of the AI assistants' answers above all other considerations. If the problem requests special formatting instructions, you may disregard any formatting considerations when evaluating the answers -- consider only mathematical equivalence.

After evaluating both answers for equivalence, you must output only one of the following choices as your final verdict with a label:

1.  The AI assistants' answers are equivalent: [[A=B]]
2.  The AI assistants' answers are different: [[A!=B]]

Example output: "My final verdict is different [[A!=B]]".`;

export function judgePrompt(question: string, firstAnswer: string, secondAnswer: string): string {
  return (
    `<|Problem|>\n${question}\n\n` +
    `<|Start of Assistant A's Answer|>\n${firstAnswer}\n<|End of Assistant A's Answer|>\n\n` +
    `<|Start of Assistant B's Answer|>\n${secondAnswer}\n<|End of Assistant B's Answer|>`
  );
}

export const EQUAL_LABEL = '[[A=B]]';
export const NOT_EQUAL_LABEL = '[[A!=B]]';

/** The text the verdict is read from: the last output item's last content part, when that item is a message and that part output_text. */
export function verdictText(response: { output?: unknown }): string | null {
  const output = Array.isArray(response.output) ? (response.output as Record<string, unknown>[]) : [];
  const last = output[output.length - 1];
  if (!last || last.type !== 'message') return null;
  const content = Array.isArray(last.content) ? (last.content as Record<string, unknown>[]) : [];
  const part = content[content.length - 1];
  if (!part || part.type !== 'output_text' || typeof part.text !== 'string') return null;
  return part.text;
}

/**
 * Verdict of a judge response: the last output item must be a message whose last content part is
 * output_text; "equal" when [[A=B]] appears and comes before any [[A!=B]]; null when neither label
 * is there (no verdict).
 */
export function verdictOfResponse(response: { output?: unknown }): boolean | null {
  const text = verdictText(response);
  return text === null ? null : verdictOf(text, EQUAL_LABEL, NOT_EQUAL_LABEL);
}

/** The verdict with no verdict counted as "different" (upstream 818984b8e). */
export function parseVerdict(response: { output?: unknown }): boolean {
  return verdictOfResponse(response) === true;
}
