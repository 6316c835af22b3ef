/**
 * Verify benchmark: starts the instruction_following server on 127.0.0.1 (checks in its worker
 * pool, or inline with --workers 0), sends /verify requests at a fixed concurrency for a bounded
 * count or time, and prints verifies/s and latency percentiles, plus the latency of GET / probes
 * sent during the load (how responsive the event loop stays).
 *
 *   pnpm build && node packages/bench/dist/src/sections/e-instruction-following.js \
 *     [--concurrency 256] [--requests 5000] [--seconds 30] [--workers N]
 *
 * Punkt data: NLTK_DATA / NLTK's usual folders, or ../shared/nltk_data when present.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { sharedPath } from '@nemo-gym/core/config';
import { textResponse } from '@nemo-gym/core/openai';
import { importBuilt } from '../built.js';
import { listenOnLoopback, loadReport, parseLoadArgs, runVerifyLoad } from '../load.js';

const { server } = await importBuilt<typeof import('../../../../resources_servers/instruction_following/app.js')>('resources_servers/instruction_following/dist/app.js');

const { concurrency, maxRequests, maxSeconds, workers } = parseLoadArgs();

const PARAGRAPH =
  'Dr. Smith reviewed the results on Monday. The team, which had worked for months, was relieved! ' +
  'However, several questions remained open: how would the U.S. partners react, and what would it cost? ' +
  'Nobody knew yet. "We will see," she said, before leaving the lab at 5 p.m. sharp. ';

function makeRow(i: number) {
  const text = `<<Quarterly Report ${i}>>\n\n${PARAGRAPH.repeat(6)}\n\n***\n\n${PARAGRAPH.repeat(4)}\n\nP.S. Thanks to everyone.`;
  const variants: [string[], unknown[]][] = [
    [
      ['detectable_format:title', 'length_constraints:number_sentences', 'count:count_unique'],
      [{}, { num_sentences: 10, relation: 'at least' }, {}],
    ],
    [
      ['change_case:capital_word_frequency', 'language:response_language', 'keywords:existence'],
      [{ capital_frequency: 3, capital_relation: 'less than' }, { language: 'en' }, { keywords: ['team', 'partners'] }],
    ],
    [
      ['length_constraints:number_paragraphs', 'detectable_content:postscript', 'keywords:start_end'],
      [{ num_paragraphs: 2 }, { postscript_marker: 'P.S.' }, {}],
    ],
    [
      ['length_constraints:number_words', 'punctuation:no_comma', 'keywords:keyword_specific_position'],
      [{ num_words: 300, relation: 'at least' }, {}, { keyword: 'team', n: 2, m: 2 }],
    ],
  ];
  const [ids, kwargs] = variants[i % variants.length]!;
  return {
    id: i,
    instruction_id_list: ids,
    prompt: 'Write a short report.',
    kwargs,
    responses_create_params: { input: [{ role: 'user', content: 'Write a short report.' }] },
    response: textResponse(text, { id: `resp_${i}`, model: 'bench' }),
  };
}

async function main(): Promise<void> {
  const shared = sharedPath('nltk_data');
  const config: Record<string, unknown> = { name: 'instruction_following', domain: 'instruction_following' };
  if (existsSync(shared)) config.nltk_data_dir = shared;
  if (workers !== undefined) config.num_workers = workers;
  const app = await server.build({ config });
  const port = await listenOnLoopback(app);

  const bodies = Array.from({ length: 64 }, (_, i) => Buffer.from(JSON.stringify(makeRow(i))));
  // The warm-up requests start every worker and load its data.
  const result = await runVerifyLoad(port, bodies, { concurrency, maxRequests, maxSeconds }, 50);
  await app.close();

  console.log(`instruction_following verify bench (${availableParallelism()} cores, concurrency ${concurrency})`);
  console.log(`  verifies: ${result.latencies.length} ok, ${result.errors} failed in ${result.elapsedSeconds.toFixed(2)} s`);
  for (const line of loadReport(result, 'verifies')) console.log(line);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
