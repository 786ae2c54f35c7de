#!/bin/sh
# proxy-smuggling: every request-smuggling and malformed-head form is a 400
# (431 for the limits) with Connection: close, and nothing reaches upstream;
# the proxy keeps serving.  Includes llhttp's CVE-2023-30589 (bare CR) and
# CVE-2024-27982 (space before a header's colon) forms.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-proxy/proxy.sh"

conf=$(proxy_conf "[defaults]" "allow_hosts = allowed.test private")
proxy_start "$conf" || die "no proxy"

R='GET http://allowed.test/smuggle HTTP/1.1\r\nHost: allowed.test\r\n'
check() {
	local want=$1 what=$2 req=$3 out
	out=$(printf "$req" | raw 127.0.0.1 3128 --timeout 3)
	expect_eq "$want" "$(status_of "$out")" "$what: $want"
	case $want in 4*)
		expect_match "^Connection: close" "$out" "$what: Connection: close" ;;
	esac
}
check 400 "Content-Length with Transfer-Encoding" "${R}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
check 400 "two equal Content-Length" "${R}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello"
check 400 "two different Content-Length" "${R}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"
check 400 "Content-Length list" "${R}Content-Length: 5, 5\r\n\r\nhello"
check 400 "Content-Length with a sign" "${R}Content-Length: +5\r\n\r\nhello"
check 400 "Content-Length in hex" "${R}Content-Length: 0x5\r\n\r\nhello"
check 400 "Content-Length overflow" "${R}Content-Length: 99999999999999999999999\r\n\r\n"
check 400 "Transfer-Encoding chunked twice" "${R}Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"
check 400 "Transfer-Encoding gzip, chunked" "${R}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
check 400 "Transfer-Encoding identity" "${R}Transfer-Encoding: identity\r\n\r\n"
check 400 "Transfer-Encoding xchunked" "${R}Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"
check 400 "two Transfer-Encoding lines" "${R}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
check 400 "obs-fold" "${R}X-A: a\r\n b\r\n\r\n"
check 400 "space before the colon (CVE-2024-27982)" "${R}Content-Length : 5\r\n\r\nhello"
check 400 "tab before the colon" "${R}X-A\t: b\r\n\r\n"
check 400 "bare LF line ends" 'GET http://allowed.test/smuggle HTTP/1.1\nHost: allowed.test\n\n'
check 400 "bare CR in a header (CVE-2023-30589)" "${R}X-A: a\rTransfer-Encoding: chunked\r\n\r\n"
check 400 "NUL in a header value" "${R}X-A: a\000b\r\n\r\n"
check 400 "control byte in a header value" "${R}X-A: a\001b\r\n\r\n"
check 400 "two Host headers" "${R}Host: allowed.test\r\n\r\n"
check 400 "no Host on HTTP/1.1" 'GET http://allowed.test/smuggle HTTP/1.1\r\n\r\n'
check 400 "space in the request target" 'GET http://allowed.test/a b HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
check 400 "two spaces in the request line" 'GET  http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
check 400 "HTTP/2.0 request line" 'GET http://allowed.test/ HTTP/2.0\r\nHost: allowed.test\r\n\r\n'
check 400 "https in absolute form" 'GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
check 400 "userinfo in the URI" 'GET http://u:p@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
check 400 "chunk size overflow" "${R}Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\nx\r\n0\r\n\r\n"
check 400 "chunk size with a sign" "${R}Transfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n"
check 400 "CONNECT without a port" 'CONNECT allowed.test HTTP/1.1\r\nHost: allowed.test\r\n\r\n'
check 400 "CONNECT with a body" 'CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\nContent-Length: 3\r\n\r\nabc'
many=""
i=0
while [ $i -lt 101 ]; do many="${many}X-H$i: v\\r\\n"; i=$((i + 1)); done
check 431 "101 header lines" "${R}${many}\r\n"
big=$(head -c 33000 /dev/zero | tr '\0' 'a')
check 431 "a head over 32 KiB" "${R}X-Big: ${big}\r\n\r\n"
expect_eq 0 "$(upstream_count target=/smuggle)" "none of them reached upstream"
expect_audit "refusals are logged as bad_request" reason=bad_request
out=$(curl_px -x http://127.0.0.1:3128 http://allowed.test/after)
expect_match "^GET /after HTTP/1.1" "$out" "the proxy keeps serving after all of them"
proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
