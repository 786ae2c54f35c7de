#!/usr/bin/env python3
"""Parse the Prometheus text exposition format (version 0.0.4) strictly.

    prom.py check FILE            parse; print "families N samples M"; exit 1
                                  with the first error on a malformed line
    prom.py get FILE NAME [K=V]...
                                  print the value of the one sample NAME whose
                                  labels include every K=V (exit 1: none, or
                                  more than one); a missing sample is an error

The grammar is the one of the exposition format's documentation: comment
lines "# HELP name text" and "# TYPE name type", each TYPE before the
family's samples and at most once; samples "name{label="value",...} value
[timestamp]"; label values with \\\\, \\" and \\n escapes only; histogram
families with _bucket (an le label, cumulative, ending in +Inf), _sum and
_count.
"""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class PromError(Exception):
    pass


def parse_value(text, lineno):
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    if text == "NaN":
        return math.nan
    if not re.fullmatch(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", text):
        raise PromError("line %d: bad value %r" % (lineno, text))
    return float(text)


def parse_labels(s, pos, lineno):
    """Parse {k="v",...} starting at s[pos] == '{'; return (dict, newpos)."""
    labels = {}
    pos += 1
    while True:
        if pos < len(s) and s[pos] == "}":
            return labels, pos + 1
        m = re.compile(LABEL).match(s, pos)
        if not m:
            raise PromError("line %d: bad label name at column %d" % (lineno, pos + 1))
        key = m.group(0)
        pos = m.end()
        if s[pos:pos + 2] != '="':
            raise PromError("line %d: expected =\" after label %s" % (lineno, key))
        pos += 2
        val = []
        while True:
            if pos >= len(s):
                raise PromError("line %d: unterminated label value" % lineno)
            c = s[pos]
            if c == "\\":
                nxt = s[pos + 1:pos + 2]
                if nxt not in ("\\", '"', "n"):
                    raise PromError("line %d: bad escape \\%s" % (lineno, nxt))
                val.append("\n" if nxt == "n" else nxt)
                pos += 2
            elif c == '"':
                pos += 1
                break
            elif c == "\n":
                raise PromError("line %d: newline in label value" % lineno)
            else:
                val.append(c)
                pos += 1
        if key in labels:
            raise PromError("line %d: label %s twice" % (lineno, key))
        labels[key] = "".join(val)
        if pos < len(s) and s[pos] == ",":
            pos += 1
            continue
        if pos < len(s) and s[pos] == "}":
            return labels, pos + 1
        raise PromError("line %d: expected , or } in labels" % lineno)


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and types.get(name[:-len(suffix)]) in ("histogram", "summary"):
            return name[:-len(suffix)]
    return name


def parse(text):
    """Return (types, samples): samples is a list of (name, labels, value)."""
    if text and not text.endswith("\n"):
        raise PromError("the exposition does not end with a newline")
    types, helps, samples, seen_sample_of = {}, {}, [], set()
    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if line == "":
            continue
        if line.startswith("#"):
            m = re.fullmatch(r"# (HELP|TYPE) (%s) (.*)" % NAME, line)
            if not m:
                if line.startswith("# HELP") or line.startswith("# TYPE"):
                    raise PromError("line %d: malformed %s" % (lineno, line[:7]))
                continue
            kind, name, rest = m.groups()
            if kind == "TYPE":
                if rest not in TYPES:
                    raise PromError("line %d: unknown type %r" % (lineno, rest))
                if name in types:
                    raise PromError("line %d: second TYPE for %s" % (lineno, name))
                if name in seen_sample_of:
                    raise PromError("line %d: TYPE for %s after its samples" % (lineno, name))
                types[name] = rest
            else:
                if name in helps:
                    raise PromError("line %d: second HELP for %s" % (lineno, name))
                helps[name] = rest
            continue
        m = re.compile(NAME).match(line)
        if not m:
            raise PromError("line %d: bad metric name" % lineno)
        name = m.group(0)
        pos = m.end()
        labels = {}
        if pos < len(line) and line[pos] == "{":
            labels, pos = parse_labels(line, pos, lineno)
        rest = line[pos:]
        if not rest.startswith(" "):
            raise PromError("line %d: expected a space before the value" % lineno)
        parts = rest.split()
        if len(parts) not in (1, 2):
            raise PromError("line %d: trailing bytes %r" % (lineno, rest))
        value = parse_value(parts[0], lineno)
        if len(parts) == 2 and not re.fullmatch(r"-?[0-9]+", parts[1]):
            raise PromError("line %d: bad timestamp" % lineno)
        fam = family_of(name, types)
        seen_sample_of.add(fam)
        for prev in samples:
            if prev[0] == name and prev[1] == labels:
                raise PromError("line %d: sample %s%s twice" % (lineno, name, labels))
        samples.append((name, labels, value))
    # Histograms: cumulative buckets ending in +Inf == _count.
    for fam, t in types.items():
        if t != "histogram":
            continue
        buckets = [(s[1], s[2]) for s in samples if s[0] == fam + "_bucket"]
        if not buckets:
            continue
        les = []
        for lab, v in buckets:
            if "le" not in lab:
                raise PromError("%s_bucket without le" % fam)
            les.append((parse_value(lab["le"], 0), v))
        if les[-1][0] != math.inf:
            raise PromError("%s: the last bucket is not +Inf" % fam)
        for (a, va), (b, vb) in zip(les, les[1:]):
            if not (a < b and va <= vb):
                raise PromError("%s: buckets not increasing/cumulative" % fam)
        counts = [s[2] for s in samples if s[0] == fam + "_count"]
        if counts != [les[-1][1]]:
            raise PromError("%s: _count is not the +Inf bucket" % fam)
    return types, samples


def main(argv):
    if len(argv) < 3 or argv[1] not in ("check", "get"):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[2], encoding="utf-8") as f:
        text = f.read()
    try:
        types, samples = parse(text)
    except PromError as e:
        print("prom: %s" % e)
        return 1
    if argv[1] == "check":
        print("families %d samples %d" % (len(types), len(samples)))
        return 0
    name = argv[3]
    want = dict(a.split("=", 1) for a in argv[4:])
    hits = [s for s in samples if s[0] == name and all(s[1].get(k) == v for k, v in want.items())]
    if len(hits) != 1:
        print("prom: %d samples match %s %s" % (len(hits), name, want))
        return 1
    v = hits[0][2]
    print(int(v) if v == int(v) else v)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
