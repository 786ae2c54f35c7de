#!/bin/sh
# tests/fuzz/run-fuzz.sh: build each libFuzzer target with clang (ASan +
# UBSan + libFuzzer) and run it for a bounded time over its corpus,
# FUZZ_JOBS targets at once (default: one a CPU).
#
#   run-fuzz.sh [SECONDS] [TARGET...]
#
# Each target is tests/fuzz/fuzz-NAME.c with a companion fuzz-NAME.srcs: the
# first line lists the other source files it needs (relative to the source
# tree; the base library, base/*.c, is always linked), the second the
# pkg-config modules it links.  New findings are
# written to tests/fuzz/findings/NAME/; add each one to the corpus with the
# fix, so that "make check" replays it from then on.
set -eu
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${builddir:-$PWD}
secs=${1:-60}
[ $# -gt 0 ] && shift
cc=${FUZZ_CC:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "run-fuzz: $cc not found (install clang)" >&2; exit 2; }
out="$builddir/tests/fuzz"
mkdir -p "$out"
targets=$*
if [ -z "$targets" ]; then
	for f in "$srcdir"/tests/fuzz/fuzz-*.c; do
		t=${f##*/fuzz-}; targets="$targets ${t%.c}"
	done
fi
# Every source a target names (and the base library) is compiled once,
# with the fuzzer's coverage and the sanitizers, into $out/obj/; each
# target links its own list of them.  The union of the targets' pkg-config
# flags serves every file.
objdir="$out/obj"
mkdir -p "$objdir"
allpkgs=$(for t in $targets; do sed -n 2p "$srcdir/tests/fuzz/fuzz-$t.srcs"; done | tr ' ' '\n' | sort -u | tr '\n' ' ')
# shellcheck disable=SC2086
pkgcflags=$( [ -n "${allpkgs% }" ] && pkg-config --cflags $allpkgs )
CFLAGS_FUZZ="-g -O1 -std=c11 -D_GNU_SOURCE -fno-sanitize-recover=undefined -I$srcdir -I$builddir $pkgcflags"
export cc objdir srcdir CFLAGS_FUZZ
# obj SRC: the object of source SRC (relative to the source tree).
obj() { echo "$objdir/$(echo "$1" | tr / _ | sed 's/\.c$/.o/')"; }
sources=$( { for t in $targets; do sed -n 1p "$srcdir/tests/fuzz/fuzz-$t.srcs"; done
	(cd "$srcdir" && ls base/*.c); } | tr ' ' '\n' | grep . | sort -u)
# shellcheck disable=SC2016
if ! echo "$sources" | xargs -P "${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}" -I{} sh -c '
	o="$objdir/$(echo "{}" | tr / _ | sed "s/\.c\$/.o/")"
	# shellcheck disable=SC2086
	$cc $CFLAGS_FUZZ -fsanitize=fuzzer-no-link,address,undefined -c -o "$o" "$srcdir/{}" 2>"$o.log" ||
		{ cat "$o.log" >&2; exit 255; }'; then
	echo "fuzz: a source file does not build (above)" >&2
	exit 1
fi

# build_and_fuzz T: build target T and fuzz it; its exit status goes to
# $out/T-fuzz.status (2: it did not build; see $out/T-build.log).
build_and_fuzz() {
	t=$1
	srcs=$(sed -n 1p "$srcdir/tests/fuzz/fuzz-$t.srcs")
	pkgs=$(sed -n 2p "$srcdir/tests/fuzz/fuzz-$t.srcs")
	files=""
	for s in $srcs; do files="$files $(obj "$s")"; done
	# Every binary links the whole base library (BASE_LIBS in the
	# Makefile), so every target does too: a base file that starts to
	# use another base file cannot break one target's link.
	for b in "$srcdir"/base/*.c; do
		case " $srcs " in *" base/${b##*/} "*) ;; *) files="$files $(obj "base/${b##*/}")" ;; esac
	done
	# shellcheck disable=SC2086
	if ! "$cc" $CFLAGS_FUZZ -fsanitize=fuzzer,address,undefined \
		-o "$out/$t-fuzzer" "$srcdir/tests/fuzz/fuzz-$t.c" $files \
		$( [ -n "$pkgs" ] && pkg-config --libs $pkgs ) >"$out/$t-build.log" 2>&1; then
		echo 2 >"$out/$t-fuzz.status"
		return
	fi
	work="$out/$t-corpus"
	mkdir -p "$work" "$srcdir/tests/fuzz/findings/$t"
	rc=0
	"$out/$t-fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -artifact_prefix="$srcdir/tests/fuzz/findings/$t/" \
	    "$work" "$srcdir/tests/fuzz/corpus/$t" >"$out/$t-fuzz.log" 2>&1 || rc=$?
	echo "$rc" >"$out/$t-fuzz.status"
}

# report T...: each target's outcome, in order; status=1 for any failure.
report() {
	for t in "$@"; do
		echo "fuzz: $t for ${secs}s"
		case $(cat "$out/$t-fuzz.status" 2>/dev/null) in
		0) tail -1 "$out/$t-fuzz.log" ;;
		2)
			echo "fuzz: $t DOES NOT BUILD:" >&2
			tail -40 "$out/$t-build.log" >&2
			status=1 ;;
		*)
			echo "fuzz: $t FOUND A CRASH: see $out/$t-fuzz.log and tests/fuzz/findings/$t/" >&2
			tail -40 "$out/$t-fuzz.log" >&2
			status=1 ;;
		esac
	done
}

# FUZZ_JOBS targets at a time (default: the CPUs there are; each fuzzer
# is one process on one core), each for SECONDS.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
status=0
batch=""
n=0
for t in $targets; do
	rm -f "$out/$t-fuzz.status"
	build_and_fuzz "$t" &
	batch="$batch $t"
	n=$((n + 1))
	if [ $n -ge "$jobs" ]; then
		wait
		# shellcheck disable=SC2086
		report $batch
		batch=""
		n=0
	fi
done
wait
# shellcheck disable=SC2086
[ -z "$batch" ] || report $batch
exit $status
