// Compares the compiled scorer with the Python reference rewards written by gen_schemas.py.
import { readFileSync } from 'node:fs';
import { scoreJson } from '../../dist/src/validate.js';
const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let ok = 0, bad = 0; const ones = cases.filter((c) => c.reward === 1).length;
for (const c of cases) {
  const r = scoreJson(c.schema_str, c.answer);
  if (r.reward === c.reward) ok++; else { bad++; if (bad < 15) console.log('DIFF py', c.reward, 'js', JSON.stringify(r), c.schema_str, c.answer); }
}
console.log({ ok, bad, ones });
