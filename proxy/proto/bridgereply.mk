# proxy/proto/bridgereply.mk: the answer to a bridge's session request (the
# placeholders and CA the bridge exports), and its round trip through the
# bridge's parser.
libpostern_proxy_a_SOURCES += proxy/proto/bridgereply.c proxy/proto/bridgereply.h proxy/flow/bridgereq.c proxy/flow/bridgereq.h

check_PROGRAMS += tests/unit/test-bridgereply
TESTS += tests/unit/test-bridgereply
TESTS += tests/integration/proxy-sessinfo.sh tests/integration/proxy-namecheck.sh
EXTRA_DIST += tests/integration/proxy-sessinfo.sh tests/integration/proxy-namecheck.sh
tests_unit_test_bridgereply_SOURCES = tests/unit/test-bridgereply.c tests/unit/tap.h \
	bridge/session.c bridge/session.h bridge/forward.c bridge/addr.c
tests_unit_test_bridgereply_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_bridgereply_LDADD = $(PROXY_LIBS) $(BASE_LIBS)
