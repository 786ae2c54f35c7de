# proxy/proto/: the parsers of what clients and upstreams send: the strict
# HTTP/1.1 parser, the TLS ClientHello (SNI) inspector, SOCKS5, the
# reflection scan, asynchronous DNS (c-ares in the libevent loop) with its
# TTL cache, and the answer to a bridge's session request.
libpostern_proxy_a_SOURCES += \
	proxy/proto/auditline.c proxy/proto/auditline.h \
	proxy/proto/bridgereply.c proxy/proto/bridgereply.h \
	proxy/proto/decider.c proxy/proto/decider.h \
	proxy/proto/dns.c proxy/proto/dns.h \
	proxy/proto/http.c proxy/proto/http.h \
	proxy/proto/ocsf.c proxy/proto/ocsf.h \
	proxy/proto/mintmsg.c proxy/proto/mintmsg.h \
	proxy/proto/leak.c proxy/proto/leak.h \
	proxy/proto/proxyauth.c proxy/proto/proxyauth.h \
	proxy/proto/resolve.c proxy/proto/resolve.h \
	proxy/proto/bodyph.c proxy/proto/bodyph.h \
	proxy/proto/scrub.c proxy/proto/scrub.h \
	proxy/proto/sigv4.c proxy/proto/sigv4.h \
	proxy/proto/sni.c proxy/proto/sni.h \
	proxy/proto/socks.c proxy/proto/socks.h

# The HTTP/1.1 parser: unit test and fuzz replay.
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

# The SNI inspector: unit test (on recorded ClientHellos) and fuzz replay.
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

# The SOCKS5 parser (proxy/proto/socks.h).
check_PROGRAMS += tests/unit/test-socks
TESTS += tests/unit/test-socks
tests_unit_test_socks_SOURCES = tests/unit/test-socks.c tests/unit/tap.h
tests_unit_test_socks_LDADD = $(PROXY_LIBS)

# The reflection scan (proxy/proto/scrub.h).
check_PROGRAMS += tests/unit/test-scrub
TESTS += tests/unit/test-scrub
tests_unit_test_scrub_SOURCES = tests/unit/test-scrub.c tests/unit/tap.h
tests_unit_test_scrub_LDADD = $(PROXY_LIBS)

# The session's own secrets in outbound bytes (proxy/proto/leak.h).
check_PROGRAMS += tests/unit/test-leak
TESTS += tests/unit/test-leak
tests_unit_test_leak_SOURCES = tests/unit/test-leak.c tests/unit/tap.h
tests_unit_test_leak_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_leak_LDADD = $(PROXY_LIBS)

# DNS.  The test compiles proxy/proto/dns.c itself instead of linking
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

# The answer to a bridge's session request (the placeholders and CA the
# bridge exports), and its round trip through the bridge's parser.
check_PROGRAMS += tests/unit/test-bridgereply
TESTS += tests/unit/test-bridgereply
TESTS += tests/integration/proxy-sessinfo.sh tests/integration/proxy-namecheck.sh
EXTRA_DIST += tests/integration/proxy-sessinfo.sh tests/integration/proxy-namecheck.sh
tests_unit_test_bridgereply_SOURCES = tests/unit/test-bridgereply.c tests/unit/tap.h \
	bridge/session.c bridge/session.h bridge/upstream.c bridge/forward.c bridge/addr.c
tests_unit_test_bridgereply_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_bridgereply_LDADD = $(PROXY_LIBS) $(BASE_LIBS)

# The decider protocol (proxy/proto/decider.h): unit test and fuzz replay
# of the answer parsers.
check_PROGRAMS += tests/unit/test-decider
TESTS += tests/unit/test-decider
tests_unit_test_decider_SOURCES = tests/unit/test-decider.c tests/unit/tap.h
tests_unit_test_decider_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_decider_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/fuzz/decider-replay
TESTS += tests/fuzz/decider-replay
tests_fuzz_decider_replay_SOURCES = tests/fuzz/fuzz-decider.c tests/fuzz/replay.c
tests_fuzz_decider_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/decider"'
tests_fuzz_decider_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-decider.srcs

# AWS SigV4 (proxy/proto/sigv4.h): AWS's example and botocore's
# signatures, and fuzz replay of the parsers and the canonical request.
check_PROGRAMS += tests/unit/test-sigv4
TESTS += tests/unit/test-sigv4
tests_unit_test_sigv4_SOURCES = tests/unit/test-sigv4.c tests/unit/tap.h
tests_unit_test_sigv4_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_sigv4_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/fuzz/sigv4-replay
TESTS += tests/fuzz/sigv4-replay
tests_fuzz_sigv4_replay_SOURCES = tests/fuzz/fuzz-sigv4.c tests/fuzz/replay.c
tests_fuzz_sigv4_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/sigv4"'
tests_fuzz_sigv4_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-sigv4.srcs

# The audit log's chain and checkpoints: unit test and fuzz replay.
check_PROGRAMS += tests/unit/test-auditline
TESTS += tests/unit/test-auditline
tests_unit_test_auditline_SOURCES = tests/unit/test-auditline.c tests/unit/tap.h
tests_unit_test_auditline_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_auditline_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/fuzz/auditverify-replay
TESTS += tests/fuzz/auditverify-replay
tests_fuzz_auditverify_replay_SOURCES = tests/fuzz/fuzz-auditverify.c tests/fuzz/replay.c
tests_fuzz_auditverify_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/auditverify"'
tests_fuzz_auditverify_replay_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_fuzz_auditverify_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-auditverify.srcs

# Audit lines as OCSF records.
check_PROGRAMS += tests/unit/test-ocsf
TESTS += tests/unit/test-ocsf
tests_unit_test_ocsf_SOURCES = tests/unit/test-ocsf.c tests/unit/tap.h
tests_unit_test_ocsf_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_ocsf_LDADD = $(PROXY_LIBS)

# The token endpoint codecs: unit test and fuzz replay.
check_PROGRAMS += tests/unit/test-mintmsg
TESTS += tests/unit/test-mintmsg
tests_unit_test_mintmsg_SOURCES = tests/unit/test-mintmsg.c tests/unit/tap.h
tests_unit_test_mintmsg_CFLAGS = $(AM_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_test_mintmsg_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/fuzz/mintmsg-replay
TESTS += tests/fuzz/mintmsg-replay
tests_fuzz_mintmsg_replay_SOURCES = tests/fuzz/fuzz-mintmsg.c tests/fuzz/replay.c
tests_fuzz_mintmsg_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/mintmsg"'
tests_fuzz_mintmsg_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-mintmsg.srcs

# Placeholders replaced in paths, bodies and WebSocket client frames
# (proxy/proto/bodyph.h): unit test and fuzz replay.
check_PROGRAMS += tests/unit/test-bodyph
TESTS += tests/unit/test-bodyph
tests_unit_test_bodyph_SOURCES = tests/unit/test-bodyph.c tests/unit/tap.h
tests_unit_test_bodyph_LDADD = $(PROXY_LIBS)

check_PROGRAMS += tests/fuzz/bodyph-replay
TESTS += tests/fuzz/bodyph-replay
tests_fuzz_bodyph_replay_SOURCES = tests/fuzz/fuzz-bodyph.c tests/fuzz/replay.c
tests_fuzz_bodyph_replay_CPPFLAGS = $(AM_CPPFLAGS) -DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/bodyph"'
tests_fuzz_bodyph_replay_LDADD = $(PROXY_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-bodyph.srcs
