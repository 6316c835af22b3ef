/**
 * @nemo-gym/core/errors: the coded errors and helpers used outside the core (servers, packages,
 * commands). The table and every class live in errors.ts; the core's own modules import them there.
 */
export {
  answerCode,
  BadResultError,
  BadRowError,
  ClientGoneError,
  ConfigError,
  createError,
  DataDownloadError,
  describeError,
  errorMessage,
  HeadServerError,
  HeadTokenError,
  HttpError,
  InternalError,
  NgError,
  PoolTaskError,
  registerErrorCodes,
  RolloutIdError,
  ServerDefinitionError,
  ServerResponseError,
  TimeoutError,
  UsageError,
} from './errors.js';
