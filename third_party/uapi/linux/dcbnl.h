/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Minimal DCB netlink UAPI for roce_qos_exporter.
 *
 * Origin: the numeric values and struct layouts of the kernel's include/uapi/linux/dcbnl.h, as
 * synced into iproute2 (iproute2/iproute2 @ee2a4a866256, include/uapi/linux/dcbnl.h) and recorded
 * in docs/kernel-interfaces.md §1.3-§1.5. Written out here because
 * Debian bookworm's linux-libc-dev 6.1 lacks DCB_ATTR_DCB_APP (kernel v6.2),
 * DCB_ATTR_DCB_APP_TRUST_TABLE (v6.2), DCB_ATTR_DCB_REWR_TABLE (v6.3) and DCB_APP_SEL_PCP (v6.2).
 * It keeps the system header's include guard and replaces it for this project (the directory is
 * on the include path ahead of /usr/include). Only what the exporter uses is defined; every value
 * is explicit so a mistake cannot hide in an enum's implicit numbering.
 */
#ifndef __LINUX_DCBNL_H__
#define __LINUX_DCBNL_H__

#include <linux/types.h>

#define IEEE_8021QAZ_MAX_TCS 8
#define IEEE_8021Q_MAX_PRIORITIES 8
#define DCBX_MAX_BUFFERS 8

#define IEEE_8021QAZ_TSA_STRICT 0
#define IEEE_8021QAZ_TSA_CB_SHAPER 1
#define IEEE_8021QAZ_TSA_ETS 2
#define IEEE_8021QAZ_TSA_VENDOR 255

/* sizeof = 59, no padding */
struct ieee_ets {
  __u8 willing;
  __u8 ets_cap;
  __u8 cbs;
  __u8 tc_tx_bw[IEEE_8021QAZ_MAX_TCS];
  __u8 tc_rx_bw[IEEE_8021QAZ_MAX_TCS];
  __u8 tc_tsa[IEEE_8021QAZ_MAX_TCS];
  __u8 prio_tc[IEEE_8021QAZ_MAX_TCS];
  __u8 tc_reco_bw[IEEE_8021QAZ_MAX_TCS];
  __u8 tc_reco_tsa[IEEE_8021QAZ_MAX_TCS];
  __u8 reco_prio_tc[IEEE_8021QAZ_MAX_TCS];
};

/* sizeof = 64; Kbit/s per TC, 0 = unlimited */
struct ieee_maxrate {
  __u64 tc_maxrate[IEEE_8021QAZ_MAX_TCS];
};

/* sizeof = 136: one pad byte after mbc, delay at 4, requests at 8, indications at 72 */
struct ieee_pfc {
  __u8 pfc_cap;
  __u8 pfc_en;
  __u8 mbc;
  __u16 delay;
  __u64 requests[IEEE_8021QAZ_MAX_TCS];
  __u64 indications[IEEE_8021QAZ_MAX_TCS];
};

/* sizeof = 44 */
struct dcbnl_buffer {
  __u8 prio2buffer[IEEE_8021Q_MAX_PRIORITIES];
  __u32 buffer_size[DCBX_MAX_BUFFERS];
  __u32 total_size;
};

/* sizeof = 4 */
struct dcb_app {
  __u8 selector;
  __u8 priority;
  __u16 protocol;
};

#define IEEE_8021QAZ_APP_SEL_ETHERTYPE 1
#define IEEE_8021QAZ_APP_SEL_STREAM 2
#define IEEE_8021QAZ_APP_SEL_DGRAM 3
#define IEEE_8021QAZ_APP_SEL_ANY 4
#define IEEE_8021QAZ_APP_SEL_DSCP 5
#define DCB_APP_SEL_PCP 255 /* v6.2 */

/* Fixed header after nlmsghdr for RTM_GETDCB / RTM_SETDCB. */
struct dcbmsg {
  __u8 dcb_family;
  __u8 cmd;
  __u16 dcb_pad;
};

/* enum dcbnl_commands (subset) */
#define DCB_CMD_IEEE_SET 20
#define DCB_CMD_IEEE_GET 21
#define DCB_CMD_GDCBX 22
#define DCB_CMD_SDCBX 23
#define DCB_CMD_CEE_GET 26
#define DCB_CMD_IEEE_DEL 27

/* enum dcbnl_attrs (subset) */
#define DCB_ATTR_UNDEFINED 0
#define DCB_ATTR_IFNAME 1 /* NLA_NUL_STRING */
#define DCB_ATTR_IEEE 13  /* NLA_NESTED on GET; NLA_U8 status (negative errno) in SET replies */
#define DCB_ATTR_DCBX 14  /* NLA_U8 */
#define DCB_ATTR_FEATCFG 15
#define DCB_ATTR_CEE 16
#define DCB_ATTR_MAX 16

/* enum ieee_attrs: inside DCB_ATTR_IEEE */
#define DCB_ATTR_IEEE_UNSPEC 0
#define DCB_ATTR_IEEE_ETS 1       /* struct ieee_ets */
#define DCB_ATTR_IEEE_PFC 2       /* struct ieee_pfc */
#define DCB_ATTR_IEEE_APP_TABLE 3 /* nested */
#define DCB_ATTR_IEEE_PEER_ETS 4
#define DCB_ATTR_IEEE_PEER_PFC 5
#define DCB_ATTR_IEEE_PEER_APP 6
#define DCB_ATTR_IEEE_MAXRATE 7 /* struct ieee_maxrate */
#define DCB_ATTR_IEEE_QCN 8
#define DCB_ATTR_IEEE_QCN_STATS 9
#define DCB_ATTR_DCB_BUFFER 10          /* struct dcbnl_buffer */
#define DCB_ATTR_DCB_APP_TRUST_TABLE 11 /* nested u8 selectors, v6.2 */
#define DCB_ATTR_DCB_REWR_TABLE 12      /* nested, v6.3 */
#define DCB_ATTR_IEEE_MAX 12

/* enum ieee_attrs_app: entries of APP_TABLE, REWR_TABLE and APP_TRUST_TABLE */
#define DCB_ATTR_IEEE_APP_UNSPEC 0
#define DCB_ATTR_IEEE_APP 1 /* struct dcb_app, selector 1-5 */
#define DCB_ATTR_DCB_APP 2  /* struct dcb_app, selector DCB_APP_SEL_PCP; v6.2 */

/* DCBX capability / mode bits (DCB_ATTR_DCBX) */
#define DCB_CAP_DCBX_HOST 0x01
#define DCB_CAP_DCBX_LLD_MANAGED 0x02
#define DCB_CAP_DCBX_VER_CEE 0x04
#define DCB_CAP_DCBX_VER_IEEE 0x08
#define DCB_CAP_DCBX_STATIC 0x10

#endif /* __LINUX_DCBNL_H__ */
