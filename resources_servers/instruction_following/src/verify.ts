// The scoring of one verify request as plain data in, plain data out, so that it can run in a
// worker thread (see ../app.ts) or inline.

import { checkInstruction, type Tools } from './instructions.js';
import { loadPunktParams, PunktSentenceTokenizer } from './punkt.js';

export interface VerifyTask {
  /** Final response text the instructions are checked against. */
  text: string;
  instructionIds: unknown[];
  kwargs: unknown[];
  /** Folder holding tokenizers/punkt_tab/english/*, found at start-up. */
  punktDir: string;
  /** Folder of Python langdetect profiles (config `langdetect_profiles_dir`); null: npm profiles. */
  langdetectProfilesDir?: string | null;
}

export interface VerifyResult {
  followList: boolean[];
  /** For each instruction that counted as not followed because of an error: "index: message". */
  errors: string[];
}

const punktByDir = new Map<string, PunktSentenceTokenizer>();

export function toolsFor(punktDir: string, langdetectProfilesDir: string | null = null): Tools {
  let punkt = punktByDir.get(punktDir);
  if (!punkt) {
    punkt = new PunktSentenceTokenizer(loadPunktParams(punktDir));
    punktByDir.set(punktDir, punkt);
  }
  return { punkt, langdetectProfilesDir };
}

/** Checks each (instruction id, kwargs) pair; like Python's zip, the shorter list decides the count. */
export function verifyInstructions(task: VerifyTask): VerifyResult {
  const tools = toolsFor(task.punktDir, task.langdetectProfilesDir ?? null);
  const n = Math.min(task.instructionIds.length, task.kwargs.length);
  const followList: boolean[] = [];
  const errors: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = checkInstruction(task.instructionIds[i], task.kwargs[i], task.text, tools);
    followList.push(r.ok);
    if (r.error) errors.push(`${i} (${String(task.instructionIds[i])}): ${r.error}`);
  }
  return { followList, errors };
}

/**
 * The text upstream scores: the first content part of the last output item, when that item has a
 * non-empty content list. A function call or reasoning item last gives "". A first part without
 * a string `text` (a refusal, an image) also gives "" (upstream fails with an AttributeError there).
 */
export function finalResponseText(response: unknown): string {
  const output = (response as { output?: unknown } | null)?.output;
  if (!Array.isArray(output) || output.length === 0) return '';
  const last = output[output.length - 1] as { content?: unknown } | null;
  const content = last?.content;
  if (!Array.isArray(content) || content.length === 0) return '';
  const first = content[0] as { text?: unknown } | null;
  return typeof first?.text === 'string' ? first.text : '';
}
