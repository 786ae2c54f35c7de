# tests/deps/: the module graph read from the built objects.  The check
# joins TESTS once the proxy's two cycles (issue 14) are broken.
EXTRA_DIST += tests/deps/cycles.py tests/deps/cycles.sh
