# proxy/proto/http.mk: the strict HTTP/1.1 parser, its unit test and fuzz replay.
libpostern_proxy_a_SOURCES += proxy/proto/http.c proxy/proto/http.h

check_PROGRAMS += tests/unit/test-http
TESTS += tests/unit/test-http
tests_unit_test_http_SOURCES = tests/unit/test-http.c tests/unit/tap.h
tests_unit_test_http_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_http_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/fuzz/http-replay
TESTS += tests/fuzz/http-replay
tests_fuzz_http_replay_SOURCES = tests/fuzz/fuzz-http.c tests/fuzz/replay.c
tests_fuzz_http_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/http"'
tests_fuzz_http_replay_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_fuzz_http_replay_LDADD = $(PROXY_LIBS)
