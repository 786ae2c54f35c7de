# proxy/proto/sni.mk: the TLS ClientHello (SNI) inspector, its unit test and the
# replay of its fuzz corpus.
libpostern_proxy_a_SOURCES += proxy/proto/sni.c proxy/proto/sni.h

check_PROGRAMS += tests/unit/test-sni
TESTS += tests/unit/test-sni
tests_unit_test_sni_SOURCES = tests/unit/test-sni.c tests/unit/tap.h
tests_unit_test_sni_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_sni_CPPFLAGS = $(AM_CPPFLAGS) -DSNI_DATA_DIR='"$(abs_top_srcdir)/tests/unit/data"'
tests_unit_test_sni_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/unit/data/curl-hello-name.test.bin \
	tests/unit/data/s_client-hello-s-client.test.bin

check_PROGRAMS += tests/fuzz/sni-replay
TESTS += tests/fuzz/sni-replay
tests_fuzz_sni_replay_SOURCES = tests/fuzz/fuzz-sni.c tests/fuzz/replay.c
tests_fuzz_sni_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/sni"'
tests_fuzz_sni_replay_LDADD = $(PROXY_LIBS)
