#!/usr/bin/env python3
"""ocsfcheck.py SCHEMA LOG: every event record of an audit log written
with audit_format = ocsf against SCHEMA (ocsf-schema.json), field by field:
each field known, of its type, the required ones there, enum values with
their names, type_uid = class_uid * 100 + activity_id, time in ms, the
allow and deny dispositions, postern's own fields in unmapped with the
chain's seq and prev.  The chain's own lines (audit_open, checkpoint) are
left out.  Prints one line per fault and a summary; exit 1 on a fault."""
import json
import re
import sys
import time

schema = json.load(open(sys.argv[1]))
faults = []
counts = {}


def typed(v, t):
    if t == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "str":
        return isinstance(v, str)
    return isinstance(v, dict)


def obj(where, v, name):
    o = schema["objects"][name]
    if not isinstance(v, dict):
        faults.append("%s: not an object" % where)
        return
    for k, x in v.items():
        t = o["fields"].get(k)
        if t is None:
            faults.append("%s.%s: not in the schema" % (where, k))
        elif t in schema["objects"]:
            obj(where + "." + k, x, t)
        elif not typed(x, t):
            faults.append("%s.%s: not %s: %r" % (where, k, t, x))
    for k in o.get("required", []):
        if k not in v:
            faults.append("%s: no %s" % (where, k))


def check(n, r):
    w = "line %d" % n
    for k, x in r.items():
        t = schema["top"].get(k)
        if t is None:
            faults.append("%s: %s not in the schema" % (w, k))
        elif t in schema["objects"]:
            obj(w + " " + k, x, t)
        elif not typed(x, t):
            faults.append("%s: %s not %s: %r" % (w, k, t, x))
    for k in schema["required"]:
        if k not in r:
            faults.append("%s: no %s" % (w, k))
    for k, names in schema["enums"].items():
        if k in r:
            if str(r[k]) not in names:
                faults.append("%s: %s %r not in the enum" % (w, k, r[k]))
            elif r.get(schema["enum_names"][k]) != names[str(r[k])]:
                faults.append("%s: %s %r named %r" % (w, k, r[k], r.get(schema["enum_names"][k])))
    c = schema["classes"].get(str(r.get("class_uid")))
    if c is None:
        faults.append("%s: class_uid %r" % (w, r.get("class_uid")))
        return
    if r.get("class_name") != c["name"]:
        faults.append("%s: class_name %r" % (w, r.get("class_name")))
    for k in c["required"]:
        if k not in r:
            faults.append("%s: no %s for class %s" % (w, k, r["class_uid"]))
    a = str(r.get("activity_id"))
    if a not in c["activity_id"] or r.get("activity_name") != c["activity_id"][a]:
        faults.append("%s: activity %r %r" % (w, r.get("activity_id"), r.get("activity_name")))
    if r.get("type_uid") != r["class_uid"] * 100 + r.get("activity_id", -1):
        faults.append("%s: type_uid %r is not class_uid * 100 + activity_id" % (w, r.get("type_uid")))
    if not abs(r["time"] / 1000 - time.time()) < 3600:
        faults.append("%s: time %r is not ms of now" % (w, r["time"]))
    if r["metadata"].get("version") != schema["version"]:
        faults.append("%s: metadata.version %r" % (w, r["metadata"].get("version")))
    u = r["unmapped"]
    for k in ("event", "session", "generation", "config", "seq", "prev"):
        if k not in u:
            faults.append("%s: unmapped has no %s" % (w, k))
    if not re.fullmatch(r"[0-9a-f]{64}", str(u.get("prev"))):
        faults.append("%s: unmapped.prev %r" % (w, u.get("prev")))
    d = u.get("decision")
    if d == "deny" and (r.get("disposition_id") != 2 or r.get("status_id") != 2 or "reason" not in u):
        faults.append("%s: a deny without its disposition, status or reason" % w)
    if d == "allow" and (r.get("disposition_id") != 1 or r.get("status_id") != 1):
        faults.append("%s: an allow without its disposition or status" % w)
    if "rule" in u and not re.fullmatch(r".+:[0-9]+", str(u.get("rule_at"))):
        faults.append("%s: a rule without its FILE:LINE" % w)
    key = "%s/%s/%s" % (r["class_uid"], r["activity_id"], d or u["event"])
    counts[key] = counts.get(key, 0) + 1


for n, raw in enumerate(open(sys.argv[2], "rb"), 1):
    r = json.loads(raw)
    if r.get("event") in ("audit_open", "checkpoint"):
        continue
    check(n, r)
for f in faults[:20]:
    print(f)
print("records " + " ".join("%s=%d" % kv for kv in sorted(counts.items())))
sys.exit(1 if faults or not counts else 0)
