# proxy/tls/ca.mk: the per-session certificate authority and the verified
# client side to upstreams (issue 15), their unit test, and the helper that
# writes a CA and leaves to files for tests/integration/ca-tls.sh.
libpostern_proxy_a_SOURCES += proxy/tls/ca.c proxy/tls/ca.h proxy/tls/tlsup.c proxy/tls/tlsup.h \
	proxy/tls/sesstls.c proxy/tls/sesstls.h

check_PROGRAMS += tests/unit/test-ca
TESTS += tests/unit/test-ca
tests_unit_test_ca_SOURCES = tests/unit/test-ca.c tests/unit/tap.h
tests_unit_test_ca_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_ca_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/unit/test-sesstls
TESTS += tests/unit/test-sesstls
tests_unit_test_sesstls_SOURCES = tests/unit/test-sesstls.c tests/unit/tap.h
tests_unit_test_sesstls_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_sesstls_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/integration/ca-files
tests_integration_ca_files_SOURCES = tests/integration/ca-files.c
tests_integration_ca_files_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_integration_ca_files_LDADD = $(PROXY_LIBS)
TESTS += tests/integration/ca-tls.sh
EXTRA_DIST += tests/integration/ca-tls.sh
