#!/usr/bin/env python3
"""Writes the capture bundles of a simulated fleet from one real capture of an 8-port ConnectX node
(bench/fleet/node8/bundle.txt, taken in the testbed by bench/fleet/capture-node8), plus the
Prometheus file_sd targets file and the node roles.

Per node, the replayed counters move for --samples sampler periods of --period seconds, each at the
rate it moved in the capture times a per-node factor; then they hold their last value. Roles:
  storm   sim0 and sim1 are paused (rx, priority 3) all the time with no packet leaving on it
  drift   sim2's NIC has PFC on priorities 3 and 4 (the policy says 3)
  odd     runs another --config (bench/fleet/run)
  healthy everything else
Storm-origin incidents (incidents.json; docs/fleet.md "Where a storm starts"), by leaf switch (the
nodes i // --nodes-per-switch); a leaf with k % 4 == 1 is in cluster "pod-b", the others in "pod-a":
  pod-a leaf  incident A: the leaf's node 0 sim4 is an origin (it sends pause on priority 3 all the
              time while nothing it receives moves: a slow receiver), nodes 1-2 sim4 its victims
              (paused, nothing leaving); incident B the same on sim5, origin node 4, victims 5-7
              (when the leaf has them); sim6 of nodes 2 and 5 is noise (below)
  pod-b leaf  victims only, nodes 0-2 sim4: the origin is outside the fleet
  noise       short bursts of sent pause: every third interval a third of it paused, every
              fifth fully paused while what the port receives keeps moving (a congested port that
              drains); neither is the storm condition, so neither may be named an origin
Storms start at sample --incident-start (+0..2 per incident, staggered) and last to the end; the
victims of pod-b storm from the first sample.

How a bundle is extended (docs/capture.md, "Replay"): ETHTOOL_GSTATS is matched by the command
buffer before the call, which is the buffer the exporter reuses for every netdev in turn, so the
synthesised GSTATS records form one chain (each record's "before" is the previous record's "after",
netdevs in the capture's order); one record more closes the chain so that, once the samples are
used up, every netdev keeps answering its last values. RDMA statistics (netlink) are answered in
order per request: S replies per RDMA device, u64 counters advanced the same way.
Usage: synth.py --template BUNDLE --nodes N --period S --samples K --out DIR --base-port P
       [--nodes-per-switch 8] [--incident-start SAMPLE]
"""
import argparse
import base64
import json
import os
import struct
import sys

ETHTOOL_GSTRINGS, ETHTOOL_GSTATS, ETH_SS_STATS = 0x1B, 0x1D, 1
RTM_GETDCB, DCB_ATTR_IEEE_PFC_LEN, DCB_ATTR_IEEE_PFC = 78, 140, 2
NETLINK_RDMA = 20
STORM_PORTS, DRIFT_PORT = ("sim0", "sim1"), "sim2"


def b64(blob):
    return base64.b64encode(blob).decode() if blob else "-"


def unb64(field):
    return b"" if field == "-" else base64.b64decode(field)


def role_of(i, n):
    """Roles by index: a few storms and drifts spread over the fleet, one odd policy."""
    if i == 8 % n:
        return "odd"
    if i % 20 == 3:
        return "storm"
    if i % 20 == 6:
        return "drift"
    return "healthy"


class Template:
    def __init__(self, path):
        self.lines = open(path, encoding="utf-8").read().splitlines()
        self.names = {}  # netdev -> GSTATS counter names
        gstats = []  # (netdev, after bytes) in capture order
        rdma = {}  # request field -> [reply fields]
        for line in self.lines:
            f = line.split(" ")
            if f[0] == "ioctl":
                before, after = unb64(f[3]), unb64(f[4])
                cmd = struct.unpack_from("<I", before)[0]
                if cmd == ETHTOOL_GSTRINGS and struct.unpack_from("<I", after, 4)[0] == ETH_SS_STATS:
                    n = struct.unpack_from("<I", after, 8)[0]
                    self.names[f[1]] = [after[12 + 32 * k:12 + 32 * (k + 1)].split(b"\0")[0].decode()
                                        for k in range(n)]
                elif cmd == ETHTOOL_GSTATS:
                    gstats.append((f[1], after))
            elif f[0] == "netlink" and f[1] == str(NETLINK_RDMA) and f[4] != "-":
                rdma.setdefault(f[5], []).append(f[6])
        self.order = []
        for dev, _ in gstats:
            if dev in self.order:
                break
            self.order.append(dev)
        per_dev = {d: [a for dv, a in gstats if dv == d] for d in self.order}
        # Counter steps per captured sample (the capture's period is 1 s).
        self.first = {d: self.values(a[-1]) for d, a in per_dev.items()}
        self.step = {d: [(y - x) / (len(a) - 1) for x, y in zip(self.values(a[0]), self.values(a[-1]))]
                     for d, a in per_dev.items()}
        # RDMA stat requests whose replies moved: u64 slots that changed, with their step.
        self.rdma = {}
        for req, replies in rdma.items():
            if len(replies) < 2:
                continue
            first, last = unb64(replies[0]), unb64(replies[-1])
            slots = moved_u64_slots(first, last)
            if slots:
                self.rdma[req] = (last, [(p, struct.unpack_from("<Q", last, p)[0],
                                          (struct.unpack_from("<Q", last, p)[0] -
                                           struct.unpack_from("<Q", first, p)[0]) / (len(replies) - 1))
                                         for p in slots])

    @staticmethod
    def values(after):
        n = struct.unpack_from("<I", after, 4)[0]
        return list(struct.unpack_from(f"<{n}Q", after, 8))


def moved_u64_slots(a, b):
    """Offsets of the u64 attribute payloads (4-aligned, after a 12-byte attribute header) whose
    bytes differ between two replies of the same request."""
    slots = set()
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        for p in range(i - i % 4, max(i - 8, 3), -4):
            if p >= 4 and p + 8 <= len(b) and struct.unpack_from("<H", b, p - 4)[0] == 12:
                slots.add(p)
                break
    return sorted(slots)


def gstats_blob(values):
    return struct.pack(f"<II{len(values)}Q", ETHTOOL_GSTATS, len(values), *values)


def node_values(tpl, dev, role, factor, k, period, port=None):
    """Counter values of DEV at sample K; PORT = (kind, start sample) for an incident's port."""
    names = tpl.names[dev]
    vals = [base + int(step * factor * period * k)
            for base, step in zip(tpl.first[dev], tpl.step[dev])]
    idx = {n: j for j, n in enumerate(names)}
    if role == "storm" and dev in STORM_PORTS:
        storm(vals, idx, "rx", "tx", tpl.first[dev], period, k)
    if port:
        kind, start = port
        if kind == "noise":
            noise(vals, idx, period, k)
        elif k > start:
            # The counters of the sample before the storm, then the storm's steps from there.
            held = node_values(tpl, dev, role, factor, start, period)
            if kind == "origin":
                storm(vals, idx, "tx", "rx", held, period, k - start)
            else:
                storm(vals, idx, "rx", "tx", held, period, k - start)
    return vals


def storm(vals, idx, paused, frozen, held, period, k):
    """The PAUSED direction paused twice the wall time for K samples (the exporter clamps the ratio
    to 1, so a late sample still reads as fully paused) while nothing moves in the FROZEN one (on
    priority 3): rx paused with tx frozen is a victim, tx paused with rx frozen an origin."""
    vals[idx[f"{paused}_prio3_pause_duration"]] = held[idx[f"{paused}_prio3_pause_duration"]] + int(2e6 * period * k)
    vals[idx[f"{paused}_prio3_pause"]] = held[idx[f"{paused}_prio3_pause"]] + int(20000 * period * k)
    for name in (f"{frozen}_prio3_packets", f"{frozen}_prio3_bytes"):
        if name in idx:
            vals[idx[name]] = held[idx[name]]


def noise(vals, idx, period, k):
    """Sent pause in bursts, with what the port receives moving all the time: up to sample K,
    every third interval a third paused, every fifth fully paused (in microseconds)."""
    bursts = (k + 2) // 3 * period * 1e6 / 3 + (k + 4) // 5 * period * 1e6
    vals[idx["tx_prio3_pause_duration"]] += int(bursts)
    vals[idx["tx_prio3_pause"]] += int(bursts / 50)
    vals[idx["rx_prio3_packets"]] += int(1000 * period * k)


def layout(nodes, per_switch, start):
    """The incidents (origin or none, victims, noise) by leaf, and each node's incident ports:
    {node index: {netdev: (kind, start sample)}}."""
    incidents, ports = [], {}
    for leaf in range((nodes + per_switch - 1) // per_switch):
        first = leaf * per_switch
        members = list(range(first, min(first + per_switch, nodes)))
        if leaf % 4 == 1:  # pod-b: victims only, from the first sample
            plan = [(None, members[:3], "sim4")]
            noisy = []
        else:
            plan = [(members[0], members[1:3], "sim4")]
            if len(members) >= 6:
                plan.append((members[4], members[5:8], "sim5"))
            noisy = [m for m in (first + 2, first + 5) if m in members]
        for origin, victims, dev in plan:
            at = 0 if origin is None else start + len(incidents) % 3
            incidents.append({"id": len(incidents), "leaf": leaf, "netdev": dev,
                              "origin": origin, "victims": victims, "start_sample": at})
            for v in victims:
                ports.setdefault(v, {})[dev] = ("victim", at)
            if origin is not None:
                ports.setdefault(origin, {})[dev] = ("origin", at)
        for m in noisy:
            ports.setdefault(m, {})["sim6"] = ("noise", 0)
    return incidents, ports


def write_node(tpl, path, role, factor, period, samples, ports):
    out = []
    gstats_done, rdma_done = False, set()
    for line in tpl.lines:
        f = line.split(" ")
        if f[0] == "ioctl" and struct.unpack_from("<I", unb64(f[3]))[0] == ETHTOOL_GSTATS:
            if not gstats_done:
                gstats_done = True
                prev = bytes(8 + 8 * len(tpl.names[tpl.order[0]]))
                prev = struct.pack("<II", ETHTOOL_GSTATS, len(tpl.names[tpl.order[0]])) + prev[8:]
                chain = [(dev, gstats_blob(node_values(tpl, dev, role, factor, k, period, ports.get(dev))))
                         for k in range(samples) for dev in tpl.order]
                chain.append((tpl.order[0], chain[-len(tpl.order)][1]))
                for dev, after in chain:
                    out.append(f"ioctl {dev} 0 {b64(prev)} {b64(after)}")
                    prev = after
            continue
        if f[0] == "netlink" and f[1] == str(NETLINK_RDMA) and f[5] in tpl.rdma:
            if f[5] in rdma_done:  # the request's replies are all written with its first record
                continue
            rdma_done.add(f[5])
            last, slots = tpl.rdma[f[5]]
            own = unb64(f[6].split(",")[0])
            for k in range(samples):
                reply = bytearray(last)
                reply[8:16] = own[8:16]  # this record's nlmsg_seq and nlmsg_pid
                for p, base, step in slots:
                    struct.pack_into("<Q", reply, p, base + int(step * factor * period * k))
                out.append(" ".join(f[:6] + [b64(bytes(reply))]))
            continue
        if role == "drift" and f[0] == "netlink" and f[1] == "0" and f[5] != "-":
            req = unb64(f[5])
            if struct.unpack_from("<H", req, 4)[0] == RTM_GETDCB and DRIFT_PORT.encode() + b"\0" in req:
                f[6] = ",".join(b64(drift_pfc(unb64(r))) for r in f[6].split(","))
                line = " ".join(f)
        out.append(line)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")


def drift_pfc(reply):
    """PFC on priorities 3 and 4 in every ieee_pfc of a DCB reply (pfc_en is byte 1)."""
    r = bytearray(reply)
    marker = struct.pack("<HH", DCB_ATTR_IEEE_PFC_LEN, DCB_ATTR_IEEE_PFC)
    at = r.find(marker)
    while at >= 0:
        r[at + 5] |= 0x10
        at = r.find(marker, at + 1)
    return bytes(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--template", required=True)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--period", type=float, required=True)
    ap.add_argument("--samples", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--base-port", type=int, required=True)
    ap.add_argument("--nodes-per-switch", type=int, default=8)
    ap.add_argument("--incident-start", type=int, default=9)
    a = ap.parse_args()
    tpl = Template(a.template)
    if len(tpl.order) != 8 or not tpl.rdma:
        sys.exit(f"synth: {a.template}: expected 8 netdevs with GSTATS and moving RDMA counters, "
                 f"got {len(tpl.order)} netdevs and {len(tpl.rdma)} RDMA requests")
    os.makedirs(a.out, exist_ok=True)
    incidents, ports = layout(a.nodes, a.nodes_per_switch, a.incident_start)
    targets, roles = [], []
    for i in range(a.nodes):
        role = role_of(i, a.nodes)
        node = f"node{i:03d}"
        factor = 0.5 + (i * 37 % 100) / 100
        mine = ports.get(i, {})
        write_node(tpl, os.path.join(a.out, f"{node}.bundle"), role, factor, a.period, a.samples, mine)
        port = a.base_port + i
        leaf = i // a.nodes_per_switch
        switch, cluster = f"leaf{leaf:02d}", "pod-b" if leaf % 4 == 1 else "pod-a"
        targets.append({"targets": [f"127.0.0.1:{port}"],
                        "labels": {"node": node, "switch": switch, "rack": f"r{leaf:02d}",
                                   "cluster": cluster}})
        storming = sorted(set(STORM_PORTS if role == "storm" else ()) |
                          {d for d, (kind, _) in mine.items() if kind != "noise"})
        roles.append({"node": node, "address": f"127.0.0.1:{port}", "role": role, "instance": node,
                      "switch": switch, "cluster": cluster, "storm_ports": storming,
                      "ports": {d: kind for d, (kind, _) in mine.items()}})
    for inc in incidents:
        inc["switch"] = f"leaf{inc['leaf']:02d}"
        inc["origin"] = None if inc["origin"] is None else roles[inc["origin"]]["instance"]
        inc["victims"] = [roles[v]["instance"] for v in inc["victims"]]
    with open(os.path.join(a.out, "incidents.json"), "w", encoding="utf-8") as fh:
        json.dump(incidents, fh, indent=1)
    with open(os.path.join(a.out, "targets.json"), "w", encoding="utf-8") as fh:
        json.dump(targets, fh, indent=1)
    with open(os.path.join(a.out, "roles.json"), "w", encoding="utf-8") as fh:
        json.dump(roles, fh, indent=1)


if __name__ == "__main__":
    main()
