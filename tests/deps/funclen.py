#!/usr/bin/env python3
"""tests/deps/funclen.py: no C function is longer than a screenful or so.

Reads every .c file under the given roots and measures each function from
the line that starts with its name (the style puts the return type on the
line before) to the closing brace at the start of a line.  Prints the
longest ones; exits 1 if any is over the limit.

  funclen.py [--limit N] [--top N] ROOT...
"""

import os
import re
import sys

NAME = re.compile(r'^([A-Za-z_][A-Za-z0-9_]*)\(')
SKIP_DIRS = {'.git', 'autom4te.cache', 'm4'}


def functions(path):
    """Yield (name, first line, length in lines) for each definition."""
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    i = 0
    while i < len(lines):
        m = NAME.match(lines[i])
        if not m:
            i += 1
            continue
        # A definition's parameter list ends in a line that is "{" alone;
        # a top-level macro call or a prototype ends in ";" first.
        j = i
        while j < len(lines) and lines[j] != '{' and \
            not lines[j].rstrip().endswith(';'):
            j += 1
        if j >= len(lines) or lines[j] != '{':
            i = j + 1
            continue
        k = j + 1
        while k < len(lines) and not lines[k].startswith('}'):
            k += 1
        yield m.group(1), i + 1, k - i + 1
        i = k + 1


def main(argv):
    limit, top, roots = 200, 10, []
    args = iter(argv)
    for a in args:
        if a == '--limit':
            limit = int(next(args))
        elif a == '--top':
            top = int(next(args))
        else:
            roots.append(a)
    found = []
    for root in roots or ['.']:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames
                if d not in SKIP_DIRS)
            for fn in sorted(filenames):
                if not fn.endswith('.c'):
                    continue
                p = os.path.join(dirpath, fn)
                rel = os.path.normpath(p)
                for name, line, n in functions(p):
                    found.append((n, rel, line, name))
    found.sort(key=lambda t: (-t[0], t[1], t[2]))
    for n, rel, line, name in found[:top]:
        print('# %4d %s:%d %s' % (n, rel, line, name))
    over = [t for t in found if t[0] > limit]
    for n, rel, line, name in over:
        print('%s:%d: %s is %d lines, over %d' % (rel, line, name, n,
            limit))
    print('# %d functions, %d over %d lines' % (len(found), len(over),
        limit))
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
