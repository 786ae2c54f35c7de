#!/usr/bin/env python3
"""tests/docs/names.py: every file and function the top-level documents
name exists in the tree.

The documents are README.md, SECURITY.md, ARCHITECTURE.md and docs/*.md.
Fenced code blocks are commands for the reader and are not checked.

  files      a path under one of the tree's folders (proxy/core/lock.h,
             tests/unit/, tests/integration/reload-*.sh), in backticks or
             in plain text, must exist relative to SRCDIR (or BUILDDIR):
             as written, as a glob, as a module name (path.c or path.h),
             or as a program a *.mk fragment builds.  A file name alone in
             backticks (lock.h) must be the name of some file of the tree.
             A ":LINE" or ":name" after a path is ignored.
  functions  a name in backticks followed by parentheses (`px_conn_free()`,
             `cf_decide(c, ...)`) must have a definition in a .c file of
             the tree (or a static inline one in a .h): a line that starts
             with "name(".  `splice(2)` is a man page and is not checked;
             LIBRARY below lists the few library functions named so.

Usage: names.py SRCDIR [BUILDDIR]
Prints each name that is not found, with its document and line, and exits
1 if there is one.
"""
import glob
import os
import re
import subprocess
import sys

DOCS = ["README.md", "SECURITY.md", "ARCHITECTURE.md"]
DOCS_GLOB = "docs/*.md"
# Folders whose paths are checked; a path elsewhere (/run/postern, usr/bin)
# is not a file of this tree.
TOP = ("base", "conf", "proxy", "bridge", "sidecar", "tests", "contrib",
       "docs", ".ci", "m4")
# Paths the build or an install makes, not in the tree: each with why.
GENERATED = {
    "build-static/": "make image and make check build static binaries here",
}
# Library functions a document may name with parentheses, each with its
# library.  Better still, name one as its man page: dup(2), strerror(3).
LIBRARY = {
    "dup": "libc",
    "strerror": "libc",
    "evconnlistener_new": "libevent",
}
FILE_EXT = re.compile(r"^[\w.+-]+\.(c|h|sh|py|md|mk|am|ac|8|5|yaml|ini|"
                      r"service|lua|awk|srcs)$")
PATH = re.compile(r"(?<![\w/.:@$-])((?:%s)/[\w./*+-]*)" %
                  "|".join(re.escape(t) for t in TOP))
CALL = re.compile(r"^([A-Za-z_]\w*)\((.*)\)$", re.S)
MANREF = re.compile(r"^\d\w*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def doc_text(path):
    """The document's lines, with fenced code blocks blanked."""
    out, fence = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)
                out.append("\n")
            elif fence is not None:
                if m and m.group(1) == fence:
                    fence = None
                out.append("\n")
            else:
                out.append(line)
    return "".join(out)


def spans(text):
    """(line, content) of each code span, which may cross a line break."""
    for m in re.finditer(r"(`+)(.+?)\1", text, re.S):
        line = text.count("\n", 0, m.start()) + 1
        yield line, re.sub(r"\s+", " ", m.group(2).strip())


def programs(src):
    """Paths the *.mk fragments and Makefile.am build as programs."""
    progs = set()
    mks = glob.glob(os.path.join(src, "**", "*.mk"), recursive=True)
    mks.append(os.path.join(src, "Makefile.am"))
    for mk in mks:
        with open(mk, encoding="utf-8") as f:
            for m in re.finditer(r"^\w*_PROGRAMS\s*\+?=\s*(.*)$", f.read(), re.M):
                progs.update(m.group(1).split())
    return progs


def tree_names(src):
    try:
        out = subprocess.run(["git", "-C", src, "ls-files"], check=True,
                             capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), src)
               for d, _, fs in os.walk(src) for f in fs]
    return {os.path.basename(p) for p in out}


def path_ok(p, roots, progs):
    p = re.sub(r":.*$", "", p).rstrip(".,;)")
    if not p or p in GENERATED:
        return True
    if p.rstrip("/") in progs:
        return True
    for r in roots:
        full = os.path.join(r, p)
        if any(c in p for c in "*?["):
            if glob.glob(full):
                return True
        elif (os.path.exists(full) or os.path.exists(full + ".c")
              or os.path.exists(full + ".h")):
            return True
    return False


def defined(src):
    names = set()
    for p in glob.glob(os.path.join(src, "**", "*.[ch]"), recursive=True):
        with open(p, encoding="utf-8", errors="replace") as f:
            for m in re.finditer(r"^([A-Za-z_]\w*)\(", f.read(), re.M):
                names.add(m.group(1))
    return names


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    src = argv[1]
    roots = [src] + ([argv[2]] if len(argv) > 2 and argv[2] != src else [])
    docs = [d for d in DOCS if os.path.exists(os.path.join(src, d))]
    docs += sorted(os.path.relpath(p, src)
                   for p in glob.glob(os.path.join(src, DOCS_GLOB)))
    progs = programs(src)
    basenames = tree_names(src)
    funcs = defined(src)
    bad = []
    checked = 0
    for doc in docs:
        text = doc_text(os.path.join(src, doc))
        for line, s in spans(text):
            m = CALL.match(s)
            if m and not MANREF.match(m.group(2)) and "/" not in m.group(1):
                checked += 1
                if m.group(1) not in funcs and m.group(1) not in LIBRARY:
                    bad.append("%s:%d: function %s() is defined in no .c file"
                               % (doc, line, m.group(1)))
                continue
            if " " not in s and "/" not in s and FILE_EXT.match(s):
                checked += 1
                if s not in basenames and not path_ok(s, roots, progs):
                    bad.append("%s:%d: no file is named %s" % (doc, line, s))
        for m in PATH.finditer(text):
            p = m.group(1).rstrip(".")
            checked += 1
            if not path_ok(p, roots, progs):
                line = text.count("\n", 0, m.start()) + 1
                bad.append("%s:%d: %s does not exist" % (doc, line, p))
    for b in bad:
        print(b)
    print("# %d names checked in %d documents, %d not found"
          % (checked, len(docs), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
