/** @nemo-gym/core/py: Python semantics, once: str methods, values, floats, the re translator, json.dumps/loads and float repr, lax ints and floats. */
export { PyFloat, pyFloatRepr, PyJsonDecodeError, pyJsonDumps, pyJsonLoadable, pyJsonLoads, pyJsonLoadsPlain, pyRound, toPlain, type PyDict, type PyValue } from './json.js';
export { pyError, PyException } from './exception.js';
export { PyComplex, pyDecimalStr, pyFloatDiv, pyFloatPow } from './float.js';
export { LaxInt, laxFloatFromStr, toLaxInt } from './lax.js';
export { MAX_PATTERN_LENGTH, PY_RE, pyCompile, pyCount, pyFindall, PyRegex, PyRegexError, PyRegexUnsupportedError, pySearch, pySplitCount } from './re.js';
export { pyRepr, pyStrRepr } from './repr.js';
export { PY_WHITESPACE, pyFloatFromStr, pyIntFromStr, pyIsAlpha, pyIsLower, pyIsUpper, pyLen, pyLower, pyLstrip, pyRstrip, pySliceStr, pySplit, pyStrCompare, pyStrip } from './str.js';
export { pyEq, pyFloat, pyIndex, pyIntIndex, pyIter, pyLt, pyNumber, pyStr, pyStrReceiver, pyTruthy, pyTypeName } from './value.js';
