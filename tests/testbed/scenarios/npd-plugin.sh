# shellcheck shell=sh
# The node-problem-detector plugin (deploy/kubernetes/node-problem-detector/) on a simulated
# ConnectX, run as NPD runs it (pkg/custompluginmonitor/plugin/plugin.go): the rule's path with
# its args from roce-qos-monitor.json, killed after the smaller of the rule and global timeout,
# stdout whitespace-trimmed and cut at max_output_length bytes, exit 0 -> OK, 1 -> NonOK,
# anything else -> Unknown. In sync -> OK; PFC turned off with dcb -> NonOK naming the device and
# the field; restored -> OK; an unknown --netdev -> Unknown with the reason. Prints NPD_PLUGIN
# lines with the time each invocation took.
require exporter simnic
sim=$(simnic_netdevs | head -n1)
ibdev=$(ibdev_of "$sim")
[ -n "$ibdev" ] || fail "no RDMA device bound to $sim"
config=/testbed/npd/roce-qos-monitor.json
[ -f "$config" ] || fail "$config missing: the runner copies deploy/kubernetes/node-problem-detector"

# The embedded default policy on $sim (as qos-drift.sh).
simnic_conform_default_policy "$sim" "$ibdev"

# The config's values (one key per line in the shipped file; no jq in the guest).
json_value() { sed -n "s/^ *\"$1\": *\"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$config" | head -n "${2:-1}" | tail -n 1; }
path=$(json_value path)
global_timeout=$(json_value timeout 1)
rule_timeout=$(json_value timeout 2)
max=$(json_value max_output_length)
[ -n "$path" ] && [ -n "$global_timeout" ] && [ -n "$rule_timeout" ] && [ -n "$max" ] ||
  fail "cannot read path/timeout/max_output_length from $config"
secs() { echo "${1%s}"; }
timeout_s=$(secs "$global_timeout")
[ "$(secs "$rule_timeout")" -lt "$timeout_s" ] && timeout_s=$(secs "$rule_timeout")
# NPD checks that the rule's path exists at start; on a node it is the mounted plugin directory.
mkdir -p "$(dirname "$path")"
cp /testbed/npd/roce-qos-check.sh "$path"
chmod 0755 "$path"

# npd_run ARG...: one invocation; sets status (OK|NonOK|Unknown) and message.
npd_run() {
  stamp0=$(cut -d' ' -f1 /proc/uptime)
  timeout "$timeout_s" "$path" "$@" >npd.out 2>npd.err
  code=$?
  stamp1=$(cut -d' ' -f1 /proc/uptime)
  message=$(head -c 4096 npd.out | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' | head -c "$max")
  case $code in
    0) status=OK ;;
    1) status=NonOK ;;
    *) status=Unknown ;;
  esac
  took=$(awk -v a="$stamp0" -v b="$stamp1" 'BEGIN { printf "%.2f", b - a }')
  log "plugin $*: exit $code -> $status \"$message\" (${took} s)"
  echo "NPD_PLUGIN args='$*' status=$status seconds=$took"
}
# expect STATUS REGEX: the last invocation's outcome.
expect() {
  [ "$status" = "$1" ] || fail "status $status, expected $1: \"$message\" (stderr: $(head -c 300 npd.err))"
  echo "$message" | grep -Eq "$2" || fail "message \"$message\" does not match /$2/"
  [ "${#message}" -le "$max" ] || fail "message is ${#message} bytes, over max_output_length $max"
}

# The rule's args select the RoCE NIC, as an operator does on a node whose other RDMA-bound
# netdevs (here rxe0's veth0) have no DCB to check.
npd_run --netdev "$sim"
expect OK "^in sync: 1 device: 1 in sync"

dcb pfc set dev "$sim" prio-pfc 3:off
npd_run --netdev "$sim"
expect NonOK "^drift on 1 of 1: $sim pfc\$"
dcb app del dev "$sim" dscp-prio 26:3
npd_run --netdev "$sim"
expect NonOK "^drift on 1 of 1: $sim pfc,dscp_prio\$"

dcb pfc set dev "$sim" prio-pfc 3:on
dcb app add dev "$sim" dscp-prio 26:3
npd_run --netdev "$sim"
expect OK "^in sync: 1 device: 1 in sync"

npd_run --netdev nosuch0
expect Unknown '^unknown \(check exit 2\): .*nosuch0'
