import { describe, expect, it } from 'vitest';
import { checkExampleData, exampleRows, functionCall, modelResponse, textResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { emptyBoard, illegal, opponentMove, render, winner, type Board } from '../src/game.js';

const ttt = useTestServer(server, { config: { name: 'tic_tac_toe', domain: 'games' } });
const here = new URL('..', import.meta.url);
const ROW = { responses_create_params: { input: 'play' } };
const board = (s: string): Board => [...s].map((c) => (c === 'X' || c === 'O' ? c : null));

const move = (cell: unknown, id = 'fc_1') => ({ ...ROW, response: modelResponse([functionCall('play_move', { cell }, id)]) });
const tag = (text: string) => ({ ...ROW, response: textResponse(text) });

describe('the game', () => {
  it('finds lines, renders free cells by number, and checks moves', () => {
    expect(winner(board('XXX......'))).toBe('X');
    expect(winner(board('O...O...O'))).toBe('O');
    expect(winner(board('XOX......'))).toBeNull();
    expect(render(board('X...O....'))).toBe(' X | 2 | 3\n---+---+---\n 4 | O | 6\n---+---+---\n 7 | 8 | 9');
    expect(illegal(emptyBoard(), 10)).toMatch(/not a cell number/);
    expect(illegal(board('X........'), 1)).toBe('cell 1 is taken by X');
    expect(illegal(emptyBoard(), 1)).toBeNull();
  });

  it('the blocking opponent wins first, then blocks, then takes the centre', () => {
    expect(opponentMove(board('OO.XX....'), 'blocking')).toBe(2);
    expect(opponentMove(board('XX.......'), 'blocking')).toBe(2);
    expect(opponentMove(board('X........'), 'blocking')).toBe(4);
    expect(opponentMove(board('X........'), 'first_free')).toBe(1);
  });
});

describe('reset and step', () => {
  it('a tool call is answered as the tool\'s output; extra calls in one turn are not applied', async () => {
    const s = ttt.session();
    const r = await s.post('/reset', { ...ROW, opponent: 'first_free' });
    expect(r.json.observation).toMatch(/^You are X\. You move first\.\n 1 \| 2 \| 3/);
    const two = { ...ROW, response: modelResponse([functionCall('play_move', { cell: 5 }, 'a'), functionCall('play_move', { cell: 9 }, 'b')]) };
    const step = await s.post('/step', two);
    expect(step.json).toMatchObject({ observation: null, reward: 0, terminated: false });
    expect(step.json.info.tool_outputs).toEqual([
      { call_id: 'call_a', output: expect.stringMatching(/^O plays 1\.\n O \| 2 \| 3\n---\+---\+---\n 4 \| X \| 6/) },
      { call_id: 'call_b', output: 'Only one move per turn: this call was not applied.' },
    ]);
    // A cell given as a string of digits counts as that number.
    expect((await s.post('/step', move('3'))).json.info.tool_outputs[0].output).toMatch(/^O plays 2\./);
    expect((await s.post('/step', move(7))).json).toMatchObject({ reward: 1, terminated: true, info: { result: 'win', illegal_moves: 0 } });
  });

  it('an action tag is answered as the next observation; the opponent may open', async () => {
    const s = ttt.session();
    const r = await s.post('/reset', { ...ROW, opponent: 'blocking', opponent_starts: true });
    expect(r.json.observation).toMatch(/^You are X\. Your opponent \(O\) has moved\.\n 1 \| 2 \| 3\n---\+---\+---\n 4 \| O \| 6/);
    const step = await s.post('/step', tag('I take the corner. <action>1</action>'));
    expect(step.json.observation).toMatch(/^O plays 3\./);
    expect(step.json.info).toEqual({});
  });

  it('illegal moves score illegal_move_reward until the limit, which forfeits the game', async () => {
    const s = ttt.session();
    await s.post('/reset', ROW);
    await s.post('/step', move(5));
    const a = await s.post('/step', move(5, 'fc_2'));
    expect(a.json).toMatchObject({ reward: -0.1, terminated: false, info: { illegal_move: 'cell 5 is taken by X' } });
    expect(a.json.info.tool_outputs[0].output).toMatch(/^Illegal move: cell 5 is taken by X\./);
    const b = await s.post('/step', tag('no idea'));
    expect(b.json.observation).toMatch(/^Illegal move: "no move \(no play_move call/);
    const c = await s.post('/step', { ...ROW, response: modelResponse([functionCall('resign', {})]) });
    expect(c.json).toMatchObject({ reward: -1, terminated: true, info: { result: 'forfeit', illegal_moves: 3 } });
  });

  it('a full board without a line is a draw', async () => {
    const s = ttt.session();
    await s.post('/reset', { ...ROW, opponent: 'blocking' });
    // X 5, O 1, X 3, O 7 (blocks), X 4, O 6 (blocks), X 8, O 2 (blocks), X 9: a drawn game.
    const moves = [5, 3, 4, 8, 9];
    let last: Record<string, unknown> = {};
    for (const [i, m] of moves.entries()) last = (await s.post('/step', move(m, `fc_${i}`))).json;
    expect(last).toMatchObject({ reward: 0, terminated: true, info: { result: 'draw' } });
  });

  it('a row with an unknown opponent fails its reset with a clear error', async () => {
    const r = await ttt.post('/reset', { ...ROW, opponent: 'grandmaster' });
    expect(r.status).toBe(500);
    expect(r.json).toMatchObject({ code: 'NG_ERR_ENV_RESET_FAILED', detail: expect.stringContaining('opponent') });
  });
});

describe('our example rows', () => {
  it('pass the example-data checks and every row resets', async () => {
    checkExampleData(here);
    for (const row of exampleRows(here)) expect((await ttt.session().post('/reset', row)).json.observation).toMatch(/^You are X\./);
  });
});
