# tests/bench/: benchmarks, never part of "make check".
#
# "make bench" runs the proxy benchmark (postern-proxy side by side with
# tinyproxy, squid and a direct TCP baseline) and then the bridge benchmark
# (bench-bridge, from bridge/local.mk) when that target exists.
# "make bench-proxy" runs only the first.  The load tool is a check program
# so that "make check" always compiles it.

check_PROGRAMS += tests/bench/proxy-load
tests_bench_proxy_load_SOURCES = tests/bench/proxy-load.c
EXTRA_DIST += tests/bench/bench-proxy.sh tests/bench/wrk-proxy.lua \
	tests/bench/bench-instr.sh tests/bench/instr-client.py

bench-proxy: postern-proxy tests/bench/proxy-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-proxy.sh

# bench-bridge is another component's target: run it only when it is
# defined, so that "make bench" does not depend on the order of the work.
# Looked up in the generated Makefile, not with "make -n", which would still
# run every recipe line that calls $(MAKE).
bench: bench-proxy
	@if grep -q '^bench-bridge:' Makefile; then \
	  $(MAKE) $(AM_MAKEFLAGS) bench-bridge; \
	else \
	  echo "bench: no bench-bridge target, skipping the bridge benchmark"; \
	fi
# Instructions per tunnel, request and refusal (callgrind), against
# BENCH_BASE=/path/to/an/older/postern-proxy when given: the before/after
# that a loaded machine cannot blur.
bench-instr: postern-proxy tests/bench/proxy-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-instr.sh

.PHONY: bench bench-proxy bench-instr
