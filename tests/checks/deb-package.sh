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
#     the installed unit and with the enforce drop-in. Then the maintainer scripts, with the root
#     made to look like a running systemd (/run/systemd/system, a recording systemctl on PATH):
#     install enables and starts, an upgrade to a repacked higher version reloads and restarts
#     and keeps an edited conffile, remove stops and keeps the conffile and state, a reinstall
#     obeys policy-rc.d and an administrator's disable, purge removes conffile, state and the
#     enable symlinks.
# Needs root (chroot, unshare) and the Debian archive. SKIP_DEB_PACKAGE=1 skips it (says so).
set -euo pipefail
source "$(dirname "$0")/../common.bash"

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
# systemd first (a host that runs the unit has it), so that its own maintainer scripts run before
# the root is made to look like a running systemd below.
if in_root env DEBIAN_FRONTEND=noninteractive sh -c \
  "apt-get update -qq && apt-get install -y -qq --no-install-recommends systemd" \
  >"$work/apt.log" 2>&1; then
  pass "apt installed systemd into a clean bookworm root in $((SECONDS - t)) s"
else
  tail -20 "$work/apt.log" >&2
  fail "apt could not install systemd into a clean bookworm root"
  finish deb-package
fi

# The maintainer scripts start, restart and stop the unit only where systemd runs
# (/run/systemd/system), through deb-systemd-invoke, which asks /usr/sbin/policy-rc.d and then runs
# systemctl. Nothing runs in this root, so systemctl is a recording stub ahead of the real one on
# PATH: manager calls (daemon-reload, start, ...) are logged and succeed; unit-file calls
# (is-enabled, enable, disable) go to the real systemctl, offline (--root=/: /run/systemd/system
# would make it look for the manager). apt runs dpkg with its own PATH (DPkg::Path), which must
# include the stub's directory too.
# The slim image's policy-rc.d (exit 101: start nothing) is set aside until step 3d.
mkdir -p "$r/run/systemd/system"
mv "$r/usr/sbin/policy-rc.d" "$work/policy-rc.d.slim" 2>/dev/null || true
cat >"$r/usr/local/sbin/systemctl" <<'EOF'
#!/bin/sh
echo "$*" >>/var/log/systemctl-stub.log
for arg; do
  case $arg in
    is-enabled | enable | disable | reenable | mask | unmask | preset) exec /usr/bin/systemctl --root=/ "$@" ;;
    is-active) exit 3 ;; # nothing runs here
  esac
done
exit 0
EOF
chmod 0755 "$r/usr/local/sbin/systemctl"
calls=$r/var/log/systemctl-stub.log
unit_name=roce-qos-exporter.service
wants=/etc/systemd/system/multi-user.target.wants/$unit_name
# called ACTION: the stub saw `systemctl ... ACTION ... roce-qos-exporter.service` (or, for
# daemon-reload, the bare call) since the log was last cleared.
called() {
  if [[ "$1" == daemon-reload ]]; then
    grep -qE '(^| )daemon-reload( |$)' "$calls" 2>/dev/null
  else
    grep -qE "(^| )$1 (.* )?$unit_name( |\$)" "$calls" 2>/dev/null
  fi
}
calls_seen() { tr '\n' ';' <"$calls" 2>/dev/null || echo "none"; }
enabled() { [[ "$(readlink "$r$wants")" == /lib/systemd/system/$unit_name ]]; }

# 3a. Installation: enabled (deb-systemd-helper), daemon-reload, started.
: >"$calls"
t=$SECONDS
if in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  -o DPkg::Path=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin "/tmp/$(basename "$deb")" \
  >>"$work/apt.log" 2>&1; then
  pass "apt installed the package and its dependencies into the root in $((SECONDS - t)) s"
else
  tail -20 "$work/apt.log" >&2
  fail "apt could not install $(basename "$deb") into a clean bookworm root"
  finish deb-package
fi
enabled && pass "installation enabled the unit: $wants -> /lib/systemd/system/$unit_name" ||
  fail "installation did not enable the unit ($wants: $(ls -l "$r$wants" 2>&1))"
called daemon-reload && called start && ! called restart &&
  pass "installation ran daemon-reload and started the unit (deb-systemd-invoke start)" ||
  fail "installation: want daemon-reload and start of $unit_name, got: $(calls_seen)"
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
rm -r "$r/etc/systemd/system/$unit_name.d"

# 3b. Upgrade to a higher version (the same package repacked as $version+1): daemon-reload and
# restart, never a stop in prerm; the unit stays enabled; an edited conffile is kept. State the
# enforce drop-in's unit writes is planted here for the purge to remove.
mkdir "$work/v2"
dpkg-deb -R "$deb" "$work/v2"
sed -i "s/^Version: .*/Version: $version+1/" "$work/v2/DEBIAN/control"
dpkg-deb --root-owner-group -Zxz -b "$work/v2" "$r/tmp/upgrade.deb" >/dev/null
echo 'ROCE_QOS_EXPORTER_ARGS="--web.listen-address=127.0.0.1:9879"  # site edit' \
  >>"$r/etc/default/roce-qos-exporter"
mkdir -p "$r/var/lib/roce-qos-exporter" "$r/var/lib/private/roce-qos-exporter" \
  "$r/run/roce-qos-exporter" "$r/etc/roce-qos-exporter"
echo '{}' >"$r/var/lib/roce-qos-exporter/remediation.json"
echo '{}' >"$r/var/lib/private/roce-qos-exporter/remediation.json"
: >"$r/run/roce-qos-exporter/enforce.lock"
: >"$calls"
in_root dpkg -i /tmp/upgrade.deb >"$work/upgrade.log" 2>&1 || fail "dpkg -i (upgrade): $(cat "$work/upgrade.log")"
installed=$(in_root dpkg-query -W -f='${Version}' roce-qos-exporter 2>&1 || true)
[[ "$installed" == "$version+1" ]] && pass "upgraded $version -> $installed" ||
  fail "upgrade: installed version '$installed', want $version+1"
called daemon-reload && called restart && ! called stop &&
  pass "upgrade ran daemon-reload and restarted the unit, with no stop before the unpack" ||
  fail "upgrade: want daemon-reload and restart (no stop) of $unit_name, got: $(calls_seen)"
enabled && pass "the unit is still enabled after the upgrade" || fail "the upgrade disabled the unit"
grep -q '# site edit' "$r/etc/default/roce-qos-exporter" &&
  pass "the upgrade kept the edited /etc/default/roce-qos-exporter" ||
  fail "the upgrade lost the edit of /etc/default/roce-qos-exporter"

# 3c. Removal: stopped, daemon-reload, unit masked until a purge; conffile and state kept.
: >"$calls"
in_root dpkg -r roce-qos-exporter >"$work/remove.log" 2>&1 || fail "dpkg -r: $(cat "$work/remove.log")"
called stop && called daemon-reload &&
  pass "removal stopped the unit (deb-systemd-invoke stop) and ran daemon-reload" ||
  fail "removal: want stop of $unit_name and daemon-reload, got: $(calls_seen)"
[[ ! -e "$r/usr/bin/roce_qos_exporter" && ! -e "$r/lib/systemd/system/$unit_name" ]] ||
  fail "removal left the binary or the unit"
[[ "$(readlink "$r/etc/systemd/system/$unit_name")" == /dev/null ]] &&
  pass "removal masked the unit (deb-systemd-helper: its enable symlinks outlive the unit file)" ||
  fail "removal did not mask $unit_name: $(ls -l "$r/etc/systemd/system/$unit_name" 2>&1)"
grep -q '# site edit' "$r/etc/default/roce-qos-exporter" && [[ -e "$r/var/lib/roce-qos-exporter/remediation.json" ]] &&
  pass "removal kept the conffile (with its edit) and the state under /var/lib" ||
  fail "removal deleted the conffile or the state"

# 3d. Reinstallation with the slim image's policy-rc.d (exit 101): unmasked and enabled, but not
# started (deb-systemd-invoke obeys policy-rc.d, as invoke-rc.d does).
printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
chmod 0755 "$r/usr/sbin/policy-rc.d"
: >"$calls"
in_root dpkg -i /tmp/upgrade.deb >"$work/reinstall.log" 2>&1 || fail "dpkg -i (reinstall): $(cat "$work/reinstall.log")"
rm "$r/usr/sbin/policy-rc.d"
[[ ! -L "$r/etc/systemd/system/$unit_name" ]] && enabled && ! called start &&
  pass "reinstallation under policy-rc.d 101: unmasked, enabled, not started" ||
  fail "reinstallation under policy-rc.d 101: mask $(readlink "$r/etc/systemd/system/$unit_name"), wants $(readlink "$r$wants"), calls: $(calls_seen)"

# 3e. The administrator's disable holds across a reinstallation (deb-systemd-helper was-enabled).
in_root systemctl disable "$unit_name" >"$work/disable.log" 2>&1 || fail "systemctl disable: $(cat "$work/disable.log")"
: >"$calls"
in_root dpkg -i /tmp/upgrade.deb >"$work/reinstall2.log" 2>&1 || fail "dpkg -i (reinstall): $(cat "$work/reinstall2.log")"
! enabled && ! called start && ! called restart &&
  pass "a disabled unit stays disabled and stopped across a reinstallation" ||
  fail "reinstallation after systemctl disable: wants $(readlink "$r$wants"), calls: $(calls_seen)"
in_root systemctl enable "$unit_name" >/dev/null 2>&1 || true

# 3f. Purge: conffile, state, runtime directory, enable symlinks and deb-systemd-helper's records
# gone; an /etc/roce-qos-exporter holding the administrator's policy stays.
echo 'defaults: {}' >"$r/etc/roce-qos-exporter/policy.yaml"
in_root dpkg --purge roce-qos-exporter >"$work/purge.log" 2>&1 || fail "dpkg --purge: $(cat "$work/purge.log")"
left=()
for f in /usr/bin/roce_qos_exporter /etc/default/roce-qos-exporter /var/lib/roce-qos-exporter \
  /var/lib/private/roce-qos-exporter /run/roce-qos-exporter "$wants" /etc/systemd/system/$unit_name \
  /var/lib/systemd/deb-systemd-helper-enabled/$unit_name.dsh-also \
  /var/lib/systemd/deb-systemd-helper-masked/$unit_name; do
  [[ -e "$r$f" || -L "$r$f" ]] && left+=("$f")
done
((${#left[@]} == 0)) &&
  pass "purge removed the conffile, /var/lib and /run state, the enable symlink and deb-systemd-helper's records" ||
  fail "purge left ${left[*]}"
[[ -e "$r/etc/roce-qos-exporter/policy.yaml" ]] && pass "purge kept the administrator's /etc/roce-qos-exporter/policy.yaml" ||
  fail "purge deleted the administrator's policy file"

echo "deb-package: $((SECONDS - start)) s in all"
finish deb-package
