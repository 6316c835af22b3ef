/** @nemo-gym/core/data: Dataset validation, metrics and ng-prepare-data. */
export { downloadChecked, type DownloadOptions, type ExpectedFile } from './download.js';
export { DatasetMetrics, MetricsKeyCollisionError, MixedMetricTypesError, type MetricsDoc, type SampleMetrics } from './metrics.js';
export { checkDatasetFile, findAgentDatasets, formatBadRows, metricsJson, prepareData, PrepareDataError, type PrepareDataErrorCode, type PrepareDataOptions, type PrepareDataResult, type PrepareMode, type AgentDatasets, type BadRow, type DatasetFileCheck, type DatasetSpec } from './prepare.js';
export { readLines, type Line } from './lines.js';
export { jsonlProblem, parseJsonl, parseJsonObject, readJsonl, readJsonlSync, type JsonlLine, type JsonObject, type ParsedObject } from './jsonl.js';
export { pyDumps } from '../py/dumps.js';
export { mulberry32 } from './random.js';
export { checkCreateParams, checkRow, sampleMetrics, type RowCheck, type RowProblem } from './validate.js';
