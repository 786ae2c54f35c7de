# tests/deps/: the module graph read from the built objects.  make check
# fails on any dependency cycle between modules (ARCHITECTURE.md).
TESTS += tests/deps/cycles.sh
EXTRA_DIST += tests/deps/cycles.py tests/deps/cycles.sh
