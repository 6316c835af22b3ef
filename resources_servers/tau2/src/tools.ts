/**
 * tau2's retail toolkit (`tau2.domains.retail.tools.RetailTools`), call for call: the same checks
 * in the same order, the same error texts, the same changes to the database (including tau2's
 * quirks, kept on purpose because the gold database hashes depend on them: `modify_pending_order_items`
 * gives every modified item the price and options of the last new item, and an exchange of no
 * items stores the int `0` as its price difference).
 *
 * Arguments arrive as tau2 passes them, `tool(**arguments)` without validation, so a value of the
 * wrong type fails as it does in Python (a missing user for a number, `unhashable type: 'list'`
 * for a list used as a key, pydantic's ValidationError for a non-string address field).
 *
 * `getResponse` is tau2's `Environment.get_response`: the tool's return through `to_json_str`,
 * or `Error: <str(exception)>`.
 */
import { PyException, pyRepr, pyRound, pyStrCompare, pyJsonDumps, pyTypeName } from '@nemo-gym/core/py';
import { calculate } from './calc.js';
import { dumpOrder, dumpProduct, dumpUser, dumpVariant, pyDumpsModel, type Dumped, type GiftCard, type Order, type PaymentMethod, type Product, type RetailDb, type User, type UserAddress, type Variant } from './db.js';

/** A JSON argument value as the tool receives it. */
export type Arg = unknown;

const valueError = (msg: string) => new PyException('ValueError', msg);
const typeError = (msg: string) => new PyException('TypeError', msg);

/** `str(v)` as an f-string writes it. */
function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** `key in d` for a dict with str keys: a list or dict key raises, any other non-str is absent. */
function has<T>(d: Map<string, T>, key: unknown): key is string {
  if (typeof key === 'string') return d.has(key);
  if (key !== null && typeof key === 'object') throw typeError(`unhashable type: '${pyTypeName(key)}'`);
  return false;
}

/** Python `==` on JSON values (1 == 1.0 == True). */
function pyEq(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const num = (v: unknown) => typeof v === 'number' || typeof v === 'boolean';
  if (num(a) && num(b)) return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => pyEq(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && pyEq((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

/** `list(v)` of an argument the tool iterates (a str iterates its characters, a dict its keys). */
function pyList(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return [...v];
  if (v !== null && typeof v === 'object') return Object.keys(v);
  throw typeError(`'${pyTypeName(v)}' object is not iterable`);
}

function pyCount(list: unknown[], x: unknown): number {
  return list.filter((y) => pyEq(y, x)).length;
}

/** `sorted(v)`: strs by code point, numbers by value, a mix raises as Python does. */
function pySorted(v: unknown): string[] {
  const list = [...pyList(v)];
  const kind = (x: unknown) => (typeof x === 'string' ? 'str' : typeof x === 'number' || typeof x === 'boolean' ? 'num' : pyTypeName(x));
  return list.sort((a, b) => {
    const ka = kind(a);
    const kb = kind(b);
    if (ka === 'str' && kb === 'str') return pyStrCompare(a as string, b as string);
    if (ka === 'num' && kb === 'num') return Number(a) - Number(b);
    throw typeError(`'<' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`);
  }) as string[];
}

/**
 * tau2's check that the order holds every listed item id (as many times as listed): the listed
 * ids as a list, or the error `missing(id)` names for the first one short.
 */
function listedItems(order: Order, itemIds: unknown, missing: (itemId: unknown) => string): unknown[] {
  const allItemIds = order.items.map((i) => i.item_id);
  const list = pyList(itemIds);
  for (const itemId of list) {
    if (pyCount(list, itemId) > pyCount(allItemIds, itemId)) throw valueError(missing(itemId));
  }
  return list;
}

/** `"pending" in status`. */
const isPending = (o: Order) => o.status.includes('pending');

// pydantic's ValidationError text for `UserAddress(...)` with non-str fields (tau2 locks pydantic 2.12.4)
const PYDANTIC_ERRORS_URL = 'https://errors.pydantic.dev/2.12/v';

function userAddress(args: Record<string, unknown>): UserAddress {
  // pydantic reports the fields in model order
  const fields = ['address1', 'address2', 'city', 'country', 'state', 'zip'] as const;
  const bad = fields.filter((f) => typeof args[f] !== 'string');
  if (bad.length > 0) {
    const lines = [`${bad.length} validation error${bad.length > 1 ? 's' : ''} for UserAddress`];
    for (const f of bad) {
      lines.push(f, `  Input should be a valid string [type=string_type, input_value=${pyRepr(args[f])}, input_type=${pyTypeName(args[f])}]`, `    For further information visit ${PYDANTIC_ERRORS_URL}/string_type`);
    }
    throw new PyException('ValidationError', lines.join('\n'));
  }
  const a = args as Record<(typeof fields)[number], string>;
  return { address1: a.address1, address2: a.address2, city: a.city, country: a.country, state: a.state, zip: a.zip };
}

class Toolkit {
  constructor(readonly db: RetailDb) {}

  getOrder(orderId: unknown): Order {
    if (!has(this.db.orders, orderId)) throw valueError('Order not found');
    return this.db.orders.get(orderId)!;
  }

  getUser(userId: unknown): User {
    if (!has(this.db.users, userId)) throw valueError('User not found');
    return this.db.users.get(userId)!;
  }

  getProduct(productId: unknown): Product {
    if (!has(this.db.products, productId)) throw valueError('Product not found');
    return this.db.products.get(productId)!;
  }

  getItem(itemId: unknown): Variant {
    for (const product of this.db.products.values()) {
      if (has(product.variants, itemId)) return product.variants.get(itemId)!;
    }
    throw valueError('Item not found');
  }

  getVariant(productId: unknown, variantId: unknown): Variant {
    const product = this.getProduct(productId);
    if (!has(product.variants, variantId)) throw valueError('Variant not found');
    return product.variants.get(variantId)!;
  }

  getPaymentMethod(userId: unknown, paymentMethodId: unknown): PaymentMethod {
    const user = this.getUser(userId);
    if (!has(user.payment_methods, paymentMethodId)) throw valueError('Payment method not found');
    return user.payment_methods.get(paymentMethodId)!;
  }

  /** The payment method as the user's private copy, for changing its balance. */
  writableGiftCard(userId: string, paymentMethodId: string): GiftCard {
    return this.db.writableUser(userId).payment_methods.get(paymentMethodId) as GiftCard;
  }
}

type ToolFn = (kit: Toolkit, a: Record<string, unknown>) => string | { model: Dumped };

interface ToolDef {
  params: readonly string[];
  /** tau2's ToolType; only `write` tools are replayed when a trajectory is scored. */
  type: 'read' | 'write' | 'generic';
  fn: ToolFn;
}

const model = (d: Dumped): { model: Dumped } => ({ model: d });

export const TOOLS = new Map<string, ToolDef>([
  [
    'calculate',
    {
      params: ['expression'],
      type: 'generic',
      fn: (_k, a) => {
        const e = a.expression;
        if (typeof e !== 'string') {
          for (const ch of pyList(e)) {
            if (typeof ch !== 'string') throw typeError(`'in <string>' requires string as left operand, not ${pyTypeName(ch)}`);
            if (!'0123456789+-*/(). '.includes(ch)) throw valueError('Invalid characters in expression');
          }
          throw typeError('eval() arg 1 must be a string, bytes or code object');
        }
        return calculate(e);
      },
    },
  ],
  [
    'cancel_pending_order',
    {
      params: ['order_id', 'reason'],
      type: 'write',
      fn: (kit, a) => {
        const found = kit.getOrder(a.order_id);
        if (found.status !== 'pending') throw valueError('Non-pending order cannot be cancelled');
        const reason = a.reason;
        if (reason !== null && typeof reason === 'object') throw typeError(`unhashable type: '${pyTypeName(reason)}'`);
        if (reason !== 'no longer needed' && reason !== 'ordered by mistake') throw valueError('Invalid reason');
        const order = kit.db.writableOrder(found.order_id);
        const refunds = [];
        for (const payment of order.payment_history) {
          const paymentId = payment.payment_method_id;
          refunds.push({ transaction_type: 'refund' as const, amount: payment.amount, payment_method_id: paymentId });
          const user = kit.getUser(order.user_id);
          const method = kit.getPaymentMethod(user.user_id, paymentId);
          if (method.source === 'gift_card') {
            const card = kit.writableGiftCard(user.user_id, paymentId);
            card.balance = pyRound(card.balance + payment.amount, 2);
          }
        }
        order.status = 'cancelled';
        order.cancel_reason = reason;
        order.payment_history.push(...refunds);
        return model(dumpOrder(order));
      },
    },
  ],
  [
    'exchange_delivered_order_items',
    {
      params: ['order_id', 'item_ids', 'new_item_ids', 'payment_method_id'],
      type: 'write',
      fn: (kit, a) => {
        const found = kit.getOrder(a.order_id);
        if (found.status !== 'delivered') throw valueError('Non-delivered order cannot be exchanged');
        const itemIds = listedItems(found, a.item_ids, (id) => `Number of ${pyStr(id)} not found.`);
        const newItemIds = pyList(a.new_item_ids);
        if (itemIds.length !== newItemIds.length) throw valueError('The number of items to be exchanged should match.');
        let diff = 0;
        let diffIsInt = true;
        for (let i = 0; i < itemIds.length; i++) {
          const item = found.items.find((it) => pyEq(it.item_id, itemIds[i]));
          if (!item) throw valueError(`Item ${pyStr(itemIds[i])} not found`);
          const variant = kit.getVariant(item.product_id, newItemIds[i]);
          if (!variant.available) throw valueError(`New item ${pyStr(newItemIds[i])} not found or available`);
          diff += variant.price - item.price;
          diffIsInt = false;
        }
        diff = pyRound(diff, 2);
        const method = kit.getPaymentMethod(found.user_id, a.payment_method_id);
        if (method.source === 'gift_card' && method.balance < diff) throw valueError('Insufficient gift card balance to pay for the price difference');
        const order = kit.db.writableOrder(found.order_id);
        order.status = 'exchange requested';
        order.exchange_items = pySorted(itemIds);
        order.exchange_new_items = pySorted(newItemIds);
        order.exchange_payment_method_id = a.payment_method_id as string;
        order.exchange_price_difference = diffIsInt ? BigInt(diff) : diff;
        return model(dumpOrder(order));
      },
    },
  ],
  [
    'find_user_id_by_name_zip',
    {
      params: ['first_name', 'last_name', 'zip'],
      type: 'read',
      fn: (kit, a) => {
        const lower = (v: unknown, attr: string) => {
          if (typeof v !== 'string') throw new PyException('AttributeError', `'${pyTypeName(v)}' object has no attribute '${attr}'`);
          return v.toLowerCase();
        };
        for (const [userId, user] of kit.db.users) {
          if (user.name.first_name.toLowerCase() === lower(a.first_name, 'lower') && user.name.last_name.toLowerCase() === lower(a.last_name, 'lower') && user.address.zip === a.zip) {
            return userId;
          }
        }
        throw valueError('User not found');
      },
    },
  ],
  [
    'find_user_id_by_email',
    {
      params: ['email'],
      type: 'read',
      fn: (kit, a) => {
        for (const [userId, user] of kit.db.users) {
          if (typeof a.email !== 'string') throw new PyException('AttributeError', `'${pyTypeName(a.email)}' object has no attribute 'lower'`);
          if (user.email.toLowerCase() === a.email.toLowerCase()) return userId;
        }
        throw valueError('User not found');
      },
    },
  ],
  ['get_order_details', { params: ['order_id'], type: 'read', fn: (kit, a) => model(dumpOrder(kit.getOrder(a.order_id))) }],
  ['get_product_details', { params: ['product_id'], type: 'read', fn: (kit, a) => model(dumpProduct(kit.getProduct(a.product_id))) }],
  ['get_item_details', { params: ['item_id'], type: 'read', fn: (kit, a) => model(dumpVariant(kit.getItem(a.item_id))) }],
  ['get_user_details', { params: ['user_id'], type: 'read', fn: (kit, a) => model(dumpUser(kit.getUser(a.user_id))) }],
  [
    'list_all_product_types',
    {
      params: [],
      type: 'read',
      fn: (kit) => {
        const byName = new Map<string, string>();
        for (const p of kit.db.products.values()) byName.set(p.name, p.product_id);
        const sorted = new Map([...byName].sort(([x], [y]) => pyStrCompare(x, y)));
        return pyJsonDumps(sorted);
      },
    },
  ],
  [
    'modify_pending_order_address',
    {
      params: ['order_id', 'address1', 'address2', 'city', 'state', 'country', 'zip'],
      type: 'write',
      fn: (kit, a) => {
        const found = kit.getOrder(a.order_id);
        if (!isPending(found)) throw valueError('Non-pending order cannot be modified');
        const address = userAddress(a);
        const order = kit.db.writableOrder(found.order_id);
        order.address = address;
        return model(dumpOrder(order));
      },
    },
  ],
  [
    'modify_pending_order_items',
    {
      params: ['order_id', 'item_ids', 'new_item_ids', 'payment_method_id'],
      type: 'write',
      fn: (kit, a) => {
        const found = kit.getOrder(a.order_id);
        if (found.status !== 'pending') throw valueError('Non-pending order cannot be modified');
        const itemIds = listedItems(found, a.item_ids, (id) => `${pyStr(id)} not found`);
        const newItemIds = pyList(a.new_item_ids);
        if (itemIds.length !== newItemIds.length) throw valueError('The number of items to be exchanged should match');
        let diff = 0;
        let variant: Variant | undefined;
        for (let i = 0; i < itemIds.length; i++) {
          if (pyEq(itemIds[i], newItemIds[i])) throw valueError('The new item id should be different from the old item id');
          const item = found.items.find((it) => pyEq(it.item_id, itemIds[i]));
          if (!item) throw valueError(`Item ${pyStr(itemIds[i])} not found`);
          variant = kit.getVariant(item.product_id, newItemIds[i]);
          if (!variant.available) throw valueError(`New item ${pyStr(newItemIds[i])} not found or available`);
          diff += variant.price - item.price;
        }
        const method = kit.getPaymentMethod(found.user_id, a.payment_method_id);
        if (method.source === 'gift_card' && method.balance < diff) throw valueError('Insufficient gift card balance to pay for the new item');
        const order = kit.db.writableOrder(found.order_id);
        const methodId = a.payment_method_id as string;
        order.payment_history.push({ transaction_type: diff > 0 ? 'payment' : 'refund', amount: Math.abs(diff), payment_method_id: methodId });
        if (method.source === 'gift_card') {
          const card = kit.writableGiftCard(order.user_id, methodId);
          card.balance = pyRound(card.balance - diff, 2);
        }
        for (let i = 0; i < itemIds.length; i++) {
          const item = order.items.find((it) => pyEq(it.item_id, itemIds[i]));
          if (!item) throw valueError(`Item ${pyStr(itemIds[i])} not found`);
          item.item_id = newItemIds[i] as string;
          // tau2 uses the variant of the last pair for every item
          item.price = variant!.price;
          item.options = variant!.options;
        }
        order.status = 'pending (item modified)';
        return model(dumpOrder(order));
      },
    },
  ],
  [
    'modify_pending_order_payment',
    {
      params: ['order_id', 'payment_method_id'],
      type: 'write',
      fn: (kit, a) => {
        const found = kit.getOrder(a.order_id);
        if (!isPending(found)) throw valueError('Non-pending order cannot be modified');
        const method = kit.getPaymentMethod(found.user_id, a.payment_method_id);
        const history = found.payment_history;
        if (history.length !== 1 || history[0]!.transaction_type !== 'payment') throw valueError('There should be exactly one payment for a pending order');
        if (pyEq(history[0]!.payment_method_id, a.payment_method_id)) throw valueError('The new payment method should be different from the current one');
        const amount = history[0]!.amount;
        if (method.source === 'gift_card' && method.balance < amount) throw valueError('Insufficient gift card balance to pay for the order');
        const order = kit.db.writableOrder(found.order_id);
        const methodId = a.payment_method_id as string;
        const oldId = order.payment_history[0]!.payment_method_id;
        order.payment_history.push({ transaction_type: 'payment', amount, payment_method_id: methodId }, { transaction_type: 'refund', amount, payment_method_id: oldId });
        if (method.source === 'gift_card') {
          const card = kit.writableGiftCard(order.user_id, methodId);
          card.balance = pyRound(card.balance - amount, 2);
        }
        const old = kit.getPaymentMethod(order.user_id, oldId);
        if (old.source === 'gift_card') {
          const card = kit.writableGiftCard(order.user_id, oldId);
          card.balance = pyRound(card.balance + amount, 2);
        }
        return model(dumpOrder(order));
      },
    },
  ],
  [
    'modify_user_address',
    {
      params: ['user_id', 'address1', 'address2', 'city', 'state', 'country', 'zip'],
      type: 'write',
      fn: (kit, a) => {
        const found = kit.getUser(a.user_id);
        const address = userAddress(a);
        const user = kit.db.writableUser(found.user_id);
        user.address = address;
        return model(dumpUser(user));
      },
    },
  ],
  [
    'return_delivered_order_items',
    {
      params: ['order_id', 'item_ids', 'payment_method_id'],
      type: 'write',
      fn: (kit, a) => {
        const found = kit.getOrder(a.order_id);
        if (found.status !== 'delivered') throw valueError('Non-delivered order cannot be returned');
        const user = kit.getUser(found.user_id);
        const method = kit.getPaymentMethod(user.user_id, a.payment_method_id);
        if (method.source !== 'gift_card') {
          if (found.payment_history.length === 0) throw new PyException('IndexError', 'list index out of range');
          if (!pyEq(a.payment_method_id, found.payment_history[0]!.payment_method_id)) throw valueError('Payment method should be the original payment method');
        }
        const itemIds = listedItems(found, a.item_ids, () => 'Some item not found');
        const order = kit.db.writableOrder(found.order_id);
        order.status = 'return requested';
        order.return_items = pySorted(itemIds);
        order.return_payment_method_id = a.payment_method_id as string;
        return model(dumpOrder(order));
      },
    },
  ],
  ['transfer_to_human_agents', { params: ['summary'], type: 'generic', fn: () => 'Transfer successful' }],
]);

export const TOOL_NAMES = [...TOOLS.keys()];

/** Whether replaying a call of this tool can change the database (tau2's `mutates_state`; unknown names: true). */
export function mutatesState(name: string): boolean {
  return TOOLS.get(name)?.type !== 'read' && TOOLS.get(name)?.type !== 'generic';
}

/** `RetailTools.<name>(**kwargs)`'s binding errors, in the order Python reports them. */
function bind(name: string, params: readonly string[], kwargs: Record<string, unknown>): void {
  for (const k of Object.keys(kwargs)) {
    if (k === 'self') throw typeError(`RetailTools.${name}() got multiple values for argument 'self'`);
    if (!params.includes(k)) throw typeError(`RetailTools.${name}() got an unexpected keyword argument '${k}'`);
  }
  const missing = params.filter((p) => !Object.hasOwn(kwargs, p)).map((p) => `'${p}'`);
  if (missing.length === 0) return;
  const list = missing.length === 1 ? missing[0] : missing.length === 2 ? `${missing[0]} and ${missing[1]}` : `${missing.slice(0, -1).join(', ')}, and ${missing.at(-1)}`;
  throw typeError(`RetailTools.${name}() missing ${missing.length} required positional argument${missing.length > 1 ? 's' : ''}: ${list}`);
}

/** tau2's `ToolKitBase.use_tool`: the return value, or a PyException. */
export function useTool(db: RetailDb, name: string, kwargs: Record<string, unknown>): string | Dumped {
  const tool = TOOLS.get(name);
  if (!tool) throw valueError(`Tool '${name}' not found.`);
  bind(name, tool.params, kwargs);
  const out = tool.fn(new Toolkit(db), kwargs);
  return typeof out === 'string' ? out : out.model;
}

export interface ToolResponse {
  content: string;
  error: boolean;
}

/** tau2's `Environment.get_response` for an assistant tool call. */
export function getResponse(db: RetailDb, name: string, args: Record<string, unknown>): ToolResponse {
  try {
    const out = useTool(db, name, args);
    return { content: typeof out === 'string' ? out : pyDumpsModel(out), error: false };
  } catch (e) {
    if (e instanceof PyException) return { content: `Error: ${e.pyMessage}`, error: true };
    throw e;
  }
}
