/**
 * `ng-prepare-data`: gather the datasets named in agent configs, validate every row, write
 * per-dataset and per-type metrics and the prepared (collated) JSONL files.
 *
 * Output files, metrics keys and number formatting follow the reference implementation so that
 * existing `*_metrics.json` files compare clean. Differences: invalid rows are reported with their
 * line number and failing field (they are still left out of the metrics), and inputs that would
 * crash the reference implementation midway fail up front with an explanation.
 */
import { createReadStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { writeFileAtomic, writeStreamAtomic } from '../files/atomic.js';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { once } from 'node:events';
import { SERVER_TYPES, checkInstance, isAlmostServer, RESERVED_KEYS, type DatasetConfig as ConfigDatasetConfig } from '../config/instances.js';
import { NgError } from '../errors.js';
import { diffMetrics } from './compare.js';
import { readLines } from './lines.js';
import { DatasetMetrics, MetricFloat, type MetricsDoc } from './metrics.js';
import { pyDumps } from '../py/dumps.js';
import { pyJsonLoads, PyJsonDecodeError, toPlain, type PyDict, type PyValue } from '../py/json.js';
import { checkRow, type RowProblem } from './validate.js';
import { checkRowAgainst, noToolsWarning, type RowChecks } from './row-fields.js';

export type DatasetType = 'train' | 'validation' | 'example';
export type PrepareMode = 'train_preparation' | 'example_validation';

/** A dataset entry of an agent config with every default filled in (as written into metrics files). */
export interface DatasetSpec {
  name: string;
  type: DatasetType;
  jsonl_fpath: string;
  num_repeats: number;
  gitlab_identifier: { dataset_name: string; version: string; artifact_fpath: string } | null;
  /** Where the dataset is published on the Hugging Face Hub (not part of the metrics document). */
  huggingface_identifier?: { repo_id: string; artifact_fpath: string | null } | null;
  license: string | null;
}

export interface AgentDatasets {
  /** Agent instance name (top-level config key). */
  name: string;
  datasets: DatasetSpec[];
}

export interface PrepareDataOptions {
  output_dirpath: string;
  mode: PrepareMode;
  should_download?: boolean;
  /** Directory that relative `jsonl_fpath`s and `output_dirpath` resolve against (default: process.cwd()). */
  cwd?: string;
  /** Where progress text goes (default: console.log). */
  log?: (text: string) => void;
  /** Fetches a missing dataset to its `jsonl_fpath` (absolute path given); required to use should_download. */
  download?: (dataset: DatasetSpec, absPath: string) => Promise<void>;
  /** Invalid rows printed per dataset before summarising the rest (default 20). */
  maxReportedRows?: number;
  /**
   * What an agent's rows are checked against (its resources server's verify-request fields and
   * tools, see row-fields.ts); null or absent: only the row checks of validate.ts.
   */
  rowChecks?: (agentName: string) => Promise<RowChecks | null>;
}

export interface BadRow {
  /** 1-based line number in the dataset file. */
  line: number;
  problems: RowProblem[];
}

export interface DatasetReport {
  agent: string;
  dataset: DatasetSpec;
  metricsPath: string;
  /** Set when the metrics disagree with an existing file; the new metrics were written here instead. */
  conflictPath?: string;
  validRows: number;
  /** Indexes (counting repeats) of rows left out of the metrics, as the reference implementation records them. */
  offendingIndexes: number[];
  badRows: BadRow[];
  metrics: MetricsDoc;
}

export interface PrepareDataResult {
  datasets: DatasetReport[];
  /** Type -> collated file, for the types that were collated. */
  collated: Partial<Record<DatasetType, string>>;
  typeMetrics: Partial<Record<DatasetType, MetricsDoc>>;
}

export type PrepareDataErrorCode =
  | 'NG_ERR_PREPARE_CONFIG'
  | 'NG_ERR_PREPARE_MISSING_DATASETS'
  | 'NG_ERR_METRICS_CONFLICT'
  | 'NG_ERR_PREPARE_COLLATE';

export class PrepareDataError extends NgError {
  constructor(code: PrepareDataErrorCode, message: string) {
    super(code, message);
  }
}

export function inScopeTypes(mode: PrepareMode): DatasetType[] {
  return mode === 'train_preparation' ? ['train', 'validation'] : ['example'];
}

function banner(title: string): string {
  const bar = '#'.repeat(100);
  return `\n\n${bar}\n#\n# ${title}\n#\n${bar}\n`;
}

function normalizeDataset(d: ConfigDatasetConfig): DatasetSpec {
  return {
    name: d.name,
    type: d.type,
    jsonl_fpath: d.jsonl_fpath,
    num_repeats: d.num_repeats ?? 1,
    gitlab_identifier: d.gitlab_identifier
      ? { dataset_name: d.gitlab_identifier.dataset_name, version: d.gitlab_identifier.version, artifact_fpath: d.gitlab_identifier.artifact_fpath }
      : null,
    license: d.license ?? null,
    ...(d.huggingface_identifier
      ? { huggingface_identifier: { repo_id: d.huggingface_identifier.repo_id, artifact_fpath: d.huggingface_identifier.artifact_fpath ?? null } }
      : {}),
  };
}

/**
 * Agents with datasets from a merged config dict. Invalid instance blocks that look like servers
 * (e.g. a dataset with `num_repeats: 0`) raise, unless `error_on_almost_servers` is falsy.
 */
export function findAgentDatasets(config: Record<string, unknown>): { instances: { name: string; serverType: string }[]; agents: AgentDatasets[] } {
  const instances: { name: string; serverType: string }[] = [];
  const agents: AgentDatasets[] = [];
  const problems: string[] = [];
  for (const [name, value] of Object.entries(config)) {
    if (RESERVED_KEYS.has(name)) continue;
    const check = checkInstance(name, value);
    if (check.kind === 'server') {
      instances.push({ name, serverType: check.instance.serverType });
      if (check.instance.serverType === 'responses_api_agents') {
        agents.push({ name, datasets: check.instance.datasets.map(normalizeDataset) });
      }
    } else if (check.kind === 'invalid' && isAlmostServer(value)) {
      problems.push(`- ${name}:\n${check.issues.map((i) => `    ${i.path}: ${i.message}`).join('\n')}`);
    }
  }
  const errorOnAlmost = config.error_on_almost_servers;
  const strict = errorOnAlmost === undefined || Boolean(errorOnAlmost);
  if (problems.length > 0 && strict) {
    throw new PrepareDataError(
      'NG_ERR_PREPARE_CONFIG',
      `Found ${problems.length} server config(s) with validation errors:\n${problems.join('\n')}\n` +
        `Fix the entries above (server types: ${SERVER_TYPES.join(', ')}), or set error_on_almost_servers=false to skip them.`,
    );
  }
  return { instances, agents };
}

/** Python-style metrics document text: `json.dump(..., indent=4)`. */
export function metricsJson(doc: MetricsDoc): string {
  const conv = (v: unknown): unknown => {
    if (v instanceof MetricFloat) return v.value;
    if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
    if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, conv(x)]));
    if (Array.isArray(v)) return v.map(conv);
    if (v !== null && typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [k, conv(x)]));
    return v;
  };
  return pyDumps(conv(doc), { indent: 4 });
}

function docToPy(doc: MetricsDoc): PyValue {
  return pyJsonLoads(metricsJson(doc));
}

function datasetConfigDoc(d: DatasetSpec): MetricsDoc {
  return new Map<string, unknown>([
    ['name', d.name],
    ['type', d.type],
    ['jsonl_fpath', d.jsonl_fpath],
    ['num_repeats', d.num_repeats],
    ['gitlab_identifier', d.gitlab_identifier ? new Map(Object.entries(d.gitlab_identifier)) : null],
    ['license', d.license],
  ]);
}

function conflictPathFor(metricsPath: string): string {
  const ext = extname(metricsPath);
  return join(dirname(metricsPath), `${basename(metricsPath, ext)}_conflict.json`);
}

function stemPath(jsonlPath: string, suffix: string): string {
  const ext = extname(jsonlPath);
  return join(dirname(jsonlPath), `${basename(jsonlPath, ext)}${suffix}`);
}

function conflictError(conflicts: string[]): PrepareDataError {
  const list = conflicts.map((p) => `\n- ${p}`).join('');
  const originals = conflicts.map((p) => `\n- ${p.replace('_conflict.json', '.json')}`).join('');
  return new PrepareDataError(
    'NG_ERR_METRICS_CONFLICT',
    `\nFound conflicting aggregate metrics that need to be corrected:${list}\n\n` +
      `This could be due to a change in how metrics are calculated, leading to outdated metrics. ` +
      `Try deleting the below file(s) and rerunning data preparation:${originals}\n`,
  );
}

export class DataPrepareEngine {
  private readonly cwd: string;
  private readonly log: (text: string) => void;

  constructor(private readonly opts: PrepareDataOptions) {
    this.cwd = opts.cwd ?? process.cwd();
    this.log = opts.log ?? ((t) => console.log(t));
  }

  private abs(p: string): string {
    return resolve(this.cwd, p);
  }

  /**
   * Check an existing metrics file against new metrics. Returns the conflict file path (written
   * with the new metrics) when they disagree, else undefined.
   */
  checkAgainstExisting(doc: MetricsDoc, metricsPath: string): string | undefined {
    if (!existsSync(metricsPath)) return undefined;
    let previous: PyValue;
    try {
      previous = pyJsonLoads(readFileSync(metricsPath, 'utf8'));
    } catch (err) {
      const why = err instanceof PyJsonDecodeError ? err.message : String(err);
      throw new PrepareDataError('NG_ERR_PREPARE_CONFIG', `${metricsPath} exists but is not valid JSON (${why}); delete it and rerun.`);
    }
    const diffs = diffMetrics(previous, docToPy(doc));
    if (diffs.length === 0) return undefined;
    this.log(`Differences found in aggregate metrics:\n${diffs.map((d) => `  ${d}`).join('\n')}`);
    const conflictPath = conflictPathFor(metricsPath);
    writeFileAtomic(conflictPath, metricsJson(doc));
    return conflictPath;
  }

  /** Validate one dataset file and compute its metrics (streaming, one line in memory). */
  async validateDataset(d: DatasetSpec, checks: RowChecks | null = null): Promise<{ metrics: DatasetMetrics; offendingIndexes: number[]; badRows: BadRow[]; validRows: number }> {
    const metrics = new DatasetMetrics();
    const offendingIndexes: number[] = [];
    const badRows: BadRow[] = [];
    let index = 0;
    let validRows = 0;
    if (d.num_repeats > 1) {
      this.log(`Dataset ${d.name} repeating ${d.num_repeats}x: each line repeated ${d.num_repeats} times (e.g. pattern: abc -> aaaabbbbcccc)`);
    }
    let toolless = 0;
    for await (const { lineNo, text } of readLines(this.abs(d.jsonl_fpath))) {
      const checked = checkRow(text);
      const fit = checked.ok && checks ? checkRowAgainst([...checked.row.keys()], checks.offers ? undefined : toPlain(checked.row.get('responses_create_params')!), checks) : null;
      if (fit?.noTools) toolless++;
      if (!checked.ok || (fit && fit.problems.length > 0)) {
        badRows.push({ line: lineNo, problems: checked.ok ? fit!.problems : checked.problems });
        for (let r = 0; r < d.num_repeats; r++) offendingIndexes.push(index++);
        continue;
      }
      const where = `${d.jsonl_fpath}:${lineNo}`;
      for (let r = 0; r < d.num_repeats; r++) {
        metrics.observeSample(checked.metrics);
        metrics.observeOther(checked.row, where);
        index++;
        validRows++;
      }
    }
    metrics.finishOther();
    if (checks && toolless > 0) this.log(noToolsWarning(checks, toolless, d.jsonl_fpath));
    return { metrics, offendingIndexes, badRows, validRows };
  }

  private reportBadRows(d: DatasetSpec, badRows: BadRow[]): void {
    if (badRows.length === 0) return;
    this.log(
      `WARNING: ${badRows.length} invalid row(s) in ${d.jsonl_fpath} (dataset \`${d.name}\`) were left out of the metrics and must be fixed:\n${formatBadRows(badRows, this.opts.maxReportedRows)}`,
    );
  }

  /** The metrics document of one dataset (its config fields, then the row metrics) and where it goes. */
  async checkDataset(d: DatasetSpec): Promise<DatasetFileCheck> {
    const state = await this.validateDataset(d);
    const doc = datasetConfigDoc(d);
    for (const [k, v] of state.metrics.doc()) doc.set(k, v);
    return { validRows: state.validRows, badRows: state.badRows, metrics: doc, metricsPath: stemPath(this.abs(d.jsonl_fpath), '_metrics.json') };
  }

  async run(config: Record<string, unknown>): Promise<PrepareDataResult> {
    const { mode } = this.opts;
    const log = this.log;
    const scope = inScopeTypes(mode);

    // 1. Server instance configs.
    log(banner('Load and validate server instance configs'));
    const { instances, agents } = findAgentDatasets(config);
    const agentCount = instances.filter((i) => i.serverType === 'responses_api_agents').length;
    log(
      `Found ${instances.length} server instance configs (${agentCount} agent configs):${instances.map((i) => `\n- ${i.name} (${i.serverType})`).join('')}\n\n`,
    );
    const withData = agents.filter((a) => a.datasets.length > 0);
    const withoutData = agents.filter((a) => a.datasets.length === 0);
    log(`Found ${withoutData.length} agent server instance configs WITHOUT datasets:${withoutData.map((a) => `\n- ${a.name} (responses_api_agents)`).join('')}\n\n`);
    const listing = (list: AgentDatasets[]) =>
      list.map((a) => `\n- ${a.name}${a.datasets.map((d) => `\n  - ${d.name} (${d.type})`).join('')}`).join('');
    log(`Found ${withData.length} agent server instance configs WITH datasets:${listing(withData)}\n\n`);
    // Keep only in-scope datasets; an agent with none in scope is left out (the reference
    // implementation processed such agents anyway, which was a bug fixed later upstream).
    const selected: AgentDatasets[] = [];
    for (const a of withData) {
      const inScope = a.datasets.filter((d) => scope.includes(d.type));
      if (inScope.length > 0) selected.push({ name: a.name, datasets: inScope });
    }
    log(`In scope dataset types for \`${mode}\` mode: [${scope.map((t) => `'${t}'`).join(', ')}]`);
    log(`Found ${selected.length} agent server instance configs with in-scope datasets:${listing(selected)}`);

    // 2. Datasets present locally (or downloaded).
    log(banner(`Load datasets. Missing datasets ${this.opts.should_download ? '**WILL**' : 'will **NOT**'} be downloaded.`));
    const found: AgentDatasets[] = [];
    const missing: AgentDatasets[] = [];
    for (const a of selected) {
      const f = a.datasets.filter((d) => existsSync(this.abs(d.jsonl_fpath)));
      const m = a.datasets.filter((d) => !existsSync(this.abs(d.jsonl_fpath)));
      if (f.length) found.push({ name: a.name, datasets: f });
      if (m.length) missing.push({ name: a.name, datasets: m });
    }
    log(`FOUND the following datasets at their local paths:${listing(found)}\n\n`);
    log(`MISSING the following datasets:${listing(missing)}\n\n`);
    if (missing.length > 0) {
      const paths = missing.flatMap((a) => a.datasets.map((d) => `\n- ${d.jsonl_fpath} (${a.name} / ${d.name}, resolved from ${this.cwd})`)).join('');
      if (mode === 'example_validation') {
        throw new PrepareDataError('NG_ERR_PREPARE_MISSING_DATASETS', `You must provide the above missing example jsonl files!${paths}`);
      }
      if (!this.opts.should_download) {
        throw new PrepareDataError(
          'NG_ERR_PREPARE_MISSING_DATASETS',
          `Missing local datasets. You must provide local datasets since download is disabled. Run with \`+should_download=true\` to enable downloading.${paths}`,
        );
      }
      if (!this.opts.download) {
        throw new PrepareDataError(
          'NG_ERR_PREPARE_MISSING_DATASETS',
          `Missing local datasets and no dataset registry is configured for downloads; place the files at their jsonl_fpath:${paths}`,
        );
      }
      for (const a of missing) {
        for (const d of a.datasets) {
          if (!d.gitlab_identifier && !d.huggingface_identifier) {
            throw new PrepareDataError(
              'NG_ERR_PREPARE_MISSING_DATASETS',
              `Dataset \`${d.name}\` of \`${a.name}\` is missing and has no huggingface_identifier (or gitlab_identifier) to download it from.`,
            );
          }
          log(`Downloading dataset \`${d.name}\` from \`${a.name}\` to ${d.jsonl_fpath}`);
          mkdirSync(dirname(this.abs(d.jsonl_fpath)), { recursive: true });
          await this.opts.download(d, this.abs(d.jsonl_fpath));
        }
      }
    }

    // 3. Validate samples and aggregate metrics.
    log(banner('Validate samples and aggregate metrics'));
    const reports: DatasetReport[] = [];
    const typeMetrics = new Map<DatasetType, DatasetMetrics>();
    const conflicts: string[] = [];
    for (const a of selected) {
      const checks = (await this.opts.rowChecks?.(a.name)) ?? null;
      for (const d of a.datasets) {
        const state = await this.validateDataset(d, checks);
        this.reportBadRows(d, state.badRows);
        let acc = typeMetrics.get(d.type);
        if (!acc) typeMetrics.set(d.type, (acc = new DatasetMetrics()));
        acc.add(state.metrics);

        const doc = datasetConfigDoc(d);
        for (const [k, v] of state.metrics.doc()) doc.set(k, v);
        const metricsPath = stemPath(this.abs(d.jsonl_fpath), '_metrics.json');
        const report: DatasetReport = {
          agent: a.name,
          dataset: d,
          metricsPath,
          validRows: state.validRows,
          offendingIndexes: state.offendingIndexes,
          badRows: state.badRows,
          metrics: doc,
        };
        reports.push(report);
        const conflict = this.checkAgainstExisting(doc, metricsPath);
        if (conflict) {
          report.conflictPath = conflict;
          conflicts.push(conflict);
          continue;
        }
        writeFileAtomic(metricsPath, metricsJson(doc));
        log(`Aggregate metrics for ${metricsPath}\n${metricsJson(doc)}`);
      }
    }
    if (conflicts.length > 0) throw conflictError(conflicts);

    // 4. Collate.
    log(banner('Collate samples and aggregate metrics'));
    const outDir = this.abs(this.opts.output_dirpath);
    const collated: Partial<Record<DatasetType, string>> = {};
    const typeDocs: Partial<Record<DatasetType, MetricsDoc>> = {};
    const typeConflicts: string[] = [];
    for (const type of scope) {
      const acc = typeMetrics.get(type);
      if (!acc) continue;
      const doc = acc.doc();
      typeDocs[type] = doc;
      if (!existsSync(outDir)) {
        if (!existsSync(dirname(outDir))) {
          throw new PrepareDataError(
            'NG_ERR_PREPARE_CONFIG',
            `output_dirpath ${this.opts.output_dirpath}: its parent folder ${dirname(outDir)} does not exist; create it or choose another output_dirpath.`,
          );
        }
        mkdirSync(outDir);
      }
      const metricsPath = join(outDir, `${type}_metrics.json`);
      const conflict = this.checkAgainstExisting(doc, metricsPath);
      if (conflict) {
        typeConflicts.push(conflict);
        continue;
      }
      writeFileAtomic(metricsPath, metricsJson(doc));

      const parts: string[] = [];
      for (const a of selected) {
        for (const d of a.datasets) {
          if (d.type !== type) continue;
          parts.push(await this.writePrepared(a.name, d));
        }
      }
      const collatedPath = join(outDir, `${type}.jsonl`);
      await concatFiles(parts, collatedPath);
      log(`Aggregate metrics for ${metricsPath}\n${metricsJson(doc)}`);
      collated[type] = collatedPath;
    }
    if (typeConflicts.length > 0) throw conflictError(typeConflicts);
    log(`View your final data!${Object.entries(collated).map(([t, p]) => `\n- ${t}: ${p}`).join('')}`);
    const withBadRows = reports.filter((r) => r.badRows.length > 0);
    if (withBadRows.length > 0) {
      log(
        `\nWARNING: invalid rows were left out of the metrics (details above):` +
          withBadRows.map((r) => `\n- ${r.dataset.jsonl_fpath}: ${r.badRows.length} row(s), first at line ${r.badRows[0]!.line}`).join(''),
      );
    }
    log(banner('Finished!'));
    return { datasets: reports, collated, typeMetrics: typeDocs };
  }

  /** Write `<stem>_prepare.jsonl`: every row (repeated) with `agent_ref` set, Python-serialized. */
  private async writePrepared(agentName: string, d: DatasetSpec): Promise<string> {
    const src = this.abs(d.jsonl_fpath);
    const target = stemPath(src, '_prepare.jsonl');
    const agentRef: PyDict = new Map<string, PyValue>([
      ['type', 'responses_api_agents'],
      ['name', agentName],
    ]);
    await writeStreamAtomic(target, async (out) => {
      for await (const { lineNo, text } of readLines(src)) {
        let row: PyValue;
        try {
          row = pyJsonLoads(text);
        } catch (err) {
          const why = err instanceof PyJsonDecodeError ? err.message : String(err);
          throw new PrepareDataError(
            'NG_ERR_PREPARE_COLLATE',
            `${d.jsonl_fpath}:${lineNo}: cannot collate a line that is not JSON (${why}); fix or remove the line (blank lines included).`,
          );
        }
        if (!(row instanceof Map)) {
          throw new PrepareDataError('NG_ERR_PREPARE_COLLATE', `${d.jsonl_fpath}:${lineNo}: cannot set agent_ref on a row that is not a JSON object.`);
        }
        row.set('agent_ref', agentRef);
        const serialized = `${pyDumps(row)}\n`;
        for (let r = 0; r < d.num_repeats; r++) {
          if (!out.write(serialized)) await once(out, 'drain');
        }
      }
    });
    return target;
  }
}

async function concatFiles(parts: string[], target: string): Promise<void> {
  await writeStreamAtomic(target, async (out) => {
    for (const p of parts) {
      for await (const chunk of createReadStream(p)) {
        if (!out.write(chunk)) await once(out, 'drain');
      }
    }
  });
}

export interface DatasetFileCheck {
  /** Rows that pass the checks, counting repeats. */
  validRows: number;
  badRows: BadRow[];
  /** The `<stem>_metrics.json` document ng-prepare-data writes for this dataset. */
  metrics: MetricsDoc;
  metricsPath: string;
}

/** The invalid rows of a dataset as report lines (`  line 4: field: message`), at most `max` of them. */
export function formatBadRows(badRows: readonly BadRow[], max = 20): string {
  const lines = badRows.slice(0, max).map((b) => {
    const probs = b.problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message));
    return `  line ${b.line}: ${probs.join('; ')}`;
  });
  if (badRows.length > max) lines.push(`  ... and ${badRows.length - max} more invalid rows`);
  return lines.join('\n');
}

/**
 * Validate one dataset file with the row checks of ng-prepare-data and compute its metrics
 * document, writing nothing. Relative paths resolve against `cwd` (default: process.cwd()).
 */
export async function checkDatasetFile(d: DatasetSpec, opts: { cwd?: string; log?: (text: string) => void } = {}): Promise<DatasetFileCheck> {
  return new DataPrepareEngine({ output_dirpath: '.', mode: 'train_preparation', cwd: opts.cwd, log: opts.log ?? (() => undefined) }).checkDataset(d);
}

/** Run data preparation for a merged config dict (see PrepareDataOptions). */
export async function prepareData(config: Record<string, unknown>, opts: PrepareDataOptions): Promise<PrepareDataResult> {
  return new DataPrepareEngine(opts).run(config);
}
