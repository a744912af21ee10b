#pragma once

// Builders for netlink replies in tests. Messages are assembled with libmnl (through
// netlink::Message), then given the header fields a kernel reply would carry.

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/netlink/socket.h"

namespace roceqos::netlink::testing {

using Buffer = std::vector<std::byte>;

/// Copies a finished Message and stamps the reply's flags, sequence and port id.
inline Buffer Finish(Message& msg, uint16_t flags, uint32_t seq, uint32_t port_id) {
  nlmsghdr* nlh = msg.header();
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = seq;
  nlh->nlmsg_pid = port_id;
  auto bytes = msg.bytes();
  return Buffer(bytes.begin(), bytes.end());
}

/// The attribute stream of a Message (everything after nlmsghdr and `family_header_len`).
inline Buffer AttrStream(Message& msg, size_t family_header_len = 0) {
  auto bytes = msg.bytes();
  return Buffer(bytes.begin() +
                    static_cast<std::ptrdiff_t>(sizeof(nlmsghdr) + NLMSG_ALIGN(family_header_len)),
                bytes.end());
}

/// Datagrams carry several messages back to back, each NLMSG_ALIGNed (already true of ours).
inline Buffer Concat(std::initializer_list<Buffer> parts) {
  Buffer out;
  for (const Buffer& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

/// An NLMSG_ERROR as the kernel builds it (netlink_ack): struct nlmsgerr, the echoed request
/// payload unless capped, then the extended-ack TLVs.
inline Buffer ErrorReply(int error, uint32_t seq, uint32_t port_id, std::string_view extack = {},
                         bool capped = true, size_t echoed_payload = 0, int missing_type = -1) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = NLMSG_ERROR;
  nlh->nlmsg_seq = seq;
  nlh->nlmsg_pid = port_id;
  nlh->nlmsg_flags = capped ? NLM_F_CAPPED : 0;
  auto* err = static_cast<nlmsgerr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(nlmsgerr)));
  err->error = error;
  err->msg.nlmsg_len = static_cast<uint32_t>(sizeof(nlmsghdr) + echoed_payload);
  err->msg.nlmsg_type = 18;
  err->msg.nlmsg_seq = seq;
  if (!capped && echoed_payload > 0) {
    auto* echo = static_cast<unsigned char*>(mnl_nlmsg_put_extra_header(nlh, echoed_payload));
    std::memset(echo, 0xa5, echoed_payload);  // looks like attributes would, must be skipped
  }
  if (!extack.empty() || missing_type >= 0) {
    nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
    if (!extack.empty()) mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, std::string(extack).c_str());
    if (missing_type >= 0) {
      mnl_attr_put_u32(nlh, NLMSGERR_ATTR_MISS_TYPE, static_cast<uint32_t>(missing_type));
    }
  }
  auto* begin = reinterpret_cast<const std::byte*>(buf.data());
  return Buffer(begin, begin + nlh->nlmsg_len);
}

inline Buffer DoneReply(int error, uint32_t seq, uint32_t port_id, std::string_view extack = {}) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = NLMSG_DONE;
  nlh->nlmsg_flags = NLM_F_MULTI;
  nlh->nlmsg_seq = seq;
  nlh->nlmsg_pid = port_id;
  auto* status = static_cast<int*>(mnl_nlmsg_put_extra_header(nlh, sizeof(int)));
  *status = error;
  if (!extack.empty()) {
    nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
    mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, std::string(extack).c_str());
  }
  auto* begin = reinterpret_cast<const std::byte*>(buf.data());
  return Buffer(begin, begin + nlh->nlmsg_len);
}

/// Raw bytes for hand-made malformed streams.
inline Buffer RawBytes(std::initializer_list<int> values) {
  Buffer out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

/// A raw attribute header + payload with no checks, for malformed input (nla_len as given).
inline Buffer RawAttr(uint16_t nla_len, uint16_t type, std::initializer_list<int> payload) {
  Buffer out(4);
  std::memcpy(out.data(), &nla_len, 2);
  std::memcpy(out.data() + 2, &type, 2);
  for (int v : payload) out.push_back(static_cast<std::byte>(v));
  return out;
}

}  // namespace roceqos::netlink::testing
