/**
 * A small immutable table with the pandas DataFrame semantics the workplace tools and their
 * reward depend on: index labels that survive a filter, `concat` with or without
 * `ignore_index`, `.loc[mask, col] = v`, records in column order, `.str.contains` with Python
 * regexes, and `DataFrame.equals` after lower-casing.
 *
 * Every operation returns a new table and shares the column arrays it did not change, so a fresh
 * environment costs nothing to build and two tables that went through the same unchanged columns
 * compare by identity.
 */
import { PyRegex, PyRegexError, PY_RE } from '@nemo-gym/core/py';
import { eq, isMissing, PyException, type Value } from './py.js';

export type Column = readonly Value[];

export class Table {
  private constructor(
    readonly columns: readonly string[],
    readonly data: readonly Column[],
    readonly index: readonly number[],
  ) {}

  /** A table with a fresh 0..n-1 index (what `read_csv` and `DataFrame(...)` give). */
  static fromColumns(columns: readonly string[], data: readonly Column[]): Table {
    const n = data[0]?.length ?? 0;
    return new Table(columns, data, rangeIndex(n));
  }

  static fromRecords(columns: readonly string[], records: readonly Record<string, Value>[]): Table {
    return Table.fromColumns(
      columns,
      columns.map((c) => records.map((r) => (Object.hasOwn(r, c) ? r[c] : null))),
    );
  }

  static empty(columns: readonly string[]): Table {
    return new Table(columns, columns.map(() => []), []);
  }

  get length(): number {
    return this.index.length;
  }

  has(column: string): boolean {
    return this.columns.includes(column);
  }

  /** `df[column]`; KeyError (Python's text) when absent. */
  column(name: string): Column {
    const i = this.columns.indexOf(name);
    if (i < 0) throw new PyException('KeyError', `'${name}'`);
    return this.data[i]!;
  }

  /** `df[mask]`: the rows where mask holds, labels kept. A missing mask value is pandas' ValueError. */
  filter(mask: readonly (boolean | null)[]): Table {
    if (mask.length !== this.length) throw new PyException('ValueError', `Item wrong length ${mask.length} instead of ${this.length}.`);
    const keep: number[] = [];
    for (let i = 0; i < mask.length; i++) {
      const m = mask[i];
      if (m === null) throw new PyException('ValueError', 'Cannot mask with non-boolean array containing NA / NaN values');
      if (m) keep.push(i);
    }
    if (keep.length === this.length) return this;
    return new Table(
      this.columns,
      this.data.map((col) => keep.map((i) => col[i])),
      keep.map((i) => this.index[i]!),
    );
  }

  /**
   * `pd.concat([self, DataFrame(rows)])`: columns are this table's, then any new ones (missing
   * cells are NaN); `ignoreIndex` renumbers 0..n-1, otherwise the new rows carry labels 0..k-1.
   */
  append(rowColumns: readonly string[], rows: readonly Record<string, Value>[], ignoreIndex: boolean): Table {
    const columns = [...this.columns];
    for (const c of rowColumns) if (!columns.includes(c)) columns.push(c);
    const n = this.length;
    const data = columns.map((c, ci) => {
      const own = ci < this.columns.length ? this.data[ci]! : new Array<Value>(n).fill(null);
      return [...own, ...rows.map((r) => (rowColumns.includes(c) && Object.hasOwn(r, c) ? r[c] : null))];
    });
    const index = ignoreIndex ? rangeIndex(n + rows.length) : [...this.index, ...rangeIndex(rows.length)];
    return new Table(columns, data, index);
  }

  /** `df.loc[label] = row` for a label not in the index: one row appended with that label. */
  appendWithLabel(label: number, row: readonly Value[]): Table {
    if (row.length !== this.columns.length) throw new PyException('ValueError', 'cannot set a row with mismatched columns');
    return new Table(
      this.columns,
      this.data.map((col, ci) => [...col, row[ci]]),
      [...this.index, label],
    );
  }

  /**
   * `df.loc[mask, column] = value`. A list value must have one item per selected row (pandas'
   * rule for list-likes); anything else is stored as is in every selected row.
   */
  setWhere(mask: readonly boolean[], column: string, value: Value): Table {
    const ci = this.columns.indexOf(column);
    if (ci < 0) throw new PyException('KeyError', `'${column}'`);
    const selected = mask.reduce((n, m) => n + (m ? 1 : 0), 0);
    if (selected === 0) return this;
    let items: readonly Value[] | null = null;
    if (Array.isArray(value)) {
      if (value.length !== selected) throw new PyException('ValueError', 'Must have equal len keys and value when setting with an iterable');
      items = value;
    }
    const col = [...this.data[ci]!];
    let k = 0;
    for (let i = 0; i < mask.length; i++) if (mask[i]) col[i] = items ? items[k++] : value;
    const data = [...this.data];
    data[ci] = col;
    return new Table(this.columns, data, this.index);
  }

  /** A table with `column` replaced (or added at the end). */
  withColumn(column: string, values: Column): Table {
    const ci = this.columns.indexOf(column);
    if (ci < 0) return new Table([...this.columns, column], [...this.data, values], this.index);
    const data = [...this.data];
    data[ci] = values;
    return new Table(this.columns, data, this.index);
  }

  /** One row as a record in column order (`to_dict(orient="records")[i]`). */
  record(i: number): Record<string, Value> {
    const out: Record<string, Value> = {};
    for (let c = 0; c < this.columns.length; c++) out[this.columns[c]!] = this.data[c]![i] ?? null;
    return out;
  }

  records(): Record<string, Value>[] {
    const out: Record<string, Value>[] = [];
    for (let i = 0; i < this.length; i++) out.push(this.record(i));
    return out;
  }

  /** `(df[column] == value)` element by element, with pandas' rule for a list on the right. */
  eqMask(column: string, value: Value): boolean[] {
    const col = this.column(column);
    if (Array.isArray(value)) {
      if (value.length !== col.length) {
        throw new PyException('ValueError', `('Lengths must match to compare', (${col.length},), (${value.length},))`);
      }
      return col.map((x, i) => !isMissing(x) && eq(x, value[i]));
    }
    return col.map((x) => !isMissing(x) && eq(x, value));
  }

  /** `value in df[column].values` (numpy: any element equal). */
  includes(column: string, value: Value): boolean {
    const col = this.column(column);
    if (Array.isArray(value)) {
      if (value.length === 1) return col.some((x) => eq(x, value[0]));
      if (value.length !== col.length) return false;
      return col.some((x, i) => eq(x, value[i]));
    }
    return col.some((x) => eq(x, value));
  }
}

function rangeIndex(n: number): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

const regexCache = new Map<string, PyRegex>();

/** `re.compile(pattern, re.IGNORECASE)` with Python's errors, cached. */
export function compileIgnoreCase(pattern: Value): PyRegex {
  if (typeof pattern !== 'string') throw new PyException('TypeError', 'first argument must be string or compiled pattern');
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = new PyRegex(pattern, PY_RE.IGNORECASE);
    } catch (e) {
      // re.error's text is the same "<reason> at position <n>"; a valid Python construct that the
      // JavaScript engine cannot express is reported in the same place, naming the construct.
      if (e instanceof PyRegexError) throw new PyException('re.error', e.message);
      throw new PyException('re.error', (e as Error).message);
    }
    if (regexCache.size >= 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

/**
 * `df[column].str.contains(pattern, case=False, na=na)`: a missing or non-string cell gives `na`
 * (pandas' default is NaN, which makes the mask unusable for filtering).
 */
export function strContains(col: Column, pattern: Value, na: boolean | null = null): (boolean | null)[] {
  const re = compileIgnoreCase(pattern);
  return col.map((x) => (typeof x === 'string' ? re.search(x) !== null : na));
}

const loweredCache = new WeakMap<Column, Column>();

/** `df[column].str.lower()`: strings lowered, every other cell missing. Cached per column array. */
export function lowerColumn(col: Column): Column {
  let out = loweredCache.get(col);
  if (out === undefined) {
    out = col.map((x) => (typeof x === 'string' ? x.toLowerCase() : null));
    loweredCache.set(col, out);
  }
  return out;
}

/** The columns compared case-sensitively by the reward. */
export const CASE_SENSITIVE_COLUMNS: ReadonlySet<string> = new Set(['status', 'list_name', 'board']);

function sameValues(a: Column, b: Column): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y && typeof x === 'string') continue;
    const mx = isMissing(x);
    const my = isMissing(y);
    if (mx || my) {
      if (mx && my) continue;
      return false;
    }
    if (!eq(x, y)) return false;
  }
  return true;
}

/**
 * `convert_strs_to_lowercase(a).equals(convert_strs_to_lowercase(b))`: same columns in the same
 * order, same index labels, same values after lower-casing every column but `status`,
 * `list_name` and `board`; missing equals missing.
 */
export function tablesEqualForReward(a: Table, b: Table): boolean {
  if (a === b) return true;
  if (a.columns.length !== b.columns.length || a.length !== b.length) return false;
  for (let c = 0; c < a.columns.length; c++) if (a.columns[c] !== b.columns[c]) return false;
  if (a.index !== b.index) {
    for (let i = 0; i < a.index.length; i++) if (a.index[i] !== b.index[i]) return false;
  }
  for (let c = 0; c < a.columns.length; c++) {
    const x = a.data[c]!;
    const y = b.data[c]!;
    if (x === y) continue;
    if (CASE_SENSITIVE_COLUMNS.has(a.columns[c]!)) {
      if (!sameValues(x, y)) return false;
    } else if (!sameValues(lowerColumn(x), lowerColumn(y))) return false;
  }
  return true;
}
