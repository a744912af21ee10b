#!/bin/bash
# The test inside the systemd guest (tests/systemd/run boots it; roce-systemd-test.service runs
# this once the boot is done). Writes one line per result on /dev/ttyS1, the host's results file:
# "PASS text", "FAIL text", "INFO text", followed by "  | " detail lines, and "DONE <failures>"
# last; then powers the guest off. Every wait polls a real condition with a deadline.
#
# The exporter's two install paths, each under the real systemd (PID 1, cgroup v2 with the pids
# controller, so TasksMax= and MemoryMax= are enforced by the kernel):
#  1. the .deb: apt installs it and its dependencies (from the archive's lists and packages the
#     image holds); the unit is active, /-/ready answers, /metrics has samples of the simulated
#     ConnectX, the task count fits TasksMax= with half of it to spare; restart; upgrade to the
#     package repacked one version higher (restarted, the edited conffile kept and used); the
#     attribution drop-in (Soft-RoCE over sim0, rping in the transient unit nccl-job.service: its
#     QPs are kind="systemd_unit" with the drop-in's ProtectProc=default, the oracle's count from
#     `rdma resource show qp`; kind="unknown" with the unit's ProtectProc=invisible); the
#     lldp drop-in (Debian's lldpd installed and running: permission_denied without the drop-in,
#     with it active, group _lldpd, lldpd's socket reached); enforce drop-in (added to lldp's:
#     active in enforce mode, lock held, state directory, both kept by systemctl stop); remove (stopped, masked, conffile and state kept); purge (all removed);
#  2. the README's "Quick start: systemd": the tree `cmake --install --prefix /usr/local --strip`
#     wrote, the unit and /etc/default file from deploy/systemd/, `systemctl enable --now`:
#     systemd-analyze verify (man page check included) clean, the same checks of the running
#     unit, restart, the enforce drop-in of deploy/systemd/.
set -uo pipefail
exec 3>/dev/ttyS1
P=/payload
# shellcheck source=/dev/null
. "$P/env" # VERSION, DEB, UPGRADE_DEB, DEV_ARGS
unit=roce-qos-exporter.service
url=http://127.0.0.1:9879
failures=0
export DEBIAN_FRONTEND=noninteractive PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Each line carries the seconds since the test began.
pass() { echo "PASS [$(printf '%3d' $SECONDS) s] $*" >&3; }
fail() { echo "FAIL [$(printf '%3d' $SECONDS) s] $*" >&3; failures=$((failures + 1)); }
info() { echo "INFO [$(printf '%3d' $SECONDS) s] $*" >&3; }
detail() { sed 's/^/  | /' >&3; }
# check TEXT CMD...: PASS or FAIL by CMD's exit status.
check() { local text=$1; shift; if "$@"; then pass "$text"; else fail "$text"; fi; }
# wait_until SECONDS CMD...: polls CMD every 0.2 s until it succeeds (0) or the deadline passes (1).
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
prop() { systemctl show -p "$2" --value "$1"; }
journal() { journalctl -b -u "$1" -n "${2:-15}" --no-pager -o cat 2>&1 | detail; }

# wait_active UNIT: 0 once UNIT is active; 1 as soon as it failed or restarted (Restart=on-failure
# would otherwise hide a crash loop behind "activating"), or after 120 s.
wait_active() {
  local deadline=$((SECONDS + 120)) state restarts
  while :; do
    # One systemctl per round: under TCG each costs the guest more than the unit's own start.
    state='' restarts=''
    while IFS='=' read -r key value; do
      case $key in ActiveState) state=$value ;; NRestarts) restarts=$value ;; esac
    done < <(systemctl show -p ActiveState -p NRestarts "$1")
    [[ $state == active ]] && return 0
    if [[ $state == failed || ${restarts:-0} -gt 0 ]] || ((SECONDS >= deadline)); then
      echo "$1: ActiveState=$state SubState=$(prop "$1" SubState) NRestarts=$restarts" \
        "ExecMainStatus=$(prop "$1" ExecMainStatus) Result=$(prop "$1" Result)" | detail
      journal "$1"
      return 1
    fi
    sleep 0.2
  done
}
ready() { curl -sf -o /dev/null "${1:-$url}/-/ready"; }
main_pid() { prop "$unit" MainPID; }

# sim0_metrics: /metrics has samples of the simulated ConnectX (its per-priority packet counters,
# read from ethtool -S as on an mlx5 port); sets samples and families (of sim0's samples).
sim0_metrics() {
  curl -sf "$url/metrics" >/tmp/metrics || return 1
  samples=$(grep -vc '^#' /tmp/metrics)
  families=$(grep -o '^[a-z_]*{netdev="sim0"' /tmp/metrics | sort -u | wc -l)
  grep -q '^roce_prio_packets_total{netdev="sim0",prio="3",direction="rx"} [0-9]' /tmp/metrics
}
# running LABEL: the checks of a freshly started unit, whichever way it was installed.
running() {
  local label=$1 pid tasks max pids_max cg threads
  samples=0
  if ! wait_active "$unit"; then
    fail "$label: $unit did not become active"
    return 1
  fi
  pass "$label: $unit active (Type=notify: READY=1 after the first snapshot), no restart"
  check "$label: /-/ready answers 200" wait_until 10 ready
  # The first snapshot has the counters; the device inventory follows within a few samples.
  if wait_until 20 sim0_metrics; then
    pass "$label: /metrics has $samples samples, of the simulated ConnectX sim0 in $families families"
  else
    fail "$label: /metrics ($samples samples) has no roce_prio_packets_total of sim0"
    grep -v '^#' /tmp/metrics | sed 's/{.*//' | uniq -c | head -20 | detail
  fi
  # The limit is the kernel's: systemd's TasksMax= is the unit cgroup's pids.max, and TasksCurrent
  # (its pids.current) is set only where systemd has the pids controller.
  pid=$(main_pid)
  tasks=$(prop "$unit" TasksCurrent)
  max=$(prop "$unit" TasksMax)
  cg=/sys/fs/cgroup$(prop "$unit" ControlGroup)
  pids_max=$(cat "$cg/pids.max" 2>/dev/null)
  threads=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
  info "$label: TasksCurrent=$tasks TasksMax=$max pids.max=$pids_max threads of the exporter=$threads"
  if [[ $tasks =~ ^[0-9]+$ && $max =~ ^[0-9]+$ && $pids_max == "$max" ]]; then
    pass "$label: TasksMax=$max is enforced (the unit cgroup's pids.max), TasksCurrent=$tasks"
  else
    fail "$label: TasksMax is not enforced: TasksCurrent=$tasks TasksMax=$max pids.max=$pids_max"
  fi
  if [[ $tasks =~ ^[0-9]+$ && $max =~ ^[0-9]+$ ]] && ((tasks * 2 <= max)); then
    pass "$label: $tasks tasks at the defaults leave room: at most half of TasksMax=$max"
  else
    fail "$label: $tasks tasks at the defaults, more than half of TasksMax=$max"
  fi
}

# restarted LABEL OLD_PID [URL]: a new main process, active and ready.
restarted() {
  local pid
  if wait_active "$unit" && pid=$(main_pid) && [[ $pid != 0 && $pid != "$2" ]] &&
    wait_until 10 ready "${3:-$url}"; then
    pass "$1: restarted (main PID $2 -> $pid), active, ready"
  else
    fail "$1: not restarted (main PID $2 -> $(main_pid))"
  fi
}

verify_clean() { # LABEL UNIT_PATH: systemd-analyze verify, the man: link checked too
  local out
  out=$(SYSTEMD_LOG_COLOR=0 systemd-analyze verify "$2" 2>&1)
  if [[ -z $out ]]; then
    pass "$1: systemd-analyze verify $2 (man page included): clean"
  else
    fail "$1: systemd-analyze verify $2:"
    echo "$out" | detail
  fi
}

# enforce LABEL DROPIN UNIT_PATH: the enforce drop-in as docs/deployment.md installs it.
enforce() {
  local label=$1 pid
  install -d -m 0755 /etc/roce-qos-exporter
  roce_qos_exporter policy show-default >/etc/roce-qos-exporter/policy.yaml
  install -D -m 0644 "$2" /etc/systemd/system/$unit.d/enforce.conf
  pid=$(main_pid)
  systemctl daemon-reload && systemctl restart "$unit"
  restarted "$label + enforce.conf" "$pid"
  curl -sf "$url/metrics" >/tmp/metrics || true
  pid=$(main_pid)
  if grep -qx 'roce_qos_remediation_mode{mode="enforce"} 1' /tmp/metrics &&
    grep -qx 'roce_qos_remediation_enforce_held_elsewhere 0' /tmp/metrics; then
    pass "$label + enforce.conf: remediation mode enforce, this instance holds the enforce lock"
  else
    fail "$label + enforce.conf: $(grep -E '^roce_qos_remediation_(mode|enforce_held)' /tmp/metrics | tr '\n' ' ')"
  fi
  local lock=/var/lib/roce-qos-exporter/enforce.lock
  if [[ -d /var/lib/roce-qos-exporter && -f $lock && ! -L $lock ]] && ! flock -n "$lock" true; then
    pass "$label + enforce.conf: $lock exists and is locked"
  else
    fail "$label + enforce.conf: state dir or held lock missing: $(ls -ld /var/lib/roce-qos-exporter "$lock" 2>&1 | tr '\n' ' ')"
  fi
  [[ $(stat -c %U "/proc/$pid") == root ]] && pass "$label + enforce.conf: runs as root" ||
    fail "$label + enforce.conf: runs as $(stat -c %U "/proc/$pid")"
  # A pod (or a second unit) may hold the lock, or be inside a configfs section, in these
  # directories: stopping this unit must leave them, with the lock file's inode, in place.
  local inode
  inode=$(stat -c %i "$lock" 2>/dev/null)
  systemctl stop "$unit"
  if [[ -f $lock && $(stat -c %i "$lock") == "$inode" && -d /run/roce-qos-exporter ]] &&
    flock -n "$lock" true; then
    pass "$label + enforce.conf: systemctl stop kept $lock (same inode, released) and /run/roce-qos-exporter"
  else
    fail "$label + enforce.conf: after systemctl stop: $(ls -ldi /var/lib/roce-qos-exporter "$lock" /run/roce-qos-exporter 2>&1 | tr '\n' ' ') (inode before: $inode)"
  fi
  systemctl start "$unit"
  if wait_active "$unit" && wait_until 10 ready && ! flock -n "$lock" true; then
    pass "$label + enforce.conf: started again after the stop, holding $lock"
  else
    fail "$label + enforce.conf: not active, or not holding $lock, after systemctl start"
  fi
  verify_clean "$label + enforce.conf" "$3"
}

# lldp LABEL DROPIN: the lldp drop-in, with Debian's lldpd (in the image) running.
lldp_reason() { # the reasons sim0 has no LLDP neighbour, on one line
  curl -sf "$url/metrics" | sed -n 's/^roce_lldp_neighbor_absent_reason{netdev="sim0",reason="\([a-z_]*\)"} 1$/\1/p' | tr '\n' ' '
}
lldp_denied() { [[ $(lldp_reason) == *permission_denied* ]]; }
lldpd_reached() { local r; r=$(lldp_reason); [[ -n $r && ! $r =~ lldpd_not_installed|lldpd_not_running|permission_denied ]]; }
lldp() {
  local label=$1 pid gid
  check "lldpd.service (Debian's lldpd $(dpkg-query -W -f='${Version}' lldpd)) active" wait_active lldpd.service
  # Without the drop-in the observe unit may not connect to lldpd's socket (group _lldpd).
  if wait_until 30 lldp_denied; then
    pass "$label without lldp.conf: sim0's LLDP reason is permission_denied"
  else
    fail "$label without lldp.conf: sim0's LLDP reason is '$(lldp_reason)', expected permission_denied"
  fi
  install -D -m 0644 "$2" /etc/systemd/system/$unit.d/lldp.conf
  pid=$(main_pid)
  systemctl daemon-reload && systemctl restart "$unit"
  restarted "$label + lldp.conf" "$pid"
  pid=$(main_pid)
  gid=$(getent group _lldpd | cut -d: -f3)
  [[ " $(awk '/^Groups:/ { $1 = ""; print }' "/proc/$pid/status") " == *" $gid "* ]] &&
    pass "$label + lldp.conf: the exporter holds group _lldpd ($gid), no 216/GROUP" ||
    fail "$label + lldp.conf: group _lldpd ($gid) not in $(grep '^Groups:' "/proc/$pid/status")"
  if wait_until 30 lldpd_reached; then
    pass "$label + lldp.conf: the exporter reaches lldpd's socket (sim0's reason: $(lldp_reason))"
  else
    fail "$label + lldp.conf: sim0's LLDP reason is '$(lldp_reason)'"
  fi
}

# attribution LABEL DROPIN: the attribution drop-in, with real systemd's cgroups as the owners.
# Soft-RoCE (rxa) over sim0 and an rping server and client looping in the transient unit
# nccl-job.service (systemd-run: the cgroup /system.slice/nccl-job.service is PID 1's own). The
# oracle is `rdma resource show qp`: the QPs on rxa whose PID is a thread of that cgroup. A second
# drop-in, zz-attribution-test.conf (sorted after attribution.conf, so its Environment= of the
# same variable wins), shortens the interval to 1 s: every wait below is then bounded by seconds,
# not by the drop-in's 15 s rounds; ProtectProc=, what the drop-in is for, is still the drop-in's.
attr_ip=192.168.81.1
nccl_cg=/sys/fs/cgroup/system.slice/nccl-job.service
nccl_qps() { # the oracle: QPs on rxa held by a thread of nccl-job.service
  rdma resource show qp link rxa/1 | awk -v f="$nccl_cg/cgroup.threads" '
    BEGIN { while ((getline p < f) > 0) want[p] = 1 }
    { for (i = 1; i < NF; i++) if ($i == "pid" && ($(i + 1) in want)) n++ }
    END { print n + 0 }'
}
nccl_up() { (($(nccl_qps) >= 2)); } # the server's QP of the connection and the client's
# workload_qps LABELS: the value of roce_workload_qps{LABELS} in the last scrape (/tmp/metrics).
workload_qps() { grep -F "roce_workload_qps{$1}" /tmp/metrics | awk '{ print $NF }'; }
attr_labels() { # KIND WORKLOAD
  echo "netdev=\"sim0\",rdma_device=\"rxa\",kind=\"$1\",workload=\"$2\",pod_namespace=\"\",pod_name=\"\",pod_uid=\"\""
}
# attr_is KIND WORKLOAD: the scrape names the oracle's QPs under KIND/WORKLOAD.
attr_is() {
  curl -sf "$url/metrics" >/tmp/metrics || return 1
  want=$(nccl_qps)
  [[ $(workload_qps "$(attr_labels "$1" "$2")") == "$want" ]]
}
attribution() {
  local label=$1 dir=/etc/systemd/system/$unit.d pid t
  t=$SECONDS
  modprobe -a crc32_generic rdma_rxe rdma_ucm || { fail "$label: cannot load rdma_rxe and rdma_ucm"; return 1; }
  ip addr add $attr_ip/24 dev sim0 && rdma link add rxa type rxe netdev sim0 ||
    { fail "$label: no Soft-RoCE rxa over sim0: $(rdma link show 2>&1 | tr '\n' ' ')"; return 1; }
  # The client retries until the server listens, and again should it lose the connection.
  systemd-run --quiet --unit=nccl-job /bin/sh -c "rping -s -a $attr_ip -p 7001 >/dev/null 2>&1 &
    while :; do rping -c -a $attr_ip -p 7001 -S 64 >/dev/null 2>&1; sleep 0.2; done"
  if wait_until 20 nccl_up; then
    pass "$label: nccl-job.service (systemd-run) holds $(nccl_qps) QPs on rxa over sim0 (rdma resource show qp), up in $((SECONDS - t)) s"
  else
    fail "$label: nccl-job.service holds no QP on rxa"
    rdma resource show qp 2>&1 | detail
    journal nccl-job.service
    return 1
  fi
  curl -sf "$url/metrics" >/tmp/metrics
  grep -q '^roce_workload_qps' /tmp/metrics && fail "$label without attribution.conf: roce_workload_qps present" ||
    pass "$label without attribution.conf: no roce_workload_qps (attribution is opt-in)"

  install -D -m 0644 "$2" "$dir/attribution.conf"
  printf '[Service]\nEnvironment=ROCE_QOS_EXPORTER_ATTRIBUTION_ARGS=--attribution.interval=1s\n' >"$dir/zz-attribution-test.conf"
  pid=$(main_pid)
  systemctl daemon-reload && systemctl restart "$unit"
  restarted "$label + attribution.conf" "$pid"
  check "$label + attribution.conf: ProtectProc=$(prop "$unit" ProtectProc) (default)" [ "$(prop "$unit" ProtectProc)" = default ]
  t=$SECONDS
  if wait_until 20 attr_is systemd_unit nccl-job.service; then
    pass "$label + attribution.conf: roce_workload_qps{kind=\"systemd_unit\",workload=\"nccl-job.service\"} $want, the oracle's count, $((SECONDS - t)) s after the restart"
  else
    fail "$label + attribution.conf: roce_workload_qps is not the oracle's $want for nccl-job.service"
    grep -E '^roce_(workload_qps|exporter_attribution)' /tmp/metrics | detail
  fi
  awk '$1 == "roce_exporter_attribution_interval_seconds" && $2 == 1 { f = 1 } END { exit !f }' /tmp/metrics &&
    pass "$label + attribution.conf: the 1 s of zz-attribution-test.conf reached ExecStart" ||
    fail "$label + attribution.conf: $(grep '^roce_exporter_attribution_interval_seconds' /tmp/metrics)"

  # Without attribution.conf's ProtectProc=default: the unit's invisible hides nccl-job's /proc.
  rm "$dir/attribution.conf"
  pid=$(main_pid)
  systemctl daemon-reload && systemctl restart "$unit"
  restarted "$label + the interval alone" "$pid"
  check "$label + the interval alone: ProtectProc=$(prop "$unit" ProtectProc) (the unit's invisible)" [ "$(prop "$unit" ProtectProc)" = invisible ]
  t=$SECONDS
  if wait_until 20 attr_is unknown ""; then
    pass "$label + the interval alone: the same $want QPs are kind=\"unknown\", $((SECONDS - t)) s after the restart"
  else
    fail "$label + the interval alone: roce_workload_qps{kind=\"unknown\"} is not the oracle's $want"
    grep -E '^roce_(workload_qps|exporter_attribution)' /tmp/metrics | detail
  fi
  grep -q 'kind="systemd_unit"' <(grep '^roce_workload_qps' /tmp/metrics) &&
    fail "$label + the interval alone: a systemd_unit series without /proc: $(grep systemd_unit /tmp/metrics)" ||
    pass "$label + the interval alone: no systemd_unit series (the owner's /proc is hidden)"

  # The next step (lldp) reloads and restarts the unit: this process, the interval alone, runs
  # until then (a restart here would cost 15 s of the guest's time and test nothing new).
  rm "$dir/zz-attribution-test.conf"
  rmdir "$dir" 2>/dev/null
  systemctl stop nccl-job.service
  rdma link delete rxa
  ip addr del $attr_ip/24 dev sim0
}

# --- the guest -----------------------------------------------------------------------------------
state=$(systemctl is-system-running --wait)
info "boot: $(systemd-analyze 2>/dev/null | head -1); system state $state; systemd $(systemctl --version | awk 'NR == 1 { print $2 }'); kernel $(uname -r)"
[[ $state == running ]] || systemctl --failed --no-legend | detail
[[ $(cat /proc/1/comm) == systemd && $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]] &&
  grep -qw pids /sys/fs/cgroup/cgroup.subtree_control &&
  pass "systemd is PID 1 on cgroup v2 with the pids controller delegated to its units" ||
  fail "PID 1 $(cat /proc/1/comm), /sys/fs/cgroup $(stat -fc %T /sys/fs/cgroup), controllers $(cat /sys/fs/cgroup/cgroup.subtree_control 2>&1)"
modprobe simnic || fail "cannot load simnic"
for d in /sys/kernel/debug/simnic/*; do ip link set "${d##*/}" up; done
info "netdevs: $(ls /sys/class/net | tr '\n' ' ')"
confold=()
if [[ -n ${DEV_ARGS:-} ]]; then
  confold=(-o Dpkg::Options::=--force-confold) # keep the file written here
  info "DEVELOPMENT RUN: ROCE_QOS_EXPORTER_ARGS gets $DEV_ARGS (the committed test uses the defaults)"
  printf 'ROCE_QOS_EXPORTER_ARGS="--web.listen-address=:9879 --log.level=info %s"\n' "$DEV_ARGS" \
    >/etc/default/roce-qos-exporter
fi

# --- 1. the .deb ---------------------------------------------------------------------------------
t=$SECONDS
if apt-get install -y -qq --no-install-recommends "${confold[@]}" "$P/$DEB" >/tmp/apt.log 2>&1; then
  pass "apt installed $DEB and $(grep -c '^Setting up' /tmp/apt.log) packages with it in $((SECONDS - t)) s"
else
  fail "apt could not install $DEB"
  tail -10 /tmp/apt.log | detail
fi
check "the package enabled the unit" systemctl -q is-enabled "$unit"
running ".deb"
verify_clean ".deb" /lib/systemd/system/$unit

pid=$(main_pid)
systemctl restart "$unit"
restarted ".deb: systemctl restart" "$pid"

# Upgrade: the site's edit of the conffile is kept and used by the restarted process.
sed -i 's/--web.listen-address=:9879/--web.listen-address=127.0.0.1:9879/' /etc/default/roce-qos-exporter
echo '# site edit' >>/etc/default/roce-qos-exporter
pid=$(main_pid)
if apt-get install -y -qq "$P/$UPGRADE_DEB" >/tmp/apt-upgrade.log 2>&1; then
  pass "apt upgraded to $(dpkg-query -W -f='${Version}' roce-qos-exporter)"
else
  fail "apt could not upgrade to $UPGRADE_DEB"
  tail -10 /tmp/apt-upgrade.log | detail
fi
restarted ".deb: upgrade to $VERSION+1" "$pid" http://127.0.0.1:9879
grep -q '# site edit' /etc/default/roce-qos-exporter &&
  tr '\0' ' ' <"/proc/$(main_pid)/cmdline" | grep -q -- '--web.listen-address=127.0.0.1:9879' &&
  pass ".deb: upgrade kept the edited /etc/default/roce-qos-exporter, and the new process uses it" ||
  fail ".deb: the upgrade lost the conffile edit: $(tr '\0' ' ' <"/proc/$(main_pid)/cmdline")"

attribution ".deb" /usr/share/doc/roce-qos-exporter/examples/attribution.conf
lldp ".deb" /usr/share/doc/roce-qos-exporter/examples/lldp.conf
enforce ".deb + lldp.conf" /usr/share/doc/roce-qos-exporter/examples/enforce.conf /lib/systemd/system/$unit

# Remove: stopped and masked, the conffile and the enforce state kept.
apt-get remove -y -qq roce-qos-exporter >/tmp/apt-remove.log 2>&1 || fail "apt remove failed"
if [[ $(prop "$unit" ActiveState) != active ]] && ! pgrep -f '^/usr/(local/)?bin/roce_qos_exporter' >/dev/null; then
  pass "apt remove stopped the unit (no exporter process left)"
else
  fail "apt remove: ActiveState=$(prop "$unit" ActiveState), processes: $(pgrep -af roce_qos_exporter)"
fi
[[ $(readlink /etc/systemd/system/$unit) == /dev/null ]] && pass "apt remove masked the unit" ||
  fail "apt remove did not mask the unit: $(ls -l /etc/systemd/system/$unit 2>&1)"
grep -q '# site edit' /etc/default/roce-qos-exporter && [[ -d /var/lib/roce-qos-exporter ]] &&
  pass "apt remove kept the conffile (with its edit) and /var/lib/roce-qos-exporter" ||
  fail "apt remove deleted the conffile or the state"

apt-get purge -y -qq roce-qos-exporter >/tmp/apt-purge.log 2>&1 || fail "apt purge failed"
left=()
for f in /etc/default/roce-qos-exporter /var/lib/roce-qos-exporter /var/lib/private/roce-qos-exporter \
  /run/roce-qos-exporter /etc/systemd/system/$unit /etc/systemd/system/multi-user.target.wants/$unit; do
  [[ -e $f || -L $f ]] && left+=("$f")
done
((${#left[@]} == 0)) && pass "apt purge removed the conffile, the state, the runtime directory, the mask and the enable link" ||
  fail "apt purge left ${left[*]}"
[[ -e /etc/roce-qos-exporter/policy.yaml ]] && pass "apt purge kept the administrator's /etc/roce-qos-exporter/policy.yaml" ||
  fail "apt purge deleted /etc/roce-qos-exporter/policy.yaml"
rm -rf /etc/systemd/system/$unit.d /etc/roce-qos-exporter
systemctl daemon-reload

# --- 2. the README's cmake --install path --------------------------------------------------------
cp -a "$P/cmake-install/." /
hash -r # roce_qos_exporter: /usr/local/bin now, the package's /usr/bin is gone
info "cmake --install --prefix /usr/local --strip wrote: $(cd "$P/cmake-install" && find . -type f | sed 's/^\.//' | tr '\n' ' ')"
src=$P/deploy/systemd
install -m 0644 "$src/$unit" /etc/systemd/system/
install -m 0644 "$src/roce-qos-exporter.default" /etc/default/roce-qos-exporter
[[ -n ${DEV_ARGS:-} ]] && sed -i "s|^ROCE_QOS_EXPORTER_ARGS=\"|&$DEV_ARGS |" /etc/default/roce-qos-exporter
verify_clean "cmake --install" /etc/systemd/system/$unit
systemctl daemon-reload && systemctl enable --now "$unit" >/tmp/enable.log 2>&1 ||
  { fail "systemctl enable --now $unit failed"; detail </tmp/enable.log; }
running "cmake --install"
pid=$(main_pid)
systemctl restart "$unit"
restarted "cmake --install: systemctl restart" "$pid"
# The drop-in as the README installs it (lldp.conf is packaged verbatim: tested above).
enforce "cmake --install" "$src/$unit.d/enforce.conf" /etc/systemd/system/$unit
systemctl disable --now "$unit" >/dev/null 2>&1
[[ $(prop "$unit" ActiveState) != active ]] && pass "cmake --install: systemctl disable --now stopped it" ||
  fail "cmake --install: still $(prop "$unit" ActiveState) after disable --now"

# dpkg's own timestamps of every package state change, on the console for a post-mortem.
cat /var/log/dpkg.log
echo "DONE $failures $SECONDS" >&3
systemctl poweroff --force --force
