#!/bin/sh
# proxy-sessions-workers: proxy-sessions.sh with workers = 2 (worker.h): a
# session ended closes its connections on every worker.
POSTERN_TEST_WORKERS=2; export POSTERN_TEST_WORKERS
. "$top_srcdir/tests/integration/proxy-sessions.sh"
