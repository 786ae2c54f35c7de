#!/bin/sh
# proxy-limits-reload-workers: proxy-limits-reload.sh with workers = 2 (worker.h): the same scenario over two event loops.
POSTERN_TEST_WORKERS=2; export POSTERN_TEST_WORKERS
. "$top_srcdir/tests/integration/proxy-limits-reload.sh"
