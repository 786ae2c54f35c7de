# proxy/: the allowlist proxy engine and postern-proxy.
noinst_LIBRARIES += libpostern_proxy.a
libpostern_proxy_a_SOURCES = \
	proxy/accept.c \
	proxy/ask.c proxy/ask.h \
	proxy/audit.c proxy/audit.h \
	proxy/budget.c proxy/budget.h \
	proxy/conn.c proxy/conn.h proxy/server.h \
	proxy/conns.c proxy/conns.h \
	proxy/decide.c \
	proxy/forward.c \
	proxy/learn.c proxy/learn.h \
	proxy/grants.c proxy/grants.h \
	proxy/record.c \
	proxy/reflect.c \
	proxy/revoke.c proxy/revoke.h \
	proxy/scrub.c proxy/scrub.h \
	proxy/tunnel.c \
	proxy/term2.c \
	proxy/connect.c proxy/connect.h \
	proxy/engine.c proxy/engine.h \
	proxy/check.c proxy/check.h \
	proxy/explain.c proxy/explain.h \
	proxy/listen.c \
	proxy/log.h \
	proxy/lock.h \
	proxy/loopcall.c proxy/loopcall.h \
	proxy/mem.c proxy/mem.h \
	proxy/prio.h \
	proxy/reload.c proxy/reload.h \
	proxy/resolve.c proxy/resolve.h \
	proxy/server.c \
	proxy/share.c proxy/share.h \
	proxy/socks.c proxy/socks.h \
	proxy/stats.c proxy/stats.h \
	proxy/tally.c proxy/tally.h \
	proxy/tell.c proxy/tell.h \
	proxy/splice.c proxy/splice.h \
	proxy/worker.c proxy/worker.h
libpostern_proxy_a_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS) $(CARES_CFLAGS)
PROXY_LIBS = libpostern_proxy.a $(CONF_LIBS) $(LIBEVENT_LIBS) $(CARES_LIBS) $(OPENSSL_LIBS)

bin_PROGRAMS += postern-proxy
postern_proxy_SOURCES = proxy/main.c
postern_proxy_LDADD = $(PROXY_LIBS)
dist_man_MANS += proxy/postern-proxy.8 conf/postern.ini.5

# The SOCKS5 parser's unit test (proxy/socks.h).
check_PROGRAMS += tests/unit/test-socks
TESTS += tests/unit/test-socks
tests_unit_test_socks_SOURCES = tests/unit/test-socks.c tests/unit/tap.h
tests_unit_test_socks_LDADD = $(PROXY_LIBS)

# The budgets' use (proxy/budget.h).
check_PROGRAMS += tests/unit/test-budget
TESTS += tests/unit/test-budget
tests_unit_test_budget_SOURCES = tests/unit/test-budget.c tests/unit/tap.h
tests_unit_test_budget_LDADD = $(PROXY_LIBS)
# The reflection scan (proxy/scrub.h).
check_PROGRAMS += tests/unit/test-scrub
TESTS += tests/unit/test-scrub
tests_unit_test_scrub_SOURCES = tests/unit/test-scrub.c tests/unit/tap.h
tests_unit_test_scrub_LDADD = $(PROXY_LIBS)

# mode = ask's questions and the runtime grants (proxy/ask.h, proxy/grants.h).
check_PROGRAMS += tests/unit/test-ask
TESTS += tests/unit/test-ask
tests_unit_test_ask_SOURCES = tests/unit/test-ask.c tests/unit/tap.h
tests_unit_test_ask_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_ask_LDADD = $(PROXY_LIBS)
