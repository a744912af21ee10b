#!/usr/bin/env bash
# Runs the exporter container exactly as deploy/kubernetes renders it, for the base alone and with
# components/lean, components/enforce, components/optics and components/lldp (each a site overlay
# of base + that component, as docs/deployment.md has them; lldp with the site's _lldpd gid patch):
# the image built by tests/checks/deploy/container-image.sh (never pulled), the rendered args, user,
# capabilities, no-new-privileges, read-only root, memory limit and seccomp, its volumeMounts
# (hostPath = a bind mount of a stand-in directory of the "node", configMap = its rendered data,
# read-only), the node's network namespace (hostNetwork) and its initContainers first. podman +
# runc do what kubelet + containerd + runc do (docs/decisions.md "Running the rendered pod without
# a cluster"); tests/checks/k8s/pod_to_podman.py turns the pod spec into podman arguments and
# refuses any field it does not model. Then, per variant:
#  - initContainers exit 0 (enforce: the driver sentinel exists on the node);
#  - the startup/readiness probe's URL answers 200 (/-/ready), the liveness probe's (/-/healthy) too;
#  - the process runs with the uid/gid, supplementary groups and the only capabilities the manifest
#    gives, no new privileges, a read-only root, and exactly the manifest's writable mounts;
#  - no API token reaches the exporter (kubelet's automatic token mount is modelled: a manifest
#    that leaves automountServiceAccountToken on would put one at its path);
#  - enforce: the lock is held on the node's /var/lib/roce-qos-exporter (flock -n fails there), a
#    second instance started the same way reports roce_qos_remediation_enforce_held_elsewhere 1,
#    the state file appears in the node's /var/lib/roce-qos-exporter, and the lock is free once
#    the first stops;
#  - lldp: Debian's lldpd runs on the "node" (its network namespace, its /run the node tree's, so
#    the socket is bound at /run/lldpd.socket as on a node) and the exporter reads it; lldpd stopped
#    for good reads lldpd_not_running and leaves /-/healthy 200 (no restart loop over lldpd); lldpd
#    started again reads lldpd_socket_stale and fails /-/healthy; the container restarted as the
#    kubelet does after a failed liveness probe (the same container stopped and started: runc binds
#    the path anew) reads the new lldpd and is healthy;
#  - each exits 0 on SIGTERM within terminationGracePeriodSeconds.
# The "node" is a directory tree and a fresh network namespace per instance, so nothing on this
# host is written and no port of another test is taken. A mount under /sys whose directory this
# kernel lacks (/sys/kernel/config without configfs) cannot be made inside the runtime's read-only
# sysfs: it is left out and named in a NOTE line, never silently.
# ROCEQOS_K8S_DIR=DIR runs another deploy/kubernetes tree (e.g. an older one). IMAGE_CACHE: where
# container-image.sh left the image (default build/container). SKIP_CONTAINER_IMAGE=1 skips it.
set -euo pipefail
source "$(dirname "$0")/../../common.bash"
source "$(dirname "$0")/../lib/npm.bash"
source "$(dirname "$0")/../lib/kubectl.bash"

if [[ "${SKIP_CONTAINER_IMAGE:-0}" == 1 ]]; then
  echo "kubernetes-container: SKIPPED (SKIP_CONTAINER_IMAGE=1): no image to run" >&2
  exit 0
fi

k8s_dir=${ROCEQOS_K8S_DIR:-$root/deploy/kubernetes}
cache=${ROCEQOS_CACHE_DIR:-$root/.cache}
image_cache=${IMAGE_CACHE:-$root/build/container}
version=$(sed -n 's/^project(roce_qos_exporter VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
manifest_image=roce-qos-exporter:$version
# KUBERNETES_CONTAINER_IMAGE: another image of that storage (a quick build while iterating).
local_image=${KUBERNETES_CONTAINER_IMAGE:-localhost/roce-qos-exporter:$version}
# A bounded wait for the first sample and for each stop; the exporter needs about a second.
ready_timeout=${KUBERNETES_CONTAINER_READY_TIMEOUT:-60}
work=$(mktemp -d)
containers=()
namespaces=()
lldpd_pid=""

# podman on the storage buildah built the image into. runc, the runtime containerd uses by
# default (crun cannot run here: it refuses a hybrid cgroup v1/v2 host); cgroupfs, as no systemd
# runs; the events log and libpod's state beside the storage, so other users of podman on this
# host are not touched.
pm() {
  podman --root "$image_cache/storage" --runroot "$image_cache/run" \
    --storage-driver "$(cat "$image_cache/storage-driver")" --cgroup-manager cgroupfs \
    --runtime runc --events-backend file --tmpdir "$image_cache/run/libpod" "$@"
}
cleanup() {
  local c n
  [[ -z "$lldpd_pid" ]] || { kill "$lldpd_pid" 2>/dev/null; wait "$lldpd_pid" 2>/dev/null; } || true
  for c in "${containers[@]}"; do pm rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  for n in "${namespaces[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

for tool in podman runc; do
  command -v "$tool" >/dev/null || { fail "$tool missing (scripts/install-deps)"; finish kubernetes-container; }
done
if ! [[ -s "$image_cache/storage-driver" ]] || ! pm image exists "$local_image" 2>/dev/null; then
  fail "no image $local_image under $image_cache: run tests/checks/deploy/container-image.sh first (it builds it)"
  finish kubernetes-container
fi
ensure_kubectl "$cache" || { fail "no kubectl v1.33.9 (see above)"; finish kubernetes-container; }
image_user=$(pm image inspect --format '{{.Config.User}}' "$local_image")
# The runtime's default rlimits are the node's; podman's (1048576 open files) are above what this
# host allows without CAP_SYS_RESOURCE, so the container gets this shell's hard limits.
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
[[ "$nproc" == unlimited || "$nproc" -gt 32768 ]] && nproc=32768

# new_netns: sets `netns` to a fresh network namespace with loopback up, the stand-in for the
# node's (hostNetwork). Not $(...): the list of namespaces to delete must survive the call.
new_netns() {
  netns=roceqos-k8s-$$-${#namespaces[@]}
  ip netns add "$netns"
  namespaces+=("$netns")
  ip -n "$netns" link set lo up
}

# start PLAN JQ_PATH NAME NETNS [podman run options]: starts the planned container detached.
start() {
  local plan=$1 path=$2 name=$3 ns=$4
  shift 4
  local -a run_args
  mapfile -t run_args < <(jq -r "$path.run[]" "$plan")
  containers+=("$name")
  pm run -d --name "$name" --network "ns:/run/netns/$ns" --uts host --pids-limit -1 \
    --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" "$@" "${run_args[@]}" \
    >"$work/$name.id" 2>"$work/$name.err"
}
# running NAME: the container's process still runs (its pid, looked up once: podman is slow).
declare -A pids=()
running() {
  [[ -n "${pids[$1]:-}" ]] || pids[$1]=$(pm inspect --format '{{.State.Pid}}' "$1" 2>/dev/null || echo 0)
  [[ "${pids[$1]}" != 0 ]] && kill -0 "${pids[$1]}" 2>/dev/null
}
logs() { pm logs "$1" 2>&1 | tail -n "${2:-8}" | sed 's/^/    /'; }

# http NETNS URL: the status code of a GET, as a kubelet probe on the node's loopback would see it.
http() { ip netns exec "$1" curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$2" || true; }
probe_url() { jq -r "$2.probes.$3 | \"\(.scheme)://\(.host):\(.port)\(.path)\"" "$1"; }

# wait_status NAME NETNS URL CODE: polls URL until it answers CODE, the container exits, or
# ready_timeout passes.
wait_status() {
  local name=$1 ns=$2 url=$3 want=$4 got="" deadline=$((SECONDS + ready_timeout))
  while ((SECONDS < deadline)); do
    got=$(http "$ns" "$url")
    [[ "$got" == "$want" ]] && return 0
    running "$name" || break
    sleep 0.2
  done
  echo "last answer ${got:-none}; container $(pm inspect --format '{{.State.Status}} (exit {{.State.ExitCode}})' "$name" 2>/dev/null)"
  return 1
}

# stop NAME GRACE: SIGTERM, as kubelet does, then the exit code within the grace period.
stop() {
  local name=$1 grace=$2 code
  pm stop -t "$grace" "$name" >/dev/null 2>&1 || true
  code=$(pm inspect --format '{{.State.ExitCode}}' "$name")
  [[ "$code" == 0 ]] && pass "$name: exits 0 on SIGTERM" ||
    { fail "$name: exit $code after SIGTERM"; logs "$name"; }
}

# check_process VARIANT NAME PLAN JQ_PATH: identity, capabilities and mounts of the running process.
check_process() {
  local variant=$1 name=$2 plan=$3 path=$4 pid uid gid caps want_caps nnp root_opts rw want_rw
  running "$name" || { fail "$variant: the exporter is not running"; return; }
  pid=${pids[$name]}
  uid=$(jq -r "$path.uid" "$plan")
  gid=$(jq -r "$path.gid" "$plan")
  [[ "$(awk '/^Uid:/ {print $2,$3,$4,$5}' "/proc/$pid/status")" == "$uid $uid $uid $uid" &&
    "$(awk '/^Gid:/ {print $2,$3,$4,$5}' "/proc/$pid/status")" == "$gid $gid $gid $gid" ]] &&
    pass "$variant: the exporter runs as uid $uid gid $gid" ||
    fail "$variant: the exporter runs as $(grep -E '^(Uid|Gid):' "/proc/$pid/status" | paste -sd' '), expected $uid:$gid"
  local groups want_groups
  groups=$(awk '/^Groups:/ {for (i = 2; i <= NF; i++) print $i}' "/proc/$pid/status" | sort -n | paste -sd' ')
  # The runtime lists the primary gid among the supplementary groups, as containerd does.
  want_groups=$(jq -r "[$path.gid] + $path.groups | unique | map(tostring) | join(\" \")" "$plan")
  [[ "$groups" == "$want_groups" ]] && pass "$variant: supplementary groups exactly: ${want_groups:-none}" ||
    fail "$variant: supplementary groups '$groups', the manifest has '$want_groups'"
  caps=$(cap_names "$(awk '/^CapEff:/ {print $2}' "/proc/$pid/status")")
  want_caps=$(jq -r "$path.caps | sort | join(\",\")" "$plan")
  [[ "$caps" == "$want_caps" ]] && pass "$variant: effective capabilities exactly: ${want_caps:-none}" ||
    fail "$variant: effective capabilities '$caps', the manifest adds '$want_caps'"
  nnp=$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$pid/status")
  [[ "$nnp" == 1 ]] && pass "$variant: no new privileges" || fail "$variant: NoNewPrivs $nnp"
  root_opts=$(awk '$5 == "/" {print $6}' "/proc/$pid/mountinfo")
  [[ "$root_opts" == ro,* ]] && pass "$variant: root filesystem read-only" || fail "$variant: root mounted $root_opts"
  # Writable mounts outside the kernel's pseudo filesystems (/dev, /proc, the cgroup tmpfs): what
  # the container can change, which must be exactly what the manifest mounts read-write.
  rw=$(awk '$6 ~ /^rw/ && $5 !~ /^\/(dev|proc)(\/|$)/ && $5 !~ /^\/sys\/fs\/cgroup/ {print $5}' \
    "/proc/$pid/mountinfo" | sort | paste -sd' ')
  want_rw=$(jq -r "$path.writable_mounts | sort | join(\" \")" "$plan")
  [[ "$rw" == "$want_rw" ]] && pass "$variant: writable mounts exactly: ${want_rw:-none}" ||
    fail "$variant: writable mounts '$rw', the manifest has '$want_rw'"
  # Only kube-rbac-proxy talks to the API server; the exporter must not hold a token.
  local token
  token=$(awk '$5 ~ /secrets\/kubernetes\.io\/serviceaccount/ {print $5}' "/proc/$pid/mountinfo")
  [[ -z "$token" && "$(jq -r .token_automount "$plan")" == false ]] &&
    pass "$variant: no service account token in the exporter" ||
    fail "$variant: the exporter has a service account token (${token:-automount on})"
}

# cap_names HEX: the capability names of a /proc/PID/status mask, sorted, comma-separated
# (numbers as in linux/capability.h).
cap_names() {
  python3 - "$1" <<'PY'
import sys
names = """CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP
LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE
SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME
SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG
WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE""".split()
mask = int(sys.argv[1], 16)
print(",".join(sorted(n if n else str(b) for b, n in
                      ((b, names[b] if b < len(names) else None) for b in range(64)) if mask >> b & 1)))
PY
}

metric() { ip netns exec "$1" curl -sf --max-time 2 "$2" | awk -v m="$3" '$1 == m {print $2}'; }

run_variant() {
  local variant=$1 dir=$2 node=$work/node-$1 plan=$work/$1.plan.json ns name url_ready url_healthy grace
  if ! "$kubectl" kustomize "$dir" >"$work/$variant.yaml" 2>"$work/$variant.err"; then
    fail "$variant: kustomize: $(cat "$work/$variant.err")"
    return
  fi
  # The node: what a ConnectX node running the NVIDIA driver container has at the hostPaths the
  # manifests name with type Directory or File. DirectoryOrCreate paths are left for "kubelet".
  mkdir -p "$node"/{sys/devices,sys/kernel/config,run/mellanox/drivers,proc/sys/net/ipv4}
  : >"$node/run/mellanox/drivers/.driver-ready"
  echo 1 >"$node/proc/sys/net/ipv4/tcp_ecn"
  ns=""
  if [[ "$variant" == lldp ]]; then
    # lldpd before the pod: kubelet checks the hostPath's type Socket when the pod starts.
    new_netns
    ns=$netns
    start_node_lldpd "$node" "$ns" || return
  fi
  if ! python3 "$root/tests/checks/k8s/pod_to_podman.py" "$work/$variant.yaml" --host-root "$node" \
    --work "$work/$variant" --image-map "$manifest_image=$local_image" --image-user "$image_user" \
    --host-sysfs /sys >"$plan" 2>"$work/$variant.plan.err"; then
    fail "$variant: $(cat "$work/$variant.plan.err")"
    return
  fi
  [[ "$(jq -r '[.containers[].name] | join(" ")' "$plan")" == exporter ]] &&
    pass "$variant: runs the exporter container (skipped, image not built here: $(jq -r '.skipped | join(" ")' "$plan"))" ||
    { fail "$variant: expected one exporter container in $plan"; return; }
  [[ "$(jq -r .host_network "$plan")" == true ]] || fail "$variant: the pod is not on the host network"
  grace=$(jq -r .grace_seconds "$plan")
  local dropped
  dropped=$(jq -r '.containers[0].dropped_mounts[]?' "$plan")
  [[ -z "$dropped" ]] || echo "NOTE: $variant: not mounted on this host: $dropped" >&2
  if [[ -z "$ns" ]]; then
    new_netns
    ns=$netns
  fi

  local i n_init init
  n_init=$(jq '.init | length' "$plan")
  for ((i = 0; i < n_init; i++)); do
    init=$(jq -r ".init[$i].name" "$plan")
    name=$variant-$init-$$
    if ! start "$plan" ".init[$i]" "$name" "$ns"; then
      fail "$variant: initContainer $init did not start: $(tail -3 "$work/$name.err")"
      return
    fi
    local deadline=$((SECONDS + ready_timeout))
    while running "$name" && ((SECONDS < deadline)); do sleep 0.2; done
    if ! running "$name" && [[ "$(pm inspect --format '{{.State.ExitCode}}' "$name")" == 0 ]]; then
      pass "$variant: initContainer $init exits 0"
    else
      fail "$variant: initContainer $init did not exit 0 within ${ready_timeout}s"
      logs "$name"
      return
    fi
  done

  name=$variant-exporter-$$
  if ! start "$plan" ".containers[0]" "$name" "$ns"; then
    fail "$variant: the exporter container did not start: $(tail -3 "$work/$name.err")"
    return
  fi
  url_ready=$(probe_url "$plan" ".containers[0]" readiness)
  url_healthy=$(probe_url "$plan" ".containers[0]" liveness)
  [[ "$(probe_url "$plan" ".containers[0]" startup)" == "$url_ready" ]] ||
    fail "$variant: startupProbe and readinessProbe differ"
  local why
  if why=$(wait_status "$name" "$ns" "$url_ready" 200); then
    pass "$variant: ready (readiness probe $url_ready 200)"
  else
    fail "$variant: never ready at $url_ready: $why"
    logs "$name" 12
    return
  fi
  [[ "$(http "$ns" "$url_healthy")" == 200 ]] && pass "$variant: live (liveness probe $url_healthy 200)" ||
    fail "$variant: $url_healthy answers $(http "$ns" "$url_healthy")"
  check_process "$variant" "$name" "$plan" ".containers[0]"

  if [[ "$variant" == enforce ]]; then
    check_enforce "$plan" "$node" "$name" "$ns" "${url_ready%/-/ready}/metrics" "$grace"
  elif [[ "$variant" == lldp ]]; then
    check_lldpd_restart "$node" "$name" "$ns" "${url_ready%/-/ready}/metrics" "$url_healthy"
    stop "$name" "$grace"
  else
    stop "$name" "$grace"
  fi
}

# check_enforce PLAN NODE NAME NETNS METRICS_URL GRACE: the lock and the state live on the node.
check_enforce() {
  local plan=$1 node=$2 first=$3 ns=$4 metrics=$5 grace=$6 lock state second ns2 held why
  lock=$node/var/lib/roce-qos-exporter/enforce.lock
  state=$node/var/lib/roce-qos-exporter/remediation.json
  [[ "$(metric "$ns" "$metrics" 'roce_qos_remediation_mode{mode="enforce"}')" == 1 ]] &&
    pass "enforce: the first instance enforces (roce_qos_remediation_mode{mode=\"enforce\"} 1)" ||
    fail "enforce: the first instance does not enforce: $(ip netns exec "$ns" curl -sf "$metrics" | grep '^roce_qos_remediation_mode')"
  if [[ -e "$lock" ]] && ! flock -n "$lock" true; then
    pass "enforce: the lock is held on the node (flock -n ${lock#"$node"} fails)"
  else
    fail "enforce: no held lock at the node's ${lock#"$node"}"
  fi
  # Enforce writes its state file at start (an unwritable directory suspends enforce): on the
  # node's directory, so a pod restart keeps every device's attempts and give-up.
  if [[ -s "$state" ]] && grep -q '"version": 3' "$state"; then
    pass "enforce: the state file is on the node (${state#"$node"}, $(stat -c %s "$state") bytes)"
  else
    fail "enforce: no state file at the node's ${state#"$node"}"
  fi

  # A second instance started the same way: another pod of the node, or the host unit.
  new_netns
  ns2=$netns
  second=enforce-exporter-2-$$
  if ! start "$plan" ".containers[0]" "$second" "$ns2"; then
    fail "enforce: the second instance did not start: $(tail -3 "$work/$second.err")"
    return
  fi
  if why=$(wait_status "$second" "$ns2" "${metrics%/metrics}/-/ready" 200); then
    held=$(metric "$ns2" "$metrics" roce_qos_remediation_enforce_held_elsewhere)
    [[ "$held" == 1 ]] && pass "enforce: a second instance observes (roce_qos_remediation_enforce_held_elsewhere 1)" ||
      fail "enforce: the second instance reports roce_qos_remediation_enforce_held_elsewhere '${held:-absent}'"
  else
    fail "enforce: the second instance never became ready: $why"
    logs "$second"
  fi
  stop "$second" "$grace"
  stop "$first" "$grace"
  flock -n "$lock" true && pass "enforce: the lock is free once the enforcer stopped" ||
    fail "enforce: the lock is still held after both instances stopped"
}

# start_node_lldpd NODE NETNS: Debian's lldpd in the node's network namespace, in a mount namespace
# whose /run is the node tree's run/, so it binds its control socket at /run/lldpd.socket (the
# path /proc/net/unix shows, as on a node) and privilege-separates into /run/lldpd. -r: it sends
# nothing. Sets lldpd_pid (ip netns exec, unshare and sh exec: $! is lldpd itself).
start_node_lldpd() {
  local node=$1 ns=$2
  mkdir -p "$node/run/lldpd"
  ip netns exec "$ns" unshare --mount --propagation private sh -c \
    'mount --bind "$1" /run && exec lldpd -d -r -u /run/lldpd.socket' sh "$node/run" \
    >>"$work/lldpd.log" 2>&1 &
  lldpd_pid=$!
  wait_for 20 "lldpd's socket on the node" test -S "$node/run/lldpd.socket" ||
    { fail "lldp: lldpd did not start: $(tail -3 "$work/lldpd.log")"; return 1; }
}
# stop_node_lldpd: SIGTERM, as systemctl stop does; lldpd unlinks its socket on the way out.
stop_node_lldpd() {
  kill "$lldpd_pid" 2>/dev/null || true
  wait "$lldpd_pid" 2>/dev/null || true
  lldpd_pid=""
}

# lldp_errors NETNS METRICS_URL REASON: roce_exporter_lldp_query_errors_total of that reason.
lldp_errors() { metric "$1" "$2" "roce_exporter_lldp_query_errors_total{reason=\"$3\"}"; }
# lldp_read NETNS METRICS_URL: the exporter has queried lldpd and every query was answered.
lldp_read() {
  local queries
  queries=$(metric "$1" "$2" roce_exporter_lldp_queries_total)
  [[ "${queries:-0}" -ge 1 ]] || return 1
  ip netns exec "$1" curl -sf --max-time 2 "$2" |
    awk '/^roce_exporter_lldp_query_errors_total\{reason="(lldpd|permission)/ && $2 != 0 {bad = 1}
         END {exit bad}'
}
# lldp_rises NETNS METRICS_URL REASON: waits (one --lldp.interval, 10 s, at most 25 s) until the
# count of REASON rises above what it is now.
lldp_rises() {
  local before
  before=$(lldp_errors "$1" "$2" "$3")
  wait_for 25 "a round with reason $3" lldp_above "$1" "$2" "$3" "${before:-0}"
}
lldp_above() {
  local n
  n=$(lldp_errors "$1" "$2" "$3")
  ((${n:-0} > $4))
}

# check_lldpd_restart NODE NAME NETNS METRICS_URL HEALTHY_URL: the exporter reads the node's
# lldpd; stopped for good it is not_running and healthy; restarted it is stale and unhealthy until
# the container is restarted the kubelet's way, which then reads the new lldpd.
check_lldpd_restart() {
  local node=$1 name=$2 ns=$3 metrics=$4 healthy=$5 started=$SECONDS why
  if wait_for 25 "a first answered lldpd query" lldp_read "$ns" "$metrics"; then
    pass "lldp: the exporter reads the node's lldpd through the mounted socket (as uid 65534, group _lldpd)"
  else
    fail "lldp: the exporter does not read lldpd: $(ip netns exec "$ns" curl -sf "$metrics" | grep '^roce_exporter_lldp')"
    logs "$name"
    return
  fi
  stop_node_lldpd
  [[ ! -e "$node/run/lldpd.socket" ]] && pass "lldp: lldpd stopped unlinks its socket on the node" ||
    fail "lldp: lldpd left $(stat -c %F "$node/run/lldpd.socket") at its socket path"
  if lldp_rises "$ns" "$metrics" lldpd_not_running; then
    [[ "$(http "$ns" "$healthy")" == 200 ]] &&
      pass "lldp: lldpd stopped for good reads lldpd_not_running and /-/healthy stays 200" ||
      fail "lldp: lldpd stopped for good fails $healthy: a restart could not reach lldpd"
  else
    fail "lldp: lldpd stopped: no round with reason lldpd_not_running"
  fi
  start_node_lldpd "$node" "$ns" || return
  if lldp_rises "$ns" "$metrics" lldpd_socket_stale; then
    pass "lldp: lldpd restarted: the exporter reads lldpd_socket_stale"
  else
    fail "lldp: lldpd restarted: no round with reason lldpd_socket_stale: $(ip netns exec "$ns" curl -sf "$metrics" | grep '^roce_exporter_lldp_query_errors')"
  fi
  [[ "$(http "$ns" "$healthy")" == 503 ]] &&
    pass "lldp: /-/healthy fails while the socket is stale ($(ip netns exec "$ns" curl -s --max-time 2 "$healthy" | cut -c1-60)...)" ||
    fail "lldp: $healthy answers $(http "$ns" "$healthy") while the socket is stale"
  # What the kubelet does once the liveness probe failed: the same container, stopped and started.
  pm restart -t 5 "$name" >/dev/null 2>"$work/$name.restart.err" ||
    { fail "lldp: podman restart: $(tail -3 "$work/$name.restart.err")"; return; }
  pids[$name]=""
  if why=$(wait_status "$name" "$ns" "$healthy" 200) &&
    wait_for 25 "an answered lldpd query after the restart" lldp_read "$ns" "$metrics"; then
    pass "lldp: the restarted container reads the new lldpd and is healthy ($((SECONDS - started)) s for the lldpd sequence)"
  else
    fail "lldp: after the restart: ${why:-lldpd not read}"
    logs "$name"
  fi
}

# Each variant is a site overlay of base + one component, with deploy/ linked beside it as a
# site repository has it (kustomize refuses absolute paths to bases and components).
ln -s "$(cd "$k8s_dir/../.." && pwd)/deploy" "$work/deploy"
lldpd_gid=$(getent group _lldpd | cut -d: -f3 || true)
variants=(base lean enforce optics)
if command -v lldpd >/dev/null && [[ -n "$lldpd_gid" ]]; then
  variants+=(lldp)
else
  fail "lldp: no lldpd or no group _lldpd here (scripts/install-deps installs lldpd)"
fi
for variant in "${variants[@]}"; do
  started=$SECONDS
  mkdir -p "$work/site-$variant"
  {
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n'
    printf 'resources:\n- ../deploy/kubernetes/base\n'
    [[ "$variant" == base ]] || printf 'components:\n- ../deploy/kubernetes/components/%s\n' "$variant"
    # The site's one-line patch of examples/site: the gid of _lldpd on this "node".
    [[ "$variant" != lldp ]] || printf 'patches:\n- target: {kind: DaemonSet, name: roce-qos-exporter}\n  patch: |-\n    - {op: replace, path: /spec/template/spec/securityContext/supplementalGroups, value: [%s]}\n' "$lldpd_gid"
  } >"$work/site-$variant/kustomization.yaml"
  run_variant "$variant" "$work/site-$variant"
  echo "kubernetes-container: $variant took $((SECONDS - started)) s"
done
finish kubernetes-container
