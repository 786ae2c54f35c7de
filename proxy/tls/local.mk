# proxy/tls/: the per-session certificate authority, the verified client
# side to upstreams and the registry of sessions' TLS settings; their unit
# tests, and the helper that writes a CA and leaves to files for
# tests/integration/ca-tls.sh.
libpostern_proxy_a_SOURCES += \
	proxy/tls/ca.c proxy/tls/ca.h \
	proxy/tls/registry.c proxy/tls/registry.h \
	proxy/tls/tlsup.c proxy/tls/tlsup.h

check_PROGRAMS += tests/unit/test-ca
TESTS += tests/unit/test-ca
tests_unit_test_ca_SOURCES = tests/unit/test-ca.c tests/unit/tap.h
tests_unit_test_ca_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_ca_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/unit/test-tlsreg
TESTS += tests/unit/test-tlsreg
tests_unit_test_tlsreg_SOURCES = tests/unit/test-tlsreg.c tests/unit/tap.h
tests_unit_test_tlsreg_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_tlsreg_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/integration/ca-files
tests_integration_ca_files_SOURCES = tests/integration/ca-files.c
tests_integration_ca_files_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_integration_ca_files_LDADD = $(PROXY_LIBS)
TESTS += tests/integration/ca-tls.sh
EXTRA_DIST += tests/integration/ca-tls.sh
