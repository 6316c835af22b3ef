export type { Node } from './nodes.js';
export { printExpr, structEq } from './nodes.js';
export { parseLatex } from './latex.js';
export { normalizeLatex, extractBoxedContent } from './normalize.js';
export { parse, parsePyExpr, type Extracted, type Target } from './extract.js';
export { verify, mathMetric, verifyAnswerWithLibrary, type MetricResult, type LibraryResult } from './verify.js';
export { MathVerifier, type MathVerifierOptions } from './pool.js';
