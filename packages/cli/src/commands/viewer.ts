/**
 * ng-viewer: browse a rollouts JSONL file in the browser (rollouts and tasks with pass@k, filters,
 * sorting, one rollout as a conversation and its tokens, charts, aggregate metrics, and several runs
 * side by side with a per-task comparison). Serves 127.0.0.1:7860 by default.
 */
import { type ConfigDict } from '@nemo-gym/core/config';
import { UsageError } from '@nemo-gym/core/errors';
import type { CommandSpec } from '../runtime.js';
import { onStopRequest } from '../lifecycle.js';

export interface ViewerFlags {
  jsonl_fpath: string;
  /** A second rollouts file to compare with task by task. */
  compare_jsonl_fpath?: string;
  /** Several runs to show beside the first (`+compare_jsonl_fpath=[b.jsonl,c.jsonl]`). */
  compare_jsonl_fpaths?: string[];
  host: string;
  port: number;
}

export function viewerFlags(config: Record<string, unknown>): ViewerFlags {
  const path = config.jsonl_fpath;
  if (typeof path !== 'string' || path === '') {
    throw new UsageError('ng-viewer needs +jsonl_fpath=<rollouts.jsonl>: the JSONL file to browse (for example the output of ng-collect-rollouts).');
  }
  const host = config.host === undefined || config.host === null ? '127.0.0.1' : String(config.host);
  const port = config.port === undefined || config.port === null ? 7860 : Number(config.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`ng-viewer: +port=${String(config.port)} is not a port number; give an integer from 0 to 65535.`);
  }
  const compare = config.compare_jsonl_fpath;
  const isList = Array.isArray(compare);
  if (compare !== undefined && compare !== null && (isList ? compare.length === 0 || compare.some((c) => typeof c !== 'string' || c === '') : typeof compare !== 'string' || compare === '')) {
    throw new UsageError(
      'ng-viewer: +compare_jsonl_fpath must name a second rollouts JSONL file to compare with, for example +compare_jsonl_fpath=results/other_rollouts.jsonl, or several runs as "+compare_jsonl_fpath=[run_b.jsonl,run_c.jsonl]".',
    );
  }
  if (isList) return { jsonl_fpath: path, host, port, compare_jsonl_fpaths: compare as string[] };
  return { jsonl_fpath: path, host, port, ...(typeof compare === 'string' ? { compare_jsonl_fpath: compare } : {}) };
}

/** Start the viewer and keep serving until SIGINT/SIGTERM/SIGHUP or its launcher exits. Returns the exit code. */
export async function viewerMain(config: Record<string, unknown>): Promise<number> {
  const flags = viewerFlags(config);
  const { startViewer } = await import('@nemo-gym/viewer');
  const viewer = await startViewer({
    jsonlPath: flags.jsonl_fpath,
    ...(flags.compare_jsonl_fpath !== undefined ? { compareJsonlPath: flags.compare_jsonl_fpath } : {}),
    ...(flags.compare_jsonl_fpaths !== undefined ? { compareJsonlPaths: flags.compare_jsonl_fpaths } : {}),
    host: flags.host,
    port: flags.port,
    log: (t: string) => console.log(t),
  });
  const others = flags.compare_jsonl_fpaths ?? (flags.compare_jsonl_fpath !== undefined ? [flags.compare_jsonl_fpath] : []);
  const what = others.length ? `${flags.jsonl_fpath} compared with ${others.join(', ')}` : flags.jsonl_fpath;
  console.log(`Rollouts viewer for ${what}: ${viewer.url}  (Ctrl-C to stop)`);
  await new Promise<void>((done) => {
    const off = onStopRequest('ng-viewer', () => {
      off();
      done();
    });
  });
  await viewer.close();
  return 0;
}

export const viewerCommand: CommandSpec = {
  name: 'viewer',
  summary: 'Browse a rollouts JSONL file in a web page on 127.0.0.1.',
  flags: [
    { name: 'jsonl_fpath', type: 'str', description: 'rollouts JSONL file to browse', required: true },
    { name: 'compare_jsonl_fpath', type: 'str | list[str]', description: 'other rollouts files (runs B, C, …): every summary and chart per run, per-task rewards compared with A' },
    { name: 'host', type: 'str', description: 'address to bind (default 127.0.0.1)' },
    { name: 'port', type: 'int', description: 'port (default 7860; 0 picks a free one)' },
  ],
  main: (config: ConfigDict) => viewerMain(config),
};
