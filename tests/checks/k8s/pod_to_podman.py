#!/usr/bin/env python3
"""Turns the DaemonSet of a rendered kustomization into `podman run` arguments that run its
containers the way a kubelet with containerd/runc would (tests/checks/deploy/kubernetes-container.sh).

It plays kubelet's part for the volumes: a hostPath is a directory or file under --host-root (the
stand-in for the node's filesystem; DirectoryOrCreate is created there with mode 0755, Directory
and File must already exist, as kubelet demands), a configMap is its rendered data written to
files and bound read-only, an emptyDir is a tmpfs, a projected volume (service account token,
configMap, downwardAPI) is stand-in files bound read-only. A hostPath of type Socket must be a
socket there (kubelet checks it when the pod starts; a container restart binds whatever the path
names then). Where the pod (or else its
ServiceAccount) does not set automountServiceAccountToken: false, every container gets kubelet's
token mount, /var/run/secrets/kubernetes.io/serviceaccount, with stand-in files. Every field of the pod spec, container and
security context is either translated, deliberately ignored (listed below, with why) or refused:
a manifest change the harness does not model fails the check instead of being run differently.

Prints JSON: {"host_network": bool, "grace_seconds": int, "containers": [...], "init": [...],
"skipped": [names of containers whose image is not built here], "token_automount": bool},
each container {"name", "image", "run": [podman run arguments, without --name and --network],
"uid", "gid", "groups": [supplementary gids], "caps": [...], "probes": {"startup"|"readiness"|
"liveness": {"host", "port", "path", "scheme"}}, "writable_mounts": [...]}.
"""

import argparse
import json
import os
import stat
import sys

import yaml

# Pod spec fields that do not change how the container runs on one node: scheduling, identity,
# DNS (the harness has no cluster DNS) and service links (env of cluster services).
# automountServiceAccountToken is handled (token_mount), not ignored.
POD_IGNORED = {
    "nodeSelector", "affinity", "tolerations", "priorityClassName", "serviceAccountName",
    "dnsPolicy", "enableServiceLinks", "automountServiceAccountToken",
}
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
POD_HANDLED = {
    "hostNetwork", "hostPID", "hostIPC", "securityContext", "containers", "initContainers",
    "volumes", "terminationGracePeriodSeconds",
}
POD_SECURITY = {"runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile",
                "supplementalGroups"}
# Container fields: requests only schedule; ports are the node's under hostNetwork; the pull
# policy cannot matter, the image is local (--pull=never); probes are returned for the caller.
CONTAINER_IGNORED = {"imagePullPolicy", "ports", "terminationMessagePath",
                     "terminationMessagePolicy"}
CONTAINER_HANDLED = {
    "name", "image", "args", "command", "env", "securityContext", "resources", "volumeMounts",
    "startupProbe", "readinessProbe", "livenessProbe", "workingDir",
}
CONTAINER_SECURITY = {
    "allowPrivilegeEscalation", "readOnlyRootFilesystem", "privileged", "capabilities",
    "runAsUser", "runAsGroup", "runAsNonRoot", "seccompProfile",
}
MOUNT_FIELDS = {"name", "mountPath", "readOnly", "mountPropagation"}
PROPAGATION = {None: None, "None": None, "HostToContainer": "rslave", "Bidirectional": "rshared"}


class Unsupported(Exception):
    pass


def refuse_unknown(where, obj, known):
    unknown = sorted(set(obj) - known)
    if unknown:
        raise Unsupported(f"{where}: {', '.join(unknown)} not modelled by "
                          "tests/checks/k8s/pod_to_podman.py: teach it, or the check would run "
                          "something other than what the manifest says")


def quantity_bytes(text):
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 10**3, "M": 10**6, "G": 10**9}
    text = str(text)
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(text[: -len(suffix)]) * factor
    return int(text)


def prepare_volumes(spec, configmaps, host_root, work):
    """Returns {volume name: (kind, source)}, doing what kubelet does before the containers run."""
    volumes = {}
    for vol in spec.get("volumes", []):
        name = vol["name"]
        kinds = set(vol) - {"name"}
        if kinds == {"hostPath"}:
            hp = vol["hostPath"]
            refuse_unknown(f"volume {name} hostPath", hp, {"path", "type"})
            path, kind = hp["path"], hp.get("type", "")
            src = os.path.join(host_root, path.lstrip("/"))
            if kind == "DirectoryOrCreate":
                if not os.path.exists(src):
                    os.makedirs(src, mode=0o755)
                    os.chmod(src, 0o755)
            elif kind == "Directory":
                if not os.path.isdir(src):
                    raise Unsupported(f"volume {name}: hostPath {path} (type Directory) does not "
                                      "exist on the node: kubelet would not start the pod")
            elif kind == "File":
                if not os.path.isfile(src):
                    raise Unsupported(f"volume {name}: hostPath {path} (type File) does not "
                                      "exist on the node: kubelet would not start the pod")
            elif kind == "Socket":
                if not (os.path.exists(src) and stat.S_ISSOCK(os.stat(src).st_mode)):
                    raise Unsupported(f"volume {name}: hostPath {path} (type Socket) is no socket "
                                      "on the node: kubelet would not start the pod")
            else:
                raise Unsupported(f"volume {name}: hostPath type {kind!r} not modelled")
            volumes[name] = ("bind", src)
        elif kinds == {"configMap"}:
            cm = vol["configMap"]
            refuse_unknown(f"volume {name} configMap", cm, {"name", "defaultMode", "items"})
            if cm["name"] not in configmaps:
                raise Unsupported(f"volume {name}: ConfigMap {cm['name']} is not in the build")
            data = configmaps[cm["name"]]
            items = cm.get("items") or [{"key": k, "path": k} for k in sorted(data)]
            src = os.path.join(work, "configmaps", name)
            for item in items:
                target = os.path.join(src, item["path"])
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "w") as f:
                    f.write(data[item["key"]])
                os.chmod(target, item.get("mode", cm.get("defaultMode", 0o644)))
            volumes[name] = ("configmap", src)
        elif kinds == {"projected"}:
            volumes[name] = ("configmap", projected_stand_in(name, vol["projected"], work))
        elif kinds == {"emptyDir"}:
            refuse_unknown(f"volume {name} emptyDir", vol["emptyDir"] or {},
                           {"medium", "sizeLimit"})
            volumes[name] = ("tmpfs", (vol["emptyDir"] or {}).get("sizeLimit"))
        else:
            raise Unsupported(f"volume {name}: {', '.join(sorted(kinds))} not modelled")
    return volumes


def projected_stand_in(name, projected, work):
    """Writes stand-in files for a projected volume (no API server here: the token is not a
    token), so a container that mounts it sees the paths it would; returns the directory."""
    refuse_unknown(f"volume {name} projected", projected, {"sources", "defaultMode"})
    src = os.path.join(work, "projected", name)
    os.makedirs(src, exist_ok=True)
    files = {}
    for source in projected["sources"]:
        kinds = set(source)
        if kinds == {"serviceAccountToken"}:
            tok = source["serviceAccountToken"]
            refuse_unknown(f"volume {name} serviceAccountToken", tok,
                           {"path", "expirationSeconds", "audience"})
            files[tok["path"]] = "stand-in-service-account-token\n"
        elif kinds == {"configMap"}:
            cm = source["configMap"]
            refuse_unknown(f"volume {name} projected configMap", cm, {"name", "items"})
            for item in cm.get("items", []):
                files[item["path"]] = f"stand-in {cm['name']}/{item['key']}\n"
        elif kinds == {"downwardAPI"}:
            for item in source["downwardAPI"].get("items", []):
                files[item["path"]] = f"stand-in {item.get('fieldRef', {}).get('fieldPath')}\n"
        else:
            raise Unsupported(f"volume {name}: projected source {', '.join(sorted(kinds))} "
                              "not modelled")
    for path, text in files.items():
        target = os.path.join(src, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w") as f:
            f.write(text)
        os.chmod(target, projected.get("defaultMode", 0o644))
    return src


def token_mount(spec, docs, work):
    """kubelet's automatic token mount: the source directory when the pod gets one, else None.
    The pod's automountServiceAccountToken wins over its ServiceAccount's; the default is on."""
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        sa_name = spec.get("serviceAccountName", "default")
        for d in docs:
            if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == sa_name:
                automount = d.get("automountServiceAccountToken")
    if automount is False:
        return None
    return projected_stand_in("kube-api-access-auto", {"sources": [
        {"serviceAccountToken": {"path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace"}]}}]}, work)


def resolve_probe(probe, ports):
    if not probe:
        return None
    refuse_unknown("probe", probe, {"httpGet", "tcpSocket", "periodSeconds", "failureThreshold",
                                    "timeoutSeconds", "initialDelaySeconds", "successThreshold"})
    get = probe.get("httpGet")
    if not get:
        return None
    port = get["port"]
    if isinstance(port, str):
        port = ports[port]
    return {"host": get.get("host", "127.0.0.1"), "port": port, "path": get.get("path", "/"),
            "scheme": get.get("scheme", "HTTP").lower()}


def container_plan(c, spec, volumes, image_map, image_user, init, host_sysfs, token_src):
    name = c["name"]
    refuse_unknown(f"container {name}", c, CONTAINER_HANDLED | CONTAINER_IGNORED)
    pod_sc = spec.get("securityContext", {})
    refuse_unknown("pod securityContext", pod_sc, POD_SECURITY)
    sc = c.get("securityContext", {})
    refuse_unknown(f"container {name} securityContext", sc, CONTAINER_SECURITY)
    eff = {**pod_sc, **sc}  # the container's own setting wins, field by field
    image = c["image"]
    if image not in image_map:
        raise Unsupported(f"container {name}: image {image} is not the one built here "
                          f"({', '.join(image_map)})")
    run = ["--pull=never"]

    # Identity. Without runAsUser the image's USER applies; runAsNonRoot is kubelet's check.
    img_uid, _, img_gid = image_user.partition(":")
    uid = eff.get("runAsUser", int(img_uid) if img_uid.isdigit() else None)
    gid = eff.get("runAsGroup", int(img_gid) if img_gid.isdigit() else 0)
    if eff.get("runAsNonRoot") and (uid is None or uid == 0):
        raise Unsupported(f"container {name}: runAsNonRoot with uid {uid}: kubelet refuses to "
                          "start it (CreateContainerConfigError)")
    if "runAsUser" in eff or "runAsGroup" in eff:
        run.append(f"--user={uid}:{gid}")
    # The pod's supplementalGroups join every container's process (runc: process.user.
    # additionalGids), as the kubelet passes them.
    groups = [int(g) for g in pod_sc.get("supplementalGroups", [])]
    run += [f"--group-add={g}" for g in groups]

    # Capabilities, privilege, root filesystem, seccomp.
    caps = sc.get("capabilities", {})
    refuse_unknown(f"container {name} capabilities", caps, {"drop", "add"})
    for cap in caps.get("drop", []):
        run.append(f"--cap-drop={cap.lower()}")
    if caps.get("add") and uid != 0:
        # containerd gives a non-root process no effective capability; podman would make the
        # added ones ambient. Not modelled rather than run with more than a kubelet grants.
        raise Unsupported(f"container {name}: capabilities.add for uid {uid}")
    for cap in caps.get("add", []):
        run.append(f"--cap-add={cap.lower()}")
    if eff.get("privileged"):
        run.append("--privileged")
    if eff.get("allowPrivilegeEscalation") is False:
        run.append("--security-opt=no-new-privileges")
    if eff.get("readOnlyRootFilesystem"):
        # podman would otherwise mount tmpfs on /run, /tmp and /var/tmp, which neither kubelet
        # nor containerd does: exactly the writable /run this check exists to rule out.
        run += ["--read-only", "--read-only-tmpfs=false"]
    seccomp = eff.get("seccompProfile", {}).get("type", "RuntimeDefault")
    if seccomp == "Unconfined":
        run.append("--security-opt=seccomp=unconfined")
    elif seccomp != "RuntimeDefault":
        raise Unsupported(f"container {name}: seccompProfile {seccomp}")

    # Resources: the memory limit is enforced (a cgroup limit), requests only schedule.
    resources = c.get("resources", {})
    refuse_unknown(f"container {name} resources", resources, {"requests", "limits"})
    limits = resources.get("limits", {})
    refuse_unknown(f"container {name} limits", limits, {"memory", "cpu"})
    if "memory" in limits:
        run.append(f"--memory={quantity_bytes(limits['memory'])}b")
    if "cpu" in limits:
        cpu = str(limits["cpu"])
        run.append(f"--cpus={int(cpu[:-1]) / 1000 if cpu.endswith('m') else float(cpu)}")

    # Mounts, in the manifest's order. The runtime mounts a fresh read-only sysfs of the node's
    # kernel, where it cannot create a mount point: a mount under /sys whose directory this
    # kernel lacks (/sys/kernel/config without configfs, which a RoCE node has for rdma_cm)
    # cannot be made here and is reported as dropped, never silently.
    writable, dropped = [], []
    for m in c.get("volumeMounts", []):
        refuse_unknown(f"container {name} volumeMount {m.get('name')}", m, MOUNT_FIELDS)
        path = m["mountPath"]
        if host_sysfs and path.startswith("/sys/") and not os.path.exists(
                os.path.join(host_sysfs, path[len("/sys/"):])):
            dropped.append(f"{path} (absent from this kernel's sysfs)")
            continue
        kind, src = volumes[m["name"]]
        ro = bool(m.get("readOnly")) or kind == "configmap"
        if kind == "tmpfs":
            opt = f"type=tmpfs,destination={m['mountPath']}"
            if src:
                opt += f",tmpfs-size={quantity_bytes(src)}"
        else:
            opt = f"type=bind,src={src},dst={m['mountPath']}"
            if ro:
                opt += ",ro=true"
            propagation = PROPAGATION.get(m.get("mountPropagation"), "unknown")
            if propagation == "unknown":
                raise Unsupported(f"mountPropagation {m.get('mountPropagation')}")
            if propagation:
                opt += f",bind-propagation={propagation}"
        if not ro:
            writable.append(m["mountPath"])
        run.append(f"--mount={opt}")
    # kubelet adds its token mount to every container that does not mount that path itself.
    if token_src and TOKEN_PATH not in [m["mountPath"] for m in c.get("volumeMounts", [])]:
        run.append(f"--mount=type=bind,src={token_src},dst={TOKEN_PATH},ro=true")

    ports = {p["name"]: p["containerPort"] for p in c.get("ports", []) if "name" in p}
    for e in c.get("env", []):
        refuse_unknown(f"container {name} env", e, {"name", "value"})
        run.append(f"--env={e['name']}={e.get('value', '')}")
    if "workingDir" in c:
        run.append(f"--workdir={c['workingDir']}")
    if "command" in c:
        run.append("--entrypoint=" + json.dumps(c["command"]))
    run.append(image_map[image])
    run += [str(a) for a in c.get("args", [])]
    return {
        "name": name, "image": image, "run": run, "uid": uid, "gid": gid, "groups": groups,
        "caps": [x.upper() for x in caps.get("add", [])], "writable_mounts": writable,
        "dropped_mounts": dropped,
        "probes": {k: resolve_probe(c.get(k + "Probe"), ports)
                   for k in ("startup", "readiness", "liveness")} if not init else {},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rendered", help="kubectl kustomize output")
    ap.add_argument("--host-root", required=True, help="stand-in for the node's filesystem")
    ap.add_argument("--work", required=True, help="where configMap volumes are written")
    ap.add_argument("--image-map", action="append", default=[], help="MANIFEST_IMAGE=LOCAL_IMAGE")
    ap.add_argument("--image-user", default="", help="the image's USER (uid:gid)")
    ap.add_argument("--host-sysfs", default="",
                    help="this host's sysfs: mounts under /sys it lacks are dropped, and listed")
    args = ap.parse_args()
    image_map = dict(m.split("=", 1) for m in args.image_map)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it
    docs = [d for d in yaml.load_all(open(args.rendered), Loader=loader) if d]
    daemonsets = [d for d in docs if d["kind"] == "DaemonSet"]
    if len(daemonsets) != 1:
        raise Unsupported(f"{len(daemonsets)} DaemonSets in the build, expected 1")
    spec = daemonsets[0]["spec"]["template"]["spec"]
    refuse_unknown("pod spec", spec, POD_HANDLED | POD_IGNORED)
    if spec.get("hostPID") or spec.get("hostIPC"):
        raise Unsupported("hostPID/hostIPC not modelled")
    configmaps = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "ConfigMap"}
    volumes = prepare_volumes(spec, configmaps, args.host_root, args.work)
    token_src = token_mount(spec, docs, args.work)
    # Every initContainer runs (the pod waits for each), the containers that run an image built
    # here do; the others (the kube-rbac-proxy sidecar, from a registry) are listed as skipped.
    plan = {
        "host_network": bool(spec.get("hostNetwork")),
        "grace_seconds": spec.get("terminationGracePeriodSeconds", 30),
        "init": [container_plan(c, spec, volumes, image_map, args.image_user, True,
                                args.host_sysfs, token_src)
                 for c in spec.get("initContainers", [])],
        "containers": [container_plan(c, spec, volumes, image_map, args.image_user, False,
                                      args.host_sysfs, token_src)
                       for c in spec["containers"] if c["image"] in image_map],
        "skipped": [c["name"] for c in spec["containers"] if c["image"] not in image_map],
        "token_automount": token_src is not None,
    }
    json.dump(plan, sys.stdout, indent=1)


if __name__ == "__main__":
    try:
        main()
    except Unsupported as e:
        print(f"pod_to_podman: {e}", file=sys.stderr)
        sys.exit(1)
