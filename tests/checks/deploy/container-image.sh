#!/usr/bin/env bash
# Builds the real image from the unmodified Dockerfile (scripts/build-image: Debian's buildah,
# chroot isolation, base image rebuilt from deb.debian.org) and runs it:
#  - image config: non-root numeric USER, ENTRYPOINT = the binary, no CMD left from the base, port;
#  - runtime filesystem: no -dev/toolchain package or compiler, `ldd` inside the image resolves
#    every library, the binary is stripped, /bin/sh exists (the enforce component's initContainer);
#  - `roce_qos_exporter --version` in the image reports the project version (and the checkout's
#    git revision when the context holds a .git directory, as a CI clone does);
#  - the ENTRYPOINT without arguments, in a private network namespace: serves /-/healthy and
#    /metrics, keeps sampling, runs as uid/gid 65534 with no effective capability, and exits 0 on
#    SIGTERM.
# SKIP_CONTAINER_IMAGE=1 skips it (says so); CI never sets it.
set -euo pipefail
source "$(dirname "$0")/../../common.bash"

if [[ "${SKIP_CONTAINER_IMAGE:-0}" == 1 ]]; then
  echo "container-image: SKIPPED (SKIP_CONTAINER_IMAGE=1): the image was not built or run" >&2
  exit 0
fi

cache=${IMAGE_CACHE:-$root/build/container}
version=$(sed -n 's/^project(roce_qos_exporter VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
tag=localhost/roce-qos-exporter:$version
work=$(mktemp -d)
netns=roceqos-image-$$
ctr=""
exporter_pid=""
runner_pid=""

bh() {
  local driver
  driver=$(cat "$cache/storage-driver")
  buildah --root "$cache/storage" --runroot "$cache/run" --storage-driver "$driver" "$@"
}
cleanup() {
  [[ -n "$exporter_pid" ]] && kill "$exporter_pid" 2>/dev/null || true
  [[ -n "$runner_pid" ]] && wait "$runner_pid" 2>/dev/null || true
  [[ -n "$ctr" ]] && bh rm "$ctr" >/dev/null 2>&1 || true
  ip netns del "$netns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# 1. Build.
start=$SECONDS
if IMAGE_CACHE=$cache "$root/scripts/build-image" >"$work/build.log" 2>&1; then
  pass "scripts/build-image built $tag from the Dockerfile in $((SECONDS - start)) s ($(grep -o 'base rootfs .* in [0-9]* s' "$work/build.log" || echo 'cached base rootfs'))"
  cp "$work/build.log" "$cache/last-build.log"
else
  cp "$work/build.log" "$cache/last-build.log" 2>/dev/null || true
  echo "--- last 60 lines of the image build ($cache/last-build.log) ---" >&2
  tail -60 "$work/build.log" >&2
  fail "scripts/build-image failed after $((SECONDS - start)) s"
  finish container-image
fi

# 2. Image configuration.
config=$(bh inspect --type image "$tag" | jq -c '.OCIv1.config')
user=$(jq -r '.User // ""' <<<"$config")
[[ "$user" =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] && pass "image USER $user (numeric, non-root)" ||
  fail "image USER '$user' is not numeric non-root uid:gid"
entrypoint=$(jq -r '.Entrypoint // [] | join(" ")' <<<"$config")
[[ "$entrypoint" == /usr/local/bin/roce_qos_exporter ]] && pass "ENTRYPOINT $entrypoint" ||
  fail "ENTRYPOINT '$entrypoint' is not /usr/local/bin/roce_qos_exporter"
cmd=$(jq -r '.Cmd // [] | join(" ")' <<<"$config")
[[ -z "$cmd" ]] && pass "no CMD inherited from the base image (ENTRYPOINT runs without arguments)" ||
  fail "CMD '$cmd' would be passed to the exporter as arguments"
jq -e '.ExposedPorts | has("9879/tcp")' <<<"$config" >/dev/null && pass "EXPOSE 9879/tcp" ||
  fail "port 9879/tcp not exposed: $config"

ctr=$(bh from --pull=never --name "roceqos-check-$$" "$tag")
in_image() { bh run --isolation chroot "$ctr" -- "$@"; }

# 3. Runtime filesystem.
in_image dpkg-query -W -f='${Package}\n' >"$work/packages"
toolchain='(-dev|^gcc(-[0-9]+)?|^g\+\+(-[0-9]+)?|^cpp(-[0-9]+)?|^binutils.*|^make|^cmake.*|^build-essential|^git|^pkg-config|^pkgconf)$'
if grep -E "$toolchain" "$work/packages" >"$work/toolchain"; then
  fail "runtime image has build packages: $(paste -sd' ' "$work/toolchain")"
else
  pass "runtime image has no -dev/toolchain package ($(wc -l <"$work/packages") packages)"
fi
in_image sh -c 'for t in cc c++ gcc g++ ld as make cmake; do command -v "$t" || true; done' >"$work/tools"
[[ ! -s "$work/tools" ]] && pass "no compiler, linker or make in the runtime image" ||
  fail "runtime image has build tools: $(paste -sd' ' "$work/tools")"
if in_image ldd "$entrypoint" >"$work/ldd" 2>&1 && ! grep -q 'not found' "$work/ldd"; then
  pass "ldd in the image resolves all $(grep -c '=> /' "$work/ldd") libraries of the binary"
else
  fail "ldd in the image: $(grep 'not found' "$work/ldd" || cat "$work/ldd")"
fi
mnt=$(bh mount "$ctr")
if readelf -S --wide "$mnt$entrypoint" >"$work/sections" && ! grep -qE '\.symtab|\.debug_' "$work/sections"; then
  pass "binary is stripped ($(du -k "$mnt$entrypoint" | cut -f1) KiB)"
else
  fail "binary in the image has a symbol table or debug info (cmake --install --strip)"
fi
in_image /bin/sh -c 'exit 0' && pass "/bin/sh runs in the image (the enforce component's initContainer)" ||
  fail "no working /bin/sh in the image"

# 4. --version.
version_line=$(in_image "$entrypoint" --version 2>&1 || true)
expected_revision=unknown
[[ -d "$root/.git" ]] && expected_revision=$(git -C "$root" rev-parse --short=12 HEAD)
if [[ "$version_line" == "roce_qos_exporter version $version (revision $expected_revision)" ]]; then
  pass "--version in the image: $version_line"
else
  fail "--version in the image: '$version_line' (expected version $version, revision $expected_revision)"
fi

# 5. The image's ENTRYPOINT without arguments (what `docker run IMAGE` runs), in a private netns.
ip netns add "$netns"
ip -n "$netns" link set lo up
ip netns exec "$netns" buildah --root "$cache/storage" --runroot "$cache/run" \
  --storage-driver "$(cat "$cache/storage-driver")" run --isolation chroot "$ctr" -- "$entrypoint" \
  >"$work/exporter.log" 2>&1 &
runner_pid=$!
scrape() { ip netns exec "$netns" curl -sf --max-time 2 "http://127.0.0.1:9879$1"; }
deadline=$((SECONDS + 30))
until scrape /-/healthy >/dev/null 2>&1; do
  if ((SECONDS > deadline)) || ! kill -0 "$runner_pid" 2>/dev/null; then
    fail "exporter in the image never answered /-/healthy: $(tail -5 "$work/exporter.log")"
    finish container-image
  fi
  sleep 0.2
done
pass "/-/healthy answers from the image's exporter"
for pid in $(ip netns pids "$netns"); do
  [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == *"$entrypoint" ]] && exporter_pid=$pid
done
if [[ -n "$exporter_pid" ]]; then
  uids=$(awk '/^Uid:/ {print $2,$3,$4,$5}' "/proc/$exporter_pid/status")
  gids=$(awk '/^Gid:/ {print $2,$3,$4,$5}' "/proc/$exporter_pid/status")
  capeff=$(awk '/^CapEff:/ {print $2}' "/proc/$exporter_pid/status")
  [[ "$uids" == "65534 65534 65534 65534" && "$gids" == "65534 65534 65534 65534" ]] &&
    pass "exporter process runs as uid/gid 65534 (USER of the image)" ||
    fail "exporter process uids '$uids' gids '$gids', expected 65534"
  [[ "$capeff" =~ ^0+$ ]] && pass "exporter process has no effective capability" ||
    fail "exporter process has effective capabilities $capeff"
else
  fail "no roce_qos_exporter process in namespace $netns"
fi
samples() { scrape /metrics | awk '$1 == "roce_exporter_samples_total" {print $2}'; }
metrics=$(scrape /metrics || true)
grep -qxF "roce_exporter_build_info{version=\"$version\",revision=\"$expected_revision\"} 1" <<<"$metrics" &&
  pass "/metrics: roce_exporter_build_info{version=\"$version\"}" ||
  fail "/metrics has no roce_exporter_build_info for version $version: $(grep build_info <<<"$metrics")"
first=$(samples || echo 0)
deadline=$((SECONDS + 20))
until [[ "$(samples || echo 0)" -ge $((${first:-0} + 4)) ]]; do
  ((SECONDS > deadline)) && { fail "roce_exporter_samples_total stuck at ${first:-none}"; break; }
  sleep 0.25
done
((SECONDS <= deadline)) && pass "sampler runs in the image (samples_total ${first} -> $(samples))"

# SIGTERM to the container's process, as `docker stop` does.
if [[ -n "$exporter_pid" ]]; then
  kill -TERM "$exporter_pid"
  deadline=$((SECONDS + 15))
  while kill -0 "$runner_pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$runner_pid" 2>/dev/null; then
    fail "exporter did not exit within 15 s of SIGTERM"
  else
    status=0
    wait "$runner_pid" || status=$?
    runner_pid=""
    exporter_pid=""
    ((status == 0)) && pass "exporter exits 0 on SIGTERM" || fail "exporter exited $status on SIGTERM: $(tail -3 "$work/exporter.log")"
  fi
fi

finish container-image
