#!/usr/bin/env bash
# Builds the Debian package with scripts/build-deb and checks it:
#  1. lintian: no error (build-deb fails on one); warnings and infos are listed;
#  2. contents: the binary in /usr/bin, the unit in /lib/systemd/system with ExecStart there and one
#     Documentation= line, /etc/default/roce-qos-exporter a conffile, the drop-ins and both example
#     policies under /usr/share/doc/roce-qos-exporter/examples, every doc the package's texts cite,
#     a man page naming every flag of --help with an intact footer, the drop-ins and check's exit
#     statuses, Depends computed by dpkg-shlibdeps (the libraries the binary links); lldpd only
#     suggested (liblldpctl not NEEDED), no group in the maintainer scripts;
#  3. installed with apt (dependencies from the Debian archive) into a clean Debian 12 root: the
#     debian:bookworm-slim rootfs scripts/build-image made when it is cached (its dpkg doc
#     excludes lifted), else a minbase root made here once with mmdebstrap and cached; there, in a
#     private network namespace with no NIC: `--version`, `check` (exit status below), the
#     example policy loads, `systemd-analyze verify` (the root's systemd, installed with it) on
#     the installed unit and with the enforce drop-in; installation enabled the unit, and
#     dpkg registered the conffile.
# What the unit and the maintainer scripts do under a running systemd (start, restart, upgrade,
# remove, purge, the drop-ins) is tests/systemd/run's: a Debian 12 guest with systemd as PID 1.
# Needs root (chroot, unshare) and the Debian archive. SKIP_DEB_PACKAGE=1 skips it (says so).
set -euo pipefail
source "$(dirname "$0")/../../common.bash"

if [[ "${SKIP_DEB_PACKAGE:-0}" == 1 ]]; then
  echo "deb-package: SKIPPED (SKIP_DEB_PACKAGE=1): the package was not built or installed" >&2
  exit 0
fi
[[ $(id -u) == 0 ]] || { fail "needs root (chroot, unshare)"; finish deb-package; }

version=$(sed -n 's/^project(roce_qos_exporter VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
image_cache=${IMAGE_CACHE:-$root/build/container}
cache=${DEB_ROOT_CACHE:-$build_dir/deb-root}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS

# 1. Build + lintian.
if BUILD_DIR=$build_dir "$root/scripts/build-deb" >"$work/build.log" 2>&1; then
  deb=$(tail -1 "$work/build.log")
  pass "scripts/build-deb built $(basename "$deb") in $((SECONDS - start)) s; lintian: no error"
else
  tail -40 "$work/build.log" >&2
  fail "scripts/build-deb failed"
  finish deb-package
fi
lintian --allow-root -I --pedantic "$deb" >"$work/lintian.log" 2>&1 || true
grep -q '^E:' "$work/lintian.log" && fail "lintian errors: $(grep '^E:' "$work/lintian.log")"
pass "lintian tags (docs/decisions.md explains each): $(grep -cE '^[WIP]:' "$work/lintian.log")"
sed -n 's/^\([WIP]\): [^:]*: /  \1: /p' "$work/lintian.log"

# 2. Contents.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$work/files"
for f in /usr/bin/roce_qos_exporter /lib/systemd/system/roce-qos-exporter.service \
  /etc/default/roce-qos-exporter /usr/share/man/man8/roce_qos_exporter.8.gz \
  /usr/share/doc/roce-qos-exporter/copyright /usr/share/doc/roce-qos-exporter/changelog.gz \
  /usr/share/doc/roce-qos-exporter/examples/enforce.conf \
  /usr/share/doc/roce-qos-exporter/examples/optics.conf \
  /usr/share/doc/roce-qos-exporter/examples/lldp.conf \
  /usr/share/doc/roce-qos-exporter/examples/attribution.conf \
  /usr/share/doc/roce-qos-exporter/examples/policy-default.yaml \
  /usr/share/doc/roce-qos-exporter/examples/policy.example.yaml \
  /usr/share/doc/roce-qos-exporter/README.md.gz \
  /usr/share/doc/roce-qos-exporter/docs/deployment.md.gz; do
  grep -qxF "$f" "$work/files" || fail "package lacks $f"
done
pass "package holds the binary, unit, /etc/default file, man page, copyright, changelog, examples, docs"
grep -E '^/usr/local|^/etc/systemd' "$work/files" && fail "package installs under /usr/local or /etc/systemd"
mkdir "$work/x"
dpkg-deb -x "$deb" "$work/x"
dpkg-deb -e "$deb" "$work/x/DEBIAN"
[[ "$(cat "$work/x/DEBIAN/conffiles")" == /etc/default/roce-qos-exporter ]] &&
  pass "conffiles: /etc/default/roce-qos-exporter" || fail "conffiles: $(cat "$work/x/DEBIAN/conffiles")"
for f in "$work/x/lib/systemd/system/roce-qos-exporter.service" \
  "$work/x/usr/share/doc/roce-qos-exporter/examples/enforce.conf"; do
  if grep -q '^ExecStart=/usr/bin/roce_qos_exporter ' "$f" && ! grep -q /usr/local "$f"; then
    pass "$(basename "$f"): ExecStart=/usr/bin/roce_qos_exporter, no /usr/local path"
  else
    fail "$(basename "$f"): ExecStart is not /usr/bin/roce_qos_exporter: $(grep -n 'ExecStart=\|/usr/local' "$f")"
  fi
done
depends=$(dpkg-deb -f "$deb" Depends)
for lib in $(objdump -p "$work/x/usr/bin/roce_qos_exporter" | awk '/NEEDED/ {print $2}'); do
  pkg=$( (dpkg -S "*/$lib" 2>/dev/null || true) | grep -v -- '-dev:' | head -1 | cut -d: -f1)
  [[ -n "$pkg" ]] && grep -qE "(^|, )${pkg//+/\\+}[a-z0-9.+-]*( |,|$)" <<<"$depends" ||
    fail "NEEDED $lib (package ${pkg:-?}) is not in Depends: $depends"
done
pass "Depends (dpkg-shlibdeps) covers every NEEDED library: $depends"
# lldpd is optional: liblldpctl is dlopen()ed (not NEEDED), and installing lldpd starts a daemon
# that transmits LLDP on every port. Suggests only; the maintainer scripts add no group.
objdump -p "$work/x/usr/bin/roce_qos_exporter" | grep -q 'NEEDED.*liblldpctl' &&
  fail "the binary links liblldpctl (it must dlopen it)" || pass "liblldpctl is not NEEDED (loaded at run time)"
grep -qw lldpd <<<"$(dpkg-deb -f "$deb" Depends Pre-Depends Recommends)" &&
  fail "Depends/Pre-Depends/Recommends pull lldpd: $(dpkg-deb -f "$deb" Depends Recommends)" ||
  pass "lldpd is neither a dependency nor recommended"
[[ "$(dpkg-deb -f "$deb" Suggests)" == lldpd ]] && pass "Suggests: lldpd" ||
  fail "Suggests is '$(dpkg-deb -f "$deb" Suggests)', expected lldpd"
dpkg-deb -e "$deb" "$work/control"
grep -nE 'groupadd|addgroup|adduser|usermod|gpasswd|_lldpd' "$work/control/"{postinst,prerm,postrm} &&
  fail "a maintainer script touches groups (the lldp.conf drop-in is the administrator's opt-in)" ||
  pass "the maintainer scripts add no group or membership"
help=$("$work/x/usr/bin/roce_qos_exporter" --help 2>&1)
man=$(zcat "$work/x/usr/share/man/man8/roce_qos_exporter.8.gz" | sed 's/\\-/-/g; s/\\f[BIRP]//g')
missing=()
for flag in $(grep -oE -- '--[a-z][a-z0-9._-]*' <<<"$help" | sort -u); do
  grep -qF -- "$flag" <<<"$man" || missing+=("$flag")
done
nflags=$(grep -oE -- '--[a-z][a-z0-9._-]*' <<<"$help" | sort -u | wc -l)
((${#missing[@]} == 0)) && pass "roce_qos_exporter(8) lists all $nflags flags of --help" ||
  fail "roce_qos_exporter(8) lacks ${missing[*]}"

# The man page's footer: version and date in their own fields, and rendered at 80 columns the date
# is intact (a --version line too long for the left field overprinted it: "revision Novemberd2026").
manroff=$(zcat "$work/x/usr/share/man/man8/roce_qos_exporter.8.gz")
th=$(grep -m1 '^\.TH ' <<<"$manroff")
date=$(awk -F'"' '{print $4}' <<<"$th")
source_field=$(awk -F'"' '{print $6}' <<<"$th")
footer=$(groff -man -Tascii -rLL=80n <<<"$manroff" 2>/dev/null | sed 's/.\x08//g' | grep -v '^ *$' | tail -1)
if [[ "$date" =~ ^[A-Z][a-z]+\ [0-9]{4}$ && "$source_field" == "roce_qos_exporter $version" &&
  "$footer" == *"roce_qos_exporter $version "*" $date "* ]]; then
  pass "roce_qos_exporter(8) footer: $(tr -s ' ' <<<"$footer")"
else
  fail "roce_qos_exporter(8) footer: .TH date '$date', source '$source_field', rendered '$footer'"
fi
# What the page promises: the drop-ins by their packaged path, check's exit statuses as the binary
# has them (exporter/app/check.h: an unverifiable field never makes 1; nothing selected is 2, run
# below in the root).
for want in examples/optics.conf examples/enforce.conf /var/lib/roce-qos-exporter/remediation.json; do
  grep -qF -- "$want" <<<"$man" || fail "roce_qos_exporter(8) does not mention $want"
done
exit_section=$(sed -n '/^\.SH "\?EXIT STATUS/,/^\.SH/p' <<<"$man")
if grep -q 'no device selected' <<<"$exit_section" && ! grep -qi 'absent' <<<"$exit_section"; then
  pass "roce_qos_exporter(8): the drop-ins, the state file, check's exit statuses (absent field: not 1)"
else
  fail "roce_qos_exporter(8) EXIT STATUS: $(tr '\n' ' ' <<<"$exit_section")"
fi
# Every doc the package's texts cite (docs/NAME.md in --help, the man page, the unit, the examples;
# file: and /usr/share/doc paths) is in the package.
units=("$work/x/lib/systemd/system/roce-qos-exporter.service" "$work/x/usr/share/doc/roce-qos-exporter/examples/"*.conf)
cited=$( {
  grep -ohE 'docs/[A-Za-z0-9_/.-]+\.md' - "${units[@]}" "$work/x/etc/default/roce-qos-exporter" \
    "$work/x/usr/share/doc/roce-qos-exporter/examples/"*.yaml <<<"$help$man" |
    sed 's|^|/usr/share/doc/roce-qos-exporter/|; s|$|.gz|'
  grep -ohE '/usr/share/doc/roce-qos-exporter/[A-Za-z0-9_/.-]*[A-Za-z0-9_/]' - "${units[@]}" <<<"$man"
} | grep -v '/NAME\.md' | sort -u)  # NAME: the page's placeholder
absent=()
for f in $cited; do grep -qxF -e "$f" -e "$f/" "$work/files" || absent+=("$f"); done
((${#absent[@]} == 0)) && pass "the $(wc -w <<<"$cited") docs and paths the package's texts cite are in it" ||
  fail "cited but not in the package: ${absent[*]}"
docs_lines=$(grep -c '^Documentation=' "$work/x/lib/systemd/system/roce-qos-exporter.service" || true)
((docs_lines == 1)) && pass "the packaged unit has one Documentation= line" ||
  fail "the packaged unit has $docs_lines Documentation= lines"

# 3. A clean Debian 12 root.
base=$image_cache/debian-bookworm-slim.tar
if [[ ! -s "$base" ]]; then
  base=$cache/bookworm-minbase.tar
  if [[ ! -s "$base" ]]; then
    mkdir -p "$cache"
    t=$SECONDS
    mmdebstrap --quiet --variant=minbase --format=tar \
      --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr bookworm "$base.tmp" \
      "deb ${DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm main" \
      "deb ${DEBIAN_MIRROR:-http://deb.debian.org/debian} bookworm-updates main" \
      "deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main"
    mv "$base.tmp" "$base"
    pass "made the minbase root $base in $((SECONDS - t)) s (cached)"
  fi
fi
r=$work/root
mkdir "$r"
tar --numeric-owner -xf "$base" -C "$r"
# The slim image's dpkg excludes (mmdebstrap --dpkgopt) would drop the man page and /usr/share/doc.
sed -i '/^path-\(exclude\|include\)/d' "$r"/etc/dpkg/dpkg.cfg.d/* 2>/dev/null || true
cp /etc/resolv.conf "$r/etc/resolv.conf"
cp "$deb" "$r/tmp/"
# in_root [--net] CMD...: CMD in the root, with /proc, /sys and /dev of its own mount namespace
# (gone with it) and Debian's PATH; --net adds a private network namespace (only lo: no NIC is
# selected).
in_root() {
  local ns=(--mount --fork)
  [[ "$1" == --net ]] && { ns+=(--net); shift; }
  unshare "${ns[@]}" -- bash -c 'r=$1; shift
    mount -t proc proc "$r/proc"; mount -t sysfs sysfs "$r/sys"; mount --rbind /dev "$r/dev"
    exec chroot "$r" /usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"' \
    bash "$r" "$@"
}
t=$SECONDS
# systemd first (a host that runs the unit has it; systemd-analyze verify below is the root's).
if in_root env DEBIAN_FRONTEND=noninteractive sh -c \
  "apt-get update -qq && apt-get install -y -qq --no-install-recommends systemd" \
  >"$work/apt.log" 2>&1; then
  pass "apt installed systemd into a clean bookworm root in $((SECONDS - t)) s"
else
  tail -20 "$work/apt.log" >&2
  fail "apt could not install systemd into a clean bookworm root"
  finish deb-package
fi

unit_name=roce-qos-exporter.service
wants=/etc/systemd/system/multi-user.target.wants/$unit_name
enabled() { [[ "$(readlink "$r$wants")" == /lib/systemd/system/$unit_name ]]; }

# 3a. Installation: enabled (deb-systemd-helper works without a running systemd; nothing runs
# here, so nothing is started: tests/systemd/run starts, restarts, upgrades, removes and purges
# it under a real systemd).
t=$SECONDS
if in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  "/tmp/$(basename "$deb")" \
  >>"$work/apt.log" 2>&1; then
  pass "apt installed the package and its dependencies into the root in $((SECONDS - t)) s"
else
  tail -20 "$work/apt.log" >&2
  fail "apt could not install $(basename "$deb") into a clean bookworm root"
  finish deb-package
fi
enabled && pass "installation enabled the unit: $wants -> /lib/systemd/system/$unit_name" ||
  fail "installation did not enable the unit ($wants: $(ls -l "$r$wants" 2>&1))"
line=$(in_root --net roce_qos_exporter --version 2>&1 || true)
[[ "$line" =~ ^roce_qos_exporter\ version\ $version\ \(revision\ ([0-9a-f]+|unknown)\)$ ]] &&
  pass "installed --version: $line" || fail "installed --version: '$line' (expected version $version)"

status=0
in_root --net roce_qos_exporter check >"$work/check.txt" 2>&1 || status=$?
want=2  # nothing selected is "could not check", never a green
if ((status == want)) && grep -q 'no RoCE device selected' "$work/check.txt"; then
  pass "installed check with no NIC: exit $status, 'no RoCE device selected'"
else
  fail "installed check with no NIC: exit $status (want $want): $(cat "$work/check.txt")"
fi
example=/usr/share/doc/roce-qos-exporter/examples/policy.example.yaml
in_root --net roce_qos_exporter check --config "$example" >"$work/example.txt" 2>&1 || true
if grep -qxF "policy: $example" "$work/example.txt"; then
  pass "the packaged example policy loads (check --config $example)"
else
  fail "check --config $example: $(cat "$work/example.txt")"
fi

# systemd-analyze verify on the installed files, with the root's own systemd (installed beside the
# package: a host that runs the unit has it); ExecStart must resolve inside the root.
unit=/lib/systemd/system/roce-qos-exporter.service
verify() { in_root --net env SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no "$unit" 2>&1 || true; }
out=$(verify)
[[ -z "$out" ]] && pass "systemd-analyze verify on the installed unit: clean" ||
  fail "systemd-analyze verify on the installed unit: $out"
mkdir -p "$r/etc/systemd/system/roce-qos-exporter.service.d"
cp "$r/usr/share/doc/roce-qos-exporter/examples/enforce.conf" "$r/etc/systemd/system/roce-qos-exporter.service.d/"
out=$(verify)
[[ -z "$out" ]] && pass "... with the packaged enforce drop-in in /etc/systemd/system: clean" ||
  fail "systemd-analyze verify with the enforce drop-in: $out"
mv "$r/usr/bin/roce_qos_exporter" "$r/usr/bin/roce_qos_exporter.moved"
out=$(verify)
grep -q "/usr/bin/roce_qos_exporter" <<<"$out" && pass "verify notices a missing /usr/bin/roce_qos_exporter" ||
  fail "verify did not check ExecStart inside the root: $out"
mv "$r/usr/bin/roce_qos_exporter.moved" "$r/usr/bin/roce_qos_exporter"

in_root dpkg-query -W -f='${Conffiles}' roce-qos-exporter >"$work/conffiles" 2>&1 || true
grep -q '/etc/default/roce-qos-exporter [0-9a-f]\{32\}' "$work/conffiles" &&
  pass "dpkg registered /etc/default/roce-qos-exporter as a conffile" ||
  fail "installed conffiles: $(cat "$work/conffiles")"

echo "deb-package: $((SECONDS - start)) s in all"
finish deb-package
