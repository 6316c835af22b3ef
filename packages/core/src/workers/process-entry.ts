/** Child-process entry of a TaskPool: loads the task module given as its argument and runs tasks over IPC. */
import { serveTasks } from './serve.js';

if (typeof process.send === 'function') {
  // The parent went away: nothing is left to do. (A module that failed to load waits here to be stopped,
  // so the parent surely receives the reason first.)
  process.on('disconnect', () => process.exit(0));
  await serveTasks(process.argv[2]!, (msg) => process.send!(msg), (handle) => process.on('message', handle));
}
