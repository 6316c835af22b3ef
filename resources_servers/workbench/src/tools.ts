/**
 * The 27 WorkBench tools over one environment's tables, with upstream's messages and Python
 * behaviour for whatever JSON the model passes. Each tool is declared with its Python signature
 * (class, method, parameters and defaults) so that a call with keyword arguments fails exactly as
 * Python's would.
 */
import { PyRegex, pySplit, pyStrCompare } from '@nemo-gym/core/py';
import { compare, contains, eq, isDigitStr, isMissing, lower, PyException, PyFloat, str, toInt, truthy, typeName, zfill, type Value } from './py.js';
import { paginate } from './pyops.js';
import { strContains, Table } from './table.js';
import { compareTimestamps, toTimestamp, type Timestamp } from './timestamp.js';
import type { WorkbenchData } from './data.js';

/** One session's state: every tool reads and replaces these tables. */
export class Environment {
  emails: Table;
  calendar: Table;
  analytics: Table;
  plots: Table;
  projectTasks: Table;
  crm: Table;
  readonly addresses: Table;

  constructor(data: WorkbenchData) {
    this.emails = data.emails;
    this.calendar = data.calendar;
    this.analytics = data.analytics;
    this.plots = Table.empty(['file_path']);
    this.projectTasks = data.projectTasks;
    this.crm = data.crm;
    this.addresses = data.addresses;
  }
}

type Args = Record<string, Value>;

export interface ToolSpec {
  /** Python `__qualname__` of the bound method (used in TypeError texts). */
  qualname: string;
  /** Parameter names with their defaults, in order. */
  params: readonly (readonly [string, Value])[];
  run(env: Environment, args: Args): Value;
}

const HARDCODED_CURRENT_TIME = '2023-11-30 23:59:00';
const none = null;

function rowsWhere(table: Table, column: string, value: Value): Record<string, Value>[] {
  const mask = table.eqMask(column, value);
  const out: Record<string, Value>[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) out.push(table.record(i));
  return out;
}

function notEqualMask(table: Table, column: string, value: Value): boolean[] {
  return table.eqMask(column, value).map((m) => !m);
}

/** `field in record` for a dict: only a hashable key can be looked up. */
function hasKey(record: Record<string, Value>, key: Value): boolean {
  return contains(record, key);
}

/** `{field: value}` with the model's field name as the key. */
function single(key: Value, value: Value): Record<string, Value> {
  const out: Record<string, Value> = {};
  Object.defineProperty(out, str(key), { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/** `str(int(df[column].max()) + 1)`: the max is a string max over the non-missing cells. */
function nextId(table: Table, column: string): string {
  let best: Value = undefined;
  for (const v of table.column(column)) {
    if (isMissing(v)) continue;
    if (best === undefined) best = v;
    else if (typeof v === 'string' && typeof best === 'string') {
      if (pyStrCompare(v, best) > 0) best = v;
    } else if (compare(v, best, '>')) best = v;
  }
  if (best === undefined) throw new PyException('ValueError', 'cannot convert float NaN to integer');
  return String(toInt(best) + 1);
}

function isEightDigitId(v: Value): boolean {
  return typeof v === 'string' && [...v].length === 8 && isDigitStr(v);
}

/** `pd.Timestamp(v)` where only a ValueError is handled by the caller. */
function timestampOrNull(v: Value): Timestamp | null {
  try {
    return toTimestamp(v);
  } catch (e) {
    if (e instanceof PyException && e.pyType === 'ValueError') return null;
    throw e;
  }
}

/** `int(v) <= 0` check of a duration; the message, or null when valid. */
function durationProblem(v: Value): string | null {
  try {
    if (toInt(v) <= 0) return 'Duration must be a positive number of minutes.';
    return null;
  } catch (e) {
    if (e instanceof PyException && e.pyType === 'ValueError') return 'Invalid duration format. Expected a number of minutes.';
    throw e;
  }
}

function errorText(e: unknown): string {
  if (e instanceof PyException) return e.message;
  throw e;
}

// ---------------------------------------------------------------- company directory

function findEmailAddress(env: Environment, a: Args): Value {
  if (eq(a.name, '')) return 'Name not provided.';
  const name = lower(a.name);
  const col = env.addresses.column('email_address');
  const mask = strContains(col, name);
  return env.addresses.filter(mask).column('email_address').slice();
}

// ---------------------------------------------------------------- email

const EMAIL_FIELDS_TEXT = (r: Record<string, Value>) => Object.keys(r).join(', ');

function getEmailInformationById(env: Environment, a: Args): Value {
  if (!truthy(a.email_id)) return 'Email ID not provided.';
  if (!truthy(a.field)) return 'Field not provided.';
  try {
    const email = rowsWhere(env.emails, 'email_id', a.email_id);
    if (email.length > 0) {
      if (hasKey(email[0]!, a.field)) return single(a.field, email[0]![str(a.field)]);
      return `Field '${str(a.field)}' not found. Available fields: ${EMAIL_FIELDS_TEXT(email[0]!)}`;
    }
    return 'Email not found.';
  } catch (e) {
    return `Error retrieving email information: ${errorText(e)}`;
  }
}

/** `f"{subject} {body} {sender}".lower()` per row, cached by cell values (most rows never change). */
const combinedCache = new Map<Value, { s: Value; w: Value; text: string }>();
function combinedText(subject: Value, body: Value, who: Value): string {
  const hit = combinedCache.get(body);
  if (hit && hit.s === subject && hit.w === who) return hit.text;
  const text = `${str(subject)} ${str(body)} ${str(who)}`.toLowerCase();
  if (combinedCache.size >= 20_000) combinedCache.clear();
  combinedCache.set(body, { s: subject, w: who, text });
  return text;
}

/** The combined texts of a whole table, cached while its three columns are unchanged. */
const combinedColumns = new WeakMap<readonly Value[], { s: readonly Value[]; w: readonly Value[]; texts: string[] }>();
function combinedTexts(subject: readonly Value[], body: readonly Value[], who: readonly Value[]): string[] {
  const hit = combinedColumns.get(body);
  if (hit && hit.s === subject && hit.w === who) return hit.texts;
  const texts = body.map((b, i) => combinedText(subject[i], b, who[i]));
  combinedColumns.set(body, { s: subject, w: who, texts });
  return texts;
}

function searchEmails(env: Environment, a: Args): Value {
  try {
    const words = pySplit(lower(a.query));
    const t = env.emails;
    const texts = combinedTexts(t.column('subject'), t.column('body'), t.column('sender/recipient'));
    const sent = t.column('sent_datetime');
    const matched: number[] = [];
    for (let i = 0; i < t.length; i++) {
      const combined = texts[i]!;
      if (words.every((w) => combined.includes(w))) matched.push(i);
    }
    // sort_values(ascending=False) on the parsed send times; equal times keep their order
    const times = matched.map((i) => toTimestamp(sent[i]));
    let order = matched.map((_, k) => k).sort((x, y) => compareTimestamps(times[y]!, times[x]!)).map((k) => matched[k]!);
    if (truthy(a.date_min)) {
      order = order.filter((i) => pyStrCompare(toTimestamp(sent[i]).date, toTimestamp(a.date_min).date) >= 0);
    }
    if (truthy(a.date_max)) {
      order = order.filter((i) => pyStrCompare(toTimestamp(sent[i]).date, toTimestamp(a.date_max).date) <= 0);
    }
    const { items, page, totalPages } = paginate(order, a.page, a.page_size);
    if (order.length > 0) {
      return {
        emails: items.map((i) => t.record(i)),
        pagination: { total_emails: order.length, page, page_size: a.page_size, total_pages: totalPages },
      };
    }
    return 'No emails found.';
  } catch (e) {
    return `Error searching emails: ${errorText(e)}`;
  }
}

function sendEmail(env: Environment, recipient: Value, subject: Value, body: Value): string {
  if (!truthy(recipient) || !truthy(subject) || !truthy(body)) return 'Recipient, subject, or body not provided.';
  if (!contains(recipient, '@') || !contains(recipient, '.')) return 'Invalid recipient email address.';
  try {
    const to = lower(recipient);
    const emailId = env.emails.length > 0 ? nextId(env.emails, 'email_id') : '1';
    const row = {
      email_id: emailId,
      'inbox/outbox': 'outbox',
      'sender/recipient': to,
      subject,
      sent_datetime: HARDCODED_CURRENT_TIME,
      body,
    };
    env.emails = env.emails.append(Object.keys(row), [row], true);
    return 'Email sent successfully.';
  } catch (e) {
    return `Error sending email: ${errorText(e)}`;
  }
}

function deleteEmail(env: Environment, a: Args): Value {
  if (!truthy(a.email_id)) return 'Email ID not provided.';
  try {
    if (env.emails.includes('email_id', a.email_id)) {
      env.emails = env.emails.filter(notEqualMask(env.emails, 'email_id', a.email_id));
      return 'Email deleted successfully.';
    }
    return 'Email not found.';
  } catch (e) {
    return `Error deleting email: ${errorText(e)}`;
  }
}

function forwardEmail(env: Environment, a: Args): Value {
  if (!truthy(a.email_id) || !truthy(a.recipient)) return 'Email ID or recipient not provided.';
  if (!contains(a.recipient, '@') || !contains(a.recipient, '.')) return 'Invalid recipient email address.';
  try {
    if (!env.emails.includes('email_id', a.email_id)) return 'Email not found.';
    const recipient = lower(a.recipient);
    const email = rowsWhere(env.emails, 'email_id', a.email_id)[0]!;
    const result = sendEmail(env, recipient, `FW: ${str(email.subject)}`, email.body);
    if (result.includes('Error') || result.includes('Invalid')) return result;
    return 'Email forwarded successfully.';
  } catch (e) {
    return `Error forwarding email: ${errorText(e)}`;
  }
}

function replyEmail(env: Environment, a: Args): Value {
  if (!truthy(a.email_id) || !truthy(a.body)) return 'Email ID or body not provided.';
  try {
    if (!env.emails.includes('email_id', a.email_id)) return 'Email not found.';
    const email = rowsWhere(env.emails, 'email_id', a.email_id)[0]!;
    const result = sendEmail(env, email['sender/recipient'], `RE: ${str(email.subject)}`, a.body);
    if (result.includes('Error') || result.includes('Invalid')) return result;
    return 'Email replied successfully.';
  } catch (e) {
    return `Error replying to email: ${errorText(e)}`;
  }
}

// ---------------------------------------------------------------- calendar

const EVENT_FIELDS = ['event_id', 'event_name', 'participant_email', 'event_start', 'duration'];
const UPDATABLE_EVENT_FIELDS = ['event_name', 'participant_email', 'event_start', 'duration'];
const inList = (list: readonly string[], v: Value) => list.some((x) => eq(x, v));

function getEventInformationById(env: Environment, a: Args): Value {
  if (!truthy(a.event_id)) return 'Event ID not provided.';
  if (!truthy(a.field)) return 'Field not provided.';
  if (!isEightDigitId(a.event_id)) return 'Invalid event ID format. Expected 8-digit ID.';
  if (!inList(EVENT_FIELDS, a.field)) return `Invalid field. Available fields are: ${EVENT_FIELDS.join(', ')}`;
  const event = rowsWhere(env.calendar, 'event_id', a.event_id);
  if (event.length > 0) {
    if (hasKey(event[0]!, a.field)) return single(a.field, event[0]![str(a.field)]);
    return 'Field not found.';
  }
  return 'Event not found.';
}

function searchEvents(env: Environment, a: Args): Value {
  let timeMin: Timestamp | null = null;
  let timeMax: Timestamp | null = null;
  if (truthy(a.time_min)) {
    timeMin = timestampOrNull(a.time_min);
    if (!timeMin) return 'Invalid time_min format. Expected YYYY-MM-DD HH:MM:SS.';
  }
  if (truthy(a.time_max)) {
    timeMax = timestampOrNull(a.time_max);
    if (!timeMax) return 'Invalid time_max format. Expected YYYY-MM-DD HH:MM:SS.';
  }
  const t = env.calendar;
  const byName = strContains(t.column('event_name'), a.query, false);
  const byEmail = strContains(t.column('participant_email'), a.query, false);
  const starts = t.column('event_start');
  let rows: number[] = [];
  for (let i = 0; i < t.length; i++) if (byName[i] || byEmail[i]) rows.push(i);
  if (timeMin) rows = rows.filter((i) => compareTimestamps(toTimestamp(starts[i]), timeMin) >= 0);
  if (timeMax) rows = rows.filter((i) => compareTimestamps(toTimestamp(starts[i]), timeMax) <= 0);
  if (rows.length === 0) return 'No events found.';
  // list.sort(key=Timestamp, reverse=True): keys first, stable, latest first
  const keys = rows.map((i) => toTimestamp(starts[i]));
  const sorted = rows.map((_, k) => k).sort((x, y) => compareTimestamps(keys[y]!, keys[x]!)).map((k) => rows[k]!);
  const { items, page, totalPages } = paginate(sorted, a.page, a.page_size);
  return {
    events: items.map((i) => t.record(i)),
    pagination: { total_events: sorted.length, page, page_size: a.page_size, total_pages: totalPages },
  };
}

function createEvent(env: Environment, a: Args): Value {
  if (!truthy(a.event_name)) return 'Event name not provided.';
  if (!truthy(a.participant_email)) return 'Participant email not provided.';
  if (!truthy(a.event_start)) return 'Event start not provided.';
  if (!truthy(a.duration)) return 'Event duration not provided.';
  if (!timestampOrNull(a.event_start)) return 'Invalid event_start format. Expected YYYY-MM-DD HH:MM:SS.';
  const problem = durationProblem(a.duration);
  if (problem) return problem;
  const participant = lower(a.participant_email);
  const eventId = zfill(nextId(env.calendar, 'event_id'), 8);
  const row = { event_id: eventId, event_name: a.event_name, participant_email: participant, event_start: a.event_start, duration: a.duration };
  // plain concat: the new row keeps its own label 0
  env.calendar = env.calendar.append(Object.keys(row), [row], false);
  return eventId;
}

function deleteEvent(env: Environment, a: Args): Value {
  if (!truthy(a.event_id)) return 'Event ID not provided.';
  if (!isEightDigitId(a.event_id)) return 'Invalid event ID format. Expected 8-digit ID.';
  if (env.calendar.includes('event_id', a.event_id)) {
    env.calendar = env.calendar.filter(notEqualMask(env.calendar, 'event_id', a.event_id));
    return 'Event deleted successfully.';
  }
  return 'Event not found.';
}

function updateEvent(env: Environment, a: Args): Value {
  if (!truthy(a.event_id) || !truthy(a.field) || !truthy(a.new_value)) return 'Event ID, field, or new value not provided.';
  if (!isEightDigitId(a.event_id)) return 'Invalid event ID format. Expected 8-digit ID.';
  if (!inList(UPDATABLE_EVENT_FIELDS, a.field)) return `Invalid field. Available fields are: ${UPDATABLE_EVENT_FIELDS.join(', ')}`;
  if (eq(a.field, 'event_start')) {
    if (!timestampOrNull(a.new_value)) return 'Invalid event_start format. Expected YYYY-MM-DD HH:MM:SS.';
  } else if (eq(a.field, 'duration')) {
    const problem = durationProblem(a.new_value);
    if (problem) return problem;
  }
  if (env.calendar.includes('event_id', a.event_id)) {
    const value = eq(a.field, 'participant_email') ? lower(a.new_value) : a.new_value;
    env.calendar = env.calendar.setWhere(env.calendar.eqMask('event_id', a.event_id), a.field as string, value);
    return 'Event updated successfully.';
  }
  return 'Event not found.';
}

// ---------------------------------------------------------------- analytics

const PLOT_VALUES = ['total_visits', 'session_duration_seconds', 'user_engaged', 'visits_direct', 'visits_referral', 'visits_search_engine', 'visits_social_media'];
const PLOT_TYPES = ['bar', 'line', 'scatter', 'histogram'];

function getVisitorInformationById(env: Environment, a: Args): Value {
  if (!truthy(a.visitor_id)) return 'Visitor ID not provided.';
  const rows = rowsWhere(env.analytics, 'visitor_id', a.visitor_id);
  return rows.length > 0 ? rows : 'Visitor not found.';
}

function createPlot(env: Environment, a: Args): Value {
  if (!truthy(a.time_min)) return 'Start date not provided.';
  if (!truthy(a.time_max)) return 'End date not provided.';
  if (!inList(PLOT_VALUES, a.value_to_plot)) {
    return "Value to plot must be one of 'total_visits', 'session_duration_seconds', 'user_engaged', 'visits_direct', 'visits_referral', 'visits_search_engine', 'visits_social_media'";
  }
  if (!inList(PLOT_TYPES, a.plot_type)) return "Plot type must be one of 'bar', 'line', 'scatter', or 'histogram'";
  const filePath = `plots/${str(a.time_min)}_${str(a.time_max)}_${str(a.value_to_plot)}_${str(a.plot_type)}.png`;
  env.plots = env.plots.appendWithLabel(env.plots.length, [filePath]);
  return filePath;
}

/** Rows with `time_min <= date_of_visit <= time_max` (string comparison; a falsy bound is skipped). */
function visitsBetween(env: Environment, a: Args): Table {
  let data = env.analytics;
  if (truthy(a.time_min)) data = data.filter(data.column('date_of_visit').map((d) => !isMissing(d) && compare(d, a.time_min, '>=')));
  if (truthy(a.time_max)) data = data.filter(data.column('date_of_visit').map((d) => !isMissing(d) && compare(d, a.time_max, '<=')));
  return data;
}

/** `groupby("date_of_visit")`: the row positions of each date, dates in sorted order. */
function groups(data: Table): [string, number[]][] {
  const byDate = new Map<Value, number[]>();
  const dates = data.column('date_of_visit');
  for (let i = 0; i < dates.length; i++) {
    const d = dates[i];
    if (isMissing(d)) continue;
    let list = byDate.get(d);
    if (!list) byDate.set(d, (list = []));
    list.push(i);
  }
  return [...byDate.entries()]
    .sort(([x], [y]) => (compare(x, y, '<') ? -1 : compare(y, x, '<') ? 1 : 0))
    .map(([d, rows]) => [str(d), rows]);
}

function totalVisitsCount(env: Environment, a: Args): Value {
  const out: Record<string, Value> = {};
  for (const [d, rows] of groups(visitsBetween(env, a))) out[d] = rows.length;
  return out;
}

function engagedUsersCount(env: Environment, a: Args): Value {
  const data = visitsBetween(env, a);
  const engaged = data.column('user_engaged');
  const out: Record<string, Value> = {};
  for (const [d, rows] of groups(data)) out[d] = rows.reduce((n, i) => n + (truthy(engaged[i]) ? 1 : 0), 0);
  return out;
}

function trafficSourceCount(env: Environment, a: Args): Value {
  const data = visitsBetween(env, a);
  const out: Record<string, Value> = {};
  if (truthy(a.traffic_source)) {
    const hits = data.eqMask('traffic_source', a.traffic_source);
    for (const [d, rows] of groups(data)) out[d] = rows.reduce((n, i) => n + (hits[i] ? 1 : 0), 0);
  } else {
    for (const [d, rows] of groups(data)) out[d] = rows.length;
  }
  return out;
}

/** Python `float(v)` of a table cell. */
function toFloat(v: Value): number {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (isMissing(v)) return NaN;
  if (typeof v === 'string') {
    if (/^\d{1,15}$/.test(v)) return Number(v);
    const s = v.trim();
    if (/^[+-]?(\d(_?\d)*(\.(\d(_?\d)*)?)?|\.\d(_?\d)*)([eE][+-]?\d(_?\d)*)?$/.test(s)) return Number(s.replace(/_/g, ''));
    if (/^[+-]?(inf|infinity)$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
    if (/^[+-]?nan$/i.test(s)) return NaN;
    throw new PyException('ValueError', `could not convert string to float: '${v}'`);
  }
  throw new PyException('TypeError', `float() argument must be a string or a real number, not '${typeName(v)}'`);
}

function getAverageSessionDuration(env: Environment, a: Args): Value {
  const inPlace = !truthy(a.time_min) && !truthy(a.time_max);
  let data = visitsBetween(env, a);
  const seconds = data.column('session_duration_seconds').map((v) => new PyFloat(toFloat(v)));
  data = data.withColumn('session_duration_seconds', seconds);
  // Without bounds upstream converts the session's own table (later reads show 4.0, not "4").
  if (inPlace) env.analytics = data;
  const out: Record<string, Value> = {};
  for (const [d, rows] of groups(data)) {
    let sum = 0;
    let count = 0;
    for (const i of rows) {
      const x = seconds[i]!.value;
      if (Number.isNaN(x)) continue;
      sum += x;
      count++;
    }
    out[d] = new PyFloat(count === 0 ? NaN : sum / count);
  }
  return out;
}

// ---------------------------------------------------------------- project management

const LISTS = ['Backlog', 'In Progress', 'In Review', 'Completed'];
const BOARDS = ['Back end', 'Front end', 'Design'];
const LIST_ERROR = "List not valid. Please choose from: 'Backlog', 'In Progress', 'In Review', 'Completed'.";
const BOARD_ERROR = "Board not valid. Please choose from: 'Back end', 'Front end', 'Design'.";
const ASSIGNEE_ERROR = 'Assignee email not valid. Please choose from the list of team members.';
const EMAIL_PATTERN = new PyRegex('^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$');

function lowerCells(col: readonly Value[]): Value[] {
  return col.map((v) => (typeof v === 'string' ? v.toLowerCase() : null));
}

function getTaskInformationById(env: Environment, a: Args): Value {
  if (!truthy(a.task_id)) return 'Task ID not provided.';
  if (!truthy(a.field)) return 'Field not provided.';
  const task = rowsWhere(env.projectTasks, 'task_id', a.task_id);
  if (task.length > 0) {
    if (hasKey(task[0]!, a.field)) return single(a.field, task[0]![str(a.field)]);
    return 'Field not found.';
  }
  return 'Task not found.';
}

function searchTasks(env: Environment, a: Args): Value {
  if (![a.task_name, a.assigned_to_email, a.list_name, a.due_date, a.board].some(truthy)) return 'No search parameters provided.';
  if (truthy(a.assigned_to_email)) {
    if (typeof a.assigned_to_email !== 'string') {
      throw new PyException('TypeError', `expected string or bytes-like object, got '${typeName(a.assigned_to_email)}'`);
    }
    if (EMAIL_PATTERN.search(a.assigned_to_email) === null) return 'Invalid email format for assigned_to_email.';
  }
  let tasks = env.projectTasks;
  if (truthy(a.task_name)) tasks = tasks.filter(strContains(tasks.column('task_name'), a.task_name));
  if (truthy(a.assigned_to_email)) {
    const wanted = lower(a.assigned_to_email);
    tasks = tasks.filter(lowerCells(tasks.column('assigned_to_email')).map((v) => v === wanted));
  }
  if (truthy(a.list_name)) tasks = tasks.filter(strContains(tasks.column('list_name'), a.list_name));
  if (truthy(a.due_date)) tasks = tasks.filter(strContains(tasks.column('due_date'), a.due_date));
  if (truthy(a.board)) tasks = tasks.filter(strContains(tasks.column('board'), a.board));
  return tasks.records();
}

function createTask(env: Environment, a: Args): Value {
  if (![a.task_name, a.assigned_to_email, a.list_name, a.due_date, a.board].every(truthy)) return 'Missing task details.';
  const assignee = lower(a.assigned_to_email);
  if (!lowerCells(env.projectTasks.column('assigned_to_email')).includes(assignee)) return ASSIGNEE_ERROR;
  if (!inList(LISTS, a.list_name)) return LIST_ERROR;
  if (!inList(BOARDS, a.board)) return BOARD_ERROR;
  const taskId = zfill(nextId(env.projectTasks, 'task_id'), 8);
  const row = { task_id: taskId, task_name: a.task_name, assigned_to_email: assignee, list_name: a.list_name, due_date: a.due_date, board: a.board };
  env.projectTasks = env.projectTasks.append(Object.keys(row), [row], true);
  return taskId;
}

function deleteTask(env: Environment, a: Args): Value {
  if (!truthy(a.task_id)) return 'Task ID not provided.';
  if (env.projectTasks.includes('task_id', a.task_id)) {
    env.projectTasks = env.projectTasks.filter(notEqualMask(env.projectTasks, 'task_id', a.task_id));
    return 'Task deleted successfully.';
  }
  return 'Task not found.';
}

/** `field in df.columns`: a list or dict cannot be hashed. */
function isColumn(table: Table, field: Value): boolean {
  if (Array.isArray(field) || (field !== null && typeof field === 'object' && !(field instanceof PyFloat))) {
    throw new PyException('TypeError', `unhashable type: '${Array.isArray(field) ? 'list' : 'dict'}'`);
  }
  return typeof field === 'string' && table.has(field);
}

function updateTask(env: Environment, a: Args): Value {
  if (!truthy(a.task_id) || !truthy(a.field) || !truthy(a.new_value)) return 'Task ID, field, or new value not provided.';
  let value = a.new_value;
  if (eq(a.field, 'assigned_to_email')) value = lower(value);
  if (eq(a.field, 'board') && !inList(BOARDS, value)) return BOARD_ERROR;
  if (eq(a.field, 'list_name') && !inList(LISTS, value)) return LIST_ERROR;
  if (eq(a.field, 'assigned_to_email') && !lowerCells(env.projectTasks.column('assigned_to_email')).some((x) => x !== null && eq(x, value))) {
    return ASSIGNEE_ERROR;
  }
  if (env.projectTasks.includes('task_id', a.task_id)) {
    if (isColumn(env.projectTasks, a.field)) {
      env.projectTasks = env.projectTasks.setWhere(env.projectTasks.eqMask('task_id', a.task_id), a.field as string, value);
      return 'Task updated successfully.';
    }
    return 'Field not valid.';
  }
  return 'Task not found.';
}

// ---------------------------------------------------------------- customer relationship manager

const STATUSES = ['Qualified', 'Won', 'Lost', 'Lead', 'Proposal'];
const PRODUCTS = ['Software', 'Hardware', 'Services', 'Consulting', 'Training'];

function searchCustomers(env: Environment, a: Args): Value {
  let customers = env.crm;
  const filters = [
    a.customer_name, a.customer_email, a.product_interest, a.status, a.assigned_to_email,
    a.last_contact_date_min, a.last_contact_date_max, a.follow_up_by_min, a.follow_up_by_max,
  ];
  if (!filters.some(truthy)) return 'No search parameters provided. Please provide at least one parameter.';
  for (const col of ['customer_name', 'customer_email', 'product_interest', 'status', 'assigned_to_email']) {
    if (truthy(a[col])) customers = customers.filter(strContains(customers.column(col), a[col]));
  }
  const bounds: [string, string, '>=' | '<='][] = [
    ['last_contact_date_min', 'last_contact_date', '>='],
    ['last_contact_date_max', 'last_contact_date', '<='],
    ['follow_up_by_min', 'follow_up_by', '>='],
    ['follow_up_by_max', 'follow_up_by', '<='],
  ];
  for (const [arg, col, op] of bounds) {
    if (truthy(a[arg])) customers = customers.filter(customers.column(col).map((v) => !isMissing(v) && compare(v, a[arg], op)));
  }
  const rows = customers.index.map((_, i) => i);
  const { items, page, totalPages } = paginate(rows, a.page, a.page_size);
  if (rows.length > 0) {
    return {
      customers: items.map((i) => customers.record(i)),
      pagination: { total_customers: rows.length, page, page_size: a.page_size, total_pages: totalPages },
    };
  }
  return 'No customers found.';
}

function updateCustomer(env: Environment, a: Args): Value {
  if (!truthy(a.customer_id) || !truthy(a.field) || !truthy(a.new_value)) return 'Customer ID, field, or new value not provided.';
  if (eq(a.field, 'status') && !inList(STATUSES, a.new_value)) {
    return "Status not valid. Please choose from: 'Qualified', 'Won', 'Lost', 'Lead', 'Proposal'";
  }
  if (eq(a.field, 'product_interest') && !inList(PRODUCTS, a.new_value)) {
    return "Product interest not valid. Please choose from: 'Software', 'Hardware', 'Services', 'Consulting', 'Training'";
  }
  let value = a.new_value;
  if (inList(['customer_email', 'assigned_to_email'], a.field)) value = lower(value);
  if (env.crm.includes('customer_id', a.customer_id)) {
    if (isColumn(env.crm, a.field)) {
      env.crm = env.crm.setWhere(env.crm.eqMask('customer_id', a.customer_id), a.field as string, value);
      return 'Customer updated successfully.';
    }
    return "Field not valid. Please choose from: 'customer_name', 'assigned_to_email', 'customer_email', 'customer_phone', 'last_contact_date', 'product_interest', 'status', 'notes', 'follow_up_by'";
  }
  return 'Customer not found.';
}

function addCustomer(env: Environment, a: Args): Value {
  if (![a.customer_name, a.assigned_to_email, a.status].every(truthy)) {
    return 'Please provide all required fields: customer_name, assigned_to_email, status.';
  }
  const assignee = lower(a.assigned_to_email);
  const email = truthy(a.customer_email) ? lower(a.customer_email) : a.customer_email;
  const newId = zfill(nextId(env.crm, 'customer_id'), 8);
  const row = {
    customer_id: newId,
    customer_name: a.customer_name,
    customer_email: email,
    customer_phone: a.customer_phone,
    last_contact_date: a.last_contact_date,
    product_interest: a.product_interest,
    status: a.status,
    assigned_to_email: assignee,
    notes: a.notes,
    follow_up_by: a.follow_up_by,
  };
  env.crm = env.crm.append(Object.keys(row), [row], true);
  return newId;
}

function deleteCustomer(env: Environment, a: Args): Value {
  if (!truthy(a.customer_id)) return 'Customer ID not provided.';
  if (!env.crm.includes('customer_id', a.customer_id)) return 'Customer not found.';
  env.crm = env.crm.filter(notEqualMask(env.crm, 'customer_id', a.customer_id));
  return 'Customer deleted successfully.';
}

// ---------------------------------------------------------------- registry

function spec(qualname: string, params: readonly (readonly [string, Value])[], run: ToolSpec['run']): ToolSpec {
  return { qualname, params, run };
}

const ID_FIELD = (id: string) => [[id, none], ['field', none]] as const;
const UPDATE = (id: string) => [[id, none], ['field', none], ['new_value', none]] as const;
const RANGE = [['time_min', none], ['time_max', none]] as const;
const TASK_FIELDS = [['task_name', none], ['assigned_to_email', none], ['list_name', none], ['due_date', none], ['board', none]] as const;

/** Tool name → Python method, in upstream's registration order. */
export const TOOLS: ReadonlyMap<string, ToolSpec> = new Map<string, ToolSpec>([
  ['company_directory_find_email_address', spec('CompanyDirectoryTool.find_email_address', [['name', '']], findEmailAddress)],
  ['email_get_email_information_by_id', spec('EmailTool.get_email_information_by_id', ID_FIELD('email_id'), getEmailInformationById)],
  ['email_search_emails', spec('EmailTool.search_emails', [['query', ''], ['date_min', none], ['date_max', none], ['page', 1], ['page_size', 5]], searchEmails)],
  ['email_send_email', spec('EmailTool.send_email', [['recipient', none], ['subject', none], ['body', none]], (env, a) => sendEmail(env, a.recipient, a.subject, a.body))],
  ['email_delete_email', spec('EmailTool.delete_email', [['email_id', none]], deleteEmail)],
  ['email_forward_email', spec('EmailTool.forward_email', [['email_id', none], ['recipient', none]], forwardEmail)],
  ['email_reply_email', spec('EmailTool.reply_email', [['email_id', none], ['body', none]], replyEmail)],
  ['calendar_get_event_information_by_id', spec('CalendarTool.get_event_information_by_id', ID_FIELD('event_id'), getEventInformationById)],
  ['calendar_search_events', spec('CalendarTool.search_events', [['query', ''], ['time_min', none], ['time_max', none], ['page', 1], ['page_size', 5]], searchEvents)],
  ['calendar_create_event', spec('CalendarTool.create_event', [['event_name', none], ['participant_email', none], ['event_start', none], ['duration', none]], createEvent)],
  ['calendar_delete_event', spec('CalendarTool.delete_event', [['event_id', none]], deleteEvent)],
  ['calendar_update_event', spec('CalendarTool.update_event', UPDATE('event_id'), updateEvent)],
  ['analytics_engaged_users_count', spec('AnalyticsTool.engaged_users_count', RANGE, engagedUsersCount)],
  ['analytics_get_visitor_information_by_id', spec('AnalyticsTool.get_visitor_information_by_id', [['visitor_id', none]], getVisitorInformationById)],
  ['analytics_create_plot', spec('AnalyticsTool.create_plot', [...RANGE, ['value_to_plot', none], ['plot_type', none]], createPlot)],
  ['analytics_traffic_source_count', spec('AnalyticsTool.traffic_source_count', [...RANGE, ['traffic_source', none]], trafficSourceCount)],
  ['analytics_total_visits_count', spec('AnalyticsTool.total_visits_count', RANGE, totalVisitsCount)],
  ['analytics_get_average_session_duration', spec('AnalyticsTool.get_average_session_duration', RANGE, getAverageSessionDuration)],
  ['project_management_get_task_information_by_id', spec('ProjectManagementTool.get_task_information_by_id', ID_FIELD('task_id'), getTaskInformationById)],
  ['project_management_search_tasks', spec('ProjectManagementTool.search_tasks', TASK_FIELDS, searchTasks)],
  ['project_management_create_task', spec('ProjectManagementTool.create_task', TASK_FIELDS, createTask)],
  ['project_management_delete_task', spec('ProjectManagementTool.delete_task', [['task_id', none]], deleteTask)],
  ['project_management_update_task', spec('ProjectManagementTool.update_task', UPDATE('task_id'), updateTask)],
  [
    'customer_relationship_manager_search_customers',
    spec(
      'CustomerRelationshipManagerTool.search_customers',
      [
        ['customer_name', none], ['customer_email', none], ['product_interest', none], ['status', none], ['assigned_to_email', none],
        ['last_contact_date_min', none], ['last_contact_date_max', none], ['follow_up_by_min', none], ['follow_up_by_max', none],
        ['page', 1], ['page_size', 5],
      ],
      searchCustomers,
    ),
  ],
  ['customer_relationship_manager_update_customer', spec('CustomerRelationshipManagerTool.update_customer', UPDATE('customer_id'), updateCustomer)],
  [
    'customer_relationship_manager_add_customer',
    spec(
      'CustomerRelationshipManagerTool.add_customer',
      [
        ['customer_name', none], ['assigned_to_email', none], ['status', none], ['customer_email', none], ['customer_phone', none],
        ['last_contact_date', none], ['product_interest', none], ['notes', ''], ['follow_up_by', none],
      ],
      addCustomer,
    ),
  ],
  ['customer_relationship_manager_delete_customer', spec('CustomerRelationshipManagerTool.delete_customer', [['customer_id', none]], deleteCustomer)],
]);

/**
 * `functions[name](**kwargs)`: KeyError for an unknown tool, Python's TypeError for an argument
 * the method does not take, then the tool itself. Throws PyException; returns the tool's result.
 */
export function callTool(env: Environment, name: string, kwargs: Iterable<[string, Value]>): Value {
  const tool = TOOLS.get(name);
  if (!tool) throw new PyException('KeyError', reprKey(name));
  const args: Args = Object.create(null) as Args;
  for (const [k, d] of tool.params) args[k] = d;
  for (const [k, v] of kwargs) {
    if (k === 'self') throw new PyException('TypeError', `${tool.qualname}() got multiple values for argument 'self'`);
    if (!tool.params.some(([p]) => p === k)) throw new PyException('TypeError', `${tool.qualname}() got an unexpected keyword argument '${k}'`);
    args[k] = v;
  }
  return tool.run(env, args);
}

function reprKey(name: string): string {
  return str([name]).slice(1, -1);
}
