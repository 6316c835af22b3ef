/** Finding, downloading (SHA-256 checked) and reading the data; rows from tasks.json. */
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startStubServer } from '@nemo-gym/core/testing';
import { splitRows } from '../prepare.js';
import { DATA_FILES, loadRetailData, readDataDir } from '../src/data.js';
import { TOOL_SCHEMAS } from '../src/schemas.js';
import { TOOL_NAMES } from '../src/tools.js';
import { userScenarioText } from '../src/task.js';
import { DATA_DIR, HAVE_DATA } from './helpers.js';

const FILES = Object.values(DATA_FILES).map((f) => f.path);

describe('tool schemas', () => {
  it('name the tools the server has, in tau2\'s order, with pydantic\'s schema shape', () => {
    expect(TOOL_SCHEMAS.map((t) => t.name)).toEqual(TOOL_NAMES);
    const exchange = TOOL_SCHEMAS.find((t) => t.name === 'exchange_delivered_order_items')!;
    expect(exchange.description.startsWith('Exchange items in a delivered order to new items of the same product type.\n\nFor a delivered order')).toBe(true);
    expect(exchange.parameters).toMatchObject({ required: ['order_id', 'item_ids', 'new_item_ids', 'payment_method_id'], title: 'parameters', type: 'object' });
    expect(Object.keys((exchange.parameters.properties as Record<string, object>).item_ids)).toEqual(['description', 'items', 'title', 'type']);
    expect(TOOL_SCHEMAS.find((t) => t.name === 'list_all_product_types')!.parameters).toEqual({ properties: {}, title: 'parameters', type: 'object' });
  });
});

describe('str(user_scenario)', () => {
  it('is the text tau2 gives its user simulator', () => {
    const text = userScenarioText({
      persona: 'Calm.\nPatient.',
      instructions: { domain: 'retail', reason_for_call: 'Return a lamp.\n\nSoon.', known_info: 'You are Ann.', unknown_info: null, task_instructions: 'Be brief.' },
    });
    expect(text).toBe('Persona:\n\tCalm.\n\tPatient.\nInstructions:\n\tDomain: retail\n\tReason for call:\n\t\tReturn a lamp.\n\n\t\tSoon.\n\tKnown info:\n\t\tYou are Ann.\n\tTask instructions:\n\t\tBe brief.');
    expect(userScenarioText({ persona: null, instructions: 'Just ask.' })).toBe('Instructions:\n\tJust ask.');
  });
});

describe.skipIf(!HAVE_DATA)('the retail data', () => {
  it('is downloaded on first use into the first writable folder, each file checked, then found there', async () => {
    const files = await startStubServer(Object.fromEntries(FILES.map((f) => [`/retail/${f}`, () => ({ text: readFileSync(join(DATA_DIR, f), 'utf8') })])));
    try {
      const target = mkdtempSync(join(tmpdir(), 'tau2-'));
      const logs: string[] = [];
      const data = await loadRetailData({ defaultDirs: [target], env: {}, downloadUrl: `${files.url}/retail`, log: (m) => logs.push(m) });
      expect(data.tasks).toHaveLength(114);
      expect(FILES.every((f) => existsSync(join(target, f)))).toBe(true);
      expect(logs[0]).toMatch(/downloading 4 files/);
      const again = await loadRetailData({ defaultDirs: [target], env: {}, downloadUrl: false });
      expect(again.dir).toBe(target);
      expect(files.requests).toHaveLength(4);
    } finally {
      await files.close();
    }
  });

  it('a changed file is refused with its path, the expected hash and where to get it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tau2-'));
    for (const f of FILES) writeFileSync(join(dir, f), readFileSync(join(DATA_DIR, f)));
    writeFileSync(join(dir, 'policy.md'), 'a different policy');
    expect(() => readDataDir(dir)).toThrow(/policy\.md is not tau2-bench's retail policy\.md at commit a2c0247.*expected 2c9652af.*raw\.githubusercontent\.com\/sierra-research\/tau2-bench/s);
    await expect(loadRetailData({ dataDir: mkdtempSync(join(tmpdir(), 'tau2-')), downloadUrl: false })).rejects.toThrow(/does not hold db\.json, tasks\.json, policy\.md, split_tasks\.json/);
    await expect(loadRetailData({ defaultDirs: [mkdtempSync(join(tmpdir(), 'tau2-'))], env: {}, downloadUrl: false })).rejects.toThrow(/downloading is disabled/);
  });

  it('rows: one per task of the split, with the policy as system prompt and the user scenario kept', () => {
    const data = readDataDir(DATA_DIR);
    const rows = (split: string) => splitRows(data, split).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    expect([rows('train').length, rows('test').length, rows('base').length]).toEqual([74, 40, 114]);
    const row = rows('base')[0]!;
    expect(row.task_id).toBe('0');
    expect(row.responses_create_params.input[0].content).toBe(`<instructions>\nYou are a customer service agent that helps the user according to the <policy> provided below.\nIn each turn you can either:\n- Send a message to the user.\n- Make a tool call.\nYou cannot do both at the same time.\n\nTry to be helpful and always follow the policy. Always make sure you generate valid JSON only.\n</instructions>\n<policy>\n${data.policy}\n</policy>`);
    expect(row.responses_create_params.tools).toHaveLength(16);
    expect(row.user_scenario).toEqual(data.tasks[0]!.user_scenario);
    expect(row.user_instructions).toContain('Reason for call:\n\t\tYou received your order #W2378156');
    expect(() => splitRows(data, 'dev')).toThrow(/split "dev" is not in split_tasks\.json/);
    expect(row).not.toHaveProperty('user_system_prompt');
    // with tau2's simulation guidelines, the user simulator's whole prompt as tau2 builds it
    const withUser = JSON.parse(splitRows(data, 'base', '# User Simulation Guidelines\nBe a customer.').split('\n')[0]!) as Record<string, string>;
    expect(withUser.user_system_prompt).toBe(`# User Simulation Guidelines\nBe a customer.\n\n<scenario>\n${withUser.user_instructions}\n</scenario>`);
  });
});
