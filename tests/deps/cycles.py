#!/usr/bin/env python3
"""tests/deps/cycles.py: the modules of postern, which way they depend, and
whether any two depend on each other (ARCHITECTURE.md).

A module is one source file (proxy/flow/conn.c is "proxy/flow/conn").  Module A
depends on module B when A's object file uses a global symbol that B's
defines.  The graph is read from the built objects with nm(1), not from the
#include lines: a header shared by two modules hides which of them calls
the other, and a cycle through it would not show in the include graph.

Two layout rules are checked too (ARCHITECTURE.md, "The dependency rule"):
  layers    a module of proxy/proto/ or proxy/policy/ uses only symbols of
            base/, conf/, proxy/proto/ and proxy/policy/ (and libraries):
            codecs and policy state know no server and no connection;
            proxy/core/io (the proxy's own I/O under libevent) uses only
            base/ and libraries;
  includes  no file outside proxy/flow/ includes "proxy/flow/conn.h", the
            struct of one connection, and no file of proxy/core/ includes
            a header of proxy/flow/ (read from the sources, SRCDIR).

Usage: cycles.py [--graph] BUILDDIR [SRCDIR]
       cycles.py --text | --dot BUILDDIR
  prints every cycle (a strongly connected set of modules, with the symbols
  that tie them) and every break of a layout rule, and exits 1 if there is
  one; with --graph, also prints each module's dependencies.  Exits 77 when
  no object is built.  SRCDIR defaults to BUILDDIR.
  --text and --dot print only the graph of the modules the three programs
  are built from (no test objects), one line per module or as Graphviz
  input, and check nothing ("make deps-graph").
"""
import glob
import os
import re
import subprocess
import sys

DIRS = ("base", "conf", "proxy", "bridge", "sidecar")
# The layers: a module under one of these folders may use symbols of
# modules under the folders it maps to, and of nothing else in the tree.
LAYERS = {
    "proxy/proto/": ("base/", "conf/", "proxy/proto/", "proxy/policy/"),
    "proxy/policy/": ("base/", "conf/", "proxy/proto/", "proxy/policy/"),
    "proxy/core/io": ("base/",),
}
# Modules let off the layer rule, each with why.  Keep it empty.
LAYER_EXCEPTIONS = {}
# A header only its own folder may include, and that folder.
PRIVATE_HEADERS = {"proxy/flow/conn.h": "proxy/flow/"}
# A folder whose files include no header of another folder.
NO_INCLUDE = {"proxy/core/": "proxy/flow/"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

# automake names a per-target object PREFIX-STEM.o (subdir-objects).
PER_TARGET = re.compile(r"^(?:lib\w+_a|postern_\w+)-(.+)$")
# An object of the programs or their libraries: a plain STEM.o (no source
# of theirs has a '-' in its name) or one of PER_TARGET's.
PRODUCT = re.compile(r"^(?:[^-]+|(?:libpostern_\w+_a|postern_(?:proxy|bridge|sidecar))-.+)\.o$")


def module_of(path, top):
    d = os.path.relpath(os.path.dirname(path), top)
    stem = os.path.basename(path)[:-2]
    m = PER_TARGET.match(stem)
    if m:
        stem = m.group(1)
    return "%s/%s" % (d, stem)


def read_objects(top, product=False):
    objs = []
    for d in DIRS:
        for p in sorted(glob.glob(os.path.join(top, d, "**", "*.o"),
                                  recursive=True)):
            # Test and fuzz programs compile some modules again
            # (tests/... -> tests_*).
            if os.path.basename(p).startswith(("tests_", "test_")):
                continue
            if product and not PRODUCT.match(os.path.basename(p)):
                continue
            objs.append(p)
    return objs


def symbols(path):
    out = subprocess.run(["nm", "-P", path], check=True, capture_output=True,
                         text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            used.add(name)
        elif kind in "TDBRCVWG" or kind in "S":
            defined.add(name)
    return defined, used


def layer_breaks(edges, why):
    """Every dependency that crosses a layer, as printable lines."""
    out = []
    for mod in sorted(edges):
        layer = next((l for l in LAYERS if mod.startswith(l)), None)
        if layer is None or mod in LAYER_EXCEPTIONS:
            continue
        for dst in sorted(edges[mod]):
            if not dst.startswith(LAYERS[layer]):
                syms = sorted(why[(mod, dst)])
                out.append("layer: %s uses %s: %s%s" % (
                    mod, dst, ", ".join(syms[:6]),
                    " ..." if len(syms) > 6 else ""))
    return out


def include_breaks(src):
    """Every #include of a private header from outside its folder."""
    out = []
    # Only the source folders: a test may copy the tree beside them
    # (build-static/) while this runs.
    walks = [os.walk(os.path.join(src, d)) for d in DIRS + ("tests",)]
    for root, dirs, files in (w for walk in walks for w in walk):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, src)
            with open(p, errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if m is None:
                        continue
                    for d, other in NO_INCLUDE.items():
                        if rel.startswith(d) and m.group(1).startswith(other):
                            out.append("include: %s:%d includes %s (%s includes "
                                       "nothing of %s)" % (rel, n, m.group(1),
                                                           d, other))
                    if m.group(1) not in PRIVATE_HEADERS:
                        continue
                    if not rel.startswith(PRIVATE_HEADERS[m.group(1)]):
                        out.append("include: %s:%d includes %s (private to %s)"
                                   % (rel, n, m.group(1),
                                      PRIVATE_HEADERS[m.group(1)]))
    return out


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, onstack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        onstack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    onstack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in onstack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def print_graph(fmt, nodes, edges):
    """The graph alone, as text (MODULE -> DEPS) or as Graphviz input."""
    if fmt == "--text":
        for m in nodes:
            print("%s -> %s" % (m, " ".join(sorted(edges.get(m, ()))) or "(nothing)"))
        print("# %d modules, %d dependencies" % (
            len(nodes), sum(len(v) for v in edges.values())))
        return
    print("digraph postern {")
    print("\trankdir=LR; node [shape=box, fontsize=10];")
    for d in sorted({m.rsplit("/", 1)[0] for m in nodes}):
        print("\tsubgraph \"cluster_%s\" { label=\"%s/\";" % (d, d))
        for m in nodes:
            if m.rsplit("/", 1)[0] == d:
                print("\t\t\"%s\";" % m)
        print("\t}")
    for m in nodes:
        for dst in sorted(edges.get(m, ())):
            print("\t\"%s\" -> \"%s\";" % (m, dst))
    print("}")


def main(argv):
    graph = "--graph" in argv
    only = next((a for a in argv if a in ("--text", "--dot")), None)
    args = [a for a in argv if a not in ("--graph", "--text", "--dot")]
    top = args[0] if args else "."
    src = args[1] if len(args) > 1 else top
    objs = read_objects(top, product=only is not None)
    if not objs:
        print("# no object files under %s: build first" % top)
        return 77
    owner = {}      # symbol -> module
    uses = {}       # module -> set of symbols used
    for p in objs:
        mod = module_of(p, top)
        d, u = symbols(p)
        for s in d:
            if s != "main":
                owner.setdefault(s, mod)
        uses.setdefault(mod, set()).update(u)
    edges, why = {}, {}
    for mod, used in uses.items():
        for s in used:
            dst = owner.get(s)
            if dst is None or dst == mod:
                continue
            edges.setdefault(mod, set()).add(dst)
            why.setdefault((mod, dst), set()).add(s)
    nodes = sorted(uses)
    if only:
        print_graph(only, nodes, edges)
        return 0
    if graph:
        for m in nodes:
            print("%s -> %s" % (m, " ".join(sorted(edges.get(m, ()))) or "(nothing)"))
    bad = [c for c in sccs(nodes, edges) if len(c) > 1]
    for c in bad:
        print("cycle: %s" % " <-> ".join(c))
        for a in c:
            for b in c:
                if (a, b) in why:
                    syms = sorted(why[(a, b)])
                    print("  %s uses %s: %s%s" % (a, b, ", ".join(syms[:6]),
                                                  " ..." if len(syms) > 6 else ""))
    broken = layer_breaks(edges, why) + include_breaks(src)
    for line in broken:
        print(line)
    for mod, reason in sorted(LAYER_EXCEPTIONS.items()):
        print("# %s is let off the layer rule: %s" % (mod, reason))
    print("# %d modules, %d dependencies, %d cycle%s, %d layout break%s" % (
        len(nodes), sum(len(v) for v in edges.values()), len(bad),
        "" if len(bad) == 1 else "s", len(broken),
        "" if len(broken) == 1 else "s"))
    return 1 if bad or broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
