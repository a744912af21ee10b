#!/usr/bin/env bash
# The layer rule of docs/architecture.md holds for the tree, and scripts/check-layers catches each
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
# Forward declarations: one of a type from a layer above (hidden from the include check), one of
# a type from a layer below (allowed).
printf '#pragma once\nstruct DeviceDrift {\n  int fields = 0;\n};\n' >"$scratch/exporter/qos/drift.h"
printf '#pragma once\nstruct DeviceDrift;\n' >"$scratch/exporter/core/lldp_state.h"
printf '#pragma once\nstruct DeviceDrift;\n' >"$scratch/exporter/render/table.h"

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
  "exporter/core/lldp_state.h:2: exporter/core must not declare DeviceDrift, defined in exporter/qos"
  "check-layers: 10 violation(s)"
)
((status == 1)) && pass "a tree with forbidden includes fails (exit 1)" ||
  fail "a tree with forbidden includes exited $status, want 1:"$'\n'"$out"
for line in "${expected[@]}"; do
  grep -qxF "$line" <<<"$out" && pass "reported: $line" || fail "not reported: $line"$'\n'"$out"
done
grep -qE 'exporter/app/cli.cc|exporter/http/routes.cc:1|exporter/render/table.h' <<<"$out" &&
  fail "an allowed include or declaration was reported:"$'\n'"$out"

echo "layers: $failures failure(s)"
((failures == 0))
