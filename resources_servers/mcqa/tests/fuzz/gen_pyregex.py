"""Differential fuzzing of src/pyregex.ts against CPython's `re`: random patterns and texts.

    python3 gen_pyregex.py <seed> <count> > cases.json && pnpm build && node check_pyregex.mjs cases.json
"""
import json, random, re, sys, warnings
warnings.simplefilter("ignore")
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
ATOMS = ["a", "b", "A", "é", "É", "1", "٣", " ", "\\n", ".", "\\w", "\\W", "\\d", "\\D", "\\s", "\\S", "\\b", "\\B", "^", "$", "\\A", "\\Z",
         "[a-c]", "[^a]", "[\\w-]", "[\\s\\d]", "[]a]", "[^]b]", "\\-", "\\:", "{", "}", "]", "\\.", "\\\\", "x{2}", "\\x41", "\\101", "\\0",
         "(?i:a)", "(?-i:a)", "(?s:.)", "(?m:^)", "(?m:$)", "(?x: a b )", "(?a:\\w)", "(?#c)", "[ß]", "ſ", "K", "\\u212a"]
QUANTS = ["", "", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{1,2}", "{,2}", "{2,}", "{1,2}?"]
def gen(depth=0):
    parts = []
    for _ in range(random.randint(1, 4)):
        r = random.random()
        if r < 0.15 and depth < 2:
            kind = random.choice(["(", "(?:", "(?P<g%d>" % random.randint(0, 99), "(?=", "(?!", "(?<=", "(?<!"])
            inner = gen(depth + 1)
            if random.random() < 0.3:
                inner += "|" + gen(depth + 1)
            parts.append(kind + inner + ")" + random.choice(QUANTS))
        else:
            parts.append(random.choice(ATOMS) + random.choice(QUANTS))
    return "".join(parts)
TEXTS = ["", "a", "ab\nAb", "aAbB éÉ ſK\u212a", "11 ٣٣ a1_b", " a b\n\nc ", "{a}]x", "ÉTÉ été", "aaa bbb\nccc", "xx\n"]
cases = []
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 500):
    p = gen()
    if random.random() < 0.2:
        p = random.choice(["(?i)", "(?m)", "(?s)", "(?x)", "(?a)", "(?im)"]) + p
    flags = random.choice([0, 0, re.I, re.M, re.S, re.I | re.M])
    text = random.choice(TEXTS)
    try:
        rx = re.compile(p, flags)
    except re.error as e:
        cases.append({"pattern": p, "flags": flags, "text": text, "error": str(e)}); continue
    except Exception as e:
        continue
    fa = [list(x) if isinstance(x, tuple) else x for x in rx.findall(text)]
    m = rx.search(text)
    cases.append({"pattern": p, "flags": flags, "text": text, "findall": fa, "search": None if m is None else [m.group(0)] + list(m.groups())})
json.dump(cases, sys.stdout, ensure_ascii=False)
