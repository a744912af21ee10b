#!/usr/bin/env bash
# Checks deploy/kubernetes/ offline, with real tools:
#  1. Debian kubernetes-client 1.20.2's `kubectl kustomize` builds base, overlays/enforce and
#     overlays/lean (whose ServiceMonitor relabeling must equal deploy/prometheus/'s lean profile);
#  2. every object validates against the Kubernetes / prometheus-operator schemas (npm
#     kubernetes-models, versions pinned in tests/checks/k8s/package-lock.json) and carries no
#     field the schema does not define;
#  3. yamllint (.yamllint) on every YAML under deploy/;
#  4. generated/ is current (deploy/kubernetes/generate --check) and the built PrometheusRule and
#     dashboard ConfigMaps equal alerts/ and dashboards/grafana/; promtool accepts the rules;
#  5. the security posture the docs promise (jq over the built objects);
#  6. every exporter flag in the DaemonSets exists in `roce_qos_exporter --help`.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

k8s_dir=$root/deploy/kubernetes
tools=$root/tests/checks/k8s
cache=${ROCEQOS_CACHE_DIR:-$root/.cache}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# --- Debian's kubectl, unpacked into a cache (a foreign /usr/bin/kubectl may exist and
# `apt-get install kubernetes-client` can conflict with it).
kubectl_dir=$cache/kubernetes-client
kubectl=$kubectl_dir/usr/bin/kubectl
if ! [[ -x "$kubectl" ]]; then
  mkdir -p "$kubectl_dir"
  (
    cd "$kubectl_dir"
    rm -f kubernetes-client_*.deb
    apt-get download kubernetes-client >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      apt-get download kubernetes-client >/dev/null
    }
    dpkg -x kubernetes-client_*.deb .
  )
fi
kubectl_version=$("$kubectl" version --client --short 2>/dev/null || "$kubectl" version --client)
grep -q 'v1\.20\.2' <<<"$kubectl_version" && pass "kubectl is Debian kubernetes-client v1.20.2" ||
  fail "unexpected kubectl at $kubectl: $kubectl_version"

# --- 4a. Generated files are current (before building, so a stale file is named as such).
if "$k8s_dir/generate" --check >"$out/generate.log" 2>&1; then
  pass "deploy/kubernetes/generate --check: generated files are current"
else
  cat "$out/generate.log" >&2
  fail "deploy/kubernetes/generate --check"
fi

# --- 1. Build.
for variant in base overlays/enforce overlays/lean; do
  name=$(basename "$variant")
  if "$kubectl" kustomize "$k8s_dir/$variant" >"$out/$name.yaml" 2>"$out/$name.err"; then
    pass "kubectl kustomize $variant ($(grep -c '^kind:' "$out/$name.yaml") objects)"
  else
    fail "kubectl kustomize $variant: $(cat "$out/$name.err")"
  fi
done

# --- 2. Schemas (+ unknown fields). npm ci only when the lock file changed.
if ! cmp -s "$tools/package-lock.json" "$tools/node_modules/.roceqos-lock" 2>/dev/null; then
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  cp "$tools/package-lock.json" "$tools/node_modules/.roceqos-lock"
fi
for name in base enforce lean; do
  if node "$tools/validate.mjs" --json "$out/$name.json" "$out/$name.yaml" >"$out/$name.validate" 2>&1; then
    pass "schema + unknown fields ($name): $(tail -1 "$out/$name.validate")"
  else
    fail "schema validation ($name):"$'\n'"$(cat "$out/$name.validate")"
  fi
done
# The lean overlay's ServiceMonitor drops exactly what deploy/prometheus/lean-metric-relabel.yaml
# drops (one profile, two spellings).
if python3 - "$out/lean.yaml" "$root/deploy/prometheus/lean-metric-relabel.yaml" <<'PY'
import sys, yaml
sm = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "ServiceMonitor"]
got = sm[0]["spec"]["endpoints"][0]["metricRelabelings"]
want = [{("sourceLabels" if k == "source_labels" else k): v for k, v in r.items()}
        for r in yaml.safe_load(open(sys.argv[2]))]
sys.exit(0 if got == want and len(sm) == 1 else 1)
PY
then
  pass "overlays/lean: ServiceMonitor metricRelabelings equal deploy/prometheus/lean-metric-relabel.yaml"
else
  fail "overlays/lean: the ServiceMonitor's metricRelabelings differ from deploy/prometheus/lean-metric-relabel.yaml"
fi
# The validator must reject what it is there to reject.
sed '0,/readOnlyRootFilesystem: true/s//readOnlyRootFilesytem: true/' "$out/base.yaml" >"$out/typo.yaml"
typo=$(node "$tools/validate.mjs" "$out/typo.yaml" 2>&1 || true)
grep -q 'unknown field .*securityContext/readOnlyRootFilesytem' <<<"$typo" &&
  pass "validator rejects an unknown field (planted typo)" || fail "validator accepted a planted unknown field"
sed '0,/hostNetwork: true/s//hostNetwork: "yes"/' "$out/base.yaml" >"$out/type.yaml"
typed=$(node "$tools/validate.mjs" "$out/type.yaml" 2>&1 || true)
grep -q 'hostNetwork must be boolean' <<<"$typed" &&
  pass "validator rejects a wrongly typed field (planted)" || fail "validator accepted hostNetwork: \"yes\""

# --- 3. yamllint.
if (cd "$root" && yamllint -s -c .yamllint deploy) >"$out/yamllint.log" 2>&1; then
  pass "yamllint deploy/"
else
  fail "yamllint:"$'\n'"$(cat "$out/yamllint.log")"
fi

# --- 4b. Built objects equal the sources; promtool accepts the PrometheusRule's groups.
for name in base enforce; do
  [[ -s "$out/$name.json" ]] || continue
  node "$tools/check-generated.mjs" "$root" "$out/$name.json" >"$out/gen.log" 2>&1 &&
    pass "$name: $(sed 's/^ok: //' "$out/gen.log" | paste -sd';')" || fail "$name: $(cat "$out/gen.log")"
done
if [[ -s "$out/base.json" ]]; then
  jq '.[] | select(.kind == "PrometheusRule") | .spec' "$out/base.json" >"$out/rules.json"
  promtool check rules "$out/rules.json" >"$out/promtool.log" 2>&1 &&
    pass "promtool check rules on the PrometheusRule: $(grep -o 'SUCCESS.*' "$out/promtool.log" | head -1)" ||
    fail "promtool check rules: $(cat "$out/promtool.log")"
fi

# --- 5. Security posture and wiring (jq assertions over the built objects).
# assert NAME FILE JQ-EXPR: the expression must evaluate to true.
assert() {
  local label=$1 file=$2 expr=$3
  if [[ -s "$file" ]] && jq -e "$expr" "$file" >/dev/null 2>&1; then
    pass "$label"
  else
    fail "$label"
  fi
}
ds='.[] | select(.kind == "DaemonSet") | .spec.template.spec'
exporter="$ds | .containers[] | select(.name == \"exporter\")"
for name in base enforce lean; do
  f=$out/$name.json
  # Guards against vacuous truth: every "[...] | all" below needs these objects to exist.
  assert "$name: one DaemonSet with containers exporter + kube-rbac-proxy" "$f" \
    "[$ds | [.containers[].name]] == [[\"exporter\", \"kube-rbac-proxy\"]]"
  assert "$name: DaemonSet runs on pci-15b3 nodes in the host network namespace" "$f" \
    "[$ds | .hostNetwork == true and .nodeSelector[\"feature.node.kubernetes.io/pci-15b3.present\"] == \"true\"] | all"
  assert "$name: tolerates every taint" "$f" "[$ds | .tolerations[] | select(.operator == \"Exists\" and .key == null)] | length == 1"
  assert "$name: every container: read-only rootfs, no privilege escalation, drops ALL, not privileged" "$f" \
    "[$ds | (.containers + (.initContainers // []))[] | .securityContext | .readOnlyRootFilesystem == true and .allowPrivilegeEscalation == false and (.capabilities.drop | index(\"ALL\")) != null and .privileged != true] | all"
  assert "$name: every container has requests and a memory limit" "$f" \
    "[$ds | (.containers + (.initContainers // []))[] | .resources.requests.cpu != null and .resources.requests.memory != null and .resources.limits.memory != null] | all"
  assert "$name: exporter listens on loopback only (kube-rbac-proxy is the network side)" "$f" \
    "[$exporter | .args[] | select(startswith(\"--web.listen-address=\"))] == [\"--web.listen-address=127.0.0.1:9879\"]"
  assert "$name: probes hit /-/healthy and /-/ready on the exporter's loopback port" "$f" \
    "[$exporter | (.livenessProbe.httpGet | .host == \"127.0.0.1\" and .port == 9879 and .path == \"/-/healthy\"), (.readinessProbe.httpGet | .host == \"127.0.0.1\" and .port == 9879 and .path == \"/-/ready\")] | all"
  assert "$name: kube-rbac-proxy forwards to the exporter, /metrics only" "$f" \
    "[$ds | .containers[] | select(.name == \"kube-rbac-proxy\") | .args | (index(\"--upstream=http://127.0.0.1:9879/\") != null) and (index(\"--allow-paths=/metrics\") != null)] == [true]"
  assert "$name: Service and ServiceMonitor use the proxy's https port; instance = node name" "$f" \
    "([.[] | select(.kind == \"Service\") | .spec.ports[] | .targetPort] == [\"https\"]) and ([.[] | select(.kind == \"ServiceMonitor\") | .spec.endpoints[] | .port == \"https\" and .scheme == \"https\" and (.relabelings | any(.sourceLabels == [\"__meta_kubernetes_pod_node_name\"] and .targetLabel == \"instance\"))] == [true]) and ([$ds | .containers[] | .ports[]? | select(.name == \"https\") | .containerPort] == [9880])"
  assert "$name: the policy ConfigMap the DaemonSet mounts exists" "$f" \
    "([$ds | .volumes[] | .configMap.name // empty] - [.[] | select(.kind == \"ConfigMap\") | .metadata.name]) == []"
  assert "$name: RBAC lets the proxy create tokenreviews and subjectaccessreviews" "$f" \
    "[.[] | select(.kind == \"ClusterRole\" and .metadata.name == \"roce-qos-exporter\") | .rules[] | .resources[]] | sort == [\"subjectaccessreviews\", \"tokenreviews\"]"
  assert "$name: every use of the exporter image has the same tag" "$f" \
    "[$ds | (.containers + (.initContainers // []))[] | .image | select(startswith(\"roce-qos-exporter\"))] | (unique | length == 1) and (.[0] | contains(\":\"))"
done
f=$out/base.json
assert "base: no capability added, runs as non-root, no hostPath volume" "$f" \
  "[$ds | (.securityContext.runAsNonRoot == true), ([.containers[] | .securityContext.capabilities.add // []] | flatten == []), ([.volumes[] | select(.hostPath)] == [])] | all"
assert "base: no --remediation flag (observe mode is the default)" "$f" \
  "[$exporter | .args[] | select(startswith(\"--remediation\"))] == []"
f=$out/enforce.json
assert "enforce: exporter adds exactly NET_ADMIN and --remediation=enforce once" "$f" \
  "[$exporter | (.securityContext.capabilities.add == [\"NET_ADMIN\"]), ([.args[] | select(startswith(\"--remediation\"))] == [\"--remediation=enforce\"])] | all"
assert "enforce: only the other containers stay non-root without capabilities" "$f" \
  "[$ds | (.containers + .initContainers)[] | select(.name != \"exporter\") | (.securityContext.capabilities.add // []) == [] and .securityContext.runAsNonRoot == true] | all"
assert "enforce: hostPath mounts are exactly the write paths + the driver sentinel" "$f" \
  "[$ds | .volumes[] | select(.hostPath) | .hostPath.path] | sort == [\"/proc/sys/net/ipv4/tcp_ecn\", \"/run/mellanox/drivers\", \"/sys/devices\", \"/sys/kernel/config\"]"
assert "enforce: the initContainer waits for /run/mellanox/drivers/.driver-ready (HostToContainer)" "$f" \
  "[$ds | .initContainers[] | select(.name == \"wait-for-driver\") | ((.command | join(\" \")) | contains(\"/run/mellanox/drivers/.driver-ready\")) and (.volumeMounts[] | select(.mountPath == \"/run/mellanox/drivers\") | .mountPropagation == \"HostToContainer\" and .readOnly == true)] == [true]"

# --- 6. Flags.
for name in base enforce; do
  [[ -s "$out/$name.json" ]] || continue
  mapfile -t flags < <(jq -r "$exporter | .args[]" "$out/$name.json")
  check_flags "kubernetes $name" "${flags[@]}"
done

finish kubernetes
