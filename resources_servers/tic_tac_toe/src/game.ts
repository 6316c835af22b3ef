/**
 * Tic-tac-toe: the model plays X, a scripted opponent plays O. Cells are numbered 1–9, row by row.
 * Opponents: `first_free` takes the lowest free cell; `blocking` wins when it can, blocks the
 * model's win when it must, else takes the centre, then a corner, then a side.
 */
export type Mark = 'X' | 'O' | null;
export type Board = Mark[];
export type Opponent = 'first_free' | 'blocking';

const LINES: readonly (readonly [number, number, number])[] = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
];

export function emptyBoard(): Board {
  return Array.from({ length: 9 }, () => null);
}

export function winner(board: Board): Mark {
  for (const [a, b, c] of LINES) if (board[a] && board[a] === board[b] && board[a] === board[c]) return board[a];
  return null;
}

export function full(board: Board): boolean {
  return board.every((m) => m !== null);
}

/** The board as text: three rows of cells, free cells shown by their number. */
export function render(board: Board): string {
  const cell = (i: number) => board[i] ?? String(i + 1);
  return [0, 3, 6].map((r) => ` ${cell(r)} | ${cell(r + 1)} | ${cell(r + 2)}`).join('\n---+---+---\n');
}

/** The cell (0–8) where `mark` completes a line, or -1. */
function completing(board: Board, mark: 'X' | 'O'): number {
  for (const line of LINES) {
    const marks = line.map((i) => board[i]);
    if (marks.filter((m) => m === mark).length === 2) {
      const free = line.find((i) => board[i] === null);
      if (free !== undefined) return free;
    }
  }
  return -1;
}

/** The opponent's move (0–8) on a board with at least one free cell. */
export function opponentMove(board: Board, opponent: Opponent): number {
  const free = board.flatMap((m, i) => (m === null ? [i] : []));
  if (opponent === 'first_free') return free[0]!;
  const win = completing(board, 'O');
  if (win >= 0) return win;
  const block = completing(board, 'X');
  if (block >= 0) return block;
  for (const i of [4, 0, 2, 6, 8, 1, 3, 5, 7]) if (board[i] === null) return i;
  return free[0]!;
}

/** Why a move is not legal, or null. `cell` is what the model asked for (1–9). */
export function illegal(board: Board, cell: unknown): string | null {
  if (typeof cell !== 'number' || !Number.isInteger(cell) || cell < 1 || cell > 9) return `${JSON.stringify(cell)} is not a cell number from 1 to 9`;
  if (board[cell - 1] !== null) return `cell ${cell} is taken by ${board[cell - 1]}`;
  return null;
}
