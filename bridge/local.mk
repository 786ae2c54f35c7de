# bridge/: postern-bridge, the in-namespace relay (libnl and libc only: no
# libevent, no OpenSSL, no conf library, so that it stays small and static).
bin_PROGRAMS += postern-bridge
postern_bridge_SOURCES = \
	bridge/main.c \
	bridge/addr.c bridge/addr.h \
	bridge/connect.c bridge/connect.h \
	bridge/dnsstub.c bridge/dnsstub.h bridge/dnswire.c bridge/dnswire.h \
	conf/host.c conf/host.h \
	bridge/env.c bridge/env.h \
	bridge/forward.c bridge/forward.h \
	bridge/link.c bridge/link.h \
	bridge/nlerr.c bridge/nlerr.h \
	bridge/nonss.c \
	bridge/priv.c bridge/priv.h \
	bridge/relay.c bridge/relay.h \
	bridge/session.c bridge/session.h \
	bridge/upstream.c bridge/upstream.h
postern_bridge_CFLAGS = $(AM_CFLAGS) $(LIBNL_CFLAGS)
postern_bridge_LDADD = $(BASE_LIBS) $(LIBNL_LIBS)
dist_man_MANS += bridge/postern-bridge.8

# Unit tests of the pieces that need no namespace.
check_PROGRAMS += tests/unit/test-bridge-addr tests/unit/test-bridge-env \
	tests/unit/test-bridge-priv tests/unit/test-bridge-forward
TESTS += tests/unit/test-bridge-addr tests/unit/test-bridge-env \
	tests/unit/test-bridge-priv tests/unit/test-bridge-forward
tests_unit_test_bridge_addr_SOURCES = tests/unit/test-bridge-addr.c \
	bridge/addr.c bridge/addr.h tests/unit/tap.h
tests_unit_test_bridge_env_SOURCES = tests/unit/test-bridge-env.c \
	bridge/env.c bridge/env.h tests/unit/tap.h
tests_unit_test_bridge_priv_SOURCES = tests/unit/test-bridge-priv.c \
	bridge/priv.c bridge/priv.h tests/unit/tap.h
tests_unit_test_bridge_forward_SOURCES = tests/unit/test-bridge-forward.c \
	bridge/forward.c bridge/forward.h bridge/addr.c bridge/addr.h tests/unit/tap.h
tests_unit_test_bridge_addr_LDADD = $(BASE_LIBS)
tests_unit_test_bridge_env_LDADD = $(BASE_LIBS)
tests_unit_test_bridge_priv_LDADD = $(BASE_LIBS)
tests_unit_test_bridge_forward_LDADD = $(BASE_LIBS)

# Fuzz target for the reader of the proxy's answer to a --forward CONNECT.
check_PROGRAMS += tests/fuzz/bridge-forward-replay
TESTS += tests/fuzz/bridge-forward-replay
tests_fuzz_bridge_forward_replay_SOURCES = tests/fuzz/fuzz-bridge-forward.c tests/fuzz/replay.c \
	bridge/forward.c bridge/addr.c
tests_fuzz_bridge_forward_replay_LDADD = $(BASE_LIBS)
tests_fuzz_bridge_forward_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/bridge-forward"'
EXTRA_DIST += tests/fuzz/fuzz-bridge-forward.c tests/fuzz/fuzz-bridge-forward.srcs

# Integration tests, in real network namespaces (skipped, exit 77, where
# namespaces cannot be made).  One scenario per file.
BRIDGE_IT = \
	tests/integration/bridge-unshare.sh \
	tests/integration/bridge-bwrap.sh \
	tests/integration/bridge-unshare-recipe.sh \
	tests/integration/bridge-restart.sh \
	tests/integration/bridge-root.sh \
	tests/integration/bridge-concurrent.sh \
	tests/integration/bridge-halfclose.sh \
	tests/integration/bridge-bulk.sh \
	tests/integration/bridge-503.sh \
	tests/integration/bridge-env.sh \
	tests/integration/bridge-signals.sh \
	tests/integration/bridge-reap.sh \
	tests/integration/bridge-pdeath.sh \
	tests/integration/bridge-lo-error.sh \
	tests/integration/bridge-forward.sh \
	tests/integration/bridge-capture.sh \
	tests/integration/bridge-ssh.sh \
	tests/integration/bridge-gvisor.sh
TESTS += $(BRIDGE_IT)
EXTRA_DIST += $(BRIDGE_IT) tests/integration/lib-bridge.sh

# The benchmark against socat and the direct baselines (not run by "make
# check"; "make bench-bridge", also run by "make bench").  Its
# load tool is a check program so that it is always compiled.
check_PROGRAMS += tests/bench/bridge-load
tests_bench_bridge_load_SOURCES = tests/bench/bridge-load.c
tests_bench_bridge_load_LDADD = $(BASE_LIBS)
EXTRA_DIST += tests/bench/bench-bridge.sh

bench-bridge: postern-bridge tests/bench/bridge-load tests/bench/proxy-load
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  $(SHELL) $(top_srcdir)/tests/bench/bench-bridge.sh
.PHONY: bench-bridge

# The DNS stub of transparent capture: its wire format's unit
# test and fuzz target (replayed by "make check"), and the namespace
# scenario with the real proxy.
check_PROGRAMS += tests/unit/test-bridge-dns tests/fuzz/bridge-dns-replay
TESTS += tests/unit/test-bridge-dns tests/fuzz/bridge-dns-replay
tests_unit_test_bridge_dns_SOURCES = tests/unit/test-bridge-dns.c tests/unit/tap.h \
	bridge/dnswire.c bridge/dnswire.h bridge/forward.c bridge/addr.c conf/host.c
tests_unit_test_bridge_dns_LDADD = $(BASE_LIBS)
tests_fuzz_bridge_dns_replay_SOURCES = tests/fuzz/fuzz-bridge-dns.c tests/fuzz/replay.c \
	bridge/dnswire.c bridge/forward.c bridge/addr.c conf/host.c
tests_fuzz_bridge_dns_replay_LDADD = $(BASE_LIBS)
tests_fuzz_bridge_dns_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/bridge-dns"'
EXTRA_DIST += tests/fuzz/fuzz-bridge-dns.c tests/fuzz/fuzz-bridge-dns.srcs

# What the bridge learns of its session from the proxy (placeholders, the
# session CA) and the bundle it writes: unit test, fuzz target (replayed
# by "make check") and the namespace scenario.
check_PROGRAMS += tests/unit/test-bridge-session
TESTS += tests/unit/test-bridge-session
tests_unit_test_bridge_session_SOURCES = tests/unit/test-bridge-session.c \
	bridge/session.c bridge/session.h bridge/upstream.c bridge/forward.c bridge/addr.c tests/unit/tap.h
tests_unit_test_bridge_session_LDADD = $(BASE_LIBS)

check_PROGRAMS += tests/fuzz/bridge-session-replay
TESTS += tests/fuzz/bridge-session-replay
tests_fuzz_bridge_session_replay_SOURCES = tests/fuzz/fuzz-bridge-session.c tests/fuzz/replay.c \
	bridge/session.c bridge/upstream.c bridge/forward.c bridge/addr.c
tests_fuzz_bridge_session_replay_LDADD = $(BASE_LIBS)
tests_fuzz_bridge_session_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/bridge-session"'
EXTRA_DIST += tests/fuzz/fuzz-bridge-session.c tests/fuzz/fuzz-bridge-session.srcs

TESTS += tests/integration/bridge-session.sh
EXTRA_DIST += tests/integration/bridge-session.sh
