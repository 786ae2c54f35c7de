# bridge/session.mk: what the bridge learns of its session from the proxy
# (placeholders, the session CA) and the bundle it writes: unit test, fuzz
# target (replayed by "make check") and the namespace scenario.
check_PROGRAMS += tests/unit/test-bridge-session
TESTS += tests/unit/test-bridge-session
tests_unit_test_bridge_session_SOURCES = tests/unit/test-bridge-session.c \
	bridge/session.c bridge/session.h bridge/forward.c bridge/addr.c tests/unit/tap.h
tests_unit_test_bridge_session_LDADD = $(BASE_LIBS)

check_PROGRAMS += tests/fuzz/bridge-session-replay
TESTS += tests/fuzz/bridge-session-replay
tests_fuzz_bridge_session_replay_SOURCES = tests/fuzz/fuzz-bridge-session.c tests/fuzz/replay.c \
	bridge/session.c bridge/forward.c bridge/addr.c
tests_fuzz_bridge_session_replay_LDADD = $(BASE_LIBS)
tests_fuzz_bridge_session_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/bridge-session"'
EXTRA_DIST += tests/fuzz/fuzz-bridge-session.c tests/fuzz/fuzz-bridge-session.srcs

TESTS += tests/integration/bridge-session.sh
EXTRA_DIST += tests/integration/bridge-session.sh
