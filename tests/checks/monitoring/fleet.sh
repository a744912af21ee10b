#!/usr/bin/env bash
# The fleet simulation, small (docs/fleet.md): bench/fleet/run with 10 replayed 8-port nodes, a real
# Prometheus with the shipped rule files, Alertmanager, VictoriaMetrics, and the real lldpd with two
# leaf switches in network namespaces (root). Asserts every target up, RoceQosPfcStorm on the
# storming nodes only (and delivered by Alertmanager), RoceQosDrift on the drift node only,
# RoceQosPolicyMismatch active on the odd-policy node only, every node roll-up recording rule per
# node, and the remote_write keep: only instance: series, of every node, in VictoriaMetrics, where
# every query of the global view dashboard (roce-qos-global.json) returns data. And the storm
# origins: RoceQosPfcStormOrigin names the two origins under leaf00 (node000 sim4, node004 sim5)
# with their switch ports and nothing else (no victim, no noise port), within 2 evaluation
# intervals of the storm's confirmation; RoceQosPfcStormVictimsWithoutOrigin names leaf01, whose
# victims' origin is outside the fleet. About 3 minutes; the figures it prints are not the
# documented ones (those come from the 100-node run).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
exec "$root/bench/fleet/run" --nodes "${FLEET_NODES:-10}" --window "${FLEET_WINDOW:-30}"
