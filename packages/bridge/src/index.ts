/** @nemo-gym/bridge: rollouts to trainer data, other frameworks' trajectories to rollouts, re-verification. */
export { rolloutToChat, splitAtFirstAssistant, type ChatConversation } from './chat.js';
export { exportRollouts, fileFormatOf, type ExportOptions, type ExportSummary, type FileFormat } from './export.js';
export { IMPORT_FORMATS, ImportError, importFile, importTrajectory, type ImportFormat, type ImportOptions, type ImportSummary } from './import.js';
export { JsonlSink } from './jsonl.js';
export { ParquetSink, parquetSchema, type ParquetColumns, type ParquetType } from './parquet.js';
export { checkReverifyFiles, inputKey, joinTask, loadTasks, reverify, reverifyPaths, verifierFor, verifyClient, verifyRequestOf, type TaskIndex, type ReverifyOptions, type ReverifySummary, type VerifyTarget } from './reverify.js';
export { readRows, Tally, type Json } from './rows.js';
export { NoTokensError, tokenSequence, type TokenSequence, type Turn } from './tokens.js';
export { FORMATS, TRAINERS, type ExportFormat, type Trainer } from './trainers.js';
