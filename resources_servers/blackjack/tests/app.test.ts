import { describe, expect, it } from 'vitest';
import { checkExampleData, exampleRows, textResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';
import { deal, fmt, handValue, settle, type Rank } from '../src/game.js';

const bj = useTestServer(server, { config: { name: 'blackjack', domain: 'games' } });
const here = new URL('..', import.meta.url);
const ROW = { responses_create_params: { input: 'play' } };
const act = (text: string) => ({ ...ROW, response: textResponse(text) });

/** The first seed from 1 whose deal satisfies `pred`. */
function seedWhere(pred: (seed: number) => boolean): number {
  for (let s = 1; s < 10_000; s++) if (pred(s)) return s;
  throw new Error('no such seed');
}

describe('the rules', () => {
  it('counts aces as 11, then 1 while over 21; faces as 10', () => {
    const v = (h: Rank[]) => handValue(h);
    expect(v(['A', 'K'])).toBe(21);
    expect(v(['A', 'A', '9'])).toBe(21);
    expect(v(['A', 'A', 'A', 'K', '9'])).toBe(22);
    expect(v(['Q', 'J', '2'])).toBe(22);
  });

  it('the same seed deals the same cards; the dealer draws to 17', () => {
    const [a, b] = [deal(42), deal(42)];
    expect([a.player, a.dealer, a.shoe.draw(), a.shoe.draw()]).toEqual([b.player, b.dealer, b.shoe.draw(), b.shoe.draw()]);
    const differ = seedWhere((s) => JSON.stringify(deal(s).player) !== JSON.stringify(deal(1).player));
    expect(differ).toBeGreaterThan(1);
    const g = deal(7);
    settle(g);
    expect(handValue(g.dealer)).toBeGreaterThanOrEqual(17);
  });
});

describe('reset and step', () => {
  it('shows the seed\'s hand, and stand settles as the rules say', async () => {
    const seed = seedWhere((s) => settle(deal(s)).outcome === 'win');
    const s = bj.session();
    const g = deal(seed);
    const r = await s.post('/reset', { ...ROW, seed });
    expect(r.json.observation).toBe(`Your hand: ${fmt(g.player)} = ${handValue(g.player)}\nDealer shows: ${g.dealer[0]}\nRespond with <action>hit</action> or <action>stand</action>.`);
    const step = await s.post('/step', act('<action>STAND</action>'));
    const expected = settle(deal(seed));
    expect(step.json).toMatchObject({ observation: null, reward: 1, terminated: true, info: { result: 'win', player_value: expected.player, dealer_value: expected.dealer } });
  });

  it('hit deals the next card: over 21 loses at once, else the model is asked again', async () => {
    const bust = seedWhere((s) => {
      const g = deal(s);
      g.player.push(g.shoe.draw());
      return handValue(g.player) > 21;
    });
    const s = bj.session();
    await s.post('/reset', { ...ROW, seed: bust });
    expect((await s.post('/step', act('<action> hit </action>'))).json).toMatchObject({ reward: -1, terminated: true, info: { result: 'bust' } });

    const safe = seedWhere((seed) => {
      const g = deal(seed);
      g.player.push(g.shoe.draw());
      return handValue(g.player) <= 21;
    });
    const t = bj.session();
    await t.post('/reset', { ...ROW, seed: safe });
    const again = await t.post('/step', act('<action>hit</action>'));
    expect(again.json).toMatchObject({ reward: 0, terminated: false });
    expect(again.json.observation).toMatch(/^Your hand: \[.*, .*, .*\] = \d+\n/);
  });

  it('an answer without an action tag stands (upstream\'s rule)', async () => {
    const s = bj.session();
    await s.post('/reset', { ...ROW, seed: 3 });
    expect((await s.post('/step', act('hmm'))).json.terminated).toBe(true);
  });

  it('a row without a seed fails its reset with a clear error', async () => {
    const r = await bj.post('/reset', ROW);
    expect(r.json).toMatchObject({ code: 'NG_ERR_ENV_RESET_FAILED', detail: expect.stringContaining('seed') });
  });
});

describe('our example rows', () => {
  it('pass the example-data checks and every row deals', async () => {
    checkExampleData(here);
    for (const row of exampleRows(here)) expect((await bj.session().post('/reset', row)).json.observation).toMatch(/^Your hand: /);
  });
});
