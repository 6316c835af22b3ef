/**
 * follow_up_conversation: a Gymnasium-style environment that holds a scripted conversation. The
 * row's prompt asks a question; after each answer the environment checks it against the script's
 * `expect` and replies with the follow-up for a right or a wrong answer (so the next question
 * depends on what the model said), until the script ends. Each right answer scores 1 (the sum is
 * the rollout's reward); `info.right` and `info.answers` report the conversation at its end.
 */
import { z } from 'zod';
import { outputText } from '@nemo-gym/core/openai';
import { defineResourcesServer, GymnasiumServerConfigSchema, startIfMain, type Episode } from '@nemo-gym/core/server';
import { isRight, TurnSchema, type Turn } from './src/script.js';

export const FollowUpConfigSchema = GymnasiumServerConfigSchema;

const RowSchema = z.looseObject({ script: TurnSchema });

interface Conversation {
  turn: Turn;
  answers: boolean[];
}

export const server = defineResourcesServer({
  className: 'FollowUpConversationResourcesServer',
  configSchema: FollowUpConfigSchema,
  gymnasium: {
    reset(metadata, episode: Episode<Conversation>) {
      const { script } = RowSchema.parse(metadata);
      if (!script.expect) throw new TypeError('the script\'s first turn needs `expect`: the answer to the row\'s question');
      episode.state = { turn: script, answers: [] };
      // The row's prompt is the question: no observation of our own.
      return { observation: null, info: {} };
    },
    step(action, _metadata, episode: Episode<Conversation>) {
      const conv = episode.state!;
      const right = isRight(conv.turn, outputText(action));
      conv.answers.push(right);
      const next = right ? conv.turn.right : conv.turn.wrong;
      const reward = right ? 1 : 0;
      if (!next?.say) return { observation: null, reward, terminated: true, info: { right: conv.answers.filter(Boolean).length, answers: conv.answers } };
      if (!next.expect) return { observation: null, reward, terminated: true, info: { right: conv.answers.filter(Boolean).length, answers: conv.answers, closing: next.say } };
      conv.turn = next;
      return { observation: next.say, reward };
    },
  },
});

startIfMain(import.meta.url, server);
