# tests/bench/: benchmarks, never part of "make check".
#
# "make bench" runs the proxy benchmark (postern-proxy side by side with
# tinyproxy, squid and a direct TCP baseline), then the TLS termination
# benchmark (bench-term: keep-alive HTTPS direct, through a plain postern
# tunnel, through postern terminating TLS and injecting a credential, and
# through squid's ssl_bump) when squid can bump TLS, and then the bridge
# benchmark (bench-bridge, from bridge/local.mk) when that target exists,
# and last the whole sandbox path against sandbox-runtime (bench-sandbox)
# when its optional dependencies are installed (contrib/install-bench-deps.sh).
# "make bench-proxy" and "make bench-term" run one each.  The load tools
# are check programs so that "make check" always compiles them.

check_PROGRAMS += tests/bench/proxy-load
tests_bench_proxy_load_SOURCES = tests/bench/proxy-load.c
tests_bench_proxy_load_LDADD = $(BASE_LIBS)
EXTRA_DIST += tests/bench/bench-proxy.sh tests/bench/wrk-proxy.lua \
	tests/bench/bench-instr.sh tests/bench/instr-client.py

check_PROGRAMS += tests/bench/tls-load
tests_bench_tls_load_SOURCES = tests/bench/tls-load.c
tests_bench_tls_load_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_bench_tls_load_LDADD = $(OPENSSL_LIBS)
EXTRA_DIST += tests/bench/bench-term.sh

bench-proxy: postern-proxy tests/bench/proxy-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-proxy.sh

# Decisions through a decider = next to the allowlist alone (bench-decider.sh).
EXTRA_DIST += tests/bench/bench-decider.sh
bench-decider: postern-proxy tests/bench/proxy-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-decider.sh

# The audit chain's cost next to the build before it (bench-audit.sh;
# BENCH_BASE=/path/to/an/older/postern-proxy for the base column).
EXTRA_DIST += tests/bench/bench-audit.sh
bench-audit: postern-proxy tests/bench/proxy-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-audit.sh

bench-term: postern-proxy tests/bench/tls-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-term.sh

# bench-term needs a squid built with OpenSSL (Debian's squid-openssl, whose
# security_file_certgen makes the bumped certificates); without it "make
# bench" says so and goes on.  bench-bridge is another component's target:
# run it only when it is defined, so that "make bench" does not depend on
# the order of the work.  Looked up in the generated Makefile, not with
# "make -n", which would still run every recipe line that calls $(MAKE).
bench: bench-proxy
	@if $(SHELL) $(top_srcdir)/tests/bench/bench-term.sh --can-run; then \
	  $(MAKE) $(AM_MAKEFLAGS) bench-term; \
	else \
	  echo "bench: skipping the termination benchmark"; \
	fi
	@if grep -q '^bench-bridge:' Makefile; then \
	  $(MAKE) $(AM_MAKEFLAGS) bench-bridge; \
	else \
	  echo "bench: no bench-bridge target, skipping the bridge benchmark"; \
	fi
	@if $(SHELL) $(top_srcdir)/tests/bench/bench-sandbox.sh --can-run; then \
	  $(MAKE) $(AM_MAKEFLAGS) bench-sandbox; \
	else \
	  echo "bench: skipping the sandbox-runtime benchmark"; \
	fi
# The bridge's speed: tunnels/s and bulk MB/s out of a bridge sandbox by
# HTTP CONNECT, SOCKS5 and transparent capture side by side, and the DNS
# stub's answers/s (needs root: the bridge runs in a namespace of its own).
# Its load tool is bridge/local.mk's bridge-load.
EXTRA_DIST += tests/bench/bench-capture.sh
bench-capture: postern-proxy postern-bridge tests/bench/bridge-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-capture.sh

# Instructions per tunnel, request and refusal (callgrind), against
# BENCH_BASE=/path/to/an/older/postern-proxy when given: the before/after
# that a loaded machine cannot blur.
bench-instr: postern-proxy tests/bench/proxy-load tests/bench/tls-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-instr.sh

# The whole sandbox path: client -> postern-bridge -> the session
# socket -> postern-proxy against client -> sandbox-runtime's bwrap, socat
# and Node proxy, same clients, same upstream.  Needs root and the optional
# bench dependencies (contrib/install-bench-deps.sh: sandbox-runtime from
# npm, ripgrep, wrk); without them it says which is missing and skips.
EXTRA_DIST += tests/bench/bench-sandbox.sh
bench-sandbox: postern-proxy postern-bridge tests/bench/bridge-load tests/bench/proxy-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-sandbox.sh

.PHONY: bench bench-proxy bench-term bench-instr bench-capture bench-sandbox bench-decider bench-audit

# The leak scan's cost on plain HTTP: a session with secrets and canaries
# beside one without (bench-leak.sh).
EXTRA_DIST += tests/bench/bench-leak.sh
bench-leak: postern-proxy tests/bench/proxy-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-leak.sh
.PHONY: bench-leak
