/** @nemo-gym/core/data: Dataset validation, metrics and ng-prepare-data. */
export { downloadChecked } from './download.js';
export { DatasetMetrics, type MetricsDoc } from './metrics.js';
export { checkDatasetFile, findAgentDatasets, formatBadRows, metricsJson, prepareData, PrepareDataError, type PrepareMode, type DatasetSpec } from './prepare.js';
export { readLines } from './lines.js';
export { jsonlProblem, readJsonl, readJsonlSync } from './jsonl.js';
export { pyDumps } from '../py/dumps.js';
export { mulberry32 } from './random.js';
export { checkCreateParams, sampleMetrics } from './validate.js';
export { rowChecksOf, checkRowAgainst, noToolsWarning, type RowChecks } from './row-fields.js';
