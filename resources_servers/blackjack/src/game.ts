/**
 * Blackjack as upstream's example plays it: cards are drawn with replacement from the thirteen
 * ranks; the player hits or stands; the dealer draws to 17. Here every draw comes from a generator
 * seeded by the row, so a row deals the same cards on every run (upstream draws unseeded).
 */
import { mulberry32 } from '@nemo-gym/core/data';

export const RANKS = ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'] as const;
export type Rank = (typeof RANKS)[number];

/** The cards of one game, drawn in order from the seed. */
export class Shoe {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  draw(): Rank {
    return RANKS[Math.floor(this.next() * RANKS.length)]!;
  }
}

/** A hand's value: aces count 11, then 1 while the hand is over 21. */
export function handValue(hand: readonly Rank[]): number {
  let total = 0;
  let aces = 0;
  for (const r of hand) {
    if (r === 'A') {
      total += 11;
      aces++;
    } else total += r === 'J' || r === 'Q' || r === 'K' ? 10 : Number(r);
  }
  while (total > 21 && aces > 0) {
    total -= 10;
    aces--;
  }
  return total;
}

export function fmt(hand: readonly Rank[]): string {
  return `[${hand.join(', ')}]`;
}

export interface Deal {
  shoe: Shoe;
  player: Rank[];
  dealer: Rank[];
}

/** The opening deal: two cards to the player, then two to the dealer (upstream's order). */
export function deal(seed: number): Deal {
  const shoe = new Shoe(seed);
  const player = [shoe.draw(), shoe.draw()];
  const dealer = [shoe.draw(), shoe.draw()];
  return { shoe, player, dealer };
}

export type Outcome = 'win' | 'draw' | 'loss';

/** The dealer draws to 17; then the hands are compared. */
export function settle(game: Deal): { outcome: Outcome; reward: number; player: number; dealer: number } {
  while (handValue(game.dealer) < 17) game.dealer.push(game.shoe.draw());
  const pv = handValue(game.player);
  const dv = handValue(game.dealer);
  if (dv > 21 || pv > dv) return { outcome: 'win', reward: 1, player: pv, dealer: dv };
  if (pv === dv) return { outcome: 'draw', reward: 0, player: pv, dealer: dv };
  return { outcome: 'loss', reward: -1, player: pv, dealer: dv };
}
