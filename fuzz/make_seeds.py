#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/<target>/ from tests/fixtures and small hand-made inputs.

Run from anywhere; rewrites the seed-* files. libFuzzer adds what it finds to its own working
copy (scripts/fuzz), never to these directories.
"""
import pathlib
import re
import shutil
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIX = ROOT / 'tests' / 'fixtures'
CORPUS = ROOT / 'fuzz' / 'corpus'


def nla(kind, payload):
    """One netlink attribute (struct nlattr, NLA_ALIGN padding)."""
    raw = struct.pack('=HH', 4 + len(payload), kind) + payload
    return raw + b'\0' * (-len(raw) % 4)


def nlmsg(kind, flags, body):
    """One netlink message (struct nlmsghdr)."""
    return struct.pack('=IHHII', 16 + len(body), kind, flags, 1, 0) + body


def put(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f'seed-{name}').write_bytes(data)


def netlink_seeds():
    for f in sorted((FIX / 'netlink').glob('*.bin')):
        put('netlink_fuzz', f.stem, f.read_bytes())
        put('rtnetlink_fuzz', f.stem, f.read_bytes())
    # RTM_NEWLINK notification: ifinfomsg + IFLA_IFNAME (3), IFLA_MTU (4), IFLA_OPERSTATE (16).
    ifi = struct.pack('=BxHiII', 0, 1, 7, 0x1043, 0)
    attrs = nla(3, b'eth7\0') + nla(4, struct.pack('=I', 9000)) + nla(16, b'\x06')
    put('rtnetlink_fuzz', 'newlink', nlmsg(16, 0, ifi + attrs))
    put('rtnetlink_fuzz', 'dellink', nlmsg(17, 0, ifi + attrs))
    # RTM_GETDCB (78) notification (dcbnl_notify): struct dcbmsg + DCB_ATTR_IFNAME (1).
    put('rtnetlink_fuzz', 'newdcb', nlmsg(78, 0, struct.pack('=BBH', 0, 20, 0) + nla(1, b'eth7\0')))


def dcb_seeds():
    # DCB_ATTR_IEEE (13) nest: DCB_ATTR_IEEE_ETS (1, struct ieee_ets 59 bytes), DCB_ATTR_IEEE_PFC
    # (2, struct ieee_pfc 136 bytes) and DCB_ATTR_IEEE_APP_TABLE (3) with one DSCP app entry;
    # DCB_ATTR_DCBX (14) u8.
    ets = bytes([1, 8, 0]) + bytes(8) + bytes([50, 50] + [0] * 6) + bytes(8) + bytes([2] * 8) \
        + bytes(8)
    pfc = bytes([8, 0x08, 0, 0]) + bytes(4) + bytes(128)
    app = nla(1, struct.pack('=BBH', 3, 5, 26))  # DCB_ATTR_IEEE_APP: selector DSCP, prio 3
    ieee = nla(1, ets[:59]) + nla(2, pfc) + nla(3 | 0x8000, app)
    put('dcb_fuzz', 'ieee_get', nla(1, b'eth7\0') + nla(13 | 0x8000, ieee) + nla(14, b'\x04'))
    put('dcb_fuzz', 'set_reply', nla(13, b'\0'))


def rdma_seeds():
    # RDMA_NLDEV_ATTR_DEV_INDEX (1), DEV_NAME (2), PORT_INDEX (3), STAT_HWCOUNTERS (80) with
    # HWCOUNTER_ENTRY (81) { ENTRY_NAME (82), ENTRY_VALUE (83) }.
    head = nla(1, struct.pack('=I', 2)) + nla(2, b'mlx5_0\0') + nla(3, struct.pack('=I', 1))
    entries = b''.join(nla(81 | 0x8000, nla(82, n + b'\0') + nla(83, struct.pack('=Q', 7)))
                       for n in (b'out_of_buffer', b'np_cnp_sent', b'rp_cnp_handled'))
    put('rdma_fuzz', 'stat_get', head + nla(80 | 0x8000, entries))
    put('rdma_fuzz', 'port_get', head + nla(12, b'\x04') + nla(13, b'\x05'))


def module_seeds():
    for f in sorted((FIX / 'transceiver').glob('*.pages')):
        lower, upper, current = b'', {}, None
        for line in f.read_text().splitlines():
            m = re.match(r'\[(lower|page ([0-9a-fA-F]+))\]', line)
            if m:
                current = 'lower' if m.group(1) == 'lower' else int(m.group(2), 16)
                upper.setdefault(current, b'')
            elif line and not line.startswith('#') and current is not None:
                upper[current] += bytes.fromhex(line)
        lower = upper.pop('lower')
        put('module_fuzz', f.stem, lower + b''.join(bytes([p]) + d for p, d in upper.items()))


def ethtool_seeds():
    for f in sorted((FIX / 'captures').glob('*ethtool_S*.txt')):
        names = re.findall(r'^\s+([A-Za-z0-9_\[\]\.-]+):\s+\d+\s*$', f.read_text(), re.M)
        put('ethtool_map_fuzz', f.stem[:40],
            b''.join(n.encode()[:31].ljust(32, b'\0') for n in names))


def text_seeds():
    for name, text in {'zero': '0\n', 'one': '1\n', 'tc3': '3\n', 'tos': '106\n',
                       'mofed_tc': 'Global tclass=106\n', 'none': 'N/A\n',
                       'rpg_byte_reset': '32767\n', 'u64_max': '18446744073709551615\n',
                       'u64_over': '18446744073709551616\n'}.items():
        put('sysfs_fuzz', name, text.encode())
    # /proc/self/{stat,status,limits} and /proc/stat (process_stats)
    for name, text in {
            'proc_stat': '4242 (roce qos) x) S 1 4242 4242 0 -1 4194560 2113 0 0 0 137 42 0 0 20 0 '
                         '5 0 987654 187654144 2361 18446744073709551615 1 1 0 0 0 0 0 4096\n',
            'proc_status': 'Name:\troce\nVmSize:\t  183256 kB\nVmRSS:\t    9444 kB\n',
            'proc_limits': 'Max open files            1024                 524288               '
                           'files     \n',
            'proc_btime': 'cpu  1 2 3\nbtime 1764288000\n',
            # /proc/net/unix lines (lldp/control_socket): lldpd's listener, an unbound socket
            'proc_net_unix': '000000009ef3e1f5: 00000002 00000000 00010000 0001 01 23785 '
                             '/run/lldpd.socket\n',
            'proc_net_unix_anon': '0000000043f305aa: 00000003 00000000 00000000 0001 03  '
                                  '1126\n'}.items():
        put('sysfs_fuzz', name, text.encode())
    shutil.copy(ROOT / 'deploy/kubernetes/base/policy.yaml', CORPUS / 'policy_fuzz' / 'seed-default')
    # CNP marking and every DCQCN parameter key (dcqcn_params)
    shutil.copy(ROOT / 'deploy/policy/policy.example.yaml', CORPUS / 'policy_fuzz' / 'seed-example')
    put('policy_fuzz', 'rule', b'version: 1\ndevices:\n  - match: {netdev: "^eth[0-9]+$"}\n'
        b'    policy: {trust: dscp, pfc: [3]}\n')
    put('policy_fuzz', 'roce-ports-all', b'roce_ports: all\n')
    for name, argv in {'listen': ['--listen', '127.0.0.1:9'], 'check': ['check', '--policy', 'p.yaml'],
                       'bad': ['--period', '-1s'], 'version': ['--version']}.items():
        put('cli_fuzz', name, '\0'.join(argv).encode())
    for name, req in {'get': 'GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n',
                      'reload': 'POST /-/reload HTTP/1.1\r\nContent-Length: 0\r\n\r\n',
                      '404': 'HEAD /nope?x=1 HTTP/1.0\r\n\r\n',
                      'collect': 'GET /metrics?collect%5B%5D=self&collect[]=q%6Fs&x=%zz HTTP/1.1\r\n'
                                 'Host: x\r\nAccept-Encoding: gzip\r\n\r\n',
                      'collect-unknown': 'GET /metrics?collect[]=nope HTTP/1.1\r\nHost: x\r\n\r\n'}.items():
        put('http_fuzz', name, req.encode())


def lldp_seeds():
    """lldp_tlv_fuzz: [OUI choice][subtype, u16 length, OUI info]...; the TLVs lldpd handed over."""
    tlvs = []
    for line in (FIX / 'lldp' / 'lldpd-1.0.16-custom-tlvs.txt').read_text().splitlines():
        if line and not line.startswith('#'):
            _, subtype, info = line.split()
            tlvs.append(struct.pack('>BH', int(subtype), len(info) // 2) + bytes.fromhex(info))
    put('lldp_tlv_fuzz', 'lldpd', b'\0' + b''.join(tlvs))
    put('lldp_tlv_fuzz', 'cee_oui', b'\1' + tlvs[2])
    put('lldp_tlv_fuzz', 'app_dup', b'\0' + tlvs[3] + tlvs[3])


def capture_seeds():
    """Bundles (collectors/capture/tape_bundle.h): a hand-made one and a slice of each committed
    capture."""
    put('capture_fuzz', 'small', b'roce-qos-capture 1\nmeta kernel.release 6.1.0\n'
        b'netlink 0 1 5 0 AQI= AwQ=,BQ==\nnetlink 20 0 0 93 - -\n'
        b'ioctl sim0 0 CwAAAA== DAAAAA==\nfs read /sys/class/net/sim0/ecn 2 -\n'
        b'fs list /sys/x 0 YQpi\n')
    # The capture run's policy and flags (exporter/app/capture.h kMeta*), and an old bundle that
    # names a policy file without its content.
    def esc(text):
        plain = b'._/:@+=,-'
        return b''.join(bytes([c]) if chr(c).isalnum() and c < 128 or c in plain
                        else b'%%%02X' % c for c in text)
    policy = (b'defaults: {tcp_ecn: 1}\ndevices:\n  - name: loopback\n'
              b'    match: {netdev: lo}\n    policy: {pfc: [3, 4]}\n')
    put('capture_fuzz', 'settings', b'roce-qos-capture 1\nmeta capture.config /etc/p.yaml\n'
        b'meta capture.policy ' + esc(policy) + b'\nmeta capture.device_include sim%5B01%5D\n'
        b'meta capture.device_exclude veth9\nmeta capture.raw_include rx_.%2A\n'
        b'meta capture.qos_configfs_tos 1\nmeta capture.procfs_path /host/proc\n'
        b'fs read /host/proc/sys/net/ipv4/tcp_ecn 0 Mgo=\n')
    put('capture_fuzz', 'old-config', b'roce-qos-capture 1\nmeta capture.config /etc/p.yaml\n')
    for bundle in sorted((FIX / 'replay').glob('*/bundle.txt')):
        lines = bundle.read_bytes().split(b'\n')
        kept, per_kind = [lines[0]], {}
        for line in lines[1:]:
            kind = line.split(b' ', 1)[0]
            if kind in (b'netlink', b'ioctl', b'fs') and len(line) < 4096 and per_kind.get(kind, 0) < 8:
                per_kind[kind] = per_kind.get(kind, 0) + 1
                kept.append(line)
        put('capture_fuzz', bundle.parent.name, b'\n'.join(kept) + b'\n')


def exposition_seeds():
    """exposition_fuzz: [length][HELP text], then [length][label value] three per sample."""
    def pieces(*texts):
        return b''.join(bytes([len(t)]) + t for t in texts)
    put('exposition_fuzz', 'leaf', pieces(b'The LLDP neighbour of a netdev.', b'rql0', b'leaf01',
                                          b'Ethernet12'))
    # What a switch or an EEPROM may send: 0xff, an overlong '/', a surrogate, a sequence cut
    # short, escapes, well-formed UTF-8.
    put('exposition_fuzz', 'bytes', pieces(b'help \\ with\nescapes \xff', b'leaf\xff01',
                                           b'Eth\xc0\xaf1', b'\xed\xa0\x80', b'port \xe2\x82',
                                           b'a"b\\c\nd', b'caf\xc3\xa9 \xf0\x9f\x98\x80'))
    put('exposition_fuzz', 'empty', pieces(b'', b'', b'', b''))


def link_seeds():
    # ethtool netlink replies (collectors/link_stats.cc), each after struct genlmsghdr (4 bytes):
    # ETHTOOL_MSG_FEC_GET_REPLY (30): ETHTOOL_A_FEC_HEADER (1) { DEV_NAME (2) }, ACTIVE (4) = 50
    # (ETHTOOL_LINK_MODE_FEC_RS_BIT), STATS (5) { CORRECTED (2), UNCORR (3), CORR_BITS (4) }.
    genl = lambda cmd: struct.pack('=BBH', cmd, 1, 0)
    header = nla(1 | 0x8000, nla(2, b'sim0\0'))
    u64s = lambda *v: struct.pack('=%dQ' % len(v), *v)
    stats = nla(2, u64s(30, 10, 20)) + nla(3, u64s(4, 1, 3)) + nla(4, b'')
    put('link_stats_fuzz', 'fec', nlmsg(0x1c, 0, genl(30) + header + nla(4, struct.pack('=I', 50))
                                        + nla(5 | 0x8000, stats)))
    # ETHTOOL_MSG_STATS_GET_REPLY (33): ETHTOOL_A_STATS_GRP (4) { GRP_ID (2), GRP_SS_ID (3),
    # GRP_STAT (4) { <stat id>: u64 } }, eth-phy (0) then eth-mac (1).
    grp = lambda gid, ss, stat: nla(4 | 0x8000, nla(2, struct.pack('=I', gid))
                                    + nla(3, struct.pack('=I', ss)) + stat)
    phy = grp(0, 17, nla(4 | 0x8000, nla(0, u64s(386))))
    mac = grp(1, 18, nla(4 | 0x8000, nla(0, u64s(7))) + nla(4 | 0x8000, nla(4, u64s(17))))
    put('link_stats_fuzz', 'stats', nlmsg(0x1c, 0, genl(33) + nla(2 | 0x8000, nla(2, b'sim0\0'))
                                          + phy + mac))
    # ETHTOOL_MSG_LINKSTATE_GET_REPLY (6): LINK (2) u8, EXT_DOWN_CNT (7) u32.
    put('link_stats_fuzz', 'linkstate', nlmsg(0x1c, 0, genl(6) + header + nla(2, b'\x01')
                                              + nla(7, struct.pack('=I', 5))))


def pcie_seeds():
    """pcie_link_fuzz: the PCIe sysfs files as kernels 4.19..6.12 print them."""
    for name, text in {
            'speed': '16.0 GT/s PCIe\n', 'speed_old': '8 GT/s\n', 'speed_unknown': 'Unknown\n',
            'speed_unknown_old': 'Unknown speed\n', 'width': '16\n', 'width_zero': '0\n',
            'aer_cor': 'RxErr 3\nBadTLP 1\nBadDLLP 0\nRollover 0\nTimeout 2\nNonFatalErr 0\n'
                       'CorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 6\n',
            'aer_fatal': 'Undefined 0\nDLP 1\nSDES 0\nTLP 0\nTOTAL_ERR_FATAL 1\n',
            'aer_bit': 'dev_nonfatal_errs_bit[27] 4\nTOTAL_ERR_NONFATAL 4\n'}.items():
        put('pcie_link_fuzz', name, text.encode())


def addresses_seeds():
    put('addresses_fuzz', 'rtm_getaddr_dump_veth',
        (FIX / 'netlink' / 'rtm_getaddr_dump_veth.bin').read_bytes())
    # RTM_NEWADDR (20) of a point-to-point IPv4 address: ifaddrmsg + IFA_ADDRESS (1, the peer),
    # IFA_LOCAL (2), IFA_FLAGS (8).
    ifa = struct.pack('=BBBBI', 2, 32, 0x80, 0, 9)
    attrs = nla(1, bytes([192, 0, 2, 2])) + nla(2, bytes([192, 0, 2, 1])) + \
        nla(8, struct.pack('=I', 0x80))
    put('addresses_fuzz', 'newaddr_peer', nlmsg(20, 0, ifa + attrs))


def attribution_seeds():
    """cgroup_owner_fuzz: /proc/PID/cgroup of each owner shape; rdma_resources_fuzz: restrack
    replies as nldev.c builds them."""
    uid, uid_ = '0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b', '0f4a1c2e_7b3d_4e5f_9a8b_1c2d3e4f5a6b'
    cid = '3b9f2c1d4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c'
    for name, text in {
            'k8s_systemd_containerd': f'0::/kubepods.slice/kubepods-burstable.slice/'
                                      f'kubepods-burstable-pod{uid_}.slice/cri-containerd-{cid}.scope\n',
            'k8s_systemd_crio': f'0::/kubepods.slice/kubepods-pod{uid_}.slice/crio-{cid}.scope\n',
            'k8s_cgroupfs_v1': ''.join(f'{n}:{c}:/kubepods/besteffort/pod{uid}/{cid}\n' for n, c in
                                       ((12, 'pids'), (4, 'cpu,cpuacct'), (1, 'name=systemd'))),
            'k8s_cgroupns': f'0::/../../kubepods-besteffort-pod{uid_}.slice/docker-{cid}.scope\n',
            'slurm_v2': '0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_3\n',
            'slurm_v1': '9:freezer:/slurm_node07/uid_1000/job_88/step_batch/task_0\n'
                        '1:name=systemd:/system.slice/slurmd.service\n',
            'systemd_unit': '0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.service\n',
            'root': '0::/\n'}.items():
        put('cgroup_owner_fuzz', name, text.encode())
    # RDMA_NLDEV_ATTR_DEV_INDEX (1), DEV_NAME (2); RES_QP (19) { RES_QP_ENTRY (20) { PORT_INDEX
    # (3), RES_LQPN (21), RES_TYPE (26), RES_STATE (27), RES_PID (28) | RES_KERN_NAME (29),
    # RES_PDN (60) } }; RES_SUMMARY (15) { RES_SUMMARY_ENTRY (16) { NAME (17), PAD (0), CURR (18) } }.
    u32 = lambda v: struct.pack('=I', v)
    head = nla(1, u32(3)) + nla(2, b'rxe0\0')
    kern = nla(3, u32(1)) + nla(21, u32(1)) + nla(26, b'\x01') + nla(27, b'\x03') + \
        nla(29, b'ib_core\0')
    user = nla(3, u32(1)) + nla(21, u32(17)) + nla(26, b'\x02') + nla(27, b'\x03') + \
        nla(60, u32(2)) + nla(28, u32(4100))
    put('rdma_resources_fuzz', 'qp_dump', head + nla(19, nla(20, kern) + nla(20, user)))
    summary = b''.join(nla(16, nla(17, n + b'\0') + nla(0, b'') + nla(18, struct.pack('=Q', c)))
                       for n, c in ((b'pd', 3), (b'cq', 5), (b'qp', 4), (b'cm_id', 2), (b'mr', 1)))
    put('rdma_resources_fuzz', 'res_summary', head + nla(15, summary))


def gpu_topology_seeds():
    """gpu_topology_fuzz: numa_node, vendor and class as drivers/pci/pci-sysfs.c prints them, and
    resolved device paths (a switch, a VMD domain)."""
    for name, text in {
            'numa': '1\n', 'numa_none': '-1\n', 'vendor': '0x10de\n', 'class_3d': '0x030200\n',
            'path_switch': '/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/'
                           '0000:1b:00.0',
            'path_root_bus': '/sys/devices/pci0000:00/0000:00:05.0',
            'path_vmd': '/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0'}.items():
        put('gpu_topology_fuzz', name, text.encode())


def pod_log_dirs_seeds():
    """pod_log_dirs_fuzz: /var/log/pods entry names as kubelet's BuildPodLogsDirectory makes them
    (<namespace>_<name>_<uid>), one per line, with a static pod and entries to skip."""
    put('pod_log_dirs_fuzz', 'pods',
        b'kube-system_etcd-node-1_d41d8cd98f00b204e9800998ecf8427e\n'
        b'ml_trainer-0_0f4a1c2e-7b3d-4e5f-9a8b-1c2d3e4f5a6b\n'
        b'default_web.example_11111111-2222-3333-4444-555555555555\n'
        b'.\n..\nREADME\n')


if __name__ == '__main__':
    (CORPUS / 'policy_fuzz').mkdir(parents=True, exist_ok=True)
    netlink_seeds(); dcb_seeds(); rdma_seeds(); module_seeds(); ethtool_seeds(); text_seeds()
    capture_seeds(); lldp_seeds(); exposition_seeds(); pcie_seeds()
    link_seeds()
    addresses_seeds()
    attribution_seeds()
    gpu_topology_seeds()
    pod_log_dirs_seeds()
