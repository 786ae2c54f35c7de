#!/bin/sh
# tests/docs/man.sh: each man page renders without a groff warning
# (a stray byte, an unknown macro or escape), line filling aside.
: "${top_srcdir:=.}"
command -v groff >/dev/null 2>&1 || { echo "# no groff: skipping"; exit 77; }
rc=0 n=0
for page in proxy/postern-proxy.8 conf/postern.ini.5 bridge/postern-bridge.8 \
    sidecar/postern-sidecar.8; do
	n=$((n + 1))
	out=$(groff -man -ww -z "$top_srcdir/$page" 2>&1 |
	    grep -v -e "cannot adjust line" -e "can't break line")
	if [ -z "$out" ]; then
		echo "ok $n - $page renders cleanly"
	else
		echo "not ok $n - $page: groff says"
		printf '%s\n' "$out" | sed 's/^/#   /'
		rc=1
	fi
done
echo "1..$n"
exit $rc
