/** Shared test setup: upstream's tables from ../shared, and tables built from records (upstream's mocked read_csv). */
import { existsSync } from 'node:fs';
import { sharedPath } from '@nemo-gym/core/config';
import { readDataDir, type WorkbenchData } from '../src/data.js';
import { SessionStore } from '@nemo-gym/core/server';
import { Table } from '../src/table.js';
import { Environment } from '../src/tools.js';
import { runToolRoute, type State } from '../app.js';

export const CSV_DIR = sharedPath('upstream-data', 'workbench', 'csv_data');
export const HAVE_DATA = existsSync(`${CSV_DIR}/processed/emails.csv`);
if (!HAVE_DATA) console.log(`workbench data tests skipped: ${CSV_DIR} is absent`);

let cached: WorkbenchData | undefined;
export function realData(): WorkbenchData {
  cached ??= readDataDir(CSV_DIR);
  return cached;
}

/** `pd.DataFrame(records)`: columns in first-seen order, missing cells NaN. */
export function frame(records: Record<string, unknown>[]): Table {
  const columns: string[] = [];
  for (const r of records) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  return Table.fromRecords(columns, records);
}

export const CONFIG = { name: 'workbench', domain: 'agent' as const, csv_data_dir: CSV_DIR, csv_data_url: null, session_idle_ttl_s: 3600, max_sessions: 100 };

/** A seeded session over `data` and a function calling the tool route in it, answering the parsed `output`. */
export function seeded(data: WorkbenchData): { env: Environment; call: (name: string, body: Record<string, unknown>) => unknown; raw: (name: string, body: unknown) => string } {
  const sessions = new SessionStore<Environment>({ idleTtlMs: 3_600_000, maxSessions: 10 });
  const env = new Environment(data);
  sessions.set('s', env);
  const state = { data, sessions, dataDir: CSV_DIR, pool: null } as State;
  const raw = (name: string, body: unknown) => runToolRoute(state, 's', name, body).text;
  return { env, call: (name, body) => (JSON.parse(raw(name, body)) as { output: unknown }).output, raw };
}
