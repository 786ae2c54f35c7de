# tests/deps/: the module graph read from the built objects.  make check
# fails on any dependency cycle between modules (ARCHITECTURE.md), and on
# any product function over 200 lines.
TESTS += tests/deps/cycles.sh tests/deps/funclen.sh
EXTRA_DIST += tests/deps/cycles.py tests/deps/cycles.sh \
	tests/deps/funclen.py tests/deps/funclen.sh
