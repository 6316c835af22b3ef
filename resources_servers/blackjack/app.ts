/**
 * blackjack: a Gymnasium-style environment (upstream's blackjack example, seeded). The model
 * answers `<action>hit</action>` or `<action>stand</action>`; a hand over 21 loses at once (−1);
 * on stand the dealer draws to 17 and the hands are compared: win 1, draw 0, loss −1. An answer
 * without an action tag stands, as upstream's does. The row's `seed` fixes every card.
 */
import { z } from 'zod';
import { outputText } from '@nemo-gym/core/openai';
import { LaxInt } from '@nemo-gym/core/py';
import { defineResourcesServer, GymnasiumServerConfigSchema, startIfMain, type Episode } from '@nemo-gym/core/server';
import { deal, fmt, handValue, settle, type Deal } from './src/game.js';

export const BlackjackConfigSchema = GymnasiumServerConfigSchema;

const RowSchema = z.looseObject({ seed: LaxInt });
const ACTION = /<action>\s*(hit|stand)\s*<\/action>/i;

function prompt(game: Deal): string {
  return `Your hand: ${fmt(game.player)} = ${handValue(game.player)}\nDealer shows: ${game.dealer[0]}\nRespond with <action>hit</action> or <action>stand</action>.`;
}

export const server = defineResourcesServer({
  className: 'BlackjackResourcesServer',
  configSchema: BlackjackConfigSchema,
  gymnasium: {
    reset(metadata, episode: Episode<Deal>) {
      const { seed } = RowSchema.parse(metadata);
      episode.state = deal(seed);
      return { observation: prompt(episode.state), info: {} };
    },
    step(action, _metadata, episode: Episode<Deal>) {
      const game = episode.state!;
      const m = ACTION.exec(outputText(action));
      const decision = m ? m[1]!.toLowerCase() : 'stand';
      if (decision === 'hit') {
        game.player.push(game.shoe.draw());
        const value = handValue(game.player);
        if (value > 21) return { observation: null, reward: -1, terminated: true, info: { result: 'bust', player: fmt(game.player), value } };
        return { observation: prompt(game), reward: 0 };
      }
      const s = settle(game);
      return {
        observation: null,
        reward: s.reward,
        terminated: true,
        info: { result: s.outcome, player: fmt(game.player), player_value: s.player, dealer: fmt(game.dealer), dealer_value: s.dealer },
      };
    },
  },
});

startIfMain(import.meta.url, server);
