# lib-proxy/proxy.sh: helpers for the proxy scenarios, sourced after world.sh.

# raw HOST PORT [raw.py options]: send stdin as raw bytes from px and print
# the answer (see raw.py).
raw() {
	in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/raw.py" "$@"
}

# tls [tlsclient.py options]: a TLS client through the proxy on
# 127.0.0.1:3128 from px, trusting the world's CA (see tlsclient.py).
tls() {
	in_px "$WORLD_PYTHON" "$top_srcdir/tests/integration/lib-proxy/tlsclient.py" 127.0.0.1 3128 \
		--cafile "$WORLD_CA" "$@"
}

# proxy_conf [EXTRA LINES...]: write $WORLD_DIR/postern.ini with a TCP
# listener on 127.0.0.1:3128, the audit log, the world's DNS, then the
# lines given (each argument one line), and print its path.
proxy_conf() {
	local f="$WORLD_DIR/postern.ini"
	{
		echo "[proxy]"
		echo "listen = tcp:127.0.0.1:3128"
		echo "log = $PROXY_LOG"
		echo "dns_servers = $WORLD_DNS"
		[ -z "$POSTERN_TEST_WORKERS" ] || echo "workers = $POSTERN_TEST_WORKERS"
		for l in "$@"; do echo "$l"; done
	} >"$f"
	echo "$f"
}

# status_of TEXT: the status code of the first response line in TEXT.
status_of() {
	printf '%s\n' "$1" | head -1 | tr -d '\r' | sed -n 's/^HTTP\/1\.[01] \([0-9][0-9][0-9]\).*/\1/p'
}

# reason_of TEXT: the X-Postern-Reason of the response in TEXT.
reason_of() {
	printf '%s\n' "$1" | tr -d '\r' | sed -n 's/^X-Postern-Reason: //p' | head -1
}

# proxy_alive: the proxy still answers (a refusal is an answer).
proxy_alive() {
	local out
	out=$(printf 'CONNECT nowhere.invalid:443 HTTP/1.1\r\nHost: nowhere.invalid:443\r\n\r\n' | raw 127.0.0.1 3128 --timeout 3)
	[ "$(status_of "$out")" = 403 ]
}

# wait_ready FILE: wait (10 s at most) until FILE has a line "ready", as
# hold.py writes once its tunnels are open.
wait_ready() {
	local i
	i=0
	while ! grep -q '^ready$' "$1" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# unix_try UID SOCK [GID]: from px, as UID with no other group (or with
# only GID), connect to the UNIX socket SOCK and ask for a tunnel; prints
# the status code, or the errno name of the failure (see unixtry.py).
unix_try() {
	local groups=--clear-groups
	[ -z "${3:-}" ] || groups="--groups=$3"
	# A copy in the world's directory: the source tree may not be
	# readable by UID.
	[ -f "$WORLD_DIR/unixtry.py" ] ||
		cp "$top_srcdir/tests/integration/lib-proxy/unixtry.py" "$WORLD_DIR/unixtry.py"
	in_px setpriv --reuid "$1" --regid "$1" "$groups" "$WORLD_PYTHON" "$WORLD_DIR/unixtry.py" "$2" 2>&1
}
