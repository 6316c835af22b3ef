import { describe, expect, it } from 'vitest';
import { parseHermesToolCalls, parseReasoning, turnText } from '@nemo-gym/trainer-vllm';

describe('what the model writes and how vLLM parses it', () => {
  it('writes a scripted turn as Qwen3 does: think block, content, one line-separated <tool_call> per call', () => {
    expect(turnText({ reasoning: 'r', content: 'c', toolCalls: [{ name: 'f', arguments: { a: 1 } }, { name: 'g', arguments: {}, argumentsText: '{ }' }] })).toBe(
      '<think>\nr\n</think>\n\nc\n<tool_call>\n{"name": "f", "arguments": {"a":1}}\n</tool_call>\n<tool_call>\n{"name": "g", "arguments": { }}\n</tool_call>',
    );
    expect(turnText({ toolCalls: [{ name: 'f', arguments: {} }] })).toBe('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>');
  });

  it('re-serialises arguments as Python json.dumps(ensure_ascii=False): spaces, floats kept as floats, non-ASCII kept', () => {
    const r = parseHermesToolCalls('<tool_call>\n{"name": "f", "arguments": {"t":1.0,"n":2,"c":"été","l":[1,{"x":null}]}}\n</tool_call>');
    expect(r.toolsCalled).toBe(true);
    expect(r.content).toBeNull();
    expect(r.toolCalls[0]!.function).toEqual({ name: 'f', arguments: '{"t": 1.0, "n": 2, "c": "été", "l": [1, {"x": null}]}' });
  });

  it('an unparseable call leaves the whole text as content; text before the first call is kept untrimmed', () => {
    expect(parseHermesToolCalls('a <tool_call>\n{"name": "f", "argu')).toEqual({ toolsCalled: false, toolCalls: [], content: 'a <tool_call>\n{"name": "f", "argu' });
    expect(parseHermesToolCalls('<tool_call>{"arguments": {}}</tool_call>').toolsCalled).toBe(false);
    expect(parseHermesToolCalls('ok\n<tool_call>{"name": "f", "arguments": {}}</tool_call>').content).toBe('ok\n');
    expect(parseHermesToolCalls('plain')).toEqual({ toolsCalled: false, toolCalls: [], content: 'plain' });
  });

  it('reasoning parser: text before </think> is reasoning, the rest content (null when empty)', () => {
    expect(parseReasoning('<think>\nr\n</think>\n\nanswer')).toEqual({ reasoning: '\nr\n', content: '\n\nanswer' });
    expect(parseReasoning('<think>\nr\n</think>')).toEqual({ reasoning: '\nr\n', content: null });
    expect(parseReasoning('no think')).toEqual({ reasoning: null, content: 'no think' });
  });
});
