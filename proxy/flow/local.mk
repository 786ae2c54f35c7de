# proxy/flow/: one connection's way through the proxy: accept, decide,
# connect, forward, tunnel, the HTTP/2 relay of a terminated tunnel (on
# libnghttp2), the bridge's session request, the leak scan of requests,
# notices and splice.
libpostern_proxy_a_SOURCES += \
	proxy/flow/accept.c \
	proxy/flow/auth.c proxy/flow/auth.h \
	proxy/flow/awssign.c proxy/flow/awssign.h \
	proxy/flow/bridgereq.c proxy/flow/bridgereq.h \
	proxy/flow/conn.c proxy/flow/conn.h \
	proxy/flow/connect.c proxy/flow/connect.h \
	proxy/flow/conns.c proxy/flow/conns.h \
	proxy/flow/decide.c \
	proxy/flow/fetch.c proxy/flow/fetch.h \
	proxy/flow/mint.c proxy/flow/mint.h \
	proxy/flow/minthold.c proxy/flow/minthold.h \
	proxy/flow/forward.c \
	proxy/flow/h2.c proxy/flow/h2.h \
	proxy/flow/h2tunnel.c \
	proxy/flow/leakscan.c proxy/flow/leakscan.h \
	proxy/flow/notice.c proxy/flow/notice.h \
	proxy/flow/parent.c proxy/flow/parentmsg.c \
	proxy/flow/record.c \
	proxy/flow/reflect.c \
	proxy/flow/replace.c proxy/flow/replace.h \
	proxy/flow/revoke.c proxy/flow/revoke.h \
	proxy/flow/splice.c proxy/flow/splice.h \
	proxy/flow/tunnel.c

# The HTTP/2 relay: unit test and the replay of its fuzz corpus.
check_PROGRAMS += tests/unit/test-h2
TESTS += tests/unit/test-h2
tests_unit_test_h2_SOURCES = tests/unit/test-h2.c tests/unit/tap.h
tests_unit_test_h2_CFLAGS = $(AM_CFLAGS) $(NGHTTP2_CFLAGS)
tests_unit_test_h2_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/fuzz/h2-replay
TESTS += tests/fuzz/h2-replay
tests_fuzz_h2_replay_SOURCES = tests/fuzz/fuzz-h2.c tests/fuzz/replay.c
tests_fuzz_h2_replay_CFLAGS = $(AM_CFLAGS) $(NGHTTP2_CFLAGS)
tests_fuzz_h2_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/h2"'
tests_fuzz_h2_replay_LDADD = $(PROXY_LIBS)

# Real HTTP/2 clients and server through the module, on loopback.
check_PROGRAMS += tests/integration/h2-relay
tests_integration_h2_relay_SOURCES = tests/integration/h2-relay.c
tests_integration_h2_relay_LDADD = $(PROXY_LIBS)
TESTS += tests/integration/h2-clients.sh
EXTRA_DIST += tests/integration/h2-clients.sh
