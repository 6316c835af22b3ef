"""Makes gold_outputs.json and perturbed_calls.json with tau2's own RetailTools.

    python3 make_reference.py <tau2-bench checkout at the pinned commit> <folder with db.json and tasks.json>

Needs pydantic 2 (not tau2: it is not on PyPI). RetailTools' source is taken from the checkout's
src/tau2/domains/retail/tools.py and run over retail_models.py (the retail data model's fields,
types and order); each call is answered as Environment.get_response answers it.
"""
import hashlib
import json
import os
import sys
from typing import Any, List

from pydantic import BaseModel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import retail_models as m  # noqa: E402

tau2_dir, data_dir = sys.argv[1], sys.argv[2]
out_dir = os.path.dirname(os.path.abspath(__file__))

src = open(os.path.join(tau2_dir, "src/tau2/domains/retail/tools.py")).read()
src = "class RetailTools" + src.split("class RetailTools")[1].split("if __name__")[0]


class ToolKitBase:
    def __init__(self, db):
        self.db = db


class ToolType:
    READ, WRITE, GENERIC, THINK = "read", "write", "generic", "think"


def is_tool(tool_type, mutates_state=None):
    def mark(f):
        f.__tool__, f.__tool_type__ = True, tool_type
        return f

    return mark


ns = dict(ToolKitBase=ToolKitBase, ToolType=ToolType, is_tool=is_tool, List=List, json=json, PaymentMethod=Any,
          GiftCard=m.GiftCard, Order=m.Order, OrderPayment=m.OrderPayment, Product=m.Product, RetailDB=m.RetailDB,
          User=m.User, UserAddress=m.UserAddress, Variant=m.Variant)
exec(src, ns)
RetailTools = ns["RetailTools"]
TOOLS = {n for n, f in RetailTools.__dict__.items() if getattr(f, "__tool__", False)}
WRITE = {n for n in TOOLS if RetailTools.__dict__[n].__tool_type__ == "write"}


def to_json_str(resp):
    def process(r):
        if isinstance(r, BaseModel):
            return r.model_dump()
        if isinstance(r, str) or r is None:
            return r
        if isinstance(r, (int, float, bool)):
            return str(r)
        if isinstance(r, list):
            return [process(i) for i in r]
        if isinstance(r, dict):
            return {k: process(v) for k, v in r.items()}
        raise ValueError(f"Unsupported type: {type(r)}")

    return resp if isinstance(resp, str) else json.dumps(process(resp), default=str)


def get_response(tools, name, args):
    try:
        if name not in TOOLS:
            raise ValueError(f"Tool '{name}' not found.")
        resp = getattr(tools, name)(**args)
    except Exception as e:
        resp = f"Error: {e}"
    return to_json_str(resp)


def db_hash(db):
    return hashlib.sha256(json.dumps(db.model_dump(), sort_keys=True, default=str).encode()).hexdigest()


def perturbed(actions):
    calls = []
    for a in actions:
        n, args = a["name"], dict(a["arguments"])
        if n in WRITE:
            if "payment_method_id" in args:
                calls.append([n, {**args, "payment_method_id": "gift_card_0000000"}])
            if "order_id" in args:
                calls.append([n, {**args, "order_id": args["order_id"].lstrip("#")}])
            for k in ("item_ids", "new_item_ids"):
                if k in args:
                    calls.append([n, {**args, k: list(reversed(args[k])) + args[k][:1]}])
                    calls.append([n, {**args, k: []}])
            if n == "cancel_pending_order":
                calls.append([n, {**args, "reason": "other"}])
            calls.append([n, {k: v for k, v in list(args.items())[:-1]}])
            calls.append([n, {**args, "extra": 1}])
        calls.append([n, args])
        if n in WRITE:
            calls.append([n, args])
    calls.append(["calculate", {"expression": "(1+2)*3/7"}])
    calls.append(["find_user_id_by_name_zip", {"first_name": "YUSUF", "last_name": "rossi", "zip": "19122"}])
    calls.append(["get_item_details", {"item_id": "1656367028"}])
    calls.append(["list_all_product_types", {}])
    calls.append(["transfer_to_human_agents", {"summary": "x"}])
    return calls


def run(base, calls):
    tools = RetailTools(base.model_copy(deep=True))
    contents = [get_response(tools, n, a) for n, a in calls]
    return hashlib.sha256("\n\x00\n".join(contents).encode()).hexdigest(), db_hash(tools.db)


base = m.RetailDB.model_validate(json.load(open(os.path.join(data_dir, "db.json"))))
tasks = json.load(open(os.path.join(data_dir, "tasks.json")))
gold = {"initial_db_hash": db_hash(base), "tasks": []}
pert = []
for t in tasks:
    actions = t["evaluation_criteria"]["actions"]
    gold_calls = [[a["name"], a["arguments"]] for a in actions]
    outs, final = run(base, gold_calls)
    entry = {"id": t["id"], "outputs_sha256": outs, "final_db_hash": final}
    writes = [i for i, (n, _) in enumerate(gold_calls) if n in WRITE]
    if writes:
        entry["without_last_write_db_hash"] = run(base, gold_calls[: writes[-1]] + gold_calls[writes[-1] + 1 :])[1]
    gold["tasks"].append(entry)
    calls = perturbed(actions)
    outs, final = run(base, calls)
    pert.append({"id": t["id"], "n_calls": len(calls), "outputs_sha256": outs, "final_db_hash": final})
json.dump(gold, open(os.path.join(out_dir, "gold_outputs.json"), "w"), indent=1)
json.dump(pert, open(os.path.join(out_dir, "perturbed_calls.json"), "w"), indent=1)
