#!/bin/sh
# tests/deps/funclen.sh: no function in the product code is over 200 lines
# (tests/deps/funclen.py says how they are counted).  Prints the ten
# longest; fails naming each function over the limit.
: "${top_srcdir:=.}"
command -v python3 >/dev/null 2>&1 || { echo "# no python3: skipping"; exit 77; }
cd "$top_srcdir" || exit 99
exec python3 tests/deps/funclen.py --limit 200 base conf proxy bridge sidecar
