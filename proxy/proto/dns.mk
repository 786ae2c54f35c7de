# proxy/proto/dns.mk: asynchronous DNS (c-ares in the libevent loop) + TTL cache.
libpostern_proxy_a_SOURCES += proxy/proto/dns.c proxy/proto/dns.h

# The test compiles proxy/proto/dns.c itself instead of linking
# libpostern_proxy.a, so that it only depends on this module (and conf/).
# It starts dnsmasq on 127.0.0.1 and skips when dnsmasq is not installed.
check_PROGRAMS += tests/unit/test-dns
TESTS += tests/unit/test-dns
tests_unit_test_dns_SOURCES = tests/unit/test-dns.c tests/unit/tap.h \
	proxy/proto/dns.c proxy/proto/dns.h
tests_unit_test_dns_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(CARES_CFLAGS)
tests_unit_test_dns_LDADD = $(CONF_LIBS) $(LIBEVENT_LIBS) $(CARES_LIBS)

# The answer path fuzzed through c-ares with fake sockets (tests/fuzz/fuzz-dns.c).
check_PROGRAMS += tests/fuzz/dns-replay
TESTS += tests/fuzz/dns-replay
tests_fuzz_dns_replay_SOURCES = tests/fuzz/fuzz-dns.c tests/fuzz/replay.c proxy/proto/dns.c proxy/proto/dns.h
tests_fuzz_dns_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/dns"'
tests_fuzz_dns_replay_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(CARES_CFLAGS)
tests_fuzz_dns_replay_LDADD = $(CONF_LIBS) $(LIBEVENT_LIBS) $(CARES_LIBS)
