// Compares the compiled translator with the CPython results written by gen_pyregex.py.
import { readFileSync } from 'node:fs';
import { PyRegex, PyRegexError, PyRegexUnsupportedError } from '../../dist/src/pyregex.js';
const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let ok = 0, bad = 0, unsup = 0;
for (const c of cases) {
  let re, err = null;
  try { re = new PyRegex(c.pattern, c.flags); } catch (e) { err = e; }
  if (err instanceof PyRegexUnsupportedError) { unsup++; if (unsup < 4) console.log('UNSUP', JSON.stringify(c.pattern), err.message); continue; }
  if (c.error !== undefined) { if (err instanceof PyRegexError) ok++; else { bad++; if (bad < 25) console.log('SHOULD ERR', JSON.stringify(c.pattern), c.flags, c.error); } continue; }
  if (err) { bad++; if (bad < 25) console.log('UNEXPECTED ERR', JSON.stringify(c.pattern), c.flags, err.message); continue; }
  const fa = re.findall(c.text); const m = re.search(c.text);
  const s = m === null ? null : m.groups.map((g) => g ?? null);
  if (JSON.stringify(fa) === JSON.stringify(c.findall) && JSON.stringify(s) === JSON.stringify(c.search)) ok++;
  else { bad++; if (bad < 25) console.log('DIFF', JSON.stringify(c.pattern), c.flags, JSON.stringify(c.text), 'py', JSON.stringify(c.findall), 'js', JSON.stringify(fa)); }
}
console.log({ ok, bad, unsup });
