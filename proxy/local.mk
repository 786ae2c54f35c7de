# proxy/: the allowlist proxy engine and postern-proxy.
noinst_LIBRARIES += libpostern_proxy.a
libpostern_proxy_a_SOURCES = \
	proxy/flow/accept.c \
	proxy/policy/ask.c proxy/policy/ask.h \
	proxy/core/audit.c proxy/core/audit.h \
	proxy/policy/budget.c proxy/policy/budget.h \
	proxy/flow/conn.c proxy/flow/conn.h proxy/core/server.h \
	proxy/flow/conns.c proxy/flow/conns.h \
	proxy/flow/decide.c \
	proxy/flow/forward.c \
	proxy/policy/learn.c proxy/policy/learn.h \
	proxy/policy/grants.c proxy/policy/grants.h \
	proxy/flow/record.c \
	proxy/flow/reflect.c \
	proxy/flow/revoke.c proxy/flow/revoke.h \
	proxy/proto/scrub.c proxy/proto/scrub.h \
	proxy/flow/tunnel.c \
	proxy/flow/h2tunnel.c \
	proxy/flow/connect.c proxy/flow/connect.h \
	proxy/engine.c proxy/engine.h \
	proxy/check.c proxy/check.h \
	proxy/explain.c proxy/explain.h \
	proxy/core/io.c proxy/core/io.h \
	proxy/core/listen.c \
	proxy/core/log.h \
	proxy/core/lock.h \
	proxy/core/loopcall.c proxy/core/loopcall.h \
	proxy/core/mem.c proxy/core/mem.h \
	proxy/core/prio.h \
	proxy/reload.c proxy/reload.h \
	proxy/proto/resolve.c proxy/proto/resolve.h \
	proxy/core/server.c \
	proxy/core/conncount.c proxy/core/conncount.h \
	proxy/proto/socks.c proxy/proto/socks.h \
	proxy/admin/stats.c proxy/admin/stats.h \
	proxy/policy/summary.c proxy/policy/summary.h \
	proxy/flow/notice.c proxy/flow/notice.h \
	proxy/flow/splice.c proxy/flow/splice.h \
	proxy/core/worker.c proxy/core/worker.h
libpostern_proxy_a_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS) $(CARES_CFLAGS)
PROXY_LIBS = libpostern_proxy.a $(CONF_LIBS) $(LIBEVENT_LIBS) $(CARES_LIBS) $(OPENSSL_LIBS)

bin_PROGRAMS += postern-proxy
postern_proxy_SOURCES = proxy/main.c
postern_proxy_LDADD = $(PROXY_LIBS)
dist_man_MANS += proxy/postern-proxy.8 conf/postern.ini.5

# The SOCKS5 parser's unit test (proxy/proto/socks.h).
check_PROGRAMS += tests/unit/test-socks
TESTS += tests/unit/test-socks
tests_unit_test_socks_SOURCES = tests/unit/test-socks.c tests/unit/tap.h
tests_unit_test_socks_LDADD = $(PROXY_LIBS)

# The budgets' use (proxy/policy/budget.h).
check_PROGRAMS += tests/unit/test-budget
TESTS += tests/unit/test-budget
tests_unit_test_budget_SOURCES = tests/unit/test-budget.c tests/unit/tap.h
tests_unit_test_budget_LDADD = $(PROXY_LIBS)
# The reflection scan (proxy/proto/scrub.h).
check_PROGRAMS += tests/unit/test-scrub
TESTS += tests/unit/test-scrub
tests_unit_test_scrub_SOURCES = tests/unit/test-scrub.c tests/unit/tap.h
tests_unit_test_scrub_LDADD = $(PROXY_LIBS)

# mode = ask's questions and the runtime grants (proxy/policy/ask.h, proxy/policy/grants.h).
check_PROGRAMS += tests/unit/test-ask
TESTS += tests/unit/test-ask
tests_unit_test_ask_SOURCES = tests/unit/test-ask.c tests/unit/tap.h
tests_unit_test_ask_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_ask_LDADD = $(PROXY_LIBS)
