#!/bin/sh
# tests/valgrind-proxy.sh: postern-proxy under valgrind's memcheck, for the
# integration scenarios:
#
#   POSTERN_PROXY=$PWD/tests/valgrind-proxy.sh make check TESTS='tests/integration/proxy-http.sh ...'
#
# Any invalid access or definite leak makes the proxy exit 99, which the
# scenarios' "proxy exits cleanly" check reports.  The full report is kept
# next to the audit log of the scenario (valgrind-PID.log in /tmp).
bin=${POSTERN_PROXY_BIN:-${top_builddir:-$(dirname "$0")/..}/postern-proxy}
exec valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
	--track-fds=no --log-file=/tmp/postern-valgrind-%p.log "$bin" "$@"
