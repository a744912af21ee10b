#!/usr/bin/env bash
# Checks dashboards/grafana/*.json.
#
#   tests/checks/monitoring/dashboards.sh    lint + PromQL syntax + harness self-test (CI)
#   tests/checks/monitoring/dashboards.sh --prometheus URL [--end TIME] [--lookback 15m] [--step 15s] \
#       [--scrape-interval 15s] [--expect-activity REGEX] [--set VAR=VALUE]... [--variables-only]
#                                                   also run every query against a real Prometheus
#
# Lint (jq): unique panel ids; unique refIds per panel; a `datasource` variable of type
# datasource; every panel, target, template query and annotation uses {"uid": "${datasource}"}
# (no hard-coded datasource uid); stable dashboard uids; no dashboard id; no hard-coded instance;
# a unit and a description on every panel; the template variables the conventions require; every
# range selector is [$__rate_interval], [$__range], or [$__interval] on a panel with a min
# interval (Grafana's $__interval can be a single scrape interval, and increase() over one
# scrape interval is empty).
# Syntax: every PromQL expression, with $__rate_interval/$__interval/$__range and template
# variables replaced by concrete values (an unknown variable fails), is wrapped as a recording
# rule and checked with `promtool check rules`.
# --prometheus: each expression (template variables = ".*", i.e. "All") is run the way Grafana runs
# it: $__interval = max(--step, --scrape-interval, the panel's min interval), which is also the
# query step; $__rate_interval = max($__interval + scrape interval, 4 x scrape interval);
# /api/v1/query_range (or /api/v1/query for instant targets) over --lookback (rounded up to whole
# steps) ending at --end (Unix seconds or anything `date -d` reads; default: now). Each must succeed
# without warnings and return at least one series; there is no exception. Variable queries must
# return label values. A query whose "DASHBOARD / PANEL-ID TITLE REF" (as printed) matches
# --expect-activity must also have a value above 0 somewhere in the range (the scenario drove it).
# --set VAR=VALUE gives a template variable a regex value instead of "All" (e.g. --set node=NODE:
# one node, as a user picks it); --variables-only runs only the template variable queries.
set -euo pipefail
source "$(dirname "$0")/../../common.bash"

prometheus="" end="" lookback=15m step=15s scrape_interval=15s expect_activity='^$'
variables_only=false
declare -A override=()
usage() {
  echo "usage: $0 [--prometheus URL [--end TIME] [--lookback D] [--step D] [--scrape-interval D] [--expect-activity REGEX] [--set VAR=VALUE]... [--variables-only]]" >&2
  exit 2
}
while (($#)); do
  case $1 in
    --prometheus) prometheus=${2%/}; shift 2 ;;
    --end) end=$2; shift 2 ;;
    --lookback) lookback=$2; shift 2 ;;
    --step) step=$2; shift 2 ;;
    --scrape-interval) scrape_interval=$2; shift 2 ;;
    --expect-activity) expect_activity=$2; shift 2 ;;
    --set) [[ $2 == [a-z]*=* ]] || usage; override[${2%%=*}]=${2#*=}; shift 2 ;;
    --variables-only) variables_only=true; shift ;;
    *) usage ;;
  esac
done

# seconds D: a Prometheus duration of whole seconds (30s, 1m, 2h, 1d) in seconds.
seconds() {
  [[ $1 =~ ^([0-9]+)([smhd]?)$ ]] || { echo "not a duration of whole seconds: $1" >&2; return 1; }
  local n=${BASH_REMATCH[1]}
  case ${BASH_REMATCH[2]} in
    m) n=$((n * 60)) ;;
    h) n=$((n * 3600)) ;;
    d) n=$((n * 86400)) ;;
  esac
  echo "$n"
}
max() { echo $(($1 > $2 ? $1 : $2)); }
step_s=$(seconds "$step") || usage
lookback_s=$(seconds "$lookback") || usage
scrape_s=$(seconds "$scrape_interval") || usage
((step_s > 0 && lookback_s > 0 && scrape_s > 0)) || usage
# grafana_intervals MIN_INTERVAL: sets interval_s and rate_interval_s as Grafana computes them
# for a panel with that min interval ("" = none) at this step and scrape interval.
grafana_intervals() {
  interval_s=$(max "$step_s" "$scrape_s")
  [[ -n $1 ]] && interval_s=$(max "$interval_s" "$(seconds "$1")")
  rate_interval_s=$(max $((interval_s + scrape_s)) $((4 * scrape_s)))
}

dash_dir=$root/dashboards/grafana
shopt -s nullglob
dashboards=("$dash_dir"/*.json)
((${#dashboards[@]})) || { echo "no dashboards in $dash_dir" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Dashboard uids are part of the URL operators bookmark and link: they must never change.
declare -A stable_uid=(
  [roce-qos-fleet-overview.json]=roce-qos-fleet
  [roce-qos-node-detail.json]=roce-qos-node
  [roce-qos-by-switch.json]=roce-qos-switch
  [roce-qos-global.json]=roce-qos-global
)
declare -A required_vars=(
  [roce-qos-fleet-overview.json]="datasource cluster job window"
  [roce-qos-node-detail.json]="datasource cluster job node netdev prio window"
  [roce-qos-by-switch.json]="datasource cluster job switch window"
  [roce-qos-global.json]="datasource cluster job topn"
)

# The $window variable offers exactly the exporter's default --derive.windows (a window the
# exporter does not export shows "No data"): from `roce_qos_exporter --help`, else docs/metrics.md.
default_windows=""
if exe=$(exporter_binary 2>/dev/null); then
  default_windows=$("$exe" --help 2>&1 | sed -nE 's/.*--derive\.windows TEXT=([0-9smh,]+).*/\1/p')
fi
[[ -n "$default_windows" ]] ||
  default_windows=$(grep -oE '`--derive\.windows`, default `[0-9smh]+` and `[0-9smh]+`' "$root/docs/metrics.md" |
    grep -oE '`[0-9]+[smh]`' | tr -d '`' | paste -sd,)
[[ -n "$default_windows" ]] || fail "cannot find the default --derive.windows"
default_windows_json=$(jq -cn --arg w "$default_windows" '$w | split(",") | sort')

# All panels, flattened (rows may nest panels).
panels='[.panels[] | ., (.panels // [])[]]'

# jq_check FILE LABEL EXPR: EXPR prints offending items (one per line); none = pass.
jq_check() {
  local file=$1 label=$2 expr=$3 bad
  if ! bad=$(jq -r "$expr" "$file" 2>&1); then
    fail "$(basename "$file"): $label: jq error: $bad"
  elif [[ -n "$bad" ]]; then
    fail "$(basename "$file"): $label:"$'\n'"$bad"
  else
    pass "$(basename "$file"): $label"
  fi
}

for f in "${dashboards[@]}"; do
  name=$(basename "$f")
  jq empty "$f" 2>/dev/null || { fail "$name: not valid JSON"; continue; }
  want_uid=${stable_uid[$name]:-}
  if [[ -z "$want_uid" ]]; then
    fail "$name: no stable uid registered in tests/checks/monitoring/dashboards.sh"
  else
    jq_check "$f" "uid is $want_uid, no dashboard id" \
      "select(.uid != \"$want_uid\" or (.id // null) != null) | \"uid=\(.uid) id=\(.id)\""
  fi
  jq_check "$f" "panel ids unique" "$panels | group_by(.id) | map(select(length > 1) | \"duplicate id \(.[0].id)\") | .[]"
  jq_check "$f" "refIds unique per panel" \
    "$panels | .[] | select(.targets) | select((.targets | map(.refId) | unique | length) != (.targets | length)) | \"panel \(.id) \(.title)\""
  # Grafana's $__interval is never below the datasource's scrape interval but can equal it: a
  # window of one scrape interval holds a single sample, and increase()/rate() over it are empty.
  jq_check "$f" "range selectors: [\$__rate_interval], [\$__range], or [\$__interval] with a panel min interval" \
    "$panels | .[] | . as \$p | .targets[]? | .expr | [scan(\"\\\\[[^\\\\]]*\\\\]\")] | .[] | select(. != \"[\$__rate_interval]\" and . != \"[\$__range]\" and (. != \"[\$__interval]\" or (\$p.interval // \"\") == \"\")) | \"panel \(\$p.id) \(\$p.title): \(.)\""
  jq_check "$f" "every panel has a title, a description and a unit" \
    "$panels | .[] | select(.type != \"row\") | select((.title // \"\") == \"\" or (.description // \"\") == \"\" or (.fieldConfig.defaults.unit // \"\") == \"\") | \"panel \(.id) \(.title)\""
  jq_check "$f" "a datasource variable of type datasource (prometheus)" \
    "if ([.templating.list[] | select(.name == \"datasource\" and .type == \"datasource\" and .query == \"prometheus\")] | length) == 1 then empty else \"missing\" end"
  for v in ${required_vars[$name]:-datasource}; do
    jq_check "$f" "template variable \$$v" \
      "if ([.templating.list[] | select(.name == \"$v\")] | length) == 1 then empty else \"missing \$$v\" end"
  done
  jq_check "$f" "\$window offers exactly the default --derive.windows ($default_windows)" \
    ".templating.list[] | select(.name == \"window\") | select(((.query | split(\",\") | sort) != $default_windows_json) or (([.options[].value] | sort) != $default_windows_json) or ([.current.value] - ($default_windows_json) != [])) | \"offers \\(.query), options \\([.options[].value]), current \\(.current.value)\""
  # The node and netdev variables must list every selected netdev, also those without an RDMA
  # port (roce_device_info exists only for RDMA-bound ones): roce_netdev_info is per netdev.
  jq_check "$f" "\$node and \$netdev come from roce_netdev_info" \
    ".templating.list[] | select(.name == \"node\" or .name == \"netdev\") | select((.query.query // .query) | test(\"^label_values\\\\(roce_netdev_info[{,]\") | not) | \"\\(.name): \\(.query.query // .query)\""
  # Every datasource reference anywhere must be the variable.
  jq_check "$f" "every datasource is \${datasource}" \
    "[paths(type == \"object\" and has(\"datasource\"))] as \$p | \$p[] as \$path | getpath(\$path).datasource | select(type != \"object\" or .uid != \"\${datasource}\") | tostring"
  jq_check "$f" "panels and targets name a datasource" \
    "$panels | .[] | select(.type != \"row\") | select(.datasource == null or ([.targets[]? | select(.datasource == null)] | length) > 0 or ((.targets // []) | length) == 0) | \"panel \(.id) \(.title)\""
  jq_check "$f" "no hard-coded instance or datasource uid" \
    "[.. | strings | select(test(\"instance(=|=~|!=|!~)\\\"[^$\\\"]\") or test(\"\\\"uid\\\" *: *\\\"[^$]\"))] | .[]"
done

# --- Extract every PromQL expression:
#     kind<TAB>dashboard<TAB>panel<TAB>ref<TAB>instant<TAB>min interval (- = none)<TAB>expr
: >"$work/exprs.tsv"
for f in "${dashboards[@]}"; do
  jq -r --arg d "$(basename "$f" .json)" '
    ([.panels[] | ., (.panels // [])[]] | .[] | select(.targets) | . as $p | .targets[] |
      ["panel", $d, "\($p.id) \($p.title)", .refId, (.instant // false | tostring),
       ($p.interval // "-"), .expr]),
    (.annotations.list[] | select(.expr) | ["annotation", $d, .name, "-", "false", "-", .expr]),
    (.templating.list[] | select(.type == "query") |
      (.query | if type == "object" then .query else . end) as $q |
      ["variable", $d, .name, "-", "false", "-", $q])
    | @tsv' "$f" >>"$work/exprs.tsv"
done

# substitute MODE EXPR: concrete values for Grafana's and the dashboards' variables
# ($interval_s/$rate_interval_s from grafana_intervals, $range_s the query range).
#   syntax: one plausible value per variable; e2e: ".*" (= "All") for template variables.
substitute() {
  local mode=$1 e=$2 v
  e=${e//\$__rate_interval/${rate_interval_s}s}
  e=${e//\$\{__rate_interval\}/${rate_interval_s}s}
  e=${e//\$__interval/${interval_s}s}
  e=${e//\$\{__interval\}/${interval_s}s}
  e=${e//\$__range/${range_s}s}
  e=${e//\$\{__range\}/${range_s}s}
  e=${e//\$topn/10}
  declare -A sample=([cluster]=prod [job]=roce-qos-exporter [node]=gpu-node-01 [netdev]=ens1f0np0 [prio]=3 [window]=1m
    [switch]=leaf01)
  # One sed for every variable: this runs for each expression of each pass.
  local -a script=()
  for v in cluster job node netdev prio window switch; do
    local value=${sample[$v]}
    [[ "$mode" == e2e ]] && value=${override[$v]:-.*}
    # Whole names only: $netdevs must stay unknown rather than become "ens1f0np0s".
    script+=(-e "s/\\\$\\{$v\\}/$value/g" -e "s/\\\$$v([^A-Za-z0-9_]|\$)/$value\\1/g")
  done
  e=$(sed -E "${script[@]}" <<<"$e")
  printf '%s' "$e"
}

# --- Syntax: wrap as recording rules; promtool check rules.
{
  echo '{"groups": [{"name": "dashboard-queries", "rules": ['
  sep=""
  n=0
  while IFS=$'\t' read -r kind dash panel ref instant min_interval expr; do
    [[ $min_interval == - ]] && min_interval=""
    grafana_intervals "$min_interval"
    range_s=$lookback_s
    e=$(substitute syntax "$expr")
    if [[ "$kind" == variable ]]; then
      # label_values(selector, label) -> selector; label_values(label) has no PromQL.
      if [[ "$e" =~ ^label_values\((.*),[[:space:]]*[a-zA-Z_]+\)$ ]]; then
        e=${BASH_REMATCH[1]}
      elif [[ "$e" =~ ^label_values\([a-zA-Z_]+\)$ ]]; then
        continue
      elif [[ "$e" =~ ^query_result\((.*)\)$ ]]; then
        e=${BASH_REMATCH[1]}
      fi
    fi
    if [[ "$e" == *'$'* ]]; then
      fail "$dash / $kind $panel $ref: unknown variable left in: $e"
      continue
    fi
    n=$((n + 1))
    record="dashboard:${dash//-/_}:${kind}_$n"
    jq -cn --arg r "$record" --arg e "$e" --arg src "$dash / $kind $panel $ref" \
      '{record: $r, expr: $e, labels: {source: $src}}' | sed "s/^/$sep/"
    sep=","
  done <"$work/exprs.tsv"
  echo ']}]}'
} >"$work/rules.json"
count=$(jq '.groups[0].rules | length' "$work/rules.json")
if promtool check rules "$work/rules.json" >"$work/promtool.log" 2>&1; then
  pass "promtool check rules: $count dashboard expressions parse ($(grep -o 'SUCCESS.*' "$work/promtool.log"))"
else
  fail "promtool check rules on the dashboard expressions:"$'\n'"$(cat "$work/promtool.log")"
fi

# A syntax error must be caught (the wrapper would be useless otherwise).
jq '.groups[0].rules[0].expr += " +"' "$work/rules.json" >"$work/broken.json"
promtool check rules "$work/broken.json" >/dev/null 2>&1 &&
  fail "promtool accepted a broken expression" || pass "a planted PromQL syntax error is rejected"

# --- Against a real Prometheus.
if [[ -n "$prometheus" ]]; then
  end_ts=$(date -u +%s)
  # Unix seconds as given: `date -d` reads some of them as a calendar date ~177,000 years ahead
  # (1795720620 among them: 32 of the 1,440 minutes of 2026-11-26), and the self-test, which
  # passes the current minute, then failed with no data anywhere.
  if [[ "$end" =~ ^[0-9]+$ ]]; then
    end_ts=$end
  elif [[ -n "$end" ]]; then
    end_ts=$(date -u -d "$end" +%s) || { echo "--end: not a time: $end" >&2; exit 2; }
  fi
  queried=0 with_data=0 active=0
  while IFS=$'\t' read -r kind dash panel ref instant min_interval expr; do
    [[ $min_interval == - ]] && min_interval=""
    grafana_intervals "$min_interval"
    # Whole steps ending at --end, so the last step's window ends with the data (events just
    # before the check are counted by [$__interval] windows) and the windows tile the range.
    range_s=$(((lookback_s + interval_s - 1) / interval_s * interval_s))
    start_ts=$((end_ts - range_s))
    [[ "$kind" != variable ]] && $variables_only && continue
    e=$(substitute e2e "$expr")
    label=""
    if [[ "$kind" == variable ]]; then
      if [[ "$e" =~ ^label_values\((.*),[[:space:]]*([a-zA-Z_]+)\)$ ]]; then
        sel=${BASH_REMATCH[1]} label=${BASH_REMATCH[2]}
        resp=$(curl -sfG "$prometheus/api/v1/series" --data-urlencode "match[]=$sel" \
          --data-urlencode "start=$start_ts" --data-urlencode "end=$end_ts") || resp='{"status":"curl failed"}'
        values=$(jq -r --arg l "$label" '[.data[]?[$l] // empty] | unique | join(",")' <<<"$resp")
        queried=$((queried + 1))
        if [[ "$(jq -r .status <<<"$resp")" != success ]]; then
          fail "e2e $dash variable \$$panel: $(jq -c . <<<"$resp" 2>/dev/null || echo "$resp")"
        elif [[ -n "$values" ]]; then
          with_data=$((with_data + 1))
          pass "e2e $dash variable \$$panel: $values"
        elif [[ "$label" == cluster ]]; then
          # Grafana's "All" of an empty variable is ".*": the queries still match every series.
          echo "info: e2e $dash variable \$cluster: no cluster label (this Prometheus adds none); 'All' matches everything"
        else
          fail "e2e $dash variable \$$panel: no values for $label in $sel"
        fi
      fi
      continue
    fi
    queried=$((queried + 1))
    if [[ "$instant" == true ]]; then
      resp=$(curl -sG "$prometheus/api/v1/query" --data-urlencode "query=$e" --data-urlencode "time=$end_ts")
    else
      resp=$(curl -sG "$prometheus/api/v1/query_range" --data-urlencode "query=$e" \
        --data-urlencode "start=$start_ts" --data-urlencode "end=$end_ts" --data-urlencode "step=$interval_s")
    fi
    where="e2e $dash / $kind $panel $ref"
    # One jq per answer (this loop runs for every query of every pass): status, warnings, series
    # count and peak value.
    summary=$(jq -r '[(.status // "no JSON"), (.warnings // [] | length),
      (.data.result // [] | length),
      ([.data.result[]? | (.values // [.value])[] | .[1] | tonumber] | max)] | @tsv' \
      <<<"$resp" 2>/dev/null) || summary="no JSON"
    IFS=$'\t' read -r status warnings series peak <<<"$summary"
    if [[ "$status" != success ]]; then
      fail "$where: $(jq -r '.error // .' <<<"$resp" 2>/dev/null || echo "$resp")"$'\n'"  $e"
      continue
    elif [[ "$warnings" != 0 ]]; then
      fail "$where: warnings $(jq -c .warnings <<<"$resp")"
      continue
    fi
    if ((series == 0)); then
      fail "$where: no data"$'\n'"  $e"
      continue
    fi
    with_data=$((with_data + 1))
    if [[ "$dash / $panel $ref" =~ $expect_activity ]]; then
      if jq -e "$peak > 0" <<<null >/dev/null; then
        active=$((active + 1))
        pass "$where: $series series, peak $peak (activity expected)"
      else
        fail "$where: $series series but no value above 0 (activity expected: the scenario drives it)"$'\n'"  $e"
      fi
    else
      pass "$where: $series series, peak $peak"
    fi
  done <"$work/exprs.tsv"
  echo "e2e: $with_data of $queried queries/variables returned data from $prometheus ($active with the expected activity)"
fi

# --- Self-test of the --prometheus harness (CI mode only): a real Prometheus serving 30 minutes of
# synthetic series shaped like the metric catalogue (backfilled with promtool). Every query must
# return data there, and none when the window is moved to before the data (the harness can fail).
# This proves the harness and the label joins against the catalogue; the real requirement (the
# testbed exporter scraped during a traffic + storm + drift scenario) is tests/e2e's job.
if [[ -z "$prometheus" && -z "${ROCEQOS_DASHBOARDS_NO_SELFTEST:-}" ]]; then
  # A fixed end (2026-11-26 19:17 UTC), so that the self-test does not depend on the clock; it is
  # also one of the numbers `date -d` misreads, which keeps the --end parsing honest.
  self_end=1795720620
  python3 "$root/tests/checks/lib/synthetic_metrics.py" "$self_end" >"$work/synthetic.om"
  promtool tsdb create-blocks-from openmetrics "$work/synthetic.om" "$work/tsdb" >/dev/null
  printf 'global:\n  scrape_interval: 15s\n' >"$work/prometheus.yml"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # start_prometheus: (re)starts the self-test Prometheus on $work/tsdb; 0 once it is ready.
  start_prometheus() {
    prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
      --storage.tsdb.retention.time=3650d --web.listen-address="127.0.0.1:$port" >"$work/prometheus.log" 2>&1 &
    prom_pid=$!
    local deadline=$((SECONDS + 30))
    until curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null; do
      ((SECONDS < deadline)) && kill -0 $prom_pid 2>/dev/null || return 1
      sleep 0.2
    done
  }
  trap 'kill $prom_pid 2>/dev/null || true; rm -rf "$work"' EXIT
  # The global view dashboard reads only the recording rules' series: backfill them from the
  # synthetic series with promtool (the shipped rule file, evaluated at its 15 s interval), then
  # restart Prometheus so that it opens the new blocks.
  ready=false
  if start_prometheus; then
    mkdir -p "$work/rule-blocks"
    if promtool tsdb create-blocks-from rules --url "http://127.0.0.1:$port" \
      --start "$((self_end - 1800))" --end "$self_end" --output-dir "$work/rule-blocks" \
      "$root/alerts/roce_qos.recording.yaml" >"$work/backfill.log" 2>&1; then
      kill $prom_pid && wait $prom_pid 2>/dev/null || true
      mv "$work/rule-blocks"/* "$work/tsdb/"
      start_prometheus && ready=true
    else
      fail "self-test: promtool could not backfill the recording rules: $(tail -3 "$work/backfill.log")"
    fi
  fi
  if ! $ready; then
    fail "self-test: Prometheus did not become ready: $(tail -5 "$work/prometheus.log")"
  else
    if ROCEQOS_DASHBOARDS_NO_SELFTEST=1 bash "$0" --prometheus "http://127.0.0.1:$port" \
      --end "$self_end" --lookback 30m >"$work/selftest.log" 2>&1; then
      pass "self-test: $(grep -c '^ok: e2e' "$work/selftest.log") queries/variables return data from a real Prometheus (synthetic catalogue series)"
    else
      fail "self-test against synthetic series:"$'\n'"$(grep -E '^(FAIL|  )' "$work/selftest.log")"
    fi
    # Picking one node: every variable still has values, on a node with RDMA ports and on one whose
    # only netdev has none (cpu-node-01 in the synthetic series).
    for node in gpu-node-01 cpu-node-01; do
      if ROCEQOS_DASHBOARDS_NO_SELFTEST=1 bash "$0" --prometheus "http://127.0.0.1:$port" \
        --end "$self_end" --lookback 30m --variables-only --set "node=$node" >"$work/selftest-$node.log" 2>&1; then
        pass "self-test: node=$node: every variable has values ($(grep -o 'variable \$netdev: .*' "$work/selftest-$node.log" | head -1))"
      else
        fail "self-test: node=$node: a variable without values:"$'\n'"$(grep -E '^FAIL' "$work/selftest-$node.log")"
      fi
    done
    if ROCEQOS_DASHBOARDS_NO_SELFTEST=1 bash "$0" --prometheus "http://127.0.0.1:$port" \
      --end "$((self_end - 3 * 3600))" --lookback 30m >"$work/selftest-empty.log" 2>&1; then
      fail "self-test: the harness passed on a window without data"
    else
      pass "self-test: a window without data fails ($(grep -c 'no data' "$work/selftest-empty.log") empty queries reported)"
    fi
  fi
  kill $prom_pid 2>/dev/null || true
  wait $prom_pid 2>/dev/null || true
fi

finish dashboards
