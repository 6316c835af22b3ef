"""Differential fuzzing of src/validate.ts against upstream's scoring with openapi-schema-validator 0.6.3.

    PYTHONPATH=<0.6.3 source> python3 gen_schemas.py <seed> <count> > cases.json && pnpm build && node check_schemas.mjs cases.json
"""
import json, random, sys
# needs openapi-schema-validator 0.6.3 importable (e.g. its source on PYTHONPATH)
from openapi_schema_validator import validate
random.seed(int(sys.argv[1]))
def strictify(schema):
    if isinstance(schema, dict):
        if "properties" in schema:
            schema["required"] = list(schema["properties"])
            schema["additionalProperties"] = False
        for v in schema.values():
            strictify(v)
def score(schema_str, text):
    try:
        schema = json.loads(schema_str); strictify(schema); obj = json.loads(text); validate(obj, schema); return 1.0
    except Exception:
        return 0.0
KEYS = ["a", "b", "c", "properties", "x_1"]
def rschema(d=0):
    r = random.random()
    if d > 2 or r < 0.25:
        return random.choice([{"type": random.choice(["string","integer","number","boolean","null","array","object"])},
                              {"type": ["string", "null"]}, {"enum": random.choice([[1, "a", None], [True], [1.0, [1]], ["x"]])},
                              {"const": random.choice([1, "a", None, {"k": 1}, [1, 2]])}, True, False, {}])
    s = {}
    t = random.choice(["object", "array", "string", "number", "integer", None])
    if t: s["type"] = t
    if t == "object" or random.random() < 0.2:
        if random.random() < 0.7: s["properties"] = {k: rschema(d+1) for k in random.sample(KEYS, random.randint(0, 3))}
        if random.random() < 0.2: s["patternProperties"] = {random.choice(["^x_\\d+$", "a", "\\w+"]): rschema(d+1)}
        if random.random() < 0.2: s["propertyNames"] = {"pattern": random.choice(["^[a-c]$", "\\d", "^\\w+$"])}
        if random.random() < 0.2: s["minProperties"] = random.randint(0, 2)
        if random.random() < 0.1: s["dependentRequired"] = {"a": ["b"]}
    if t == "array" or random.random() < 0.15:
        if random.random() < 0.6: s["items"] = rschema(d+1)
        if random.random() < 0.2: s["prefixItems"] = [rschema(d+1)]
        if random.random() < 0.3: s["minItems"] = random.randint(0, 2)
        if random.random() < 0.2: s["maxItems"] = random.randint(0, 3)
        if random.random() < 0.2: s["uniqueItems"] = random.choice([True, False])
        if random.random() < 0.15: s["contains"] = rschema(d+1)
    if t in ("string",) or random.random() < 0.1:
        if random.random() < 0.3: s["minLength"] = random.randint(0, 3)
        if random.random() < 0.3: s["maxLength"] = random.randint(0, 3)
        if random.random() < 0.4: s["pattern"] = random.choice(["^a", "\\d{2}", "^\\w+$", "é$", "^$", "(?i)^A", "\\bb", "^\\S+\\Z"])
        if random.random() < 0.3: s["format"] = random.choice(["date", "email", "uri", "regex"])
    if t in ("number", "integer") or random.random() < 0.1:
        for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]:
            if random.random() < 0.25: s[k] = random.choice([0, 1, 2.5, 0.1, 10])
    if random.random() < 0.15: s[random.choice(["anyOf", "oneOf", "allOf"])] = [rschema(d+1) for _ in range(random.randint(1, 2))]
    if random.random() < 0.08: s["not"] = rschema(d+1)
    if random.random() < 0.08: s["if"] = rschema(d+1); s["then"] = rschema(d+1)
    if random.random() < 0.05: s["nullable"] = True
    if random.random() < 0.05: s["unevaluatedProperties"] = False
    return s
def rval(d=0):
    r = random.random()
    if d > 2 or r < 0.5:
        return random.choice([0, 1, 2, 2.5, 1.0, -1, 10, 0.3, "a", "ab", "12", "é", "", "x y", True, False, None, "aA", "\u00e9t\u00e9", "b\n"])
    if r < 0.75:
        return [rval(d+1) for _ in range(random.randint(0, 3))]
    return {k: rval(d+1) for k in random.sample(KEYS, random.randint(0, 3))}
cases = []
for _ in range(int(sys.argv[2])):
    sch = rschema(); inst = rval()
    if random.random() < 0.3 and isinstance(sch, dict) and "properties" in sch:
        inst = {k: rval(1) for k in sch["properties"]}
    ss = json.dumps(sch); text = json.dumps(inst)
    cases.append({"schema_str": ss, "answer": text, "reward": score(ss, text)})
json.dump(cases, sys.stdout)
