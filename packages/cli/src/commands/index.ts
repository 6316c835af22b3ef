/** Every ng-* command, by name. */
import type { CommandSpec } from '../runtime.js';
import { runCommand } from './run.js';
import { dumpConfigCommand } from './dump-config.js';
import { helpCommand } from './help.js';
import { collectRolloutsCommand } from './collect-rollouts.js';
import { quickstartCommand } from './quickstart.js';
import { benchCommand } from './bench.js';
import { prepareDataCommand } from './prepare-data.js';
import { viewerCommand } from './viewer.js';
import { initResourcesServerCommand } from './init-resources-server.js';
import { testAllCommand, testCommand } from './test.js';
import { exportCommand } from './export.js';
import { importCommand } from './import.js';
import { reverifyCommand } from './reverify.js';
import { statusCommand, stopCommand } from './status.js';
import { collectWorkerCommand } from './collect-worker.js';
import { mergeRolloutsCommand } from './merge-rollouts.js';
import { downloadDatasetCommand } from './download-dataset.js';
import { uploadDatasetCommand } from './upload-dataset.js';

export const COMMANDS: CommandSpec[] = [runCommand, collectRolloutsCommand, quickstartCommand, prepareDataCommand, viewerCommand, initResourcesServerCommand, testCommand, testAllCommand, benchCommand, dumpConfigCommand, exportCommand, importCommand, reverifyCommand, helpCommand, statusCommand, stopCommand, collectWorkerCommand, mergeRolloutsCommand, downloadDatasetCommand, uploadDatasetCommand];

export function findCommand(name: string): CommandSpec | undefined {
  const n = name.replace(/^(ng|nemo_gym)[-_]/, '').replace(/_/g, '-');
  return COMMANDS.find((c) => c.name.replace(/_/g, '-') === n);
}
