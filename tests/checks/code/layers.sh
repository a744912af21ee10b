#!/usr/bin/env bash
# The layer graph of scripts/layers.txt holds for the tree (includes, forward declarations, the
# layers' CMake links, docs/architecture.md's folders table), and scripts/check-layers catches each
# kind of violation it exists for (proved on a scratch tree, so the check itself can fail).
set -uo pipefail
source "$(dirname "$0")/../../common.bash"
checker=$root/scripts/check-layers

if out=$("$checker" "$root" 2>&1); then
  pass "the tree keeps the layer rule ($out)"
else
  fail "layer violations in the tree:"$'\n'"$out"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch"/base "$scratch"/collectors "$scratch"/exporter/{core,sampling,signals,qos,render,http,app}
printf '#include "exporter/core/snapshot.h"\n' >"$scratch/collectors/dcb.h"
printf '#include "collectors/dcb.h"\n' >"$scratch/base/result.h"
printf '#include "base/result.h"\n#include "exporter/qos/policy.h"\n' >"$scratch/exporter/core/fault_log.h"
printf '#include "exporter/qos/drift.h"\n' >"$scratch/exporter/signals/derive.cc"
printf '#include "exporter/render/metrics.h"\n' >"$scratch/exporter/qos/drift.cc"
printf '#include "exporter/app/cli.h"\n' >"$scratch/exporter/render/metrics.cc"
printf '#include "exporter/http/routes.h"\n' >"$scratch/exporter/render/text_format.cc"
printf '#include "exporter/render/metrics.h"\n#include "exporter/app/config.h"\n' >"$scratch/exporter/http/routes.cc"
printf '#include "base/duration.h"\n#include "exporter/http/routes.h"\n#include <vector>\n' >"$scratch/exporter/app/cli.cc"
printf '#include "exporter/sampling/sampler.h"\n' >"$scratch/exporter/stray.cc"
# The host writers: from the sampler (a reader) reported; from qos and from the writer's own .cc
# allowed.
printf '#include "collectors/dcb.h"\n#include "collectors/host_writer.h"\n' >"$scratch/exporter/sampling/sources.cc"
printf '#include "collectors/dcb_writer.h"\n' >"$scratch/exporter/qos/qos_io.h"
printf '#include "collectors/host_writer.h"\n' >"$scratch/collectors/host_writer.cc"
# Forward declarations: one of a type from a layer above (hidden from the include check), one of
# a type from a layer below (allowed).
printf '#pragma once\nstruct DeviceDrift {\n  int fields = 0;\n};\n' >"$scratch/exporter/qos/drift.h"
printf '#pragma once\nstruct DeviceDrift;\n' >"$scratch/exporter/core/lldp_state.h"
printf '#pragma once\nstruct DeviceDrift;\n' >"$scratch/exporter/render/table.h"
# CMake links: a lower layer linking a higher one, a sibling linking its sibling, a library of no
# layer; allowed: links below, a library in a comment, the layers' common function.
printf 'target_link_libraries(roceqos_collectors PUBLIC roceqos_base\n  PRIVATE roceqos_sampling)\n' \
  >"$scratch/collectors/CMakeLists.txt"
printf 'roceqos_add_layer(signals PUBLIC roceqos_sampling roceqos_qos)\n' >"$scratch/exporter/signals/CMakeLists.txt"
printf 'target_link_libraries(roceqos_base PRIVATE roceqos_stray)\n' >"$scratch/base/CMakeLists.txt"
printf 'roceqos_add_layer(render PUBLIC roceqos_core  # not roceqos_app\n  PRIVATE roceqos_signals roceqos_qos)\n' \
  >"$scratch/exporter/render/CMakeLists.txt"
printf 'function(f layer)\n  target_link_libraries(roceqos_${layer} ${ARGN})\nendfunction()\n' \
  >"$scratch/exporter/CMakeLists.txt"
# docs/architecture.md as it is, but with the signals row naming its sibling qos, the http row
# leaving out render and no app row; every other row must pass.
mkdir -p "$scratch/docs"
awk -F' [|] ' -v OFS=' | ' '
  /^[|] `exporter\/signals\/`/ { $NF = "`exporter/qos/`, sampling, core, collectors, base |" }
  /^[|] `exporter\/http\/`/ { $NF = "signals, qos, sampling, core, collectors, base |" }
  !/^[|] `exporter\/app\/`/' "$root/docs/architecture.md" >"$scratch/docs/architecture.md"
signals_row=$(grep -n '^| `exporter/signals/`' "$scratch/docs/architecture.md" | cut -d: -f1)
http_row=$(grep -n '^| `exporter/http/`' "$scratch/docs/architecture.md" | cut -d: -f1)

out=$("$checker" "$scratch" 2>&1)
status=$?
expected=(
  "collectors/dcb.h:1: collectors must not include exporter/core/snapshot.h"
  "base/result.h:1: base must not include collectors/dcb.h"
  "exporter/core/fault_log.h:2: exporter/core must not include exporter/qos/policy.h"
  "exporter/signals/derive.cc:1: exporter/signals must not include exporter/qos/drift.h"
  "exporter/qos/drift.cc:1: exporter/qos must not include exporter/render/metrics.h"
  "exporter/render/metrics.cc:1: exporter/render must not include exporter/app/cli.h"
  "exporter/render/text_format.cc:1: exporter/render must not include exporter/http/routes.h"
  "exporter/http/routes.cc:2: exporter/http must not include exporter/app/config.h"
  "exporter/stray.cc: every exporter source belongs to a layer folder"
  "exporter/sampling/sources.cc:2: exporter/sampling must not include collectors/host_writer.h (only exporter/qos may)"
  "exporter/core/lldp_state.h:2: exporter/core must not declare DeviceDrift, defined in exporter/qos"
  "collectors/CMakeLists.txt:2: collectors must not link roceqos_sampling (exporter/sampling)"
  "exporter/signals/CMakeLists.txt:1: exporter/signals must not link roceqos_qos (exporter/qos)"
  "base/CMakeLists.txt:1: links roceqos_stray, a library of no layer in scripts/layers.txt"
  "docs/architecture.md:$signals_row: the row of exporter/signals/ says it may include exporter/qos; scripts/layers.txt does not allow it"
  "docs/architecture.md:$http_row: the row of exporter/http/ leaves out exporter/render, which scripts/layers.txt allows"
  "docs/architecture.md: the folders table has no row of exporter/app/"
)
((status == 1)) && pass "a tree with forbidden includes fails (exit 1)" ||
  fail "a tree with forbidden includes exited $status, want 1:"$'\n'"$out"
for line in "${expected[@]}"; do
  grep -qxF "$line" <<<"$out" && pass "reported: $line" || fail "not reported: $line"$'\n'"$out"
done
reported=$(grep -c -v '^check-layers: ' <<<"$out")
((reported == ${#expected[@]})) && pass "nothing else was reported" ||
  fail "reported $reported violations, want the ${#expected[@]} planted:"$'\n'"$out"
grep -q "^check-layers: ${#expected[@]} violation(s)" <<<"$out" && pass "the count says ${#expected[@]}" ||
  fail "the count is not ${#expected[@]}:"$'\n'"$out"

# The graph itself: a layer naming one on a later line (the only way to write a cycle) is refused.
printf 'base roceqos_base -> collectors\ncollectors roceqos_collectors -> base\n' >"$scratch/cycle.txt"
if cycle=$(LAYERS_GRAPH=$scratch/cycle.txt "$checker" "$scratch" 2>&1); then
  fail "a graph with a cycle was accepted:"$'\n'"$cycle"
else
  grep -qF "cycle.txt:1: base depends on collectors, not on an earlier line" <<<"$cycle" &&
    pass "a graph with a cycle is refused ($cycle)" || fail "a graph with a cycle: $cycle"
fi

echo "layers: $failures failure(s)"
((failures == 0))
