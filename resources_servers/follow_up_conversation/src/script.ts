/**
 * The script of a follow-up conversation: a tree of turns. The row's prompt asks the first
 * question; each node says what a right answer contains (`expect`: any of these words or phrases,
 * case-insensitive) and which node follows a right and a wrong answer. A node's `say` is the user's
 * next message; a missing branch, or a node without `say`, ends the conversation.
 */
import { z } from 'zod';

export interface Turn {
  say?: string;
  expect?: string[];
  right?: Turn;
  wrong?: Turn;
}

export const TurnSchema: z.ZodType<Turn> = z.lazy(() =>
  z.object({
    say: z.string().optional(),
    expect: z.array(z.string().min(1)).min(1).optional(),
    right: TurnSchema.optional(),
    wrong: TurnSchema.optional(),
  }),
);

/** Whether `answer` contains one of the expected phrases (letters compared without case, spaces collapsed). */
export function isRight(turn: Turn, answer: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');
  const a = norm(answer);
  return (turn.expect ?? []).some((e) => a.includes(norm(e)));
}
