# tests/deps/: the module graph read from the built objects.  make check
# fails on any dependency cycle between modules (ARCHITECTURE.md), and on
# any product function over 200 lines.
TESTS += tests/deps/cycles.sh tests/deps/funclen.sh
EXTRA_DIST += tests/deps/cycles.py tests/deps/cycles.sh \
	tests/deps/funclen.py tests/deps/funclen.sh

# make deps-graph: which module uses which, read from the built objects of
# the three programs (no test objects); DEPS_GRAPH=--dot for Graphviz.
DEPS_GRAPH = --text
deps-graph: $(bin_PROGRAMS)
	@python3 $(top_srcdir)/tests/deps/cycles.py $(DEPS_GRAPH) $(top_builddir)
.PHONY: deps-graph
