# proxy/tls/sessinfo.mk: the answer to a bridge's session request (the
# placeholders and CA the bridge exports), and its round trip through the
# bridge's parser.
libpostern_proxy_a_SOURCES += proxy/tls/sessinfo.c proxy/tls/sessinfo.h proxy/flow/sessreq.c proxy/flow/sessreq.h

check_PROGRAMS += tests/unit/test-proxy-sessinfo
TESTS += tests/unit/test-proxy-sessinfo
TESTS += tests/integration/proxy-sessinfo.sh tests/integration/proxy-namecheck.sh
EXTRA_DIST += tests/integration/proxy-sessinfo.sh tests/integration/proxy-namecheck.sh
tests_unit_test_proxy_sessinfo_SOURCES = tests/unit/test-proxy-sessinfo.c tests/unit/tap.h \
	bridge/session.c bridge/session.h bridge/forward.c bridge/addr.c
tests_unit_test_proxy_sessinfo_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_proxy_sessinfo_LDADD = $(PROXY_LIBS) $(BASE_LIBS)
