/**
 * tau2's retail database (`tau2.domains.retail.data_model.RetailDB`): the records, how they are
 * read (pydantic's validation: required fields, ints accepted as floats, unknown keys dropped),
 * how they are written back (`model_dump`: fields in model order, every declared optional field
 * present, dicts in insertion order) and tau2's hash of the whole database
 * (`sha256(json.dumps(db.model_dump(), sort_keys=True, default=str))`).
 *
 * Dicts keyed by data (products, variants, users, orders, payment methods, options) are Maps:
 * their keys are numeric strings or arbitrary text, and a plain object would reorder them.
 *
 * A session's database is a copy-on-write fork of the loaded one: users and orders are copied the
 * first time a tool changes them, so forking costs two shallow Map copies.
 */
import { createHash } from 'node:crypto';
import { NgError } from '@nemo-gym/core/errors';
import { pyJsonDumps, pyJsonLoads, type PyValue } from '@nemo-gym/core/py';

export interface Variant {
  item_id: string;
  options: Map<string, string>;
  available: boolean;
  price: number;
}

export interface Product {
  name: string;
  product_id: string;
  variants: Map<string, Variant>;
}

export interface UserAddress {
  address1: string;
  address2: string;
  city: string;
  country: string;
  state: string;
  zip: string;
}

export interface CreditCard {
  source: 'credit_card';
  id: string;
  brand: string;
  last_four: string;
}
export interface GiftCard {
  source: 'gift_card';
  id: string;
  balance: number;
}
export interface Paypal {
  source: 'paypal';
  id: string;
}
export type PaymentMethod = CreditCard | GiftCard | Paypal;

export interface User {
  user_id: string;
  name: { first_name: string; last_name: string };
  address: UserAddress;
  email: string;
  payment_methods: Map<string, PaymentMethod>;
  orders: string[];
}

export interface OrderItem {
  name: string;
  product_id: string;
  item_id: string;
  price: number;
  options: Map<string, string>;
}

export interface OrderPayment {
  transaction_type: 'payment' | 'refund';
  amount: number;
  payment_method_id: string;
}

export const ORDER_STATUSES = ['processed', 'pending', 'pending (item modified)', 'delivered', 'cancelled', 'exchange requested', 'return requested'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export interface Order {
  order_id: string;
  user_id: string;
  address: UserAddress;
  items: OrderItem[];
  status: OrderStatus;
  fulfillments: { tracking_id: string[]; item_ids: string[] }[];
  payment_history: OrderPayment[];
  cancel_reason: string | null;
  exchange_items: string[] | null;
  exchange_new_items: string[] | null;
  exchange_payment_method_id: string | null;
  /** A bigint where Python holds an int in this float field (an exchange of no items sets it to `0`). */
  exchange_price_difference: number | bigint | null;
  return_items: string[] | null;
  return_payment_method_id: string | null;
}

export interface RetailRecords {
  products: Map<string, Product>;
  users: Map<string, User>;
  orders: Map<string, Order>;
}

// ---------------------------------------------------------------------------------------------
// validation (pydantic's model_validate, with the messages reduced to a path and a reason)

/** Data that does not validate as tau2's RetailDB (a path into it and pydantic's reason). */
export class RetailDataError extends NgError {
  constructor(message: string) {
    super('NG_ERR_DATA_VALIDATION', message);
  }
}

type Obj = Map<string, PyValue>;

function fail(path: string, what: string): never {
  throw new RetailDataError(`${path}: ${what}`);
}

function obj(v: PyValue | undefined, path: string): Obj {
  if (!(v instanceof Map)) fail(path, 'Input should be a valid dictionary');
  return v;
}

function field(o: Obj, key: string, path: string): PyValue {
  if (!o.has(key)) fail(`${path}.${key}`, 'Field required');
  return o.get(key)!;
}

function str(v: PyValue | undefined, path: string): string {
  if (typeof v !== 'string') fail(path, 'Input should be a valid string');
  return v;
}

function float(v: PyValue | undefined, path: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  fail(path, 'Input should be a valid number');
}

function bool(v: PyValue | undefined, path: string): boolean {
  if (typeof v !== 'boolean') fail(path, 'Input should be a valid boolean');
  return v;
}

function strList(v: PyValue | undefined, path: string): string[] {
  if (!Array.isArray(v)) fail(path, 'Input should be a valid list');
  return v.map((x, i) => str(x, `${path}.${i}`));
}

function strDict(v: PyValue | undefined, path: string): Map<string, string> {
  const o = obj(v, path);
  return new Map([...o].map(([k, x]) => [k, str(x, `${path}.${k}`)]));
}

function optional<T>(o: Obj, key: string, read: (v: PyValue, path: string) => T, path: string): T | null {
  const v = o.get(key);
  return v === undefined || v === null ? null : read(v, `${path}.${key}`);
}

function address(v: PyValue | undefined, path: string): UserAddress {
  const o = obj(v, path);
  return {
    address1: str(field(o, 'address1', path), `${path}.address1`),
    address2: str(field(o, 'address2', path), `${path}.address2`),
    city: str(field(o, 'city', path), `${path}.city`),
    country: str(field(o, 'country', path), `${path}.country`),
    state: str(field(o, 'state', path), `${path}.state`),
    zip: str(field(o, 'zip', path), `${path}.zip`),
  };
}

function variant(v: PyValue, path: string): Variant {
  const o = obj(v, path);
  return {
    item_id: str(field(o, 'item_id', path), `${path}.item_id`),
    options: strDict(field(o, 'options', path), `${path}.options`),
    available: bool(field(o, 'available', path), `${path}.available`),
    price: float(field(o, 'price', path), `${path}.price`),
  };
}

function product(v: PyValue, path: string): Product {
  const o = obj(v, path);
  const variants = obj(field(o, 'variants', path), `${path}.variants`);
  return {
    name: str(field(o, 'name', path), `${path}.name`),
    product_id: str(field(o, 'product_id', path), `${path}.product_id`),
    variants: new Map([...variants].map(([k, x]) => [k, variant(x, `${path}.variants.${k}`)])),
  };
}

function paymentMethod(v: PyValue, path: string): PaymentMethod {
  const o = obj(v, path);
  const source = field(o, 'source', path);
  const id = str(field(o, 'id', path), `${path}.id`);
  switch (source) {
    case 'credit_card':
      return { source, id, brand: str(field(o, 'brand', path), `${path}.brand`), last_four: str(field(o, 'last_four', path), `${path}.last_four`) };
    case 'gift_card':
      return { source, id, balance: float(field(o, 'balance', path), `${path}.balance`) };
    case 'paypal':
      return { source, id };
    default:
      fail(`${path}.source`, "Input should be 'credit_card', 'gift_card' or 'paypal'");
  }
}

function user(v: PyValue, path: string): User {
  const o = obj(v, path);
  const name = obj(field(o, 'name', path), `${path}.name`);
  const methods = obj(field(o, 'payment_methods', path), `${path}.payment_methods`);
  return {
    user_id: str(field(o, 'user_id', path), `${path}.user_id`),
    name: { first_name: str(field(name, 'first_name', `${path}.name`), `${path}.name.first_name`), last_name: str(field(name, 'last_name', `${path}.name`), `${path}.name.last_name`) },
    address: address(field(o, 'address', path), `${path}.address`),
    email: str(field(o, 'email', path), `${path}.email`),
    payment_methods: new Map([...methods].map(([k, x]) => [k, paymentMethod(x, `${path}.payment_methods.${k}`)])),
    orders: strList(field(o, 'orders', path), `${path}.orders`),
  };
}

function oneOf<T extends string>(v: PyValue | undefined, allowed: readonly T[], path: string): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) fail(path, `Input should be ${allowed.map((a) => `'${a}'`).join(', ')}`);
  return v as T;
}

function order(v: PyValue, path: string): Order {
  const o = obj(v, path);
  const items = field(o, 'items', path);
  const fulfillments = field(o, 'fulfillments', path);
  const payments = field(o, 'payment_history', path);
  if (!Array.isArray(items)) fail(`${path}.items`, 'Input should be a valid list');
  if (!Array.isArray(fulfillments)) fail(`${path}.fulfillments`, 'Input should be a valid list');
  if (!Array.isArray(payments)) fail(`${path}.payment_history`, 'Input should be a valid list');
  return {
    order_id: str(field(o, 'order_id', path), `${path}.order_id`),
    user_id: str(field(o, 'user_id', path), `${path}.user_id`),
    address: address(field(o, 'address', path), `${path}.address`),
    items: items.map((x, i) => {
      const p = `${path}.items.${i}`;
      const it = obj(x, p);
      return {
        name: str(field(it, 'name', p), `${p}.name`),
        product_id: str(field(it, 'product_id', p), `${p}.product_id`),
        item_id: str(field(it, 'item_id', p), `${p}.item_id`),
        price: float(field(it, 'price', p), `${p}.price`),
        options: strDict(field(it, 'options', p), `${p}.options`),
      };
    }),
    status: oneOf(field(o, 'status', path), ORDER_STATUSES, `${path}.status`),
    fulfillments: fulfillments.map((x, i) => {
      const p = `${path}.fulfillments.${i}`;
      const f = obj(x, p);
      return { tracking_id: strList(field(f, 'tracking_id', p), `${p}.tracking_id`), item_ids: strList(field(f, 'item_ids', p), `${p}.item_ids`) };
    }),
    payment_history: payments.map((x, i) => {
      const p = `${path}.payment_history.${i}`;
      const pay = obj(x, p);
      return {
        transaction_type: oneOf(field(pay, 'transaction_type', p), ['payment', 'refund'] as const, `${p}.transaction_type`),
        amount: float(field(pay, 'amount', p), `${p}.amount`),
        payment_method_id: str(field(pay, 'payment_method_id', p), `${p}.payment_method_id`),
      };
    }),
    cancel_reason: optional(o, 'cancel_reason', (x, p) => oneOf(x, ['no longer needed', 'ordered by mistake'] as const, p), path),
    exchange_items: optional(o, 'exchange_items', strList, path),
    exchange_new_items: optional(o, 'exchange_new_items', strList, path),
    exchange_payment_method_id: optional(o, 'exchange_payment_method_id', str, path),
    exchange_price_difference: optional(o, 'exchange_price_difference', float, path),
    return_items: optional(o, 'return_items', strList, path),
    return_payment_method_id: optional(o, 'return_payment_method_id', str, path),
  };
}

const DB_FIELDS = ['products', 'users', 'orders'];

/** `RetailDB.model_validate(data)` (a DB forbids unknown top-level keys). */
export function recordsFromPy(data: PyValue): RetailRecords {
  const o = obj(data, 'db');
  for (const k of o.keys()) if (!DB_FIELDS.includes(k)) fail(`db.${k}`, 'Extra inputs are not permitted');
  const section = (key: string) => [...obj(field(o, key, 'db'), `db.${key}`)];
  return {
    products: new Map(section('products').map(([k, v]) => [k, product(v, `products.${k}`)])),
    users: new Map(section('users').map(([k, v]) => [k, user(v, `users.${k}`)])),
    orders: new Map(section('orders').map(([k, v]) => [k, order(v, `orders.${k}`)])),
  };
}

/** Reads db.json's text (keys kept in file order). */
export function parseDbJson(text: string): RetailRecords {
  return recordsFromPy(pyJsonLoads(text));
}

// ---------------------------------------------------------------------------------------------
// model_dump

/** A value `pyJsonDumps(..., { numbers: 'float' })` writes as pydantic + json.dumps would: every number is a float field. */
export type Dumped = null | boolean | string | number | bigint | Dumped[] | Map<string, Dumped> | { [k: string]: Dumped };

const dumpAddress = (a: UserAddress): Dumped => ({ address1: a.address1, address2: a.address2, city: a.city, country: a.country, state: a.state, zip: a.zip });

export function dumpVariant(v: Variant): Dumped {
  return { item_id: v.item_id, options: new Map(v.options), available: v.available, price: v.price };
}

export function dumpProduct(p: Product): Dumped {
  return { name: p.name, product_id: p.product_id, variants: new Map([...p.variants].map(([k, v]) => [k, dumpVariant(v)])) };
}

function dumpPaymentMethod(m: PaymentMethod): Dumped {
  switch (m.source) {
    case 'credit_card':
      return { source: m.source, id: m.id, brand: m.brand, last_four: m.last_four };
    case 'gift_card':
      return { source: m.source, id: m.id, balance: m.balance };
    case 'paypal':
      return { source: m.source, id: m.id };
  }
}

export function dumpUser(u: User): Dumped {
  return {
    user_id: u.user_id,
    name: { first_name: u.name.first_name, last_name: u.name.last_name },
    address: dumpAddress(u.address),
    email: u.email,
    payment_methods: new Map([...u.payment_methods].map(([k, m]) => [k, dumpPaymentMethod(m)])),
    orders: [...u.orders],
  };
}

export function dumpOrder(o: Order): Dumped {
  return {
    order_id: o.order_id,
    user_id: o.user_id,
    address: dumpAddress(o.address),
    items: o.items.map((i) => ({ name: i.name, product_id: i.product_id, item_id: i.item_id, price: i.price, options: new Map(i.options) })),
    status: o.status,
    fulfillments: o.fulfillments.map((f) => ({ tracking_id: [...f.tracking_id], item_ids: [...f.item_ids] })),
    payment_history: o.payment_history.map((p) => ({ transaction_type: p.transaction_type, amount: p.amount, payment_method_id: p.payment_method_id })),
    cancel_reason: o.cancel_reason,
    exchange_items: o.exchange_items && [...o.exchange_items],
    exchange_new_items: o.exchange_new_items && [...o.exchange_new_items],
    exchange_payment_method_id: o.exchange_payment_method_id,
    exchange_price_difference: o.exchange_price_difference,
    return_items: o.return_items && [...o.return_items],
    return_payment_method_id: o.return_payment_method_id,
  };
}

export function dumpRecords(r: RetailRecords): Dumped {
  return {
    products: new Map([...r.products].map(([k, v]) => [k, dumpProduct(v)])),
    users: new Map([...r.users].map(([k, v]) => [k, dumpUser(v)])),
    orders: new Map([...r.orders].map(([k, v]) => [k, dumpOrder(v)])),
  };
}

/** `json.dumps(dumped)` (tau2's `to_json_str` of a model: default separators, ASCII escapes, floats as Python writes them). */
export function pyDumpsModel(d: Dumped): string {
  return pyJsonDumps(d, { numbers: 'float' });
}

/** The same dict with its keys sorted at every level, as `json.dumps(..., sort_keys=True)` orders them. */
function sortKeys(d: Dumped): Dumped {
  if (d === null || typeof d !== 'object') return d;
  if (Array.isArray(d)) return d.map(sortKeys);
  const entries = d instanceof Map ? [...d] : Object.entries(d);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return new Map(entries.map(([k, v]) => [k, sortKeys(v)]));
}

/** `json.dumps(dumped, sort_keys=True, default=str)`: the text tau2 hashes. */
export function canonicalText(d: Dumped): string {
  return pyJsonDumps(sortKeys(d), { numbers: 'float' });
}


/** Canonical texts of records that are never changed again (shared by every fork). */
const canonicalCache = new WeakMap<object, string>();

function cachedCanonical<T extends object>(record: T, dump: (x: T) => Dumped): string {
  let text = canonicalCache.get(record);
  if (text === undefined) {
    text = canonicalText(dump(record));
    canonicalCache.set(record, text);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// copies

function copyAddress(a: UserAddress): UserAddress {
  return { ...a };
}

export function copyUser(u: User): User {
  return {
    user_id: u.user_id,
    name: { ...u.name },
    address: copyAddress(u.address),
    email: u.email,
    payment_methods: new Map([...u.payment_methods].map(([k, m]) => [k, { ...m }])),
    orders: [...u.orders],
  };
}

export function copyOrder(o: Order): Order {
  return {
    ...o,
    address: copyAddress(o.address),
    items: o.items.map((i) => ({ ...i, options: new Map(i.options) })),
    fulfillments: o.fulfillments.map((f) => ({ tracking_id: [...f.tracking_id], item_ids: [...f.item_ids] })),
    payment_history: o.payment_history.map((p) => ({ ...p })),
    exchange_items: o.exchange_items && [...o.exchange_items],
    exchange_new_items: o.exchange_new_items && [...o.exchange_new_items],
    return_items: o.return_items && [...o.return_items],
  };
}

/**
 * One environment's database. Reads go to the shared records; the first write to a user or an
 * order replaces it with a private copy. Products are never changed by a tool.
 */
export class RetailDb implements RetailRecords {
  readonly products: Map<string, Product>;
  readonly users: Map<string, User>;
  readonly orders: Map<string, Order>;
  private readonly ownUsers = new Set<string>();
  private readonly ownOrders = new Set<string>();

  constructor(records: RetailRecords, owned = false) {
    this.products = records.products;
    this.users = new Map(records.users);
    this.orders = new Map(records.orders);
    if (owned) {
      for (const k of this.users.keys()) this.ownUsers.add(k);
      for (const k of this.orders.keys()) this.ownOrders.add(k);
    }
  }

  /** A fork sharing every record until it writes one (this database must not change its own records afterwards). */
  fork(): RetailDb {
    return new RetailDb(this);
  }

  /** The user, made private to this database first (call before changing it). */
  writableUser(id: string): User {
    const u = this.users.get(id)!;
    if (this.ownUsers.has(id)) return u;
    const copy = copyUser(u);
    this.users.set(id, copy);
    this.ownUsers.add(id);
    return copy;
  }

  writableOrder(id: string): Order {
    const o = this.orders.get(id)!;
    if (this.ownOrders.has(id)) return o;
    const copy = copyOrder(o);
    this.orders.set(id, copy);
    this.ownOrders.add(id);
    return copy;
  }

  /** tau2's hash of this database (records no tool can change any more are written once and cached). */
  hash(): string {
    const section = <T extends object>(m: Map<string, T>, own: Set<string> | null, dump: (x: T) => Dumped): string => {
      const keys = [...m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (keys.length === 0) return '{}';
      return `{${keys.map((k) => `${pyJsonDumps(k)}: ${own?.has(k) ? canonicalText(dump(m.get(k)!)) : cachedCanonical(m.get(k)!, dump)}`).join(', ')}}`;
    };
    const text = `{"orders": ${section(this.orders, this.ownOrders, dumpOrder)}, "products": ${section(this.products, null, dumpProduct)}, "users": ${section(this.users, this.ownUsers, dumpUser)}}`;
    return createHash('sha256').update(text).digest('hex');
  }

  /**
   * Whether tau2's hashes of the two databases are equal. Both have the same products, users and
   * orders keys (no tool adds or removes a record), so the sorted dumps are equal exactly when
   * every record's sorted dump is; records still shared by both are equal without a look.
   */
  sameAs(other: RetailDb): boolean {
    if (this.products !== other.products && canonicalText(dumpRecords({ products: this.products, users: new Map(), orders: new Map() })) !== canonicalText(dumpRecords({ products: other.products, users: new Map(), orders: new Map() }))) return false;
    const same = <T>(a: Map<string, T>, b: Map<string, T>, dump: (x: T) => Dumped): boolean => {
      if (a.size !== b.size) return false;
      for (const [k, x] of a) {
        const y = b.get(k);
        if (y === undefined) return false;
        if (x !== y && canonicalText(dump(x)) !== canonicalText(dump(y))) return false;
      }
      return true;
    };
    return same(this.users, other.users, dumpUser) && same(this.orders, other.orders, dumpOrder);
  }
}
