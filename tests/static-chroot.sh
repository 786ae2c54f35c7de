#!/bin/sh
# tests/static-chroot.sh [BUILDDIR]: every binary of a --enable-static-binaries
# build is fully static and runs in an empty root (a directory holding only
# the binary, entered with chroot), as in a FROM scratch image.
# Skips (77) when the build is not static or chroot is impossible.
set -u
build=${1:-${top_builddir:-.}}
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: chroot needs root"
	exit 77
fi
status=0 checked=0
for bin in postern-proxy postern-bridge postern-sidecar; do
	b="$build/$bin"
	[ -x "$b" ] || continue
	if ldd "$b" >/dev/null 2>&1; then
		echo "SKIP: $bin is dynamically linked (configure --enable-static-binaries)"
		exit 77
	fi
	if ! LC_ALL=C ldd "$b" 2>&1 | grep -q "not a dynamic executable"; then
		echo "FAIL: ldd does not call $bin static"
		status=1
	fi
	root=$(mktemp -d /tmp/postern-chroot.XXXXXX)
	cp "$b" "$root/$bin"
	[ -n "$(find "$root" -mindepth 1 ! -name "$bin")" ] && { echo "FAIL: root not empty"; status=1; }
	case $bin in
	postern-proxy)
		# The built-in default, validated with no file and no NSS.
		out=$(chroot "$root" "/$bin" --check 2>&1) && echo "$out" | grep -q "<built-in>: ok" ||
			{ echo "FAIL: $bin --check in an empty root: $out"; status=1; }
		out=$(chroot "$root" "/$bin" --explain api.anthropic.com:443 2>&1) &&
			echo "$out" | head -1 | grep -q "^allow api.anthropic.com" ||
			{ echo "FAIL: $bin --explain in an empty root: $out"; status=1; }
		;;
	postern-sidecar)
		out=$(chroot "$root" "/$bin" --help 2>&1) ||
			{ echo "FAIL: $bin --help in an empty root: $out"; status=1; }
		;;
	*)
		out=$(chroot "$root" "/$bin" --version 2>&1) ||
			{ echo "FAIL: $bin --version in an empty root: $out"; status=1; }
		;;
	esac
	if [ "$bin" = postern-bridge ]; then
		# Bind-mounted into every sandbox image: small, and no
		# resolver or NSS in it (bridge/nonss.c).
		strip -o "$root/stripped" "$b"
		size=$(stat -c %s "$root/stripped")
		if [ "$size" -gt 1200000 ]; then
			echo "FAIL: $bin is $size bytes stripped, over 1.2 MB"
			status=1
		elif nm "$b" | grep -Eq ' (__nss_[a-z_]*|gaih_inet[a-z_.0-9]*|__res_context_query)$'; then
			echo "FAIL: $bin links glibc's resolver or NSS:" $(nm "$b" | grep -E '__nss_|gaih_inet|__res_context' | head -3)
			status=1
		else
			echo "ok: $bin is $size bytes stripped, with no resolver or NSS"
		fi
	fi
	echo "ok: $bin static ($(stat -c %s "$b") bytes) runs in an empty root: $(echo "$out" | head -1)"
	rm -rf "$root"
	checked=$((checked + 1))
done
if [ $checked -eq 0 ]; then
	echo "FAIL: no binary found in $build"
	exit 1
fi
exit $status
