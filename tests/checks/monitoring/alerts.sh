#!/usr/bin/env bash
# Checks alerts/ with the real promtool (Debian `prometheus`):
#  1. promtool check rules on every rule file;
#  2. promtool test rules on alerts/tests/*.yaml, every alert has a case where it fires and
#     one where it must not, and every recording rule an expression test (alerts/alerttool
#     check-tests; a planted untested recording rule must be reported);
#  3. the conventions promtool does not check (alerts/alerttool check-style): RoceQos* names,
#     severity critical|warning|info, static summary, templated description, runbook_url whose
#     file exists with "What to check" / "What to do", the one job selector on every series;
#  4. the style checker itself rejects broken rules (so a passing 3. means something), joins on
#     job between different metrics among them;
#  5. alerts/alerttool render produces valid rules with the substitutions applied, the paging
#     thresholds too, and refuses a bad threshold with a clear error;
#  6. alerts/alerttool check-thresholds: each paging threshold moved one step either way makes a
#     promtool case fail (a case just past it, one just short of it);
#  7. yamllint;
#  8. the shipped Alertmanager inhibit rules load in the real Alertmanager's amtool, and a planted
#     broken matcher in them is refused.
set -euo pipefail
source "$(dirname "$0")/../../common.bash"
tool=$root/alerts/alerttool

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# logged NAME CMD...: CMD with its output in $out/NAME.log; a failure prints the log and fails.
logged() {
  local log=$out/$1.log
  shift
  "$@" >"$log" 2>&1 && return 0
  cat "$log" >&2
  fail "$*"
  return 1
}

command -v promtool >/dev/null || {
  echo "FAIL: promtool not found (Debian package prometheus; scripts/install-deps)" >&2
  exit 1
}

mapfile -t rules < <("$tool" list)
((${#rules[@]})) || fail "no rule files in alerts/"

# --- 1. promtool check rules
if logged check promtool check rules "${rules[@]}"; then
  pass "promtool check rules: $(grep -o '[0-9]* rules found' "$out/check.log" | paste -sd, -)"
fi

# --- 2. promtool test rules + coverage of both outcomes
if logged test sh -c 'cd "$0" && exec promtool test rules alerts/tests/*.yaml' "$root"; then
  pass "promtool test rules: $(grep -c SUCCESS "$out/test.log") file(s) pass"
fi
logged cover "$tool" check-tests && pass "$(cat "$out/cover.log")"
# A recording rule nobody tests (alerts/roce_qos.recording.yaml) must be reported.
cp -r "$root/alerts" "$out/untested"
printf '      - record: instance:roce_untested:sum\n        expr: sum without (netdev) (roce_qos_in_sync{job=~".*roce.*"})\n' \
  >>"$out/untested/roce_qos.recording.yaml"
"$out/untested/alerttool" check-tests --alerts-dir "$out/untested" --repo-root "$root" >"$out/untested.log" 2>&1 || true
if grep -qF "no promql_expr_test reads the recording rule instance:roce_untested:sum" "$out/untested.log"; then
  pass "check-tests reports a recording rule without an expression test"
else
  fail "check-tests accepted a recording rule without an expression test"
fi
# A rule joining a counter (fast job) with QoS state (state job) tested only with one job must be
# reported: docs/fleet.md's two-job layout is not covered.
cp -r "$root/alerts" "$out/onejob"
cat >>"$out/onejob/roce_qos.recording.yaml" <<'EOF'
      - record: netdev:roce_lossless_discards:rate1m
        expr: |
          rate(roce_prio_discards_total{job=~".*roce.*"}[1m])
          and on (instance, netdev, prio) roce_qos_pfc_enabled{job=~".*roce.*"} == 1
EOF
cat >"$out/onejob/tests/onejob_test.yaml" <<'EOF'
rule_files: [../roce_qos.recording.yaml]
tests:
  - interval: 15s
    input_series:
      - series: 'roce_prio_discards_total{job="roce-qos-exporter",instance="a",netdev="e",prio="3"}'
        values: '0+15x8'
      - series: 'roce_qos_pfc_enabled{job="roce-qos-exporter",instance="a",netdev="e",prio="3"}'
        values: '1x8'
    promql_expr_test:
      - expr: netdev:roce_lossless_discards:rate1m
        eval_time: 2m
        exp_samples:
          - labels: 'netdev:roce_lossless_discards:rate1m{job="roce-qos-exporter",instance="a",netdev="e",prio="3"}'
            value: 1
EOF
"$out/onejob/alerttool" check-tests --alerts-dir "$out/onejob" --repo-root "$root" >"$out/onejob.log" 2>&1 || true
if grep -qF "netdev:roce_lossless_discards:rate1m reads series of both jobs" "$out/onejob.log" &&
  grep -qF "with the series in docs/fleet.md's two jobs" "$out/onejob.log"; then
  pass "check-tests reports a rule across docs/fleet.md's two jobs tested with one job only"
else
  cat "$out/onejob.log" >&2
  fail "check-tests accepted a rule across the two jobs without a two-job case"
fi

# docs/fleet.md's two-job scrape configuration (the layout check-tests reads) is one Prometheus
# accepts.
mkdir -p "$out/fleet"
awk '/^## Two jobs/ { s = 1 } s && /^```yaml/ { y = 1; next } y && /^```/ { exit } y' \
  "$root/docs/fleet.md" >"$out/fleet/prometheus.yml"
echo '[]' >"$out/fleet/roce-nodes.json"
if grep -q 'job_name: roce-qos-state' "$out/fleet/prometheus.yml" &&
  (cd "$out/fleet" && promtool check config prometheus.yml) >"$out/fleet.log" 2>&1; then
  pass "promtool check config: docs/fleet.md's two-job scrape configuration"
else
  cat "$out/fleet.log" >&2
  fail "docs/fleet.md's two-job scrape configuration is not a valid Prometheus configuration"
fi

# --- 3. style
logged style "$tool" check-style && pass "$(cat "$out/style.log")"

# --- 4. the style checker rejects each kind of violation
bad=$out/bad
mkdir -p "$bad/alerts" "$bad/docs/runbooks"
cat >"$bad/alerts/bad.yaml" <<'EOF'
groups:
  - name: broken
    rules:
      - alert: roce_storm
        expr: roce_pfc_storm == 1
        labels:
          severity: page
        annotations:
          summary: Storm on {{ $labels.netdev }}
          description: A storm.
          runbook_url: https://example.com/RoceStorm
      - alert: RoceQosOtherJob
        expr: up{job="node"} == 0
        for: 1m
        labels:
          severity: info
        annotations:
          summary: Static.
          description: '{{ $labels.instance }}'
          runbook_url: https://github.com/roce-qos-exporter/roce_qos_exporter/blob/main/docs/runbooks/RoceQosOtherJob.md
      - alert: RoceQosJoinsOnJob
        expr: |
          roce_prio_discards_total{job=~".*roce.*"} > 0
          and on (job, instance, netdev, prio) roce_qos_pfc_enabled{job=~".*roce.*"} == 1
          or roce_pfc_storm{job=~".*roce.*"} == 1
        for: 0m
        labels:
          severity: info
        annotations:
          summary: Static.
          description: '{{ $labels.instance }}'
          runbook_url: https://github.com/roce-qos-exporter/roce_qos_exporter/blob/main/docs/runbooks/RoceQosJoinsOnJob.md
EOF
printf '# RoceQosOtherJob\n\nNo sections.\n' >"$bad/docs/runbooks/RoceQosOtherJob.md"
printf '# RoceQosOrphan\n## What to check\n## What to do\n' >"$bad/docs/runbooks/RoceQosOrphan.md"
"$tool" check-style --alerts-dir "$bad/alerts" --repo-root "$bad" >"$out/bad.log" 2>&1 &&
  fail "check-style accepted deliberately broken rules"
for expected in "name does not match" "no explicit for:" "severity 'page'" \
  "summary must be static" "description is not templated" "runbook_url https://example.com" \
  "series roce_pfc_storm without the job selector" "series up without the job selector" \
  "a job matcher other than" "no '## What to check' section" "RoceQosOrphan.md: no alert" \
  "joins different metrics on (job, instance, netdev, prio)" "\`or\` without on (...)" \
  "threshold --storm-critical-after: not found"; do
  if grep -qF -- "$expected" "$out/bad.log"; then
    pass "check-style rejects: $expected"
  else
    fail "check-style did not report: $expected"
    cat "$out/bad.log" >&2
  fi
done

# --- 5. render: substitutions applied, result still valid
rendered=$out/rendered
if "$tool" render --out "$rendered" --job-selector 'job="roce-qos-exporter"' --max-for 5s \
  --range 2m=20s --runbook-base https://runbooks.example/ >"$out/render.log" 2>&1 &&
  promtool check rules "$rendered"/*.yaml >>"$out/render.log" 2>&1; then
  if grep -qF 'job=~".*roce.*"' "$rendered"/*.yaml; then
    fail "render left the canonical job selector in place"
  elif grep -E '^\s*for:' "$rendered"/*.yaml | grep -vqE 'for: (0m|5s)$'; then
    fail "render did not cap every for: at 5s"
  elif ! grep -qF 'roce_pfc_storms_total{job="roce-qos-exporter"}[20s]' "$rendered"/*.yaml; then
    fail "render did not replace the [2m] range"
  elif ! grep -qF 'runbook_url: https://runbooks.example/docs/runbooks/' "$rendered"/*.yaml; then
    fail "render did not replace the runbook base"
  else
    pass "alerttool render: job selector, for:, ranges and runbook base substituted; promtool accepts"
  fi
else
  cat "$out/render.log" >&2
  fail "alerttool render"
fi
"$tool" render --out "$root/alerts" >/dev/null 2>&1 && fail "render accepted alerts/ as output"

# Paging thresholds: other values land in the expressions, the critical for: and the annotations.
thr=$out/thresholds
before=$failures
if "$tool" render --out "$thr" --storm-critical-after 2m --storm-critical-episodes 5 \
  --storm-critical-window 30m --discards-critical-rate 0.5 --discards-critical-for 10m \
  >"$out/thr.log" 2>&1 && promtool check rules "$thr"/*.yaml >>"$out/thr.log" 2>&1; then
  thr_rules=$thr/roce_qos.rules.yaml
  for expected in 'roce_pfc_storm{job=~".*roce.*"} offset 2m == 1' \
    'roce_pfc_storms_total{job=~".*roce.*"} offset 2m == 0' \
    'increase(roce_pfc_storms_total{job=~".*roce.*"}[30m]) >= 5' \
    'rate(roce_prio_discards_total{job=~".*roce.*"}[2m]) >= 0.5' 'has lasted at least 2m' \
    'at least 5 storms within 30m' 'at 0.5/s or more'; do
    grep -qF -- "$expected" "$thr_rules" || fail "render with other thresholds: no '$expected'"
  done
  # The critical discards rule holds for 10m, its warning keeps for: 0m.
  fors=$(awk '/- alert: RoceQosLosslessDiscards/ {a = 1} a && /for:/ {print $2; a = 0}' "$thr_rules" | paste -sd' ')
  [[ $fors == "10m 0m" ]] || fail "render --discards-critical-for 10m: for: of the two rules is '$fors'"
  # Nothing but the thresholds moved: the lines without them are the shipped ones.
  keep='offset|>= |lasted|storms|/s or more|for: '
  changed=$(diff <(grep -vE "$keep" "$root/alerts/roce_qos.rules.yaml") <(grep -vE "$keep" "$thr_rules") |
    grep -c '^[<>]' || true)
  ((changed == 0)) || fail "render with other thresholds changed $changed other line(s)"
  grep -vE '^\s*#' "$thr_rules" | grep -qE 'offset 1m|\[15m\]\) >= 3|>= 1$|at 1/s' &&
    fail "render with other thresholds left a default threshold in the rules"
  grep -qF '[2m]) > 0' "$thr_rules" || fail "render with other thresholds changed the warning's 2m lookback"
  ((failures == before)) &&
    pass "alerttool render --storm-critical-* --discards-critical-*: expressions, for: and annotations substituted; promtool accepts"
else
  cat "$out/thr.log" >&2
  fail "alerttool render with other thresholds"
fi
# The defaults, given explicitly, render the shipped rules byte for byte.
same=0
if "$tool" render --out "$out/defaults" --quiet --storm-critical-after 1m --storm-critical-episodes 3 \
  --storm-critical-window 15m --discards-critical-rate 1 --discards-critical-for 5m; then
  same=1
  for f in "${rules[@]}"; do
    cmp -s "$f" "$out/defaults/$(basename "$f")" || same=0
  done
fi
if ((same)); then
  pass "alerttool render with the default thresholds given explicitly: the shipped rules, byte for byte"
else
  fail "alerttool render with the default thresholds differs from the shipped rules"
fi
for bad_value in "--storm-critical-episodes 0" "--storm-critical-after 1x" "--discards-critical-rate -1"; do
  # shellcheck disable=SC2086 # the option and its value, split on purpose
  if "$tool" render --out "$out/bad-threshold" $bad_value >"$out/bad-threshold.log" 2>&1; then
    fail "render accepted $bad_value"
  elif grep -qE "^render: --[a-z-]+ '.*': expected" "$out/bad-threshold.log"; then
    pass "render refuses $bad_value: $(cat "$out/bad-threshold.log")"
  else
    cat "$out/bad-threshold.log" >&2
    fail "render refused $bad_value without saying why"
  fi
done

# --- 6. each paging threshold is pinned by promtool cases on both sides of it
logged thresholds "$tool" check-thresholds && pass "$(tail -n1 "$out/thresholds.log")"
# Without the case of a storm seen for 45 s (just short of 1m), the threshold is not pinned below.
cp -r "$root/alerts" "$out/unpinned"
python3 - "$out/unpinned/tests/pfc_test.yaml" <<'PY'
import sys
import yaml
path = sys.argv[1]
with open(path, encoding="utf-8") as f:
    doc = yaml.safe_load(f)
for test in doc["tests"]:
    if test.get("name", "").startswith("a storm seen for 1m by the scrapes"):
        test["alert_rule_test"] = [c for c in test["alert_rule_test"] if c["eval_time"] != "75s"]
with open(path, "w", encoding="utf-8") as f:
    yaml.safe_dump(doc, f, sort_keys=False)
PY
"$out/unpinned/alerttool" check-thresholds --alerts-dir "$out/unpinned" \
  --threshold storm-critical-after >"$out/unpinned.log" 2>&1 || true
if grep -qF -- "--storm-critical-after 1m -> 45s: no promtool case of RoceQosPfcStorm where it stays below critical" \
  "$out/unpinned.log" && grep -qF -- "-> 1m15s: RoceQosPfcStorm no longer fires critical" "$out/unpinned.log"; then
  pass "check-thresholds reports a threshold without a case just short of it"
else
  cat "$out/unpinned.log" >&2
  fail "check-thresholds did not report the missing case just short of --storm-critical-after"
fi

# --- 7. yamllint (the repository's .yamllint when present)
if command -v yamllint >/dev/null; then
  config=(-d '{extends: default, rules: {document-start: disable, line-length: {max: 120,
    allow-non-breakable-inline-mappings: true}, indentation: {spaces: 2,
    indent-sequences: whatever}, comments-indentation: disable}}')
  [[ -f "$root/.yamllint" ]] && config=(-c "$root/.yamllint")
  logged yamllint yamllint "${config[@]}" "$root/alerts" && pass "yamllint alerts/"
else
  fail "yamllint not installed (scripts/install-deps)"
fi

# --- 8. alertmanager-inhibit.yaml, merged into a minimal Alertmanager configuration
am_config() {  # INHIBIT_FILE > config
  printf 'route:\n  receiver: default\nreceivers:\n  - name: default\n'
  cat "$1"
}
if command -v amtool >/dev/null; then
  am_config "$root/alerts/alertmanager-inhibit.yaml" >"$out/am.yml"
  if amtool check-config "$out/am.yml" >"$out/amtool.log" 2>&1 && grep -q "2 inhibit rules" "$out/amtool.log"; then
    pass "amtool check-config: alerts/alertmanager-inhibit.yaml (2 inhibit rules)"
  else
    cat "$out/amtool.log" >&2
    fail "amtool check-config alerts/alertmanager-inhibit.yaml"
  fi
  sed 's/alertname="RoceQosPfcStormOrigin"/alertname=~"(RoceQosPfcStormOrigin"/' \
    "$root/alerts/alertmanager-inhibit.yaml" >"$out/broken-inhibit.yaml"
  am_config "$out/broken-inhibit.yaml" >"$out/am-broken.yml"
  if ! amtool check-config "$out/am-broken.yml" >/dev/null 2>&1; then
    pass "amtool check-config refuses a broken inhibit matcher"
  else
    fail "amtool check-config accepted a broken inhibit matcher"
  fi
else
  fail "amtool not installed (Debian prometheus-alertmanager; scripts/install-deps)"
fi

if ((failures)); then
  echo "alerts.sh: $failures check(s) failed" >&2
  exit 1
fi
echo "alerts.sh: all checks passed"
