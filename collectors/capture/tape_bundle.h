#pragma once

// A capture bundle: everything the collectors read from the kernel on one node (netlink
// exchanges, SIOCETHTOOL round trips, sysfs/procfs/configfs reads), as written by
// `roce_qos_exporter capture` and read back by `--replay`. The format is line-oriented text
// (docs/capture.md "Bundle format"): the first line is the magic and version, then one record
// per line, fields separated by one space, byte strings in base64, paths and names
// percent-encoded so they stay readable.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace roceqos::tape {

using Blob = std::vector<std::byte>;

/// One netlink request and every datagram the kernel answered with. The request is stored with
/// nlmsg_seq and nlmsg_pid zeroed (they differ per run); seq and port_id are the recorded ones,
/// which the replies carry. errnum != 0: the exchange failed in transport (timeout, sendto).
struct NetlinkExchange {
  int protocol = 0;
  uint32_t seq = 0;
  uint32_t port_id = 0;
  int errnum = 0;
  Blob request;
  std::vector<Blob> replies;
};

/// One SIOCETHTOOL call: the command buffer before (`in`) and after (`out`) the ioctl.
struct IoctlExchange {
  std::string ifname;
  int errnum = 0;
  Blob in;
  Blob out;
};

/// One file-system observation. op: "read" (data = content), "readlink" (data = target),
/// "exists" (data = "1"/"0"), "isdir" (data = "1"/"0"), "list" (data = regular file names, one
/// per line), "listdirs" (data = directory names, one per line). errnum: 0, ENOENT for missing, or
/// the failure's errno.
struct FsEntry {
  std::string op;
  std::string path;
  int errnum = 0;
  std::string data;
};

struct Bundle {
  /// Manifest: key/value pairs in order (format, exporter version, kernel, host paths, ...).
  std::vector<std::pair<std::string, std::string>> meta;
  std::vector<NetlinkExchange> netlink;
  std::vector<IoctlExchange> ioctls;
  std::vector<FsEntry> fs;
};

inline constexpr std::string_view kMagic = "roce-qos-capture";
inline constexpr int kVersion = 1;
/// The largest bundle --replay reads: a capture of one node (3 samples) is a few hundred KiB, and
/// one of a host with dozens of ports a few MiB (docs/capture.md "Bundle format"); the bound keeps
/// a wrong path (/dev/zero, a disk image) from being read into memory.
inline constexpr size_t kMaxBundleBytes = size_t{64} << 20;

std::string Serialize(const Bundle& bundle);
/// Parses a bundle; every malformed line is an Error naming its line number, never a crash.
Result<Bundle> Parse(std::string_view text);

std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);
/// Percent-encodes every byte outside [A-Za-z0-9._/:@+=,-] (so a field never holds a space).
std::string Escape(std::string_view text);
Result<std::string> Unescape(std::string_view text);

}  // namespace roceqos::tape
