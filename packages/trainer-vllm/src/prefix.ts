/**
 * NeMo-RL's prompt repair (`replace_prefix_tokens`, nemo_rl/models/generation/openai_server_utils.py),
 * ported line for line: keep the model's own tokens up to the end of its last generation and
 * continue with the template's tokens from the matching EOS on. The boundary is found by counting
 * EOS tokens, not by position, so a template that drops earlier reasoning still cuts at the right turn.
 */
import { AssertionError } from 'node:assert';
import { pyRepr, pyStrRepr } from '@nemo-gym/core/py';
import { qwenTokenizer } from './tokenizer.js';

/**
 * @param eosTokenId the tokenizer's EOS id (Qwen3: 151645, `<|im_end|>`)
 * @param modelPrefix the required prefix: prompt_token_ids + generation_token_ids of the last message that carries them
 * @param templatePrefix the template's ids for the messages up to and including the last assistant message (no generation prompt)
 * @param template the template's ids for the whole request
 * @param decode renders ids in the assertion message (default: the Qwen3 tokenizer)
 * @throws AssertionError (as NeMo-RL's `assert`) when the template has fewer EOS tokens than the prefix
 */
export function replacePrefixTokens(
  eosTokenId: number,
  modelPrefix: number[],
  templatePrefix: number[],
  template: number[],
  decode: (ids: number[]) => string = (ids) => qwenTokenizer().decode(ids),
): number[] {
  if (modelPrefix.length === 0) return template;

  // A generation stopped by max_tokens has no EOS; the template always closes the turn with one.
  let modelCutEnd = modelPrefix.length;
  if (modelPrefix[modelPrefix.length - 1] === eosTokenId) modelCutEnd -= 1;

  let countNeeded = 0;
  for (const id of templatePrefix) if (id === eosTokenId) countNeeded += 1;
  let countSeen = 0;
  let templateCutStart = -1;
  for (let pos = 0; pos < template.length; pos++) {
    if (template[pos] === eosTokenId) {
      countSeen += 1;
      if (countSeen === countNeeded) {
        templateCutStart = pos;
        break;
      }
    }
  }

  if (templateCutStart < 0) {
    throw new AssertionError({
      message:
        `EOS token #${countNeeded} not found in template_token_ids (only found ${countSeen} EOS tokens total)!\n` +
        `Template prefix token IDs (everything before the final assistant message): ${pyRepr(templatePrefix)}\n\n` +
        `Template token IDs (everything that was sent to the model endpoint): ${pyRepr(template)}\n\n` +
        `Template prefix repr (detokenized): ${pyStrRepr(decode(templatePrefix))}\n\n` +
        `Template repr (detokenized): ${pyStrRepr(decode(template))}`,
    });
  }
  return modelPrefix.slice(0, modelCutEnd).concat(template.slice(templateCutStart));
}
