#!/usr/bin/env bash
# Checks the Dockerfile as far as a machine without a Docker engine allows:
#  - both stages are Debian bookworm; the runtime stage runs as a numeric non-root user;
#  - the build stage installs exactly `scripts/install-deps --build-only`'s packages and builds
#    with scripts/build as scripts/run-exporter does; its `cmake --install --strip` step is run
#    for real against $BUILD_DIR and must produce the binary the runtime stage copies;
#  - both package lists resolve in this machine's bookworm apt (`apt-get install --simulate`);
#  - the runtime stage has no -dev package and provides every shared library the binary needs:
#    `ldd` each library, `dpkg -S` its package, which must be in the runtime list (or libc6,
#    which every Debian image has); and every library the build's -dev packages link is there.
# Fast and precise about which list is wrong; container-image.sh builds and runs the real image.
set -euo pipefail
source "$(dirname "$0")/../../common.bash"

dockerfile=$root/Dockerfile
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Joins continuation lines so each instruction is one line.
sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$dockerfile" | grep -vE '^\s*#' >"$work/instructions"

# stage_lines N: the instructions of the N-th stage (1-based).
stage_lines() { awk -v n="$1" '/^FROM /{s++} s==n' "$work/instructions"; }
# packages N: the packages of the stage's `apt-get install` (options dropped), sorted.
packages() {
  stage_lines "$1" | grep -o 'apt-get install[^&]*' | tr -s ' \t' '\n' |
    grep -vE '^(apt-get|install|-.*|)$' | LC_ALL=C sort -u
}

froms=$(grep -c '^FROM ' "$work/instructions")
[[ "$froms" == 2 ]] && pass "two stages (build, runtime)" || fail "expected 2 FROM, found $froms"
base=$(sed -n 's/^ARG DEBIAN_IMAGE=//p' "$work/instructions")
[[ "$base" =~ ^debian:bookworm(-slim)?$ ]] && pass "base image $base" || fail "base image '$base' is not Debian bookworm"
grep '^FROM ' "$work/instructions" | grep -vq '\${DEBIAN_IMAGE}' &&
  fail "a stage does not use \${DEBIAN_IMAGE}" || pass "both stages FROM \${DEBIAN_IMAGE}"

# Build stage = install-deps --build-only.
packages 1 >"$work/build.pkgs"
sed -n '/^build_pkgs=(/,/^)/p' "$root/scripts/install-deps" | sed '1d;$d' | tr -s ' \t' '\n' |
  grep -v '^$' | LC_ALL=C sort -u >"$work/install-deps.pkgs"
if diff "$work/install-deps.pkgs" "$work/build.pkgs" >"$work/diff"; then
  pass "build stage installs exactly install-deps --build-only ($(wc -l <"$work/build.pkgs") packages)"
else
  fail "build stage packages differ from scripts/install-deps build_pkgs (< install-deps, > Dockerfile):"$'\n'"$(cat "$work/diff")"
fi
# The targets of scripts/run-exporter, compiled with CI's own build flags (scripts/test-all) in
# the checkout's build/ directory: scripts/build-image mounts the host's ccache there, and a
# compile is a hit only when flags and relative paths are the same.
run_exporter_flags=$(grep -o 'scripts/build.*' "$root/scripts/run-exporter" | grep -oE -- '-D[A-Z_]+=[A-Z]+' | sort)
ci_flags=$(grep -o '/scripts/build" .*' "$root/scripts/test-all" | grep -oE -- '-D[A-Z_]+=[A-Z]+' | sort)
want_flags=$(printf '%s\n' $run_exporter_flags $ci_flags | sort -u | paste -sd' ')
build_run=$(stage_lines 1 | grep -o 'RUN [A-Z_=/]*scripts/build[^&]*')
docker_flags=$(grep -oE -- '-D[A-Z_]+=[A-Z]+' <<<"$build_run" | sort | paste -sd' ')
[[ -n "$ci_flags" && -n "$docker_flags" && "$docker_flags" == "$want_flags" ]] &&
  pass "build stage runs scripts/build $docker_flags (scripts/run-exporter's targets, CI's flags)" ||
  fail "build stage flags '$docker_flags' differ from scripts/run-exporter's plus scripts/test-all's: '$want_flags'"
[[ "$build_run" == "RUN scripts/build "* && "$(stage_lines 1 | sed -n 's/^WORKDIR //p')" == /src ]] &&
  pass "build stage builds in /src/build, the default build directory (ccache-relative paths as on the host)" ||
  fail "build stage does not run 'scripts/build' with its default BUILD_DIR under WORKDIR /src: '$build_run'"

# The install step, for real.
exe=$(exporter_binary)
copy_line=$(stage_lines 2 | grep '^COPY --from=build .*roce_qos_exporter')
copy_src=$(sed -n 's/^COPY --from=build \([^ ]*\) \([^ ]*\)$/\1/p' <<<"$copy_line")
copy_dst=$(sed -n 's/^COPY --from=build \([^ ]*\) \([^ ]*\)$/\2/p' <<<"$copy_line")
install_cmd=$(stage_lines 1 | grep -o 'cmake --install [^&]*' | sed 's/ *$//')
prefix=$(sed -n 's/.*--prefix \([^ ]*\).*/\1/p' <<<"$install_cmd")
if cmake --install "$build_dir" --prefix "$work/out" --strip >"$work/install.log" 2>&1 &&
  [[ -x "$work/out/${copy_src#"$prefix"/}" ]]; then
  pass "'$install_cmd' (run against \$BUILD_DIR) yields ${copy_src}"
else
  fail "'cmake --install --strip' did not produce $copy_src: $(cat "$work/install.log")"
fi
entry=$(stage_lines 2 | sed -n 's/^ENTRYPOINT \["\([^"]*\)".*/\1/p')
[[ -n "$copy_dst" && "$entry" == "$copy_dst" ]] && pass "ENTRYPOINT runs the copied binary $entry" ||
  fail "ENTRYPOINT '$entry' is not the copied binary '$copy_dst'"
user=$(stage_lines 2 | sed -n 's/^USER //p' | tail -1)
[[ "$user" =~ ^[1-9][0-9]*(:[1-9][0-9]*)?$ ]] && pass "runtime runs as numeric non-root user $user" ||
  fail "runtime USER '$user' is not a numeric non-root uid"

# Runtime stage: libraries only.
packages 2 >"$work/runtime.pkgs"
grep -E -- '-dev$|^build-essential$|^cmake$' "$work/runtime.pkgs" &&
  fail "runtime stage installs build packages" || pass "runtime stage has no -dev/build package ($(wc -l <"$work/runtime.pkgs") packages)"

# Both lists resolve in bookworm's apt (no download, no change).
for stage in build runtime; do
  mapfile -t pk <"$work/$stage.pkgs"
  if apt-get install --simulate --no-install-recommends "${pk[@]}" >"$work/sim.log" 2>&1; then
    pass "apt-get install --simulate resolves the $stage packages"
  else
    fail "$stage packages do not resolve: $(grep -E '^E:|Unable' "$work/sim.log" | head -5)"
  fi
done

# owner LIBPATH: the Debian package that ships it (usrmerge: try both spellings).
owner() {
  local p=$1 real
  real=$(readlink -f "$p")
  for candidate in "$real" "${real#/usr}" "/usr$real" "$p"; do
    dpkg -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1 && return 0
  done
  return 1
}
in_runtime() { [[ "$1" == libc6 ]] || grep -qxF "$1" "$work/runtime.pkgs"; }

# Every shared library the binary needs.
mapfile -t libs < <(ldd "$exe" | awk '/=> \// { print $3 }')
for lib in "${libs[@]}"; do
  pkg=$(owner "$lib") || { fail "ldd: $lib belongs to no Debian package"; continue; }
  in_runtime "$pkg" && pass "ldd: $(basename "$lib") <- $pkg (in the runtime stage)" ||
    fail "ldd: $(basename "$lib") comes from $pkg, which the runtime stage does not install"
done
# Every library a build -dev package links (.so symlink -> runtime package), minus the ones the
# exporter does not link: prometheus-cpp (core, pull, push: the exporter uses its headers only, the
# MetricFamily values of render's test path, so the linker's --as-needed leaves the binary no
# NEEDED entry for it; should it ever link one, the ldd check above fails until the runtime stage
# installs it) and the test/benchmark libraries.
# lldpd: liblldpctl-dev's library ships in the lldpd package; the exporter loads it at run time
# (docs/decisions.md "LLDP: liblldpctl is loaded at run time"), checked below.
# libprotobuf-lite32: libprotobuf-dev ships libprotobuf-lite.so beside libprotobuf.so; the
# generated code of the kubelet client uses the full library (collectors/kubelet).
not_linked='^(libprometheus-cpp-(core|pull|push)1\.0|libbenchmark1debian|libgtest.*|libgmock.*|lldpd|libprotobuf-lite32)$'
while read -r dev; do
  while read -r so; do
    pkg=$(owner "$so") || continue
    [[ "$pkg" == "$dev" || "$pkg" =~ $not_linked ]] && continue
    in_runtime "$pkg" && pass "$dev links $(basename "$so") <- $pkg (in the runtime stage)" ||
      fail "$dev links $(basename "$so") from $pkg, which the runtime stage does not install"
  done < <(dpkg -L "$dev" 2>/dev/null | grep -E '/lib[^/]*\.so$' || true)
done <"$work/build.pkgs"

# liblldpctl, loaded at run time: the runtime stage copies it from the build stage (where
# liblldpctl-dev brings it) and installs every library it links.
lldpctl=/usr/lib/x86_64-linux-gnu/liblldpctl.so.4
stage_lines 2 | grep -q "^COPY --from=build ${lldpctl}\* " &&
  pass "runtime stage copies $(basename "$lldpctl") from the build stage" ||
  fail "runtime stage does not copy $lldpctl (the exporter dlopen()s it for LLDP)"
while read -r lib; do
  pkg=$(owner "$lib") || { fail "ldd $(basename "$lldpctl"): $lib belongs to no Debian package"; continue; }
  in_runtime "$pkg" && pass "$(basename "$lldpctl") links $(basename "$lib") <- $pkg (in the runtime stage)" ||
    fail "$(basename "$lldpctl") links $(basename "$lib") from $pkg, which the runtime stage does not install"
done < <(ldd "$lldpctl" | awk '/=> \// { print $3 }')

# The build context leaves local build trees and caches out.
for pattern in 'build*/' '.cache/' '**/node_modules/'; do
  grep -qxF "$pattern" "$root/.dockerignore" && pass ".dockerignore excludes $pattern" ||
    fail ".dockerignore does not exclude $pattern"
done

finish dockerfile
