/**
 * tau2's own retail tool tests (tests/test_domains/test_retail/test_tools_retail.py), ported: the
 * same fixture database, calls and expected contents; then error texts for missing users, orders,
 * items, products and payment methods, argument binding errors, and the calculator. None needs
 * the shared data.
 */
import { describe, expect, it } from 'vitest';
import { recordsFromPy, RetailDb } from '../src/db.js';
import { getResponse } from '../src/tools.js';
import { toTreeForTest } from './fixture.js';

/** tau2's `retail_db` fixture. */
function fixtureDb(): RetailDb {
  const address = { address1: '123 Main St', address2: 'Apt 1', city: 'San Francisco', state: 'CA', country: 'USA', zip: '94105' };
  return new RetailDb(
    recordsFromPy(
      toTreeForTest({
        users: {
          sara_doe_496: {
            user_id: 'sara_doe_496',
            name: { first_name: 'Sara', last_name: 'Doe' },
            address,
            email: 'sara.doe@example.com',
            payment_methods: {
              credit_card_0000000: { source: 'credit_card', brand: 'visa', last_four: '1234', id: 'credit_card_0000000' },
              gift_card_0000000: { source: 'gift_card', balance: 100.0, id: 'gift_card_0000000' },
            },
            orders: ['#W0000000'],
          },
        },
        orders: {
          '#W0000000': {
            order_id: '#W0000000',
            user_id: 'sara_doe_496',
            status: 'pending',
            items: [{ name: 'Classic T-Shirt', product_id: '6086499569', item_id: '1008292230', price: 29.99, options: { size: 'M', color: 'blue' } }],
            address,
            fulfillments: [],
            payment_history: [{ transaction_type: 'payment', amount: 29.99, payment_method_id: 'credit_card_0000000' }],
          },
        },
        products: {
          '6086499569': {
            product_id: '6086499569',
            name: 'Classic T-Shirt',
            variants: {
              '1008292230': { item_id: '1008292230', price: 29.99, available: true, options: { size: 'M', color: 'blue' } },
              '1008292231': { item_id: '1008292231', price: 29.99, available: true, options: { size: 'L', color: 'blue' } },
            },
          },
        },
      }),
    ),
  );
}

const call = (db: RetailDb, name: string, args: Record<string, unknown>) => getResponse(db, name, args).content;
const orderOf = (db: RetailDb) => db.orders.get('#W0000000')!;

describe("tau2's retail tool tests", () => {
  it('calculate', () => {
    expect(call(fixtureDb(), 'calculate', { expression: '2 + 2' })).toBe('4.0');
  });

  it('cancel_pending_order', () => {
    const db = fixtureDb();
    call(db, 'cancel_pending_order', { order_id: '#W0000000', reason: 'no longer needed' });
    const order = orderOf(db);
    expect(order.status).toBe('cancelled');
    expect(order.cancel_reason).toBe('no longer needed');
    expect(order.payment_history).toHaveLength(2);
    expect(order.payment_history[1]!.transaction_type).toBe('refund');
    expect(order.payment_history[1]!.amount).toBe(order.payment_history[0]!.amount);
  });

  it('exchange_delivered_order_items', () => {
    const db = fixtureDb();
    db.writableOrder('#W0000000').status = 'delivered';
    call(db, 'exchange_delivered_order_items', { order_id: '#W0000000', item_ids: ['1008292230'], new_item_ids: ['1008292231'], payment_method_id: 'credit_card_0000000' });
    const order = orderOf(db);
    expect(order.status).toBe('exchange requested');
    expect(order.exchange_items).toEqual(['1008292230']);
    expect(order.exchange_new_items).toEqual(['1008292231']);
    expect(order.exchange_payment_method_id).toBe('credit_card_0000000');
  });

  it('find_user_id_by_name_zip', () => {
    const db = fixtureDb();
    expect(call(db, 'find_user_id_by_name_zip', { first_name: 'Sara', last_name: 'Doe', zip: '94105' })).toBe('sara_doe_496');
    expect(call(db, 'find_user_id_by_name_zip', { first_name: 'John', last_name: 'Doe', zip: '94105' })).toBe('Error: User not found');
  });

  it('find_user_id_by_email', () => {
    const db = fixtureDb();
    expect(call(db, 'find_user_id_by_email', { email: 'sara.doe@example.com' })).toBe('sara_doe_496');
    expect(call(db, 'find_user_id_by_email', { email: 'nonexistent@example.com' })).toBe('Error: User not found');
  });

  it('get_order_details', () => {
    expect(call(fixtureDb(), 'get_order_details', { order_id: '#NONEXISTENT' })).toBe('Error: Order not found');
  });

  it('get_product_details', () => {
    expect(call(fixtureDb(), 'get_product_details', { product_id: 'NONEXISTENT' })).toBe('Error: Product not found');
  });

  it('get_user_details', () => {
    expect(call(fixtureDb(), 'get_user_details', { user_id: 'NONEXISTENT' })).toBe('Error: User not found');
  });

  it('list_all_product_types', () => {
    expect(JSON.parse(call(fixtureDb(), 'list_all_product_types', {}))).toHaveProperty(['Classic T-Shirt']);
  });

  it('modify_pending_order_address', () => {
    const db = fixtureDb();
    const args = { order_id: '#W0000000', address1: '456 New St', address2: 'Apt 2', city: 'San Francisco', state: 'CA', country: 'USA', zip: '94106' };
    call(db, 'modify_pending_order_address', args);
    expect(orderOf(db).address).toMatchObject({ address1: '456 New St', address2: 'Apt 2', zip: '94106' });
    db.writableOrder('#W0000000').status = 'delivered';
    expect(call(db, 'modify_pending_order_address', args)).toBe('Error: Non-pending order cannot be modified');
  });

  it('modify_pending_order_items', () => {
    const db = fixtureDb();
    const args = { order_id: '#W0000000', item_ids: ['1008292230'], new_item_ids: ['1008292231'], payment_method_id: 'credit_card_0000000' };
    call(db, 'modify_pending_order_items', args);
    expect(orderOf(db).status).toBe('pending (item modified)');
    expect(orderOf(db).items[0]!.item_id).toBe('1008292231');
    db.writableOrder('#W0000000').status = 'delivered';
    expect(call(db, 'modify_pending_order_items', args)).toBe('Error: Non-pending order cannot be modified');
  });

  it('modify_pending_order_payment', () => {
    const db = fixtureDb();
    call(db, 'modify_pending_order_payment', { order_id: '#W0000000', payment_method_id: 'gift_card_0000000' });
    expect(orderOf(db).payment_history).toHaveLength(3);
    db.writableOrder('#W0000000').status = 'delivered';
    expect(call(db, 'modify_pending_order_payment', { order_id: '#W0000000', payment_method_id: 'gift_card_0000000' })).toBe('Error: Non-pending order cannot be modified');
  });

  it('modify_user_address', () => {
    const db = fixtureDb();
    const args = { user_id: 'sara_doe_496', address1: '789 New St', address2: 'Apt 3', city: 'San Francisco', state: 'CA', country: 'USA', zip: '94107' };
    call(db, 'modify_user_address', args);
    expect(db.users.get('sara_doe_496')!.address).toMatchObject({ address1: '789 New St', address2: 'Apt 3', zip: '94107' });
    expect(call(db, 'modify_user_address', { ...args, user_id: 'NONEXISTENT' })).toBe('Error: User not found');
  });

  it('return_delivered_order_items', () => {
    const db = fixtureDb();
    db.writableOrder('#W0000000').status = 'delivered';
    const args = { order_id: '#W0000000', item_ids: ['1008292230'], payment_method_id: 'credit_card_0000000' };
    call(db, 'return_delivered_order_items', args);
    const order = orderOf(db);
    expect(order.status).toBe('return requested');
    expect(order.return_items).toEqual(['1008292230']);
    expect(order.return_payment_method_id).toBe('credit_card_0000000');
    db.writableOrder('#W0000000').status = 'pending';
    expect(call(db, 'return_delivered_order_items', args)).toBe('Error: Non-delivered order cannot be returned');
  });

  it('transfer_to_human_agents', () => {
    expect(call(fixtureDb(), 'transfer_to_human_agents', { summary: 'The user wants to cancel the order.' })).toBe('Transfer successful');
  });
});

describe('tool outputs and error texts', () => {
  it('a record is written as pydantic + json.dumps write it: model field order, every optional field, floats with .0', () => {
    const db = fixtureDb();
    expect(call(db, 'get_item_details', { item_id: '1008292231' })).toBe('{"item_id": "1008292231", "options": {"size": "L", "color": "blue"}, "available": true, "price": 29.99}');
    const card = call(db, 'get_user_details', { user_id: 'sara_doe_496' });
    expect(card).toContain('"payment_methods": {"credit_card_0000000": {"source": "credit_card", "id": "credit_card_0000000", "brand": "visa", "last_four": "1234"}, "gift_card_0000000": {"source": "gift_card", "id": "gift_card_0000000", "balance": 100.0}}');
    expect(card).toContain('"address": {"address1": "123 Main St", "address2": "Apt 1", "city": "San Francisco", "country": "USA", "state": "CA", "zip": "94105"}');
    expect(call(db, 'get_order_details', { order_id: '#W0000000' })).toMatch(
      /"payment_history": \[\{"transaction_type": "payment", "amount": 29\.99, "payment_method_id": "credit_card_0000000"\}\], "cancel_reason": null, "exchange_items": null, "exchange_new_items": null, "exchange_payment_method_id": null, "exchange_price_difference": null, "return_items": null, "return_payment_method_id": null\}$/,
    );
  });

  it('an exchange of no items stores the int 0, as tau2 does', () => {
    const db = fixtureDb();
    db.writableOrder('#W0000000').status = 'delivered';
    const out = call(db, 'exchange_delivered_order_items', { order_id: '#W0000000', item_ids: [], new_item_ids: [], payment_method_id: 'gift_card_0000000' });
    expect(out).toContain('"exchange_items": [], "exchange_new_items": [], "exchange_payment_method_id": "gift_card_0000000", "exchange_price_difference": 0, ');
  });

  it("tau2's texts for missing users, orders, items, products, variants and payment methods", () => {
    const db = fixtureDb();
    const cases: [string, Record<string, unknown>, string][] = [
      ['get_user_details', { user_id: 'nobody_1' }, 'Error: User not found'],
      ['find_user_id_by_email', { email: 'x@y.z' }, 'Error: User not found'],
      ['modify_user_address', { user_id: 'nobody_1', address1: 'a', address2: 'b', city: 'c', state: 'd', country: 'e', zip: 'f' }, 'Error: User not found'],
      ['get_order_details', { order_id: 'W0000000' }, 'Error: Order not found'],
      ['cancel_pending_order', { order_id: '#W9', reason: 'no longer needed' }, 'Error: Order not found'],
      ['return_delivered_order_items', { order_id: '#W9', item_ids: [], payment_method_id: 'x' }, 'Error: Order not found'],
      ['get_item_details', { item_id: '6086499569' }, 'Error: Item not found'],
      ['get_product_details', { product_id: '1008292230' }, 'Error: Product not found'],
      ['modify_pending_order_items', { order_id: '#W0000000', item_ids: ['1008292230'], new_item_ids: ['1'], payment_method_id: 'credit_card_0000000' }, 'Error: Variant not found'],
      ['modify_pending_order_items', { order_id: '#W0000000', item_ids: ['1'], new_item_ids: ['2'], payment_method_id: 'credit_card_0000000' }, 'Error: 1 not found'],
      ['modify_pending_order_items', { order_id: '#W0000000', item_ids: ['1008292230'], new_item_ids: ['1008292230'], payment_method_id: 'credit_card_0000000' }, 'Error: The new item id should be different from the old item id'],
      ['modify_pending_order_items', { order_id: '#W0000000', item_ids: ['1008292230'], new_item_ids: [], payment_method_id: 'credit_card_0000000' }, 'Error: The number of items to be exchanged should match'],
      ['modify_pending_order_payment', { order_id: '#W0000000', payment_method_id: 'paypal_1' }, 'Error: Payment method not found'],
      ['modify_pending_order_payment', { order_id: '#W0000000', payment_method_id: 'credit_card_0000000' }, 'Error: The new payment method should be different from the current one'],
      ['cancel_pending_order', { order_id: '#W0000000', reason: 'changed my mind' }, 'Error: Invalid reason'],
      ['exchange_delivered_order_items', { order_id: '#W0000000', item_ids: [], new_item_ids: [], payment_method_id: 'x' }, 'Error: Non-delivered order cannot be exchanged'],
      ['get_order_details', { order_id: ['#W0000000'] }, "Error: unhashable type: 'list'"],
      ['get_user_details', { user_id: 496 }, 'Error: User not found'],
      ['find_user_id_by_email', { email: 5 }, "Error: 'int' object has no attribute 'lower'"],
    ];
    for (const [name, args, expected] of cases) expect(call(db, name, args), `${name} ${JSON.stringify(args)}`).toBe(expected);
  });

  it("a non-string address field answers pydantic's ValidationError text (pydantic 2.12, as tau2 locks it)", () => {
    const out = call(fixtureDb(), 'modify_user_address', { user_id: 'sara_doe_496', address1: 1, address2: '', city: null, state: 's', country: 7, zip: [1] });
    expect(out).toBe(
      'Error: 4 validation errors for UserAddress\naddress1\n  Input should be a valid string [type=string_type, input_value=1, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.12/v/string_type\n' +
        'city\n  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.12/v/string_type\n' +
        'country\n  Input should be a valid string [type=string_type, input_value=7, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.12/v/string_type\n' +
        'zip\n  Input should be a valid string [type=string_type, input_value=[1], input_type=list]\n    For further information visit https://errors.pydantic.dev/2.12/v/string_type',
    );
  });

  it('delivered-order errors name the item as tau2 does', () => {
    const db = fixtureDb();
    db.writableOrder('#W0000000').status = 'delivered';
    expect(call(db, 'exchange_delivered_order_items', { order_id: '#W0000000', item_ids: ['9'], new_item_ids: ['8'], payment_method_id: 'credit_card_0000000' })).toBe('Error: Number of 9 not found.');
    expect(call(db, 'exchange_delivered_order_items', { order_id: '#W0000000', item_ids: ['1008292230'], new_item_ids: [], payment_method_id: 'credit_card_0000000' })).toBe('Error: The number of items to be exchanged should match.');
    expect(call(db, 'return_delivered_order_items', { order_id: '#W0000000', item_ids: ['9'], payment_method_id: 'credit_card_0000000' })).toBe('Error: Some item not found');
    expect(call(db, 'return_delivered_order_items', { order_id: '#W0000000', item_ids: ['1008292230'], payment_method_id: 'paypal_0' })).toBe('Error: Payment method not found');
  });

  it('arguments bind as Python binds keyword arguments', () => {
    const db = fixtureDb();
    expect(call(db, 'get_order_details', {})).toBe("Error: RetailTools.get_order_details() missing 1 required positional argument: 'order_id'");
    expect(call(db, 'get_order_details', { order_id: '#W0000000', verbose: true })).toBe("Error: RetailTools.get_order_details() got an unexpected keyword argument 'verbose'");
    expect(call(db, 'return_delivered_order_items', { order_id: '#W0000000' })).toBe("Error: RetailTools.return_delivered_order_items() missing 2 required positional arguments: 'item_ids' and 'payment_method_id'");
    expect(call(db, 'find_user_id_by_name_zip', {})).toBe("Error: RetailTools.find_user_id_by_name_zip() missing 3 required positional arguments: 'first_name', 'last_name', and 'zip'");
    expect(call(db, 'no_such_tool', {})).toBe("Error: Tool 'no_such_tool' not found.");
  });

  it('a failed call changes nothing; a gift card refund is rounded to cents', () => {
    const db = fixtureDb();
    const before = db.hash();
    call(db, 'cancel_pending_order', { order_id: '#W0000000', reason: 'nope' });
    expect(db.hash()).toBe(before);
    call(db, 'modify_pending_order_payment', { order_id: '#W0000000', payment_method_id: 'gift_card_0000000' });
    const card = db.users.get('sara_doe_496')!.payment_methods.get('gift_card_0000000');
    expect(card).toEqual({ source: 'gift_card', id: 'gift_card_0000000', balance: 70.01 });
  });

  it('forks share records until one writes', () => {
    const base = fixtureDb();
    const a = base.fork();
    const b = base.fork();
    call(a, 'cancel_pending_order', { order_id: '#W0000000', reason: 'ordered by mistake' });
    expect(a.orders.get('#W0000000')!.status).toBe('cancelled');
    expect(b.orders.get('#W0000000')!.status).toBe('pending');
    expect(base.orders.get('#W0000000')!.status).toBe('pending');
    expect(a.sameAs(b)).toBe(false);
    call(b, 'cancel_pending_order', { order_id: '#W0000000', reason: 'ordered by mistake' });
    expect(a.sameAs(b)).toBe(true);
    expect(a.hash()).toBe(b.hash());
  });
});

describe('calculate', () => {
  // Python 3.11: str(round(float(eval(e, {"__builtins__": None}, {})), 2)), or the exception's text
  const cases: [string, string][] = [
    ['2 + 2', '4.0'],
    ['100/3', '33.33'],
    ['0.1+0.2', '0.3'],
    ['2 ** 3 ** 2', '512.0'],
    ['-7//2', '-4.0'],
    ['7.5//2', '3.0'],
    ['2*-3', '-6.0'],
    ['--2', '2.0'],
    ['.5+.5', '1.0'],
    ['3.', '3.0'],
    ['00', '0.0'],
    [' 1+1', '2.0'],
    ['2**-1', '0.5'],
    ['123456789012345678901234567890', '1.2345678901234568e+29'],
    ['10**400/10**399', '10.0'],
    ['1e5', 'Error: Invalid characters in expression'],
    ['', 'Error: invalid syntax (<string>, line 0)'],
    ['1+', 'Error: invalid syntax (<string>, line 1)'],
    ['1.5.5', 'Error: invalid syntax (<string>, line 1)'],
    ['(1+2', "Error: '(' was never closed (<string>, line 1)"],
    ['1+2)', "Error: unmatched ')' (<string>, line 1)"],
    ['01', 'Error: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)'],
    ['1/0', 'Error: division by zero'],
    ['1.0/0', 'Error: float division by zero'],
    ['1//0', 'Error: integer division or modulo by zero'],
    ['1.5//0', 'Error: float floor division by zero'],
    ['0**-1', 'Error: 0.0 cannot be raised to a negative power'],
    ['2**2000', 'Error: int too large to convert to float'],
    ['...', "Error: float() argument must be a string or a real number, not 'ellipsis'"],
    ['()', "Error: float() argument must be a string or a real number, not 'tuple'"],
    ['(-8)**(1/3)', "Error: float() argument must be a string or a real number, not 'complex'"],
  ];
  it.each(cases)('%j', (expression, expected) => {
    expect(call(fixtureDb(), 'calculate', { expression })).toBe(expected);
  });

});
