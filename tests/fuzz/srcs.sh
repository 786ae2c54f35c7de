#!/bin/sh
# tests/fuzz/srcs.sh: every fuzz target's fuzz-NAME.srcs still names all
# the files it needs.  "make fuzz" builds from those lists with clang; a
# file a target comes to need would only show there.  This links each
# target's replay objects with the objects of the files its list names
# (and the base library), as already built, and fails naming the target
# and the symbols left undefined.
: "${top_srcdir:=.}" "${top_builddir:=.}"
cc=${POSTERN_CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "# no $cc: skipping"; exit 77; }
command -v pkg-config >/dev/null 2>&1 || { echo "# no pkg-config: skipping"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
# obj FILE.c: the object the build made of FILE.c (automake prefixes a
# library's objects with its name).
obj() {
	d=${1%/*}
	b=${1##*/}
	b=${b%.c}
	for o in "$top_builddir/$d/$b.o" "$top_builddir/$d"/*-"$b".o; do
		[ -e "$o" ] && { echo "$o"; return 0; }
	done
	return 1
}
for srcs in "$top_srcdir"/tests/fuzz/fuzz-*.srcs; do
	t=${srcs##*/fuzz-}
	t=${t%.srcs}
	u=$(echo "$t" | tr - _)
	n=$((n + 1))
	objs="$top_builddir/tests/fuzz/${u}_replay-fuzz-$t.o $top_builddir/tests/fuzz/${u}_replay-replay.o"
	missing=""
	for s in $(sed -n 1p "$srcs"); do
		o=$(obj "$s") && objs="$objs $o" || missing="$missing $s"
	done
	for o in "$top_builddir"/base/*.o; do
		case " $objs " in *" $o "*) ;; *) objs="$objs $o" ;; esac
	done
	for o in $objs; do
		[ -e "$o" ] || missing="$missing $o"
	done
	if [ -n "$missing" ]; then
		echo "not ok $n - $t: not built:$missing"
		bad=$((bad + 1))
		continue
	fi
	pkgs=$(sed -n 2p "$srcs")
	# shellcheck disable=SC2086
	if "$cc" ${POSTERN_LDFLAGS:-} -o "$tmp/$t" $objs \
	    $( [ -n "$pkgs" ] && pkg-config --libs $pkgs ) >"$tmp/$t.log" 2>&1; then
		echo "ok $n - $t: its .srcs list links"
	else
		echo "not ok $n - $t: fuzz-$t.srcs misses the file of:"
		grep -o "undefined reference to \`[^']*'" "$tmp/$t.log" | sort -u | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
done
echo "1..$n"
[ "$bad" -eq 0 ]
