// Task module of MathVerifier's checker processes (src/pool.ts): one library check per task.
import { verifyAnswerWithLibrary, type LibraryResult } from './verify.js';

export function check(expected: string, generated: string): LibraryResult {
  try {
    return verifyAnswerWithLibrary(expected, generated);
  } catch {
    return { reward: 0.0, extracted: null };
  }
}

// Warm up (regex compilation) while the module loads, so time limits only measure checks.
verifyAnswerWithLibrary('1', '\\boxed{1}');
