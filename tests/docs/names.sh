#!/bin/sh
# tests/docs/names.sh: every file and function that README.md, SECURITY.md,
# ARCHITECTURE.md and docs/*.md name exists in the tree
# (tests/docs/names.py says how each is looked for).
: "${top_srcdir:=.}" "${top_builddir:=.}"
command -v python3 >/dev/null 2>&1 || { echo "# no python3: skipping"; exit 77; }
exec python3 "$top_srcdir/tests/docs/names.py" "$top_srcdir" "$top_builddir"
