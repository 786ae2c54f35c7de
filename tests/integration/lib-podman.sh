# tests/integration/lib-podman.sh: podman in a store of the test's own.
# podman_store DIR: podman's config, images and containers under DIR
# (nothing in the host's store), events to DIR/events.log; defines
# pm ARGS..., podman on that store (runc when there is one).
podman_store() {
	PD=$1
	cat >"$PD/containers.conf" <<-CONF
		[containers]
		default_ulimits = []
		[engine]
		cgroup_manager = "cgroupfs"
		events_logger = "file"
		events_logfile_path = "$PD/events.log"
	CONF
	export CONTAINERS_CONF="$PD/containers.conf"
	RUNTIME=
	command -v runc >/dev/null 2>&1 && RUNTIME="--runtime runc"
}
# shellcheck disable=SC2086
pm() { podman --root "$PD/root" --runroot "$PD/runroot" --storage-driver vfs $RUNTIME "$@"; }
