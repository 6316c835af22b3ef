import { describe, expect, it } from 'vitest';
import { checkExampleData, exampleRows, textResponse, useTestServer } from '@nemo-gym/core/testing';
import { server } from '../app.js';

const structured = useTestServer(server, { config: { name: 'structured_outputs', domain: 'instruction_following', num_workers: 1 } });
const here = new URL('..', import.meta.url);
const rows = exampleRows(here);

// A correct answer for each example document, in file order.
const ANSWERS = [
  {
    name: 'Harbourview community garden',
    opened_year: 2019,
    raised_beds: 42,
    facilities: ['raised beds', 'tool shed', 'rainwater tank'],
    committee: { size: 5, chair: 'Amira Haddad' },
    meeting_day: 'Saturday',
  },
  {
    flight_number: 'NZ-418',
    origin: 'Wellington',
    destination: 'Christchurch',
    delay_minutes: 95,
    cause: 'weather',
    load_factor: 61 / 68,
    compensation: { kind: 'meal voucher', amount: 15, currency: 'NZD' },
  },
  {
    title: 'Lentil soup',
    servings: 4,
    ingredients: [
      { item: 'red lentils', quantity: 200, unit: 'g' },
      { item: 'onion', quantity: 1, unit: null },
      { item: 'carrots', quantity: 2, unit: null },
      { item: 'vegetable stock', quantity: 1, unit: 'litre' },
      { item: 'cumin', quantity: 1, unit: 'tsp' },
    ],
    cook_minutes: 25,
    allergens: [],
  },
  {
    company: 'Brightline Tools Ltd',
    period: 'Q2 2024',
    revenue_million_eur: 4.8,
    revenue_change_pct: 6,
    operating_margin_pct: 11.5,
    headcount: { start: 118, end: 126 },
    dividend_per_share_eur: 0.12,
    outlook: '',
  },
  {
    artwork: { title: 'Evening Tide', artist: 'Clara Ostrander', year: 1887, medium: 'oil on canvas', dimensions_cm: [64, 92] },
    lender: 'Lindqvist Collection',
    borrower: 'Port Museum',
    loan_start: '2025-06-01',
    loan_end: '2025-09-30',
    insurance_value_usd: 1200000,
    max_lux: 49,
  },
];

async function reward(row: Record<string, any>, text: string): Promise<number> {
  const res = await structured.post('/verify', { ...row, response: textResponse(text) });
  expect(res.status, res.text).toBe(200);
  return res.json.reward;
}

describe('our example rows', () => {
  it('pass the example-data checks (config, 5 rows, sendable create params)', () => {
    checkExampleData(here);
  });

  it('5 rows; a correct answer scores 1, the same answer with one field dropped scores 0', async () => {
    expect(rows).toHaveLength(5);
    for (const [i, row] of rows.entries()) {
      expect(row.schema_type).toBe('json');
      expect(row.responses_create_params.input[0].content).toContain(row.schema_str);
      expect(await reward(row, JSON.stringify(ANSWERS[i]))).toBe(1);
      const partial: Record<string, unknown> = { ...ANSWERS[i] };
      delete partial[Object.keys(partial)[0]!];
      expect(await reward(row, JSON.stringify(partial))).toBe(0);
    }
  });
});
