#!/bin/sh
# reload-configmap: a Kubernetes ConfigMap volume update is picked up
# within a second.  The kubelet's layout: the file is a symlink
# postern.ini -> ..data/postern.ini, ..data is a symlink to a timestamped
# directory, and an update writes a new directory, points a new symlink
# ..data_tmp at it and renames that over ..data; the file's own entry never
# changes.  Unrelated changes in the directory reload nothing.
. "$top_srcdir/tests/integration/lib/world.sh"
world_up
. "$top_srcdir/tests/integration/lib-admin/admin.sh"

vol="$WORLD_DIR/configmap"
conf="$vol/postern.ini"
mkdir -p "$vol"
# rules VERSION ALLOW...: the content of one ConfigMap version.
rules() {
	v=$1
	shift
	echo "; a ConfigMap volume"
	admin_proxy_section "[defaults]"
	for h in "$@"; do
		echo "allow_hosts = $h private"
	done
}
# publish VERSION ALLOW...: what the kubelet does for an update (atomic
# writer: new directory, new ..data_tmp symlink, rename over ..data, old
# directory removed).
publish() {
	local v old
	v=$1
	old=$(readlink "$vol/..data" 2>/dev/null)
	mkdir "$vol/..2026_$v"
	rules "$@" >"$vol/..2026_$v/postern.ini"
	ln -s "..2026_$v" "$vol/..data_tmp"
	mv -T "$vol/..data_tmp" "$vol/..data"
	[ -n "$old" ] && rm -rf "${vol:?}/$old"
	[ -L "$conf" ] || ln -s ..data/postern.ini "$conf"
}

publish 1 allowed.test
proxy_start "$conf" || die "no proxy"
admin_wait || die "no admin socket"
px() { curl_status -x http://127.0.0.1:3128 "$@"; }
expect_eq 200 "$(px https://allowed.test/)" "version 1: allowed.test allowed"
expect_eq 403 "$(px https://other.test/)" "version 1: other.test refused"
expect_eq "$conf" "$(status_get 's["config"]["path"]')" "the proxy reads the path it was given"

publish 2 allowed.test other.test
ms=$(wait_generation 2 1)
expect_eq 0 $? "version 2 is in force after $ms ms"
expect_eq "$(sha12 "$conf")" "$(status_get 's["config"]["hash"]')" "with version 2's hash"
expect_eq 200 "$(px https://other.test/)" "version 2: other.test allowed"
expect_audit "the decision names generation 2" host=other.test decision=allow generation=2

publish 3 other.test
ms=$(wait_generation 3 1)
expect_eq 0 $? "version 3 (a second swap: the watch survives the first) is in force after $ms ms"
expect_eq 403 "$(px https://allowed.test/)" "version 3: allowed.test refused"
expect_eq 200 "$(px https://other.test/)" "version 3: other.test allowed"

# Other entries of the directory come and go; nothing reloads.
touch "$vol/unrelated"
echo x >"$vol/unrelated"
mv "$vol/unrelated" "$vol/unrelated2"
rm -f "$vol/unrelated2"
mkdir "$vol/..2026_junk" && rmdir "$vol/..2026_junk"
sleep 0.6
expect_eq 3 "$(generation)" "unrelated changes in the directory reload nothing"
# The same content published again is no change either.
publish 4 other.test
sleep 0.6
expect_eq 3 "$(generation)" "the same content published again is not a new generation"
expect_eq 2 "$(metrics_get postern_config_reloads_total)" "two reloads taken in all"
expect_eq 0 "$(metrics_get postern_config_reload_failures_total)" "none refused"

proxy_stop
expect_eq 0 $? "the proxy exits cleanly"
