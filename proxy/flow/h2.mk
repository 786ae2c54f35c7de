# proxy/flow/h2.mk: the HTTP/2 relay of a terminated tunnel on
# libnghttp2, its unit test and the replay of its fuzz corpus.
libpostern_proxy_a_SOURCES += proxy/flow/h2.c proxy/flow/h2.h
libpostern_proxy_a_CFLAGS += $(NGHTTP2_CFLAGS)
PROXY_LIBS += $(NGHTTP2_LIBS)

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
