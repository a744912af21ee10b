#!/usr/bin/env bash
# Checks deploy/kubernetes/ offline, with real tools:
#  1. kustomize (kubectl v1.33.9's, v5.6.0) builds base, base + each component and combinations
#     of them (lean + enforce, both monitoring stacks, all at once), examples/site as committed
#     and as README's quick start copies it (observe, then enforce), without touching it,
#     site overlays that set a custom image the documented way and the site overlays of
#     docs/deployment.md as written, without a warning (a deprecated kustomization field is one);
#     every container and initContainer of every build runs the image that was set;
#  2. every object validates against the Kubernetes / prometheus-operator schemas (npm
#     kubernetes-models, versions pinned in tests/checks/k8s/package-lock.json) and carries no
#     field the schema does not define; npm's deadline (lib/npm.bash) holds against a stalled npm;
#  3. yamllint (.yamllint) on every YAML under deploy/;
#  4. generated/ is current (deploy/kubernetes/generate --check) and the built PrometheusRule and
#     dashboard ConfigMaps equal alerts/ and dashboards/grafana/; promtool accepts the rules;
#     generate --runbook-base-url points every runbook_url of a site's rules at the site's wiki;
#  5. what each monitoring stack discovers (labels, RBAC, dashboards) and nothing of the other;
#     the scrape's authorization from a Secret (no file of the Prometheus pod); the API token in
#     kube-rbac-proxy only; the priority class; the security posture, scheduling and RBAC the
#     docs promise (jq over the built objects); components/lldp: the lldpd socket hostPath (type
#     Socket, read-only), the _lldpd supplemental group, --lldp.socket, no capability;
#  6. every exporter flag in the DaemonSets exists in `roce_qos_exporter --help`.
# ROCEQOS_K8S_DIR=DIR checks another deploy/kubernetes tree (e.g. an older one) with these checks.
set -euo pipefail
source "$(dirname "$0")/../../common.bash"
source "$(dirname "$0")/../lib/npm.bash"
source "$(dirname "$0")/../lib/kubectl.bash"

k8s_dir=${ROCEQOS_K8S_DIR:-$root/deploy/kubernetes}
tools=$root/tests/checks/k8s
cache=${ROCEQOS_CACHE_DIR:-$root/.cache}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# --- kubectl with a current kustomize (tests/checks/lib/kubectl.bash says why this one).
ensure_kubectl "$cache" && pass "kubectl v1.33.9 from $kubectl_pkg (sha256 pinned)" ||
  { fail "no kubectl v1.33.9 (see above)"; finish kubernetes; }
kubectl_version=$("$kubectl" version --client 2>&1)
grep -q 'Kustomize Version: v5\.' <<<"$kubectl_version" && pass "kustomize $(grep -o 'v5[0-9.]*' <<<"$kubectl_version")" ||
  fail "unexpected kustomize: $kubectl_version"

# --- 4a. Generated files are current (before building, so a stale file is named as such).
if "$k8s_dir/generate" --check >"$out/generate.log" 2>&1; then
  pass "deploy/kubernetes/generate --check: generated files are current"
else
  cat "$out/generate.log" >&2
  fail "deploy/kubernetes/generate --check"
fi

# --- 1. Build. render NAME DIR starts building DIR into $out/NAME.yaml (up to 4 at once: each
# build is a second of CPU); rendered waits for them and judges each: any output on stderr
# (kustomize prints "# Warning: 'bases' is deprecated ..." there) fails the check, and every
# build is converted to $out/NAME.objects.json for the jq assertions.
pending=()
render() {
  local name=$1 dir=$2
  pending+=("$name")
  while (($(jobs -rp | wc -l) >= 4)); do wait -n || true; done
  ("$kubectl" kustomize "$dir" >"$out/$name.yaml" 2>"$out/$name.err"; echo $? >"$out/$name.rc") &
}
rendered() {
  local name built=()
  wait
  for name in "${pending[@]}"; do
    if [[ "$(cat "$out/$name.rc")" != 0 ]]; then
      fail "kustomize $name: $(cat "$out/$name.err")"
    elif [[ -s "$out/$name.err" ]]; then
      fail "kustomize $name: warnings:"$'\n'"$(cat "$out/$name.err")"
    else
      pass "kustomize $name: $(grep -c '^kind:' "$out/$name.yaml") objects, no warning"
    fi
    [[ "$(cat "$out/$name.rc")" == 0 ]] && built+=("$out/$name")
  done
  pending=()
  ((${#built[@]})) || return 0
  python3 -c 'import json, sys, yaml
for b in sys.argv[1:]:
    json.dump([d for d in yaml.safe_load_all(open(b + ".yaml")) if d], open(b + ".objects.json", "w"))' "${built[@]}"
}
render base "$k8s_dir/base"
render example "$k8s_dir/examples/site"
# README's quick start copies examples/site into my-site/ beside deploy/ and turns the copy to
# enforce mode with one sed. Its lines run in two scratch trees (builds run in the background, so
# the observe copy is never edited under its build): readme-site is the copy, example-enforce the
# copy after the sed; the repository's own example stays as committed.
readme_copy=$(grep -m1 -E '^sed .*deploy/kubernetes/examples/site/kustomization.yaml *>my-site/kustomization.yaml$' "$root/README.md" || true)
readme_sed=$(grep -m1 -E "^sed -i '.*components/enforce.*' my-site/kustomization.yaml$" "$root/README.md" || true)
example_sum=$(sha256sum <"$k8s_dir/examples/site/kustomization.yaml")
# readme_tree NAME: a tree with deploy/kubernetes linked and README's copy made in NAME/my-site.
readme_tree() {
  mkdir -p "$out/$1/deploy/kubernetes"
  for d in base components examples; do ln -s "$k8s_dir/$d" "$out/$1/deploy/kubernetes/$d"; done
  [[ -n "$readme_copy" ]] && grep -qx 'mkdir -p my-site' "$root/README.md" &&
    (cd "$out/$1" && mkdir -p my-site && bash -c "$readme_copy")
}
if readme_tree readme-tree; then
  render readme-site "$out/readme-tree/my-site"
else
  fail "README.md: no 'mkdir -p my-site' and 'sed ... examples/site/kustomization.yaml >my-site/kustomization.yaml' lines ($readme_copy)"
fi
if readme_tree readme-tree-enforce && [[ -n "$readme_sed" ]] &&
  (cd "$out/readme-tree-enforce" && bash -c "$readme_sed") &&
  ! cmp -s "$out/readme-tree/my-site/kustomization.yaml" "$out/readme-tree-enforce/my-site/kustomization.yaml"; then
  render example-enforce "$out/readme-tree-enforce/my-site"
else
  fail "README.md: no 'sed -i ... components/enforce ... my-site/kustomization.yaml' line that changes the copy ($readme_sed)"
fi
[[ "$(sha256sum <"$k8s_dir/examples/site/kustomization.yaml")" == "$example_sum" ]] &&
  pass "README's quick start leaves deploy/kubernetes/examples/site as committed" ||
  fail "README's quick start changed deploy/kubernetes/examples/site/kustomization.yaml"

# Site overlays the way a site repository has them: deploy/ linked beside them. build_site NAME
# COMPONENTS [EXTRA]: base + the components (names under components/, space-separated) + EXTRA
# (more kustomization YAML), built into NAME.
site=$out/site
mkdir -p "$site"
ln -s "$(cd "$k8s_dir/../.." && pwd)/deploy" "$site/deploy"
build_site() {
  local name=$1 components=$2 extra=${3:-} c
  mkdir -p "$site/$name"
  {
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n'
    printf 'resources:\n- ../deploy/kubernetes/base\n'
    [[ -n "$components" ]] && echo "components:"
    for c in $components; do echo "- ../deploy/kubernetes/components/$c"; done
    printf '%s\n' "$extra"
  } >"$site/$name/kustomization.yaml"
  render "$name" "$site/$name"
}
build_site kp kube-prometheus
build_site kps kube-prometheus-stack
build_site enforce enforce
build_site lean lean
build_site lean-enforce "lean enforce"
# components/lean's parameter (the lossless priorities), set as docs/fleet.md shows: its ```yaml
# block "# lean-priorities", and its sed line for the Prometheus list.
lean_block=$(python3 - "$root/docs/fleet.md" <<'PY'
import re, sys, textwrap
text = open(sys.argv[1]).read()
blocks = [textwrap.dedent(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]
print(next((b for b in blocks if b.startswith("# lean-priorities")), ""), end="")
PY
)
lean_sed=$(grep -o "sed '[^']*' deploy/prometheus/lean-metric-relabel.yaml" "$root/docs/fleet.md" | head -n1 || true)
[[ -n "$lean_block" && -n "$lean_sed" ]] && pass "docs/fleet.md shows the lean parameter (overlay block, sed line)" ||
  fail "docs/fleet.md: no '# lean-priorities' yaml block or no sed line for lean-metric-relabel.yaml"
build_site lean-prio lean "$lean_block"
build_site optics optics
build_site lldp lldp
build_site lldp-enforce "lldp enforce"
build_site attribution attribution
build_site attribution-enforce "attribution enforce"
build_site prio priority-class
# The Helm release name, changed with the one patch docs/deployment.md shows.
build_site kps-release kube-prometheus-stack "patches:
- target: {group: monitoring.coreos.com, labelSelector: release}
  patch: |-
    - {op: replace, path: /metadata/labels/release, value: monitoring-prod}"
# The documented way to set the image: images: in the kustomization that is applied.
custom_image=registry.example.com/site/roce-qos-exporter:9.9.9-check
images="images:
- name: roce-qos-exporter
  newName: ${custom_image%:*}
  newTag: ${custom_image##*:}"
build_site site-observe kube-prometheus-stack "$images"
build_site site-kp-enforce "kube-prometheus enforce" "$images"
# examples/site's commented _lldpd gid patch, uncommented as a site would (with another gid).
gid_patch=$(sed -n '/^# With components\/lldp/,$p' "$k8s_dir/examples/site/kustomization.yaml" | tail -n +2 | sed -n 's/^# //p')
grep -q 'supplementalGroups, value: \[111\]' <<<"$gid_patch" ||
  fail "examples/site: no commented supplementalGroups patch after '# With components/lldp'"
build_site site-all "kube-prometheus-stack enforce lean optics priority-class lldp" "$images
${gid_patch//value: \[111\]/value: [4242]}"

# The site overlays of docs/deployment.md as written (```yaml blocks whose first line is
# "# my-site/kustomization.yaml"), with base/policy.yaml as the site's policy.yaml.
python3 - "$root/docs/deployment.md" "$site" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read()
blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if b.startswith("# my-site/kustomization.yaml")]
for i, b in enumerate(blocks):
    d = os.path.join(sys.argv[2], f"docs-{i}", "my-site")
    os.makedirs(d)
    open(os.path.join(d, "kustomization.yaml"), "w").write(b)
    os.symlink(os.path.join(sys.argv[2], "deploy"), os.path.join(sys.argv[2], f"docs-{i}", "deploy"))
PY
docs_sites=()
for d in "$site"/docs-*/my-site; do
  [[ -d "$d" ]] || continue
  cp "$k8s_dir/base/policy.yaml" "$d/policy.yaml"
  name=$(basename "$(dirname "$d")")
  render "$name" "$d"
  docs_sites+=("$name")
done
rendered
((${#docs_sites[@]} > 0)) && pass "docs/deployment.md has ${#docs_sites[@]} site overlay example(s)" ||
  fail "docs/deployment.md: no \`\`\`yaml block starting with '# my-site/kustomization.yaml'"
# Every build that is a deployment (all but base itself, which a site never applies alone).
# (the single components are covered by their combinations and their own checks below.)
deployments=(kp optics lldp lldp-enforce attribution attribution-enforce site-kp-enforce site-all example "${docs_sites[@]}")

# images_are NAME IMAGE: every container and initContainer of every pod template, except
# kube-rbac-proxy, runs IMAGE (and there is at least one).
images_are() {
  local name=$1 want=$2 got
  [[ -s "$out/$name.objects.json" ]] || return 0
  got=$(jq -r '.[] | .spec.template.spec? // empty | (.containers + (.initContainers // []))[] |
    select(.name != "kube-rbac-proxy") | "\(.name)=\(.image)"' "$out/$name.objects.json")
  if [[ -n "$got" ]] && ! grep -vq "=$want\$" <<<"$got"; then
    pass "$name: every exporter container and initContainer runs $want ($(cut -d= -f1 <<<"$got" | paste -sd' '))"
  else
    fail "$name: not every container/initContainer runs $want:"$'\n'"$got"
  fi
}
version=$(sed -nE 's/^project\(roce_qos_exporter VERSION ([0-9.]+).*/\1/p' "$root/CMakeLists.txt")
images_are base "roce-qos-exporter:$version"
images_are lean-enforce "roce-qos-exporter:$version"
for name in site-observe site-kp-enforce site-all; do images_are "$name" "$custom_image"; done
# examples/site and the docs' examples are applied as they are: each must set a qualified image.
for name in example readme-site example-enforce "${docs_sites[@]}"; do
  docs_image=$(jq -r '.[] | select(.kind == "DaemonSet") | .spec.template.spec.containers[] | select(.name == "exporter") | .image' \
    "$out/$name.objects.json" 2>/dev/null || true)
  [[ "$docs_image" == roce-qos-exporter* ]] && fail "$name: the example does not set the image ($docs_image)"
  images_are "$name" "$docs_image"
done

# --- 2. Schemas (+ unknown fields). npm ci only when the lock file changed (lib/npm.bash).
# First npm_bounded's deadline, against an npm that never answers (the stall a CI run met): three
# attempts, each cut at the deadline, then a failure that says so.
mkdir -p "$out/stalled-npm"
printf '#!/bin/sh\nexec sleep 600\n' >"$out/stalled-npm/npm"
chmod +x "$out/stalled-npm/npm"
stall_start=$SECONDS
if PATH=$out/stalled-npm:$PATH NPM_ATTEMPT_SECONDS=1 npm_bounded "stall self-test" ci 2>"$out/stall.log"; then
  fail "npm_bounded reported success for an npm that never answers"
elif (($(grep -c 'stalled past 1 s' "$out/stall.log") == 3 && SECONDS - stall_start <= 30)); then
  pass "npm_bounded gives up on a stalled npm after 3 attempts of 1 s ($((SECONDS - stall_start)) s)"
else
  fail "npm_bounded on a stalled npm ($((SECONDS - stall_start)) s):"$'\n'"$(cat "$out/stall.log")"
fi
ensure_k8s_modules "$cache" || { fail "no schema packages for tests/checks/k8s (see above)"; finish kubernetes; }
# One node process for every build (loading the schemas is most of its time); errors name the file.
validated=(base kp kps lean-enforce optics lldp lldp-enforce attribution attribution-enforce prio site-all example)
files=()
for name in "${validated[@]}"; do files+=("$out/$name.yaml"); done
if node "$tools/validate.mjs" "${files[@]}" >"$out/validate.log" 2>&1; then
  pass "schema + unknown fields (${validated[*]}): $(tail -1 "$out/validate.log")"
else
  fail "schema validation:"$'\n'"$(cat "$out/validate.log")"
fi
# The lean component's ServiceMonitor drops exactly what deploy/prometheus/lean-metric-relabel.yaml
# drops (one profile, two spellings), alone and combined with enforce, and with the lossless
# priorities set to 3 and 4 in both spellings the documented way. Rule 2 then keeps the lossless
# priorities' series and drops the others' (Python's re agrees with RE2 on these classes).
(cd "$root" && bash -c "$lean_sed") >"$out/lean-34.relabel.yaml" || fail "the documented sed failed"
lean_equal() {
  python3 - "$out/$1.yaml" "$2" "$3" <<'PY'
import re, sys, yaml
sm = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "ServiceMonitor"]
got = sm[0]["spec"]["endpoints"][0]["metricRelabelings"]
want = [{("sourceLabels" if k == "source_labels" else k): v for k, v in r.items()}
        for r in yaml.safe_load(open(sys.argv[2]))]
lossless = set(sys.argv[3])
kept = {p for p in "01234567" if not re.fullmatch(got[1]["regex"], "roce_prio_packets_total;" + p)}
sys.exit(0 if got == want and len(sm) == 1 and kept == lossless else 1)
PY
}
for name in lean lean-enforce; do
  lean_equal "$name" "$root/deploy/prometheus/lean-metric-relabel.yaml" 3 &&
    pass "$name: ServiceMonitor metricRelabelings equal deploy/prometheus/lean-metric-relabel.yaml, prio 3 kept" ||
    fail "$name: the ServiceMonitor's metricRelabelings differ from deploy/prometheus/lean-metric-relabel.yaml"
done
lean_equal lean-prio "$out/lean-34.relabel.yaml" 34 &&
  pass "lean-prio: lossless-priorities=34 gives the sed-substituted rules, prio 3 and 4 kept" ||
  fail "lean-prio: the parameter does not give the substituted rules keeping 3 and 4:"$'\n'"$(grep -A2 'prio$' "$out/lean-prio.yaml" | head -n 8)"
cmp -s "$out/lean-34.relabel.yaml" "$root/deploy/prometheus/lean-metric-relabel.yaml" &&
  fail "the documented sed changed nothing" || pass "the documented sed changes the Prometheus list"
# Both lists as a scrape job's metric_relabel_configs, as docs/fleet.md pastes them: promtool
# accepts the configuration.
for list in "$root/deploy/prometheus/lean-metric-relabel.yaml" "$out/lean-34.relabel.yaml"; do
  {
    printf 'scrape_configs:\n- job_name: roce-qos-exporter\n'
    printf '  static_configs: [{targets: ["localhost:9879"]}]\n  metric_relabel_configs:\n'
    sed 's/^/  /' "$list"
  } >"$out/lean-prometheus.yml"
  promtool check config "$out/lean-prometheus.yml" >"$out/lean-promtool.out" 2>&1 &&
    pass "promtool check config accepts $(basename "$list") in a scrape job" ||
    fail "promtool check config on $(basename "$list"): $(cat "$out/lean-promtool.out")"
done
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
for name in base lean-enforce; do
  [[ -s "$out/$name.objects.json" ]] || continue
  node "$tools/check-generated.mjs" "$root" "$out/$name.objects.json" >"$out/gen.log" 2>&1 &&
    pass "$name: $(sed 's/^ok: //' "$out/gen.log" | paste -sd';')" || fail "$name: $(cat "$out/gen.log")"
done
if [[ -s "$out/base.objects.json" ]]; then
  jq '.[] | select(.kind == "PrometheusRule") | .spec' "$out/base.objects.json" >"$out/rules.json"
  promtool check rules "$out/rules.json" >"$out/promtool.log" 2>&1 &&
    pass "promtool check rules on the PrometheusRule: $(grep -o 'SUCCESS.*' "$out/promtool.log" | head -1)" ||
    fail "promtool check rules: $(cat "$out/promtool.log")"
fi

# --- 4c. Runbook links of a site's own wiki: generate --prometheusrule writes the rules with the
# site's base, the site overlay lists the file as a patch; every alert of the build must then
# link there, to the same runbook file names as the public links of base.
wiki=https://wiki.example.com/sre/roce-runbooks
mkdir -p "$site/runbooks"
if "$k8s_dir/generate" --runbook-base-url "$wiki/" --prometheusrule "$site/runbooks/prometheusrule.yaml" >"$out/rb.log" 2>&1 &&
  ROCEQOS_RUNBOOK_BASE_URL=$wiki "$k8s_dir/generate" --prometheusrule "$out/rb-env.yaml" >>"$out/rb.log" 2>&1; then
  cmp -s "$site/runbooks/prometheusrule.yaml" "$out/rb-env.yaml" &&
    pass "generate: --runbook-base-url and ROCEQOS_RUNBOOK_BASE_URL write the same rules" ||
    fail "generate: --runbook-base-url and ROCEQOS_RUNBOOK_BASE_URL differ"
  build_site runbooks kube-prometheus-stack "patches:
- path: prometheusrule.yaml"
  rendered
  urls() { jq -r '[.[] | select(.kind == "PrometheusRule") | .spec.groups[].rules[] | select(.alert)] |
    (length | tostring), (.[] | .annotations.runbook_url // "MISSING")' "$1"; }
  public=$(urls "$out/base.objects.json")
  mine=$(urls "$out/runbooks.objects.json")
  n=$(head -1 <<<"$mine")
  if ((n > 0)) && [[ "$n" == "$(head -1 <<<"$public")" ]] && ! tail -n +2 <<<"$mine" | grep -qv "^$wiki/[A-Za-z0-9]*\.md\$" &&
    [[ "$(tail -n +2 <<<"$mine" | sed 's|.*/||')" == "$(tail -n +2 <<<"$public" | sed 's|.*/||')" ]]; then
    pass "runbooks: all $n alerts link to $wiki/<runbook>.md, the runbooks of the public links"
  else
    fail "runbooks: not every alert links to $wiki/ (got: $(tail -n +2 <<<"$mine" | grep -v "^$wiki/" | head -3 | paste -sd' '))"
  fi
  assert_labels_kept=$(jq -r '[.[] | select(.kind == "PrometheusRule") | .metadata.labels.release] == ["kube-prometheus-stack"]' \
    "$out/runbooks.objects.json")
  [[ "$assert_labels_kept" == true ]] && pass "runbooks: the patched PrometheusRule keeps the component's release label" ||
    fail "runbooks: the patch lost the PrometheusRule's release label"
else
  fail "generate --runbook-base-url: $(cat "$out/rb.log")"
fi
# A wiki page per runbook: {name} in the URL is the runbook's name, no .md.
if "$k8s_dir/generate" --runbook-base-url 'https://wiki.example.com/display/SRE/{name}' \
  --prometheusrule "$out/rb-page.yaml" >"$out/rb-page.log" 2>&1; then
  pages=$(python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print("\n".join(r["annotations"]["runbook_url"] for g in d["spec"]["groups"] for r in g["rules"] if "alert" in r))' "$out/rb-page.yaml")
  [[ "$(wc -l <<<"$pages")" == "$n" ]] && ! grep -qvE '^https://wiki\.example\.com/display/SRE/RoceQos[A-Za-z0-9]+$' <<<"$pages" &&
    pass "runbooks: {name} in the base URL makes every link a wiki page (https://wiki.example.com/display/SRE/<runbook>)" ||
    fail "runbooks: {name} links: $(grep -vE '^https://wiki\.example\.com/display/SRE/RoceQos[A-Za-z0-9]+$' <<<"$pages" | head -3 | paste -sd' ')"
else
  fail "generate --runbook-base-url with {name}: $(cat "$out/rb-page.log")"
fi
"$k8s_dir/generate" --runbook-base-url 'wiki.example.com/x' --prometheusrule "$out/bad.yaml" >"$out/bad.log" 2>&1 &&
  fail "generate accepted a runbook base URL without a scheme" ||
  pass "generate refuses a runbook base URL without a scheme: $(cat "$out/bad.log")"

# --- 5. Wiring and security posture (jq assertions over the built objects).
# assert NAME FILE JQ-EXPR: the expression must evaluate to true.
assert() {
  local label=$1 file=$2 expr=$3
  if [[ -s "$file" ]] && jq -e "$expr" "$file" >/dev/null 2>&1; then
    pass "$label"
  else
    fail "$label"
  fi
}
# check LABEL JQ-EXPR queues an assertion; run_checks NAME FILE evaluates the queue over FILE in
# one jq (hundreds of jq starts were most of this check's time) and reports each as "NAME: LABEL".
# An expression passes when it yields exactly one value, true.
q_labels=()
q_exprs=()
check() {
  q_labels+=("$1")
  q_exprs+=("$2")
}
run_checks() {
  local name=$1 file=$2 prog="" i results
  for i in "${!q_exprs[@]}"; do prog+="${prog:+, }([try (${q_exprs[$i]}) catch false] == [true])"; done
  if [[ -s "$file" ]] && results=$(jq -r "[$prog] | .[] | tostring" "$file" 2>"$out/jq.err"); then
    mapfile -t results <<<"$results"
    for i in "${!q_labels[@]}"; do
      if [[ "${results[$i]:-}" == true ]]; then pass "$name: ${q_labels[$i]}"; else fail "$name: ${q_labels[$i]}"; fi
    done
  else
    fail "$name: ${#q_labels[@]} assertions not evaluated: $(cat "$out/jq.err" 2>/dev/null)"
  fi
  q_labels=()
  q_exprs=()
}
ds='.[] | select(.kind == "DaemonSet") | .spec.template.spec'
exporter="$ds | .containers[] | select(.name == \"exporter\")"
sm='.[] | select(.kind == "ServiceMonitor")'
pr='.[] | select(.kind == "PrometheusRule")'
dash='[.[] | select(.kind == "ConfigMap" and .metadata.labels["app.kubernetes.io/component"] == "grafana-dashboard")]'
n_dash=$(find "$root/dashboards/grafana" -name '*.json' | wc -l)

# 5a. Each monitoring stack: what it selects by, and nothing of the other.
f=$out/base.objects.json
assert "base: no stack's selection label (release, prometheus, role, grafana_dashboard) on any object" "$f" \
  "[.[] | .metadata.labels // {} | keys[] | select(. == \"release\" or . == \"prometheus\" or . == \"role\" or . == \"grafana_dashboard\")] == []"
assert "base: no RBAC for a particular Prometheus ServiceAccount" "$f" \
  "[.[] | .subjects[]? | select(.namespace != \"roce-qos-exporter\")] == []"
assert "base: $n_dash dashboard ConfigMaps (app.kubernetes.io/component: grafana-dashboard)" "$f" "$dash | length == $n_dash"
f=$out/kp.objects.json
assert "kube-prometheus: PrometheusRule labelled prometheus: k8s, role: alert-rules, no release" "$f" \
  "[$pr | .metadata.labels | .prometheus == \"k8s\" and .role == \"alert-rules\" and has(\"release\") == false] == [true]"
assert "kube-prometheus: no release or grafana_dashboard label anywhere; no dashboard ConfigMap (its Grafana mounts its own)" "$f" \
  "([.[] | .metadata.labels // {} | keys[] | select(. == \"release\" or . == \"grafana_dashboard\")] == []) and ($dash == [])"
assert "kube-prometheus: monitoring/prometheus-k8s may get/list/watch services, endpoints, pods in roce-qos-exporter" "$f" \
  "([.[] | select(.kind == \"Role\" and .metadata.name == \"roce-qos-exporter-prometheus\" and .metadata.namespace == \"roce-qos-exporter\") | .rules[] | (.resources | sort) == [\"endpoints\", \"pods\", \"services\"] and (.verbs | sort) == [\"get\", \"list\", \"watch\"] and .apiGroups == [\"\"]] == [true]) and ([.[] | select(.kind == \"RoleBinding\" and .metadata.name == \"roce-qos-exporter-prometheus\" and .metadata.namespace == \"roce-qos-exporter\") | .roleRef.name == \"roce-qos-exporter-prometheus\" and .subjects == [{\"kind\": \"ServiceAccount\", \"name\": \"prometheus-k8s\", \"namespace\": \"monitoring\"}] and .metadata.labels[\"roce-qos-exporter/subject\"] == \"prometheus\"] == [true])"
for name in kps kps-release; do
  f=$out/$name.objects.json
  release=kube-prometheus-stack
  [[ "$name" == kps-release ]] && release=monitoring-prod
  assert "$name: ServiceMonitor and PrometheusRule (and nothing else) labelled release: $release" "$f" \
    "[.[] | select(.metadata.labels.release) | {kind, r: .metadata.labels.release}] | sort_by(.kind) == [{kind: \"PrometheusRule\", r: \"$release\"}, {kind: \"ServiceMonitor\", r: \"$release\"}]"
done
f=$out/kps.objects.json
assert "kube-prometheus-stack: all $n_dash dashboard ConfigMaps labelled grafana_dashboard: \"1\", folder RoCE" "$f" \
  "($dash | length == $n_dash) and ($dash | map(.metadata.labels.grafana_dashboard == \"1\" and .metadata.annotations.grafana_folder == \"RoCE\") | all)"
assert "kube-prometheus-stack: no kube-prometheus label or RBAC (prometheus, role, monitoring/prometheus-k8s)" "$f" \
  "([.[] | .metadata.labels // {} | keys[] | select(. == \"prometheus\" or . == \"role\")] == []) and ([.[] | .subjects[]? | select(.namespace == \"monitoring\")] == [])"
assert "examples/site: one monitoring stack (kube-prometheus-stack), the image set" "$out/example.objects.json" \
  "[.[] | select(.metadata.labels.release) | .kind] | sort == [\"PrometheusRule\", \"ServiceMonitor\"]"

# 5b. Per deployment: posture, scrape authentication, token, priority.
for name in base "${deployments[@]}"; do
  # Guards against vacuous truth: every "[...] | all" below needs these objects to exist.
  check "one DaemonSet with containers exporter + kube-rbac-proxy" \
    "[$ds | [.containers[].name]] == [[\"exporter\", \"kube-rbac-proxy\"]]"
  check "DaemonSet runs in the host network namespace, nodeSelector only kubernetes.io/os=linux" \
    "[$ds | .hostNetwork == true and .nodeSelector == {\"kubernetes.io/os\": \"linux\"}] == [true]"
  # Two nodeSelectorTerms are ORed: NFD configured with deviceLabelFields [vendor] (NVIDIA Network
  # Operator) or with its default [class, vendor] (0200 = Ethernet controller).
  check "nodeAffinity: NFD label pci-15b3.present OR pci-0200_15b3.present" \
    "[$ds | .affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms | map(.matchExpressions)] == [[[{\"key\": \"feature.node.kubernetes.io/pci-15b3.present\", \"operator\": \"In\", \"values\": [\"true\"]}], [{\"key\": \"feature.node.kubernetes.io/pci-0200_15b3.present\", \"operator\": \"In\", \"values\": [\"true\"]}]]]"
  check "tolerates every taint" "[$ds | .tolerations[] | select(.operator == \"Exists\" and .key == null)] | length == 1"
  check "every container: read-only rootfs, no privilege escalation, drops ALL, not privileged" \
    "[$ds | (.containers + (.initContainers // []))[] | .securityContext | .readOnlyRootFilesystem == true and .allowPrivilegeEscalation == false and (.capabilities.drop | index(\"ALL\")) != null and .privileged != true] | all"
  check "every container has requests and a memory limit" \
    "[$ds | (.containers + (.initContainers // []))[] | .resources.requests.cpu != null and .resources.requests.memory != null and .resources.limits.memory != null] | all"
  check "exporter listens on loopback only (kube-rbac-proxy is the network side)" \
    "[$exporter | .args[] | select(startswith(\"--web.listen-address=\"))] == [\"--web.listen-address=127.0.0.1:9879\"]"
  check "probes hit /-/healthy and /-/ready on the exporter's loopback port" \
    "[$exporter | (.livenessProbe.httpGet | .host == \"127.0.0.1\" and .port == 9879 and .path == \"/-/healthy\"), (.readinessProbe.httpGet | .host == \"127.0.0.1\" and .port == 9879 and .path == \"/-/ready\")] | all"
  # Liveness runs only once the startupProbe passed, i.e. after the first sample (/-/ready); the
  # startup budget covers /-/healthy's start-up grace (2 min: exporter/http/health.h), the
  # liveness failure window outlasts a remediation pass (7 s: docs/remediation.md guard 3).
  check "startupProbe on /-/ready allows >= 120 s for the first sample; liveness fails after >= 30 s" \
    "[$exporter | (.startupProbe.httpGet | .host == \"127.0.0.1\" and .port == 9879 and .path == \"/-/ready\"), (.startupProbe.periodSeconds * .startupProbe.failureThreshold >= 120), (.livenessProbe.periodSeconds * .livenessProbe.failureThreshold >= 30), (.livenessProbe.timeoutSeconds >= 2)] | all"
  check "kube-rbac-proxy forwards to the exporter, /metrics only" \
    "[$ds | .containers[] | select(.name == \"kube-rbac-proxy\") | .args | (index(\"--upstream=http://127.0.0.1:9879/\") != null) and (index(\"--allow-paths=/metrics\") != null)] == [true]"
  check "Service and ServiceMonitor use the proxy's https port; instance = node name" \
    "([.[] | select(.kind == \"Service\") | .spec.ports[] | .targetPort] == [\"https\"]) and ([$sm | .spec.endpoints[] | .port == \"https\" and .scheme == \"https\" and (.relabelings | any(.sourceLabels == [\"__meta_kubernetes_pod_node_name\"] and .targetLabel == \"instance\"))] == [true]) and ([$ds | .containers[] | .ports[]? | select(.name == \"https\") | .containerPort] == [9880])"
  check "the policy ConfigMap the DaemonSet mounts exists" \
    "([$ds | .volumes[] | .configMap.name // empty] - [.[] | select(.kind == \"ConfigMap\") | .metadata.name]) == []"
  check "RBAC lets the proxy create tokenreviews and subjectaccessreviews" \
    "[.[] | select(.kind == \"ClusterRole\" and .metadata.name == \"roce-qos-exporter\") | .rules[] | .resources[]] | sort == [\"subjectaccessreviews\", \"tokenreviews\"]"
  # arbitraryFSAccessThroughSMs.deny refuses every endpoint field that names a file of the
  # Prometheus pod; the token comes from a Secret of the ServiceMonitor's namespace instead.
  check "ServiceMonitor reads no file of the Prometheus pod (no bearerTokenFile, no tlsConfig *File)" \
    "[$sm | .spec.endpoints[] | (has(\"bearerTokenFile\") or has(\"bearerTokenSecret\") or (.tlsConfig // {} | has(\"caFile\") or has(\"certFile\") or has(\"keyFile\")))] == [false]"
  check "authorization Bearer from Secret/key token of a ServiceAccount of that namespace, which may only GET /metrics" \
    "[$sm] as \$s | (\$s | length == 1) and (\$s[0].spec.endpoints[0].authorization | .type == \"Bearer\" and .credentials.key == \"token\") and
     ([.[] | select(.kind == \"Secret\" and .metadata.name == \$s[0].spec.endpoints[0].authorization.credentials.name and .metadata.namespace == \$s[0].metadata.namespace and .type == \"kubernetes.io/service-account-token\") | .metadata.annotations[\"kubernetes.io/service-account.name\"]] as \$sa |
      (\$sa | length == 1) and
      ([.[] | select(.kind == \"ServiceAccount\" and .metadata.name == \$sa[0] and .metadata.namespace == \$s[0].metadata.namespace)] | length == 1) and
      ([.[] | select((.kind == \"ClusterRoleBinding\" or .kind == \"RoleBinding\") and any(.subjects[]?; .kind == \"ServiceAccount\" and .name == \$sa[0] and .namespace == \$s[0].metadata.namespace)) | .roleRef.name] == [\"roce-qos-exporter-metrics-reader\"]) and
      ([.[] | select(.kind == \"ClusterRole\" and .metadata.name == \"roce-qos-exporter-metrics-reader\") | .rules] == [[{\"nonResourceURLs\": [\"/metrics\"], \"verbs\": [\"get\"]}]]))"
  # kubectl applies in this order; the token controller fills a token Secret only for an
  # existing ServiceAccount.
  check "the scraper ServiceAccount comes before its token Secret in the output" \
    "[to_entries[] | select(.value.kind == \"ServiceAccount\" and .value.metadata.name == \"roce-qos-exporter-scraper\" or .value.kind == \"Secret\" and .value.type == \"kubernetes.io/service-account-token\") | .value.kind] == [\"ServiceAccount\", \"Secret\"]"
  check "no API token in the exporter: automount off (pod and ServiceAccount), projected token only in kube-rbac-proxy" \
    "([$ds | .automountServiceAccountToken] == [false]) and
     ([.[] | select(.kind == \"ServiceAccount\") | .automountServiceAccountToken] | all(. == false)) and
     ([$ds | .volumes[] | select(.projected) | select(any(.projected.sources[]; .serviceAccountToken)) | .name] as \$tok |
      (\$tok | length == 1) and
      ([$ds | (.containers + (.initContainers // []))[] | .name as \$c | .volumeMounts[]? | select(.name == \$tok[0] or (.mountPath | startswith(\"/var/run/secrets\"))) | {c: \$c, mountPath, ro: .readOnly}] ==
       [{c: \"kube-rbac-proxy\", mountPath: \"/var/run/secrets/kubernetes.io/serviceaccount\", ro: true}]))"
  check "no system-* priority class (system-cluster-critical preempts GPU jobs)" \
    "[$ds | .priorityClassName // \"\" | startswith(\"system-\")] == [false]"
  run_checks "$name" "$out/$name.objects.json"
done
f=$out/base.objects.json
assert "base: no priorityClassName, no PriorityClass" "$f" \
  "([$ds | has(\"priorityClassName\")] == [false]) and ([.[] | select(.kind == \"PriorityClass\")] == [])"
for name in prio site-all; do
  assert "$name: priorityClassName roce-qos-exporter, a class that never preempts, below system classes" "$out/$name.objects.json" \
    "([$ds | .priorityClassName] == [\"roce-qos-exporter\"]) and ([.[] | select(.kind == \"PriorityClass\" and .metadata.name == \"roce-qos-exporter\") | .preemptionPolicy == \"Never\" and .value > 0 and .value <= 1000000000 and .globalDefault == false] == [true])"
done

f=$out/base.objects.json
assert "base: no capability added, runs as non-root, no hostPath volume" "$f" \
  "[$ds | (.securityContext.runAsNonRoot == true), ([.containers[] | .securityContext.capabilities.add // []] | flatten == []), ([.volumes[] | select(.hostPath)] == [])] | all"
assert "base: every mount is read-only" "$f" \
  "[$ds | (.containers + (.initContainers // []))[] | .volumeMounts[]? | .readOnly == true] | all"
assert "base: no --remediation flag (observe mode is the default)" "$f" \
  "[$exporter | .args[] | select(startswith(\"--remediation\"))] == []"
# Optics: CAP_NET_ADMIN and nothing else of enforce (systemd's optics.conf, in a pod).
f=$out/optics.objects.json
assert "optics: the exporter adds exactly NET_ADMIN (as uid 0: no ambient capabilities in a pod), drops ALL" "$f" \
  "[$exporter | .securityContext | .capabilities == {\"drop\": [\"ALL\"], \"add\": [\"NET_ADMIN\"]} and .runAsUser == 0] == [true]"
assert "optics: no hostPath, every mount read-only, no --remediation, kube-rbac-proxy unchanged (non-root, no capability)" "$f" \
  "([$ds | .volumes[] | select(.hostPath)] == []) and ([$ds | .containers[] | .volumeMounts[]? | .readOnly == true] | all) and
   ([$exporter | .args[] | select(startswith(\"--remediation\"))] == []) and
   ([$ds | .containers[] | select(.name != \"exporter\") | .securityContext | .runAsNonRoot == true and (.capabilities.add // []) == []] | all)"

# Enforce, alone and composed with lean (and everything, with a custom image).
enforce_conf=$root/deploy/systemd/roce-qos-exporter.service.d/enforce.conf
run_dir=/run/$(sed -n 's/^RuntimeDirectory=//p' "$enforce_conf")
state_dir=/var/lib/$(sed -n 's/^StateDirectory=//p' "$enforce_conf")
[[ "$run_dir" == /run/roce-qos-exporter && "$state_dir" == /var/lib/roce-qos-exporter ]] &&
  pass "enforce.conf: RuntimeDirectory $run_dir, StateDirectory $state_dir" ||
  fail "enforce.conf: RuntimeDirectory/StateDirectory moved ($run_dir, $state_dir): update components/enforce and this check"
# A stop of the host unit must not delete a directory a pod holds its lock or configfs section
# in: systemd never removes a StateDirectory= (the lock), and keeps RuntimeDirectory= only with
# Preserve=yes (the configfs markers and their flock).
[[ $(sed -n 's/^RuntimeDirectoryPreserve=//p' "$enforce_conf") == yes ]] &&
  pass "enforce.conf: RuntimeDirectoryPreserve=yes (a stop leaves $run_dir to a pod)" ||
  fail "enforce.conf: RuntimeDirectoryPreserve is not yes: systemctl stop would delete $run_dir under a pod"
for name in enforce lean-enforce site-all example-enforce; do
  check "exporter adds exactly NET_ADMIN and --remediation=enforce once" \
    "[$exporter | (.securityContext.capabilities.add == [\"NET_ADMIN\"]), ([.args[] | select(startswith(\"--remediation\"))] == [\"--remediation=enforce\"])] | all"
  # runc refuses any mount inside /proc: the host's tcp_ecn is mounted under --path.procfs instead.
  check "no mount inside /proc; tcp_ecn is the host's file under --path.procfs=/host/proc" \
    "([$ds | (.containers + .initContainers)[] | .volumeMounts[]? | .mountPath | select(. == \"/proc\" or startswith(\"/proc/\"))] == []) and
     ([$exporter | [.args[] | select(startswith(\"--path.procfs\"))]] == [[\"--path.procfs=/host/proc\"]]) and
     ([$ds | .volumes[] | select(.hostPath.path == \"/proc/sys/net/ipv4/tcp_ecn\")] as \$v | (\$v | map(.hostPath.type)) == [\"File\"] and
      [$exporter | .volumeMounts[] | select(.name == \$v[0].name) | .mountPath] == [\"/host/proc/sys/net/ipv4/tcp_ecn\"])"
  check "the exporter passes --config of the mounted policy (enforce refuses to start without it)" \
    "[$exporter | .args[] | select(startswith(\"--config\"))] == [\"--config=/etc/roce-qos-exporter/policy.yaml\"]"
  check "only the other containers stay non-root without capabilities" \
    "[$ds | (.containers + .initContainers)[] | select(.name != \"exporter\") | (.securityContext.capabilities.add // []) == [] and .securityContext.runAsNonRoot == true] | all"
  check "hostPath mounts are exactly the write paths, the lock and state directories + the driver sentinel" \
    "[$ds | .volumes[] | select(.hostPath) | .hostPath.path | select(. != \"/run/lldpd.socket\")] | sort == [\"/proc/sys/net/ipv4/tcp_ecn\", \"/run/mellanox/drivers\", \"/run/roce-qos-exporter\", \"/sys/devices\", \"/sys/kernel/config\", \"/var/lib/roce-qos-exporter\"]"
  # The enforce lock and the remediation state live on the node, where the systemd unit keeps
  # them (enforce.conf's StateDirectory=; the configfs markers in RuntimeDirectory=), so a pod and a host unit exclude
  # each other and a pod restart keeps give-up. The exporter's defaults must point into them:
  # no --remediation.lock-file/.state-file override and no STATE_DIRECTORY in the environment.
  for dir in "$run_dir" "$state_dir"; do
    check "$dir is a hostPath DirectoryOrCreate mounted read-write at the same path in the exporter only" \
      "([$ds | .volumes[] | select(.hostPath.path == \"$dir\") | .hostPath.type] == [\"DirectoryOrCreate\"]) and
       ([$ds | .volumes[] | select(.hostPath.path == \"$dir\") | .name] as \$v |
        [$ds | (.containers + .initContainers)[] | .name as \$c | .volumeMounts[]? | select(.name == \$v[0]) | {c: \$c, mountPath, ro: (.readOnly // false), sub: (.subPath // \"\")}] ==
        [{c: \"exporter\", mountPath: \"$dir\", ro: false, sub: \"\"}])"
  done
  check "the exporter keeps the default lock and state file (no override, no STATE_DIRECTORY)" \
    "[$exporter | ([.args[] | select(startswith(\"--remediation.lock-file\") or startswith(\"--remediation.state-file\"))] == []) and ([.env[]? | select(.name == \"STATE_DIRECTORY\")] == [])] == [true]"
  # Read-only root everywhere; the exporter's writable mounts are exactly what enforce writes.
  check "the exporter's only writable mounts are the QoS write paths and the lock and state directories" \
    "[$exporter | [.volumeMounts[] | select(.readOnly != true) | .mountPath] | sort] == [[\"/host/proc/sys/net/ipv4/tcp_ecn\", \"/run/roce-qos-exporter\", \"/sys/devices\", \"/sys/kernel/config\", \"/var/lib/roce-qos-exporter\"]]"
  check "the initContainer waits for /run/mellanox/drivers/.driver-ready (HostToContainer)" \
    "[$ds | .initContainers[] | select(.name == \"wait-for-driver\") | ((.command | join(\" \")) | contains(\"/run/mellanox/drivers/.driver-ready\")) and (.volumeMounts[] | select(.mountPath == \"/run/mellanox/drivers\") | .mountPropagation == \"HostToContainer\" and .readOnly == true)] == [true]"
  run_checks "$name" "$out/$name.objects.json"
done
help=$("$(exporter_binary)" --help 2>&1 || true)
grep -qF "TEXT=$state_dir/enforce.lock" <<<"$help" &&
  pass "--help: the default --remediation.lock-file is under $state_dir (never removed by systemd)" ||
  fail "--help does not show $state_dir/enforce.lock as the default --remediation.lock-file"
grep -qF "$state_dir/remediation.json" <<<"$help" &&
  pass "--help: the default --remediation.state-file is under $state_dir" ||
  fail "--help does not show $state_dir/remediation.json as the default --remediation.state-file"

# 5e. LLDP: the host's lldpd socket, read-only, as type Socket (the opt-in: no lldpd, no pod), the
# _lldpd gid as a supplemental group, --lldp.socket naming the mount, and no capability added.
lldp_vol='[.volumes[] | select(.hostPath.path == "/run/lldpd.socket")]'
for name in lldp lldp-enforce site-all; do
  f=$out/$name.objects.json
  [[ -s "$f" ]] || continue
  assert "$name: hostPath /run/lldpd.socket is type Socket, the only one of the component" "$f" \
    "[$ds | $lldp_vol | length == 1 and .[0].hostPath.type == \"Socket\"] == [true]"
  assert "$name: the exporter mounts it read-only at the path --lldp.socket names" "$f" \
    "[$ds | $lldp_vol | .[0].name] == [\"lldpd-socket\"] and [$exporter | ([.volumeMounts[] | select(.name == \"lldpd-socket\") | .readOnly == true and .mountPath == \"/run/lldpd.socket\"] == [true]) and ([.args[] | select(startswith(\"--lldp.socket=\"))] == [\"--lldp.socket=/run/lldpd.socket\"])] == [true]"
  assert "$name: supplementalGroups holds the _lldpd gid" "$f" \
    "[$ds | .securityContext.supplementalGroups | length == 1 and (.[0] | type == \"number\")] == [true]"
done
assert "lldp: its socket is the only hostPath of the observe build" "$out/lldp.objects.json" \
  "[$ds | [.volumes[] | select(.hostPath) | .hostPath.path]] == [[\"/run/lldpd.socket\"]]"
assert "site-all: examples/site's gid patch sets supplementalGroups" "$out/site-all.objects.json" \
  "[$ds | .securityContext.supplementalGroups] == [[4242]]"
# No capability from lldp: each build's capability sets equal those of the same build without it.
caps="[$ds | (.containers + (.initContainers // []))[] | {name, caps: .securityContext.capabilities, user: .securityContext.runAsUser}]"
for pair in "base lldp" "enforce lldp-enforce"; do
  read -r without with <<<"$pair"
  [[ -s "$out/$without.objects.json" && -s "$out/$with.objects.json" ]] || continue
  if [[ "$(jq -c "$caps" "$out/$without.objects.json")" == "$(jq -c "$caps" "$out/$with.objects.json")" ]]; then
    pass "$with: same capabilities and users as $without (lldp adds none)"
  else
    fail "$with: capabilities/users differ from $without: $(jq -c "$caps" "$out/$with.objects.json")"
  fi
done

# 5f. Attribution: hostPID, the pod log and PodResources directories read-only at the host's paths
# (the flags' defaults and --attribution.kubelet-socket name them), uid 0 for the kubelet's
# root-owned socket, and no capability: the same sets as the build without it.
attr_paths='[.volumes[] | select(.hostPath.path == "/var/log/pods" or .hostPath.path == "/var/lib/kubelet/pod-resources") | {name, path: .hostPath.path, type: .hostPath.type}] | sort_by(.path)'
for name in attribution attribution-enforce; do
  f=$out/$name.objects.json
  [[ -s "$f" ]] || continue
  assert "$name: hostPID, the two host directories as type Directory" "$f" \
    "[$ds | .hostPID == true and ($attr_paths | map(.type) == [\"Directory\", \"Directory\"])] == [true]"
  assert "$name: the exporter mounts both read-only at their host paths" "$f" \
    "[$exporter | [.volumeMounts[] | select(.mountPath == \"/var/log/pods\" or .mountPath == \"/var/lib/kubelet/pod-resources\") | .readOnly] == [true, true]] == [true]"
  assert "$name: --attribution.interval and the socket under the mounted directory" "$f" \
    "[$exporter | [.args[] | select(startswith(\"--attribution.\"))] | sort == [\"--attribution.interval=15s\", \"--attribution.kubelet-socket=/var/lib/kubelet/pod-resources/kubelet.sock\"]] == [true]"
  assert "$name: the exporter runs as uid 0 and adds no capability beyond its build without attribution" "$f" \
    "[$exporter | .securityContext.runAsUser == 0 and .securityContext.allowPrivilegeEscalation == false and .securityContext.capabilities.drop == [\"ALL\"]] == [true]"
done
assert "attribution: adds no capability (observe)" "$out/attribution.objects.json" \
  "[$exporter | .securityContext.capabilities.add // []] == [[]]"
assert "attribution-enforce: NET_ADMIN only, from enforce" "$out/attribution-enforce.objects.json" \
  "[$exporter | .securityContext.capabilities.add] == [[\"NET_ADMIN\"]]"
assert "base: no hostPID" "$out/base.objects.json" "[$ds | .hostPID // false] == [false]"

# --- 6. Flags.
for name in base lean-enforce optics lldp attribution; do
  [[ -s "$out/$name.objects.json" ]] || continue
  mapfile -t flags < <(jq -r "$exporter | .args[]" "$out/$name.objects.json")
  check_flags "kubernetes $name" "${flags[@]}"
done

finish kubernetes
