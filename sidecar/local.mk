# sidecar/: postern-sidecar, the network-namespace owner (container mode,
# lockdown-check, run).  It links the proxy engine and libnl-route-3; the
# bridge is a separate binary that `run` execs; only the bridge's netlink
# "link up" helper (bridge/link.c) is compiled in.
bin_PROGRAMS += postern-sidecar
postern_sidecar_SOURCES = sidecar/main.c \
	sidecar/engine.c sidecar/engine.h \
	sidecar/log.c sidecar/log.h \
	sidecar/pid1.c sidecar/pid1.h \
	sidecar/probe.c sidecar/probe.h \
	sidecar/rules.c sidecar/rules.h \
	sidecar/run.c sidecar/run.h \
	bridge/link.c bridge/link.h
postern_sidecar_CFLAGS = $(AM_CFLAGS) $(LIBNL_CFLAGS)
postern_sidecar_LDADD = $(PROXY_LIBS) $(LIBNL_LIBS)

# Integration scenarios (real namespaces; skipped with 77 when not root).
TESTS += tests/integration/sidecar-lockdown.sh tests/integration/sidecar-sabotage.sh \
	tests/integration/sidecar-run.sh tests/integration/sidecar-serve.sh \
	tests/integration/sidecar-podman.sh tests/integration/sidecar-run-ux.sh
EXTRA_DIST += tests/integration/sidecar-lib.sh tests/integration/sidecar-run-ux.sh \
	tests/integration/sidecar-lockdown.sh tests/integration/sidecar-sabotage.sh \
	tests/integration/sidecar-run.sh tests/integration/sidecar-serve.sh \
	tests/integration/sidecar-podman.sh
# run reads its config once (issue 11, item 3).
TESTS += tests/integration/sidecar-run-once.sh
EXTRA_DIST += tests/integration/sidecar-run-once.sh

# Unit test of the rule checker (pure; runs everywhere).
check_PROGRAMS += sidecar/test-rules
TESTS += sidecar/test-rules
sidecar_test_rules_SOURCES = sidecar/test-rules.c sidecar/rules.c sidecar/rules.h \
	sidecar/log.c sidecar/log.h tests/unit/tap.h
sidecar_test_rules_CFLAGS = $(AM_CFLAGS) $(LIBNL_CFLAGS)
sidecar_test_rules_LDADD = $(LIBNL_LIBS)
dist_man_MANS += sidecar/postern-sidecar.8

# Fuzz target for the netlink rule parser (tests/fuzz/fuzz-sidecar-rules.c):
# "make check" replays its corpus; "make fuzz FUZZ_ONLY=sidecar-rules" fuzzes.
check_PROGRAMS += tests/fuzz/sidecar-rules-replay
TESTS += tests/fuzz/sidecar-rules-replay
tests_fuzz_sidecar_rules_replay_SOURCES = tests/fuzz/fuzz-sidecar-rules.c tests/fuzz/replay.c \
	sidecar/rules.c sidecar/log.c
tests_fuzz_sidecar_rules_replay_CPPFLAGS = $(AM_CPPFLAGS) $(LIBNL_CFLAGS) \
	-DCORPUS_DIR='"$(abs_top_srcdir)/tests/fuzz/corpus/sidecar-rules"'
tests_fuzz_sidecar_rules_replay_LDADD = $(LIBNL_LIBS)
EXTRA_DIST += tests/fuzz/fuzz-sidecar-rules.c tests/fuzz/fuzz-sidecar-rules.srcs
