/** tau2's evaluator on a small database: initial states, the DB check, the reward basis, the transcript. */
import { describe, expect, it } from 'vitest';
import { recordsFromPy, type RetailRecords } from '../src/db.js';
import { evaluate, initialDb, nlUserPrompt, TaskSetupError, toMessages } from '../src/evaluate.js';
import { getResponse } from '../src/tools.js';
import { toTreeForTest } from './fixture.js';
import { assistantSays, callItems } from './helpers.js';

const address = { address1: '1 A St', address2: '', city: 'X', country: 'USA', state: 'CA', zip: '90001' };
function records(): RetailRecords {
  return recordsFromPy(
    toTreeForTest({
      products: { p1: { name: 'Lamp', product_id: 'p1', variants: { v1: { item_id: 'v1', options: { color: 'red' }, available: true, price: 10 }, v2: { item_id: 'v2', options: { color: 'blue' }, available: true, price: 12.5 } } } },
      users: { ann_1: { user_id: 'ann_1', name: { first_name: 'Ann', last_name: 'Lee' }, address, email: 'ann@x.com', payment_methods: { gift_card_1: { source: 'gift_card', id: 'gift_card_1', balance: 50 } }, orders: ['#W1'] } },
      orders: {
        '#W1': { order_id: '#W1', user_id: 'ann_1', address, items: [{ name: 'Lamp', product_id: 'p1', item_id: 'v1', price: 10, options: { color: 'red' } }], status: 'pending', fulfillments: [], payment_history: [{ transaction_type: 'payment', amount: 10, payment_method_id: 'gift_card_1' }] },
      },
    }),
  );
}

const cancel = { action_id: 'a', requestor: 'assistant' as const, name: 'cancel_pending_order', arguments: { order_id: '#W1', reason: 'no longer needed' } };
const criteria = (over: Record<string, unknown> = {}) => ({ actions: [cancel], communicate_info: ['10.00'], nl_assertions: null, reward_basis: ['DB' as const], ...over });

function trajectory(base: RetailRecords, calls: { name: string; arguments: Record<string, unknown> }[], say = 'Refunded 10.00 to your gift card.'): unknown[] {
  const db = initialDb(base, null);
  return [...calls.flatMap((c) => callItems(c.name, c.arguments, getResponse(db, c.name, c.arguments).content)), assistantSays(say)];
}

describe('tau2 evaluator', () => {
  it('DB check: the same end state by another path matches; a missing write does not', async () => {
    const base = records();
    const same = await evaluate({ base, criteria: criteria(), initialState: null, items: trajectory(base, [{ name: 'get_order_details', arguments: { order_id: '#W1' } }, cancel]), judge: undefined });
    expect([same.reward, same.db_check, same.reward_breakdown]).toEqual([1.0, { db_match: true, db_reward: 1.0 }, { DB: 1.0 }]);
    const none = await evaluate({ base, criteria: criteria(), initialState: null, items: trajectory(base, []), judge: undefined });
    expect([none.reward, none.db_check]).toEqual([0.0, { db_match: false, db_reward: 0.0 }]);
    // the communicate check runs but only counts with COMMUNICATE in the basis
    expect(none.communicate_checks).toEqual([{ info: '10.00', met: true, justification: "Information '10.00' communicated in the message:\n 'Refunded 10.00 to your gift card.'" }]);
    const strict = await evaluate({ base, criteria: criteria({ reward_basis: ['DB', 'COMMUNICATE'] }), initialState: null, items: trajectory(base, [cancel], 'Done.'), judge: undefined });
    expect([strict.reward, strict.reward_breakdown]).toEqual([0.0, { DB: 1.0, COMMUNICATE: 0.0 }]);
  });

  it('no actions and no assertions: a DB match by definition, with no DB entry in the breakdown', async () => {
    const r = await evaluate({ base: records(), criteria: { actions: null, reward_basis: ['DB'] }, initialState: null, items: [], judge: undefined });
    expect([r.reward, r.db_check, r.reward_breakdown, r.info!.env]).toEqual([1.0, { db_match: true, db_reward: 1.0 }, {}, { note: 'No expected actions or env assertions' }]);
  });

  it('initial state: agent_data merged into the database, then initialization actions, for both sides', async () => {
    const base = records();
    const state = {
      initialization_data: { agent_data: { users: { ann_1: { email: 'ann@new.com', payment_methods: { gift_card_1: { balance: 5 } } } } } },
      initialization_actions: [{ env_type: 'assistant' as const, func_name: 'modify_pending_order_address', arguments: { order_id: '#W1', ...address, city: 'Y' } }],
    };
    const db = initialDb(base, state);
    expect(getResponse(db, 'find_user_id_by_email', { email: 'ann@new.com' }).content).toBe('ann_1');
    expect(db.users.get('ann_1')!.payment_methods.get('gift_card_1')).toEqual({ source: 'gift_card', id: 'gift_card_1', balance: 5 });
    expect(db.orders.get('#W1')!.address.city).toBe('Y');
    expect(base.users.get('ann_1')!.email).toBe('ann@x.com');
    const calls = [cancel];
    const start = initialDb(base, state);
    const items = [...calls.flatMap((c) => callItems(c.name, c.arguments, getResponse(start, c.name, c.arguments).content)), assistantSays('ok')];
    const r = await evaluate({ base, criteria: criteria(), initialState: state, items, judge: undefined });
    expect(r.db_check).toEqual({ db_match: true, db_reward: 1.0 });
    expect(r.info!.env).toBeNull();
    expect(() => initialDb(base, { initialization_data: { user_data: { x: 1 } } })).toThrow(TaskSetupError);
    expect(() => initialDb(base, { initialization_actions: [{ env_type: 'assistant', func_name: 'cancel_pending_order', arguments: { order_id: '#W9', reason: 'no longer needed' } }] })).toThrow(/ValueError: Order not found/);
  });

  it('a replayed write answering differently from the recorded output is listed, and the replay goes on', async () => {
    const base = records();
    const items = [...callItems(cancel.name, cancel.arguments, 'Error: made up'), assistantSays('ok')];
    const r = await evaluate({ base, criteria: criteria(), initialState: null, items, judge: undefined });
    expect(r.db_check!.db_match).toBe(true);
    expect((r.info!.env as { replay_mismatches: { name: string }[] }).replay_mismatches.map((m) => m.name)).toEqual(['cancel_pending_order']);
  });

  it("the judge's transcript is tau2's: role: content lines, None for tool-call turns", () => {
    const items = [{ role: 'system', content: 'policy' }, { role: 'assistant', content: 'Hi!' }, { role: 'user', content: [{ type: 'input_text', text: 'Cancel #W1' }] }, ...callItems('get_order_details', { order_id: '#W1' }, '{"a": 1}'), assistantSays('Cancelled.')];
    expect(nlUserPrompt(toMessages(items), ["Agent says it's done"])).toBe(
      '\n        conversation:\n        assistant: Hi!\nuser: Cancel #W1\nassistant: None\ntool: {"a": 1}\nassistant: Cancelled.\n        \n        expectedOutcomes:\n        ["Agent says it\'s done"]\n        ',
    );
  });
});
