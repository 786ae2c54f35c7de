# sidecar/: postern-sidecar, the network-namespace owner (container mode,
# lockdown-check, run).  It links the proxy engine and libnl-route-3; the
# bridge is a separate binary that `run` execs; only the bridge's netlink
# "link up" helper (bridge/link.c), its capability drop (bridge/priv.c),
# its --forward syntax check (bridge/forward.c, for run --forward) and its
# environment filter (bridge/env.c) are compiled in, and for the container
# mode's --capture its DNS stub and relay (bridge/dnsstub.c, relay.c).
bin_PROGRAMS += postern-sidecar
postern_sidecar_SOURCES = sidecar/main.c \
	sidecar/ask.c sidecar/ask.h sidecar/pending.c sidecar/pending.h \
	sidecar/capture.c sidecar/capture.h \
	bridge/dnsstub.c bridge/dnsstub.h bridge/dnswire.c bridge/dnswire.h \
	bridge/relay.c bridge/relay.h bridge/session.c bridge/session.h \
	bridge/upstream.c bridge/upstream.h \
	sidecar/engine.c sidecar/engine.h \
	sidecar/escape.c sidecar/escape.h \
	sidecar/jail.c sidecar/jail.h \
	sidecar/log.h \
	bridge/nlerr.c bridge/nlerr.h \
	sidecar/nft.c sidecar/nft.h \
	sidecar/pid1.c sidecar/pid1.h \
	sidecar/probe.c sidecar/probe.h \
	sidecar/rules.c sidecar/rules.h \
	sidecar/run.c sidecar/run.h \
	sidecar/learn.c sidecar/learn.h \
	sidecar/srtsettings.c sidecar/srtsettings.h \
	sidecar/unixnames.c sidecar/unixnames.h \
	bridge/link.c bridge/link.h bridge/priv.c bridge/priv.h \
	bridge/forward.c bridge/forward.h bridge/addr.c bridge/addr.h \
	bridge/env.c bridge/env.h
postern_sidecar_CFLAGS = $(AM_CFLAGS) $(LIBNL_CFLAGS) $(JANSSON_CFLAGS)
postern_sidecar_LDADD = $(PROXY_LIBS) $(BASE_LIBS) $(LIBNL_LIBS) $(JANSSON_LIBS)

# Integration scenarios (real namespaces; skipped with 77 when not root).
TESTS += tests/integration/sidecar-lockdown.sh tests/integration/sidecar-sabotage.sh \
	tests/integration/sidecar-run.sh tests/integration/sidecar-serve.sh \
	tests/integration/sidecar-podman.sh tests/integration/sidecar-run-ux.sh \
	tests/integration/sidecar-run-jail.sh tests/integration/sidecar-escape.sh \
	tests/integration/sidecar-run-secret.sh
EXTRA_DIST += tests/integration/sidecar-lib.sh tests/integration/sidecar-run-ux.sh \
	tests/integration/sidecar-run-secret.sh \
	tests/integration/sidecar-lockdown.sh tests/integration/sidecar-sabotage.sh \
	tests/integration/sidecar-run.sh tests/integration/sidecar-serve.sh \
	tests/integration/sidecar-podman.sh tests/integration/sidecar-run-jail.sh \
	tests/integration/sidecar-escape.sh
# run reads its config once.
TESTS += tests/integration/sidecar-run-once.sh tests/integration/sidecar-run-audit.sh
EXTRA_DIST += tests/integration/sidecar-run-once.sh tests/integration/sidecar-run-audit.sh
TESTS += tests/integration/sidecar-run-ask.sh
EXTRA_DIST += tests/integration/sidecar-run-ask.sh
TESTS += tests/integration/sidecar-run-forward.sh
EXTRA_DIST += tests/integration/sidecar-run-forward.sh
# run --env, with the real Claude Code.
TESTS += tests/integration/sidecar-run-claude.sh tests/integration/sidecar-run-claude-secret.sh
EXTRA_DIST += tests/integration/sidecar-run-claude.sh tests/integration/sidecar-run-claude-secret.sh
# run --secret with the real Codex CLI.
TESTS += tests/integration/sidecar-run-codex-secret.sh
EXTRA_DIST += tests/integration/sidecar-run-codex-secret.sh
# run's summary of refusals, and run --session.
TESTS += tests/integration/sidecar-run-summary.sh
TESTS += tests/integration/sidecar-run-report.sh
EXTRA_DIST += tests/integration/sidecar-run-summary.sh
EXTRA_DIST += tests/integration/sidecar-run-report.sh
# run --learn.
TESTS += tests/integration/sidecar-run-learn.sh
EXTRA_DIST += tests/integration/sidecar-run-learn.sh
TESTS += tests/integration/sidecar-run-home.sh
EXTRA_DIST += tests/integration/sidecar-run-home.sh
TESTS += tests/integration/sidecar-run-bind.sh
EXTRA_DIST += tests/integration/sidecar-run-bind.sh

# Unit test of the rule checker (pure; runs everywhere).
check_PROGRAMS += tests/unit/test-sidecar-rules
TESTS += tests/unit/test-sidecar-rules
tests_unit_test_sidecar_rules_SOURCES = tests/unit/test-sidecar-rules.c \
	sidecar/rules.c sidecar/rules.h bridge/nlerr.c bridge/nlerr.h sidecar/log.h tests/unit/tap.h
tests_unit_test_sidecar_rules_CFLAGS = $(AM_CFLAGS) $(LIBNL_CFLAGS)
tests_unit_test_sidecar_rules_LDADD = $(BASE_LIBS) $(LIBNL_LIBS)
dist_man_MANS += sidecar/postern-sidecar.8

# Fuzz target for the netlink rule parser (tests/fuzz/fuzz-sidecar-rules.c):
# "make check" replays its corpus; "make fuzz FUZZ_ONLY=sidecar-rules" fuzzes.
check_PROGRAMS += tests/fuzz/sidecar-rules-replay
TESTS += tests/fuzz/sidecar-rules-replay
tests_fuzz_sidecar_rules_replay_SOURCES = tests/fuzz/fuzz-sidecar-rules.c tests/fuzz/replay.c \
	sidecar/rules.c bridge/nlerr.c
tests_fuzz_sidecar_rules_replay_CPPFLAGS = $(AM_CPPFLAGS) $(LIBNL_CFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/sidecar-rules"'
tests_fuzz_sidecar_rules_replay_LDADD = $(BASE_LIBS) $(LIBNL_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-sidecar-rules.c tests/fuzz/fuzz-sidecar-rules.srcs

# Fuzz target for the /proc/net/unix parser (tests/fuzz/fuzz-unix-names.c).
check_PROGRAMS += tests/fuzz/unix-names-replay
TESTS += tests/fuzz/unix-names-replay
tests_fuzz_unix_names_replay_SOURCES = tests/fuzz/fuzz-unix-names.c tests/fuzz/replay.c \
	sidecar/unixnames.c
tests_fuzz_unix_names_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/unix-names"'
EXTRA_DIST += tests/fuzz/fuzz-unix-names.c tests/fuzz/fuzz-unix-names.srcs

# Unit test of the nf_tables read-back against recorded kernel messages.
check_PROGRAMS += tests/unit/test-sidecar-nft
TESTS += tests/unit/test-sidecar-nft
tests_unit_test_sidecar_nft_SOURCES = tests/unit/test-sidecar-nft.c \
	sidecar/nft.c sidecar/nft.h bridge/nlerr.c bridge/nlerr.h sidecar/log.h tests/unit/tap.h
tests_unit_test_sidecar_nft_CPPFLAGS = $(AM_CPPFLAGS) $(LIBNL_CFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/sidecar-nft"'
tests_unit_test_sidecar_nft_LDADD = $(BASE_LIBS) $(LIBNL_LIBS)

# Fuzz target for the nf_tables dump parsers (tests/fuzz/fuzz-sidecar-nft.c).
check_PROGRAMS += tests/fuzz/sidecar-nft-replay
TESTS += tests/fuzz/sidecar-nft-replay
tests_fuzz_sidecar_nft_replay_SOURCES = tests/fuzz/fuzz-sidecar-nft.c tests/fuzz/replay.c \
	sidecar/nft.c bridge/nlerr.c
tests_fuzz_sidecar_nft_replay_CPPFLAGS = $(AM_CPPFLAGS) $(LIBNL_CFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/sidecar-nft"'
tests_fuzz_sidecar_nft_replay_LDADD = $(BASE_LIBS) $(LIBNL_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-sidecar-nft.c tests/fuzz/fuzz-sidecar-nft.srcs
# A refused HTTP/2 stream is told on run's terminal.
TESTS += tests/integration/sidecar-run-h2.sh
EXTRA_DIST += tests/integration/sidecar-run-h2.sh
# git://, Node https.get and Python requests through capture.
TESTS += tests/integration/sidecar-run-capture-clients.sh
EXTRA_DIST += tests/integration/sidecar-run-capture-clients.sh
# Transparent capture in the pod: container mode --capture.
TESTS += tests/integration/sidecar-pod-capture.sh
EXTRA_DIST += tests/integration/sidecar-pod-capture.sh

# Fuzz target for what `ask` reads from a run's admin socket
# (tests/fuzz/fuzz-sidecar-pending.c).
check_PROGRAMS += tests/fuzz/sidecar-pending-replay
TESTS += tests/fuzz/sidecar-pending-replay
tests_fuzz_sidecar_pending_replay_SOURCES = tests/fuzz/fuzz-sidecar-pending.c tests/fuzz/replay.c \
	sidecar/pending.c
tests_fuzz_sidecar_pending_replay_CPPFLAGS = $(AM_CPPFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/sidecar-pending"'
tests_fuzz_sidecar_pending_replay_LDADD = $(BASE_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-sidecar-pending.c tests/fuzz/fuzz-sidecar-pending.srcs
# canaries = reach CMD.
TESTS += tests/integration/sidecar-run-canary.sh
EXTRA_DIST += tests/integration/sidecar-run-canary.sh
