/**
 * tic_tac_toe: a Gymnasium-style environment. The model (X) plays a scripted opponent (O), one
 * move per step, either by calling the `play_move` tool (`{"cell": 1..9}`; the answer comes back
 * as the tool's output) or by writing `<action>N</action>` (the answer comes back as the next user
 * message). A win scores 1, a draw 0, a loss −1; an illegal move scores `illegal_move_reward` and
 * the model is asked again, and the `max_illegal_moves`-th illegal move forfeits the game (−1).
 */
import { z } from 'zod';
import { outputText, type NeMoGymResponse } from '@nemo-gym/core/openai';
import { defineResourcesServer, GymnasiumServerConfigSchema, startIfMain, toolOutput, type Episode, type StepResult } from '@nemo-gym/core/server';
import { emptyBoard, full, illegal, opponentMove, render, winner, type Board, type Opponent } from './src/game.js';

export const TicTacToeConfigSchema = GymnasiumServerConfigSchema.extend({
  /** Reward of a step whose move was not legal (the game goes on). */
  illegal_move_reward: z.number().default(-0.1),
  /** Illegal moves in one game after which the game is lost. */
  max_illegal_moves: z.number().int().positive().default(3),
});

const RowSchema = z.looseObject({
  opponent: z.enum(['first_free', 'blocking']).default('blocking'),
  /** The opponent opens the game. */
  opponent_starts: z.boolean().default(false),
});

interface Game {
  board: Board;
  opponent: Opponent;
  illegal: number;
}

const ASK = 'Your move: call play_move with the cell number, or answer <action>N</action>.';
const ACTION_TAG = /<action>\s*([^<]*?)\s*<\/action>/i;

/** The move the model made: the first play_move call, or an action tag in its text. */
function moveOf(action: NeMoGymResponse): { cell: unknown; callId: string | null; extraCalls: string[] } {
  const calls = (action.output as { type?: string; name?: string; arguments?: string; call_id?: string }[]).filter((o) => o.type === 'function_call');
  if (calls.length > 0) {
    const [first, ...rest] = calls;
    let cell: unknown = `a call of ${first!.name} with arguments ${first!.arguments}`;
    if (first!.name === 'play_move') {
      try {
        const args = JSON.parse(first!.arguments ?? '') as { cell?: unknown };
        cell = typeof args.cell === 'string' && /^\d+$/.test(args.cell) ? Number(args.cell) : args.cell;
      } catch {
        cell = `arguments that are not JSON (${first!.arguments})`;
      }
    }
    return { cell, callId: first!.call_id ?? null, extraCalls: rest.map((c) => c.call_id ?? '') };
  }
  const m = ACTION_TAG.exec(outputText(action));
  const cell = m ? (/^\d+$/.test(m[1]!) ? Number(m[1]) : m[1]) : 'no move (no play_move call and no <action>N</action>)';
  return { cell, callId: null, extraCalls: [] };
}

export const server = defineResourcesServer({
  className: 'TicTacToeResourcesServer',
  configSchema: TicTacToeConfigSchema,
  gymnasium: {
    reset(metadata, episode: Episode<Game>) {
      const row = RowSchema.parse(metadata);
      const board = emptyBoard();
      if (row.opponent_starts) board[opponentMove(board, row.opponent)] = 'O';
      episode.state = { board, opponent: row.opponent, illegal: 0 };
      const opening = row.opponent_starts ? 'Your opponent (O) has moved.' : 'You move first.';
      return { observation: `You are X. ${opening}\n${render(board)}\n${ASK}`, info: {} };
    },
    step(action, _metadata, episode: Episode<Game>, ctx): StepResult {
      const game = episode.state!;
      const { cell, callId, extraCalls } = moveOf(action);
      // The answer goes back where the move came from: the tool's output, or the next user message.
      const answer = (text: string, result: Omit<StepResult, 'observation' | 'info'>, info: Record<string, unknown> = {}): StepResult => {
        if (callId === null) return { ...result, observation: text, info };
        const outputs = [toolOutput({ call_id: callId }, text), ...extraCalls.map((id) => toolOutput({ call_id: id }, 'Only one move per turn: this call was not applied.'))];
        return { ...result, observation: null, info: { ...info, tool_outputs: outputs } };
      };
      const problem = illegal(game.board, cell);
      if (problem !== null) {
        game.illegal++;
        if (game.illegal >= ctx.config.max_illegal_moves) {
          return answer(`Illegal move: ${problem}. That was illegal move ${game.illegal}: you forfeit the game.`, { reward: -1, terminated: true }, { result: 'forfeit', illegal_moves: game.illegal, board: render(game.board) });
        }
        return answer(`Illegal move: ${problem}.\n${render(game.board)}\n${ASK}`, { reward: ctx.config.illegal_move_reward }, { illegal_move: problem });
      }
      game.board[(cell as number) - 1] = 'X';
      const end = (result: 'win' | 'loss' | 'draw', reward: number, text: string) =>
        answer(`${text}\n${render(game.board)}`, { reward, terminated: true }, { result, illegal_moves: game.illegal, board: render(game.board) });
      if (winner(game.board) === 'X') return end('win', 1, 'You win.');
      if (full(game.board)) return end('draw', 0, 'Draw.');
      const o = opponentMove(game.board, game.opponent);
      game.board[o] = 'O';
      if (winner(game.board) === 'O') return end('loss', -1, `O plays ${o + 1} and wins.`);
      if (full(game.board)) return end('draw', 0, `O plays ${o + 1}. Draw.`);
      return answer(`O plays ${o + 1}.\n${render(game.board)}\n${ASK}`, { reward: 0 });
    },
  },
});

startIfMain(import.meta.url, server);
