/**
 * A Python exception raised by ported code, where upstream's behaviour depends on it (a tool's
 * error text, a 500 detail): `pyType` is the exception's class name, `pyMessage` is `str(e)`.
 * The error's message is `str(e)`, or `Type: str(e)` for servers that report it that way.
 */
import { NgError } from '../errors.js';

export class PyException extends NgError {
  constructor(
    readonly pyType: string,
    readonly pyMessage: string,
    options: { prefixType?: boolean } = {},
  ) {
    super('NG_ERR_PY_EXCEPTION', options.prefixType ? `${pyType}: ${pyMessage}` : pyMessage);
    this.name = pyType;
  }
}

/** A PyException whose message reads `Type: str(e)`, for servers that report errors that way. */
export function pyError(pyType: string, message: string): PyException {
  return new PyException(pyType, message, { prefixType: true });
}
