/** The code the Redis queue owns, registered into the one table (docs/errors.md is generated from it). */
import { createError, registerErrorCodes } from '@nemo-gym/core/errors';

export const QUEUE_ERRORS = registerErrorCodes('packages/queue', {
  NG_ERR_QUEUE: {
    message: '%s',
    meaning:
      'A collection through Redis (`+queue_url`) could not use its queue: the URL is not a Redis URL (`redis://[user:password@]host[:port][/database]`), Redis did not answer within 3 s at the start, refused the password or the database number (`/99` on a server with 16 databases), stayed unreachable longer than the 120 s budget during the run, lost the run\'s data five times, or no worker took a job and no result came for `+worker_wait_s` (600 s); or `redis-server` could not be started. The message names the URL with its credentials masked.',
    fix: 'Check that `redis-server` runs and answers at the URL (`redis-cli -u <url> ping`) and that the database exists (`CONFIG GET databases`); for a Redis that loses its data, turn on `appendonly yes` and `maxmemory-policy noeviction`; start workers (`ng-collect-worker` with the same `+queue_url` and `+queue_name`). Then run the same command again: it resumes, and nothing already written is enqueued twice.',
  },
});

/** The Redis queue of a distributed collection could not be reached or used. */
export const QueueError = createError(QUEUE_ERRORS.NG_ERR_QUEUE, 'QueueError');
