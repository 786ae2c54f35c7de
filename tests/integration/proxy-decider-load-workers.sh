#!/bin/sh
# proxy-decider-load-workers: proxy-decider-load.sh with workers = 2: each worker its own
# connection to the decider, the same decisions, nobody held up.
POSTERN_TEST_WORKERS=2; export POSTERN_TEST_WORKERS
. "$top_srcdir/tests/integration/proxy-decider-load.sh"
