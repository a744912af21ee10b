# Shared by the LLDP integration tests (tests/integration/lldp*.sh): a network namespace $ns for
# the exporter and lldpd, veths whose peers in $peer_ns play switch ports, and the exporter's
# /metrics ($url) read from inside $ns into $work/body. Sourced after tests/common.bash.

in_ns() { ip netns exec "$ns" "$@"; }

# lldp_namespaces: both namespaces, loopback up in $ns; skips where namespaces cannot be made.
lldp_namespaces() {
  ip netns add "$ns" || skip "cannot create a network namespace here"
  ip netns add "$peer_ns"
  in_ns ip link set lo up
}

# lldp_port NAME: veth NAME0 in $ns and its peer NAME1, the switch port, in $peer_ns; both up.
lldp_port() {
  in_ns ip link add "${1}0" type veth peer name "${1}1" netns "$peer_ns"
  in_ns ip link set "${1}0" up
  ip netns exec "$peer_ns" ip link set "${1}1" up
}

scrape() { in_ns curl -sf "$url/metrics" -o "$work/body"; }
has() { scrape && grep -qF "$1" "$work/body"; }
lacks() { scrape && ! grep -qF "$1" "$work/body"; }
value() { metric_value "$work/body" "$1"; }
expect() {  # SERIES VALUE DESCRIPTION, against the last scrape
  local got
  got=$(value "$1")
  [[ "$got" == "$2" ]] && pass "$3 ($1 $got)" || fail "$3: $1 is '${got:-absent}', expected $2"
}
expect_at_least() {  # SERIES MIN DESCRIPTION, against the last scrape (a counter that rose)
  local got
  got=$(value "$1")
  [[ "${got:-0}" -ge "$2" ]] && pass "$3 ($1 $got)" || fail "$3: $1 is '${got:-absent}', expected >= $2"
}
