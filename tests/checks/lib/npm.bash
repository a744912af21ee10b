# npm with a deadline, for the checks' npm tools (tests/checks/lib/kubectl.bash's kubectl, the
# schema packages of tests/checks/k8s). Sourced after common.bash.
#
# npm has no overall deadline: an `npm ci` that stalls mid-download waits for ever with no output
# (a CI run of 688cf7c sat in kubernetes.sh's npm ci until CI's 5,400 s limit). Each attempt gets
# NPM_ATTEMPT_SECONDS (180; a normal fetch of either tool takes under 20 s here) and there are
# three, so a stall costs minutes and a dead registry fails the check with npm's own words.

# npm_bounded WHAT ARGS...: runs `npm ARGS...`, each attempt under the deadline; returns non-zero
# when all three failed, naming WHAT on stderr.
npm_bounded() {
  local what=$1 attempt rc
  shift
  for attempt in 1 2 3; do
    rc=0
    # timeout runs npm in its own process group and signals the whole group: npm's children too.
    timeout --kill-after=10 "${NPM_ATTEMPT_SECONDS:-180}" \
      npm --fetch-timeout=60000 --fetch-retries=2 "$@" || rc=$?
    ((rc == 0)) && return 0
    if ((rc == 124 || rc == 137)); then
      echo "npm $what: attempt $attempt stalled past ${NPM_ATTEMPT_SECONDS:-180} s" >&2
    else
      echo "npm $what: attempt $attempt failed (exit $rc)" >&2
    fi
  done
  echo "npm $what: gave up after 3 attempts" >&2
  return 1
}

# ensure_k8s_modules CACHE: tests/checks/k8s/node_modules as its package-lock.json pins them,
# installed again only when the lock file changed. The prefetch lane of scripts/test-all calls it
# while the build runs and kubernetes.sh before validating, so both hold a lock under CACHE.
ensure_k8s_modules() {
  local cache=$1 tools=$root/tests/checks/k8s
  mkdir -p "$cache"
  (
    flock 9
    cmp -s "$tools/package-lock.json" "$tools/node_modules/.roceqos-lock" 2>/dev/null && exit 0
    (cd "$tools" && npm_bounded "ci (tests/checks/k8s)" ci --no-audit --no-fund --loglevel=error >/dev/null) ||
      exit 1
    cp "$tools/package-lock.json" "$tools/node_modules/.roceqos-lock"
  ) 9>"$cache/k8s-node-modules.lock"
}
