#!/usr/bin/env bash
# Docs that cannot rot (docs/contributing.md): flags, policy examples, metric names, repository
# paths and links in README.md, docs/, runbooks, alerts and dashboards exist, and no doc contradicts
# the tool in the ways docs_rot.py can see (an absent source called drift, a runbook query the lean
# profile drops, "no state on disk" without the mode), states session history ("run A", "this
# session", load narratives, "flaky"; the READMEs under tests/ too) or compares with the past
# ("707 s before, 230 s after", "(the previous gzip)"), reports a measured figure
# whose section names no command, or names another set of kernels than tests/testbed/kernel/series
# (tests/checks/lib/docs_rot.py; a scratch tree with one planted instance of each proves it reports
# them, and a planted clean section that it does not), and every README block marked
# `<!-- docs-check: run -->` runs to exit 0 in a private network namespace holding veth0 and veth1,
# with the built exporter on PATH.
set -uo pipefail
source "$(dirname "$0")/../../common.bash"
exe=$(exporter_binary) || exit 1
exe=$(realpath "$exe")  # linked from a scratch directory below

if out=$(python3 "$root/tests/checks/lib/docs_rot.py" "$root" "$exe"); then
  pass "$(tail -n1 <<<"$out")"
else
  fail "documentation refers to things that do not exist:"$'\n'"$out"
fi

# The checker reports each kind of contradiction (a passing run above means something).
planted=$(mktemp -d)
mkdir -p "$planted/docs/runbooks" "$planted/alerts" "$planted/deploy/prometheus" "$planted/bench"
touch "$planted/bench/scrape_compare.sh"
cp "$root/deploy/prometheus/lean-metric-relabel.yaml" "$planted/deploy/prometheus/"
printf '# x\n' >"$planted/README.md"
printf 'Tested in `tests/recording_test.yaml`.\n' >"$planted/alerts/README.md"
printf '# RoceQosX\n\n**Fires when** `roce_qos_drift == 1` (or a field whose source is absent).\n\n%s\n\n%s\n' \
  'Read `roce_pfc_paused_ratio{window="15s"}` and see docs/nowhere.md or [policy](../gone.md).' \
  '- **Absent counts as drift, unreadable does not.**' >"$planted/docs/runbooks/RoceQosX.md"
printf 'The exporter keeps no state on disk: an upgrade is a restart.\n' >"$planted/docs/operations.md"
# A lab notebook (lines 5-8) and a clean section (lines 10-11: a figure with its command; "run a").
printf '%s\n' '# Notebook' '' '## Lab notes' '' 'Run A: the scrape took 3.2 ms.' \
  'In this session the median was 4 ms.' 'The p99 was 9 ms, load average 12.' 'A flaky test.' \
  '## Reproducible' \
  '`bench/scrape_compare.sh build/roce_qos_exporter 300 60`, 2026-11-26, the 2-core VM: median 0.5 ms.' \
  'We run a check every 250 ms.' >"$planted/docs/notebook.md"
# A load narrative in docs/ and in a README under tests/ (line 3 of each).
printf '%s\n' '# Load' '' 'Measured on the 2-core VM shared with other builds.' >"$planted/docs/load.md"
# Comparisons with the past (a before/after pair of figures across a line break, a label by its
# past, a sentence opening on "Before,") and a temporal order that must be left alone.
printf '%s\n' '# Past' '' 'A cold build: 707 s (548 s user)' 'before, 230 s (249 s user) after.' '' \
  '| zlib level 6 (the previous gzip) | 1.06 ms |' '' 'Before, a start had no history.' '' \
  'The plan is read before the write, after the lock; SIGKILL before, between and after 2 writes.' \
  >"$planted/docs/past.md"
mkdir -p "$planted/tests/testbed/kernel" "$planted/tests/fixtures/replay/6.1"
printf '%s\n' '# Testbed' '' 'Boot took 9 s at load average 6.' >"$planted/tests/testbed/README.md"
# The kernel list: the real one, a kernels page that lost a series, captures of one kernel only.
cp "$root/tests/testbed/kernel/series" "$planted/tests/testbed/kernel/"
printf '# Kernel support: 5.10, 6.1\n' >"$planted/docs/kernels.md"
series=$("$root/tests/testbed/kernel/series" | sed "s/\([^ ]*\)/'\1'/g; s/ /, /g")
python3 "$root/tests/checks/lib/docs_rot.py" "$planted" "$exe" >"$planted/out.log" 2>&1
for expected in "alerts/README.md:1: tests/recording_test.yaml does not exist" \
  "RoceQosX.md:5: docs/nowhere.md does not exist" "RoceQosX.md:5: link ../gone.md does not resolve" \
  "RoceQosX.md: says an absent source is drift (it is roce_qos_observed_absent, never drift): **Fires" \
  "RoceQosX.md: says an absent source is drift (it is roce_qos_observed_absent, never drift): - **Absent" \
  'RoceQosX.md:5: roce_pfc_paused_ratio{window="15s"} is dropped by the lean profile' \
  "docs/operations.md: claims no state on disk without naming the mode" \
  'docs/notebook.md:5: states session history ("Run A"' \
  'docs/notebook.md:6: states session history ("this session"' \
  'docs/notebook.md:7: states session history ("load average"' \
  'docs/notebook.md:8: states session history ("flaky"' \
  'docs/notebook.md:3: the section "Lab notes" reports measured figures (3.2 ms, 4 ms, 9 ms)' \
  'docs/load.md:3: states session history ("shared with other builds"' \
  'tests/testbed/README.md:3: states session history ("load average"' \
  'docs/past.md: compares with the past ("548 s user) before, 230 s (249 s user) after"' \
  'docs/past.md: compares with the past ("(the previous gzip)"' \
  'docs/past.md: compares with the past ("Before,"' \
  "docs/kernels.md: names the kernels ['5.10', '6.1'], tests/testbed/kernel/series lists [$series]" \
  "README.md: names the kernels nowhere, tests/testbed/kernel/series lists [$series]" \
  "tests/fixtures/replay: holds captures of ['6.1'], tests/testbed/kernel/series lists [$series]"; do
  if grep -qF -- "$expected" "$planted/out.log"; then
    pass "docs_rot reports: $expected"
  else
    fail "docs_rot did not report: $expected"$'\n'"$(cat "$planted/out.log")"
  fi
done
for clean in "docs/notebook.md:10" "docs/notebook.md:11" '"Reproducible"' 'The plan is read before'; do
  if grep -qF -- "$clean" "$planted/out.log"; then
    fail "docs_rot reported a clean line ($clean):"$'\n'"$(grep -F -- "$clean" "$planted/out.log")"
  else
    pass "docs_rot leaves clean alone: $clean"
  fi
done
rm -rf "$planted"

work=$(mktemp -d)
ns=docs-check-$$
cleanup() {
  ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
  ip netns del "$ns" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/bin"
ln -s "$exe" "$work/bin/roce_qos_exporter"
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add veth0 type veth peer name veth1
ip -n "$ns" link set veth0 up
ip -n "$ns" link set veth1 up

# Blocks: the fenced ```sh block right after a `<!-- docs-check: run -->` line.
awk -v dir="$work" '
  /<!-- docs-check: run -->/ { armed = 1; next }
  armed && /^```sh/ { n++; file = sprintf("%s/block%d.sh", dir, n); inside = 1; armed = 0; next }
  inside && /^```/ { inside = 0; close(file); next }
  inside { print > file }
  !/^[[:space:]]*$/ { armed = 0 }
' "$root/README.md"
blocks=("$work"/block*.sh)
[[ -e ${blocks[0]} ]] || fail "README.md has no block marked docs-check: run"
for block in "${blocks[@]}"; do
  [[ -e $block ]] || continue
  name=README.md:$(basename "$block" .sh)
  if (cd "$work" && PATH="$work/bin:$PATH" timeout 60 ip netns exec "$ns" \
      bash -euo pipefail "$block") >"$block.out" 2>&1; then
    pass "$name runs ($(wc -l <"$block.out") lines of output)"
  else
    fail "$name failed:"$'\n'"$(cat "$block")"$'\n'"---- output"$'\n'"$(tail -n 20 "$block.out")"
  fi
  ip netns pids "$ns" | xargs -r kill 2>/dev/null
done

echo "docs: $failures failure(s)"
((failures == 0))
