# proxy/policy/: what the proxy decides beyond the config: mode = ask's
# questions and the runtime grants, budgets, the learn and refusal
# summaries.  (test-summary and test-learn are in tests/unit/local.mk.)
libpostern_proxy_a_SOURCES += \
	proxy/policy/ask.c proxy/policy/ask.h \
	proxy/policy/authfail.c proxy/policy/authfail.h \
	proxy/policy/budget.c proxy/policy/budget.h \
	proxy/policy/grants.c proxy/policy/grants.h \
	proxy/policy/learn.c proxy/policy/learn.h \
	proxy/policy/rtsess.c proxy/policy/rtsess.h \
	proxy/policy/summary.c proxy/policy/summary.h

# The budgets' use (proxy/policy/budget.h).
check_PROGRAMS += tests/unit/test-budget
TESTS += tests/unit/test-budget
tests_unit_test_budget_SOURCES = tests/unit/test-budget.c tests/unit/tap.h
tests_unit_test_budget_LDADD = $(PROXY_LIBS)

# mode = ask's questions and the runtime grants (proxy/policy/ask.h, grants.h).
check_PROGRAMS += tests/unit/test-ask
TESTS += tests/unit/test-ask
tests_unit_test_ask_SOURCES = tests/unit/test-ask.c tests/unit/tap.h
tests_unit_test_ask_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
tests_unit_test_ask_LDADD = $(PROXY_LIBS)

# Token listeners: token_file and auth=token (conf/token.h, conf/auth.h),
# the credentials (proxy/proto/proxyauth.h), the failure table
# (proxy/policy/authfail.h).
check_PROGRAMS += tests/unit/test-token
TESTS += tests/unit/test-token
tests_unit_test_token_SOURCES = tests/unit/test-token.c tests/unit/tap.h
tests_unit_test_token_LDADD = $(PROXY_LIBS)
# Runtime sessions: read as file sections, kept in state_dir (rtsess.h).
check_PROGRAMS += tests/unit/test-rtsess
TESTS += tests/unit/test-rtsess
tests_unit_test_rtsess_SOURCES = tests/unit/test-rtsess.c tests/unit/tap.h tests/unit/conferr.h
tests_unit_test_rtsess_LDADD = $(PROXY_LIBS)
