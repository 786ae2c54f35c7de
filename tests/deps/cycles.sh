#!/bin/sh
# tests/deps/cycles.sh: no two modules depend on each other, and the layout
# rules hold (ARCHITECTURE.md).  Reads the built objects' symbols
# (tests/deps/cycles.py says why not the #include lines); a cycle or a
# crossed layer is printed with the symbols that make it, a private header
# included from outside its folder with the file and line.
: "${top_srcdir:=.}" "${top_builddir:=.}"
command -v nm >/dev/null 2>&1 || { echo "# no nm(1): skipping"; exit 77; }
exec python3 "$top_srcdir/tests/deps/cycles.py" --graph "$top_builddir" "$top_srcdir"
