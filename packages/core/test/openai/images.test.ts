import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareData } from '../../src/data/index.js';
import { encodePng, pngDataUrl } from '../../../../resources_servers/vision_shapes/src/png.js';
import { fullCreateParamsDump, ResponseCreateParamsSchema, responsesToChatParams } from '../../src/openai/index.js';
import { chatMessagesToResponsesInput } from '../../src/openai/converter.js';
import { checkImageUrl, DEFAULT_IMAGE_LIMITS, imageProblems, parseDataUrl } from '../../src/openai/images.js';
import { pyJsonLoads } from '../../src/py/index.js';

const png = pngDataUrl(encodePng(3, 2, Uint8Array.from({ length: 18 }, (_, i) => i * 10)));

describe('image parts in the schemas and the Chat conversion', () => {
  const input = [
    { role: 'system', content: 'Count shapes.' },
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'How many?' },
        { type: 'input_image', image_url: png, detail: 'low' },
        { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
      ],
      type: 'message',
    },
  ];

  it('round-trips Responses input with images through Chat messages and back', () => {
    const params = ResponseCreateParamsSchema.parse({ input });
    const chat = responsesToChatParams(params, { returnTokenIdInformation: false });
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Count shapes.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'How many?' },
          { type: 'image_url', image_url: { url: png, detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'auto' } },
        ],
      },
    ]);
    const back = chatMessagesToResponsesInput(chat.messages as Record<string, unknown>[]);
    expect(back).toEqual(input.map((m) => ({ ...m, type: 'message' })));
    expect(responsesToChatParams(ResponseCreateParamsSchema.parse({ input: back }), { returnTokenIdInformation: false })).toEqual(chat);
  });

  it('keeps token fields on the recorded assistant turn when converting back', () => {
    const assistant = { role: 'assistant', content: 'Three.', prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5] };
    const items = chatMessagesToResponsesInput([{ role: 'user', content: [{ type: 'image_url', image_url: { url: png } }] }, assistant]);
    expect(items).toEqual([
      { role: 'user', content: [{ type: 'input_image', image_url: png, detail: 'auto' }], type: 'message' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Three.', annotations: [] }], type: 'message', prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5] },
    ]);
    const chat = responsesToChatParams(ResponseCreateParamsSchema.parse({ input: items }), { returnTokenIdInformation: true });
    expect((chat.messages as unknown[])[1]).toEqual({ role: 'assistant', content: 'Three.', prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5] });
  });

  it('refuses image parts without a source, with a bad detail, or in an assistant message', () => {
    const noSource = ResponseCreateParamsSchema.safeParse({ input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }] });
    expect(noSource.success).toBe(false);
    expect(noSource.error!.issues[0]).toMatchObject({ path: ['input', 0, 'content', 0, 'image_url'], message: expect.stringContaining('needs "image_url"') });
    const badDetail = ResponseCreateParamsSchema.safeParse({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: png, detail: 'huge' }] }] });
    expect(badDetail.error!.issues[0]!.path).toEqual(['input', 0, 'content', 0, 'detail']);
    const params = ResponseCreateParamsSchema.parse({ input: [{ role: 'system', content: [{ type: 'input_image', image_url: png }] }] });
    expect(() => responsesToChatParams(params, { returnTokenIdInformation: false })).toThrow(/input\[0\]\.content\[0\] has type "input_image"/);
  });

  it('accepts the current request fields and keeps the set ones in the full dump, after the known keys', () => {
    const params = ResponseCreateParamsSchema.parse({
      input: 'x', prompt_cache_key: 'k', safety_identifier: 's', conversation: 'conv_1', reasoning: { effort: 'none', context: 'all_turns' },
      service_tier: 'ultrafast', stream_options: { include_obfuscation: false }, context_management: [{ type: 'compaction' }],
    });
    const dump = fullCreateParamsDump(params);
    const keys = Object.keys(dump);
    expect(keys.slice(0, 23)).toEqual(['background', 'include', 'input', 'instructions', 'max_output_tokens', 'max_tool_calls', 'metadata', 'model', 'parallel_tool_calls', 'previous_response_id', 'prompt', 'reasoning', 'service_tier', 'store', 'temperature', 'text', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'truncation', 'user', 'stream']);
    expect(keys.slice(23)).toEqual(['context_management', 'conversation', 'prompt_cache_key', 'safety_identifier', 'stream_options']);
    expect(dump.prompt_cache_key).toBe('k');
    expect(ResponseCreateParamsSchema.safeParse({ input: 'x', reasoning: { effort: 'ultra' } }).success).toBe(false);
    expect(ResponseCreateParamsSchema.safeParse({ input: 'x', promptCacheKey: 'k' }).error!.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['promptCacheKey'] });
  });
});

describe('image checks', () => {
  it('parses data URLs and sizes them from the base64 length', () => {
    expect(parseDataUrl('data:image/png;base64,QUJD')).toEqual({ mime: 'image/png', data: 'QUJD', bytes: 3 });
    expect(parseDataUrl('data:image/png;name=a.png;base64,QUI=')).toMatchObject({ mime: 'image/png', bytes: 2 });
    expect(parseDataUrl('data:image/png,QUJD')).toBeNull();
    expect(parseDataUrl('https://x')).toBeNull();
  });

  it('checks type, signature and size, and passes remote URLs without fetching', () => {
    expect(checkImageUrl(png, DEFAULT_IMAGE_LIMITS)).toEqual({ bytes: Buffer.from(png.split(',')[1]!, 'base64').length });
    expect(checkImageUrl('https://example.com/x.png', DEFAULT_IMAGE_LIMITS)).toEqual({ bytes: 0 });
    const jpegAsPng = `data:image/png;base64,${Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]).toString('base64')}`;
    expect(checkImageUrl(jpegAsPng, DEFAULT_IMAGE_LIMITS)).toMatchObject({ status: 400 });
    expect(checkImageUrl(jpegAsPng.replace('image/png', 'image/jpeg'), DEFAULT_IMAGE_LIMITS)).toEqual({ bytes: 6 });
    expect(checkImageUrl(png, { ...DEFAULT_IMAGE_LIMITS, allowed_image_mime_types: ['image/jpeg'] })).toMatchObject({ status: 415 });
    expect(checkImageUrl(png, { ...DEFAULT_IMAGE_LIMITS, max_image_bytes: 10 })).toMatchObject({ status: 413 });
  });

  it('counts the images of Responses and Chat requests and names every bad one', () => {
    const body = {
      input: [
        { role: 'user', content: [{ type: 'input_image', image_url: png }, { type: 'input_image', image_url: 'data:text/plain;base64,aGk=' }] },
        { role: 'user', content: [{ type: 'input_image', image_url: 'data:image/gif;base64,@@@@' }] },
      ],
    };
    const r = imageProblems(body);
    expect(r.count).toBe(3);
    expect(r.problems.map((p) => [p.where, p.status])).toEqual([['input[0].content[1]', 415], ['input[1].content[0]', 400]]);
    expect(imageProblems({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: png } }] }] })).toEqual({ count: 1, problems: [] });
  });
});

describe('ng-prepare-data with images', () => {
  const dirs: string[] = [];
  afterEach(() => {
    while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
  });

  it('counts images per row in the metrics and reports rows with unreadable images by field', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ng-prep-img-'));
    dirs.push(cwd);
    mkdirSync(join(cwd, 'data'));
    const row = (content: unknown[]) => JSON.stringify({ responses_create_params: { input: [{ role: 'user', content }] } });
    // A big (3 MB) but valid image row, two ordinary ones, and one broken image.
    const big = pngDataUrl(Buffer.concat([encodePng(1, 1, new Uint8Array(3)), Buffer.alloc(3 * 1024 * 1024, 7)]));
    writeFileSync(
      join(cwd, 'data/example.jsonl'),
      [
        row([{ type: 'input_text', text: 'a' }, { type: 'input_image', image_url: png }, { type: 'input_image', image_url: png }]),
        row([{ type: 'input_image', image_url: big }]),
        row([{ type: 'input_text', text: 'no image' }]),
        row([{ type: 'input_image', image_url: 'data:image/png;base64,###' }]),
      ].join('\n') + '\n',
    );
    const config = {
      policy_model: { responses_api_models: { openai_model: { entrypoint: 'app.ts' } } },
      agent: { responses_api_agents: { simple_agent: { entrypoint: 'app.ts', datasets: [{ name: 'example', type: 'example', jsonl_fpath: 'data/example.jsonl' }] } } },
    };
    const { datasets } = await prepareData(config, { mode: 'example_validation', output_dirpath: 'out', cwd, log: () => {} });
    expect(datasets[0]!.badRows).toEqual([{ line: 4, problems: [{ field: 'responses_create_params.input[0].content[0]', message: 'the image has a payload that is not valid base64' }] }]);
    const metrics = pyJsonLoads(readFileSync(join(cwd, 'data/example_metrics.json'), 'utf8')) as Map<string, Map<string, unknown>>;
    const images = metrics.get('Number of images')!;
    expect([Number(images.get('Total # non-null values')), Number(images.get('Average')), Number(images.get('Min')), Number(images.get('Max'))]).toEqual([3, 1, 0, 2]);
  });
});
