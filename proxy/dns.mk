# proxy/dns.mk: asynchronous DNS (c-ares in the libevent loop) + TTL cache.
libpostern_proxy_a_SOURCES += proxy/dns.c proxy/dns.h

# The test compiles proxy/dns.c itself instead of linking
# libpostern_proxy.a, so that it only depends on this module (and conf/).
# It starts dnsmasq on 127.0.0.1 and skips when dnsmasq is not installed.
check_PROGRAMS += tests/unit/test-dns
TESTS += tests/unit/test-dns
tests_unit_test_dns_SOURCES = tests/unit/test-dns.c tests/unit/tap.h \
	proxy/dns.c proxy/dns.h
tests_unit_test_dns_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(CARES_CFLAGS)
tests_unit_test_dns_LDADD = $(CONF_LIBS) $(LIBEVENT_LIBS) $(CARES_LIBS)
