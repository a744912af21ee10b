#include "collectors/transceiver/module_eeprom.h"

#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "base/enum_names.h"
#include "collectors/ethtool_ioctl.h"
#include "collectors/netlink/genl.h"
#include "collectors/netlink/socket.h"
#include "collectors/transceiver/cmis.h"
#include "collectors/transceiver/sff8636.h"

namespace roceqos {
namespace {

constexpr uint8_t kI2cAddress = 0x50;  // SFF-8636 / CMIS memory map (A0h in 8-bit notation)

constexpr auto kReplyPolicy = netlink::MakePolicy<ETHTOOL_A_MODULE_EEPROM_MAX + 1>({
    {ETHTOOL_A_MODULE_EEPROM_HEADER, netlink::attr::Nested("ETHTOOL_A_MODULE_EEPROM_HEADER")},
    {ETHTOOL_A_MODULE_EEPROM_DATA,
     netlink::attr::Required(netlink::attr::Binary("ETHTOOL_A_MODULE_EEPROM_DATA", 0, 256))},
});

std::string Describe(const std::string& ifname, ModulePageAddress a) {
  if (!a.upper) return fmt::format("{} lower page", ifname);
  return fmt::format("{} page {:02x}h bank {}", ifname, a.page, a.bank);
}

Result<std::vector<uint8_t>> ExactHalfPage(std::vector<uint8_t> data, const std::string& what) {
  if (data.size() != kModuleHalfPage) {
    return MakeError(
        EIO, fmt::format("{}: {} bytes read, expected {}", what, data.size(), kModuleHalfPage));
  }
  return data;
}

}  // namespace

Result<std::vector<uint8_t>> ParseModuleEepromReply(const netlink::NlMessage& reply,
                                                    const std::string& what) {
  Result<netlink::Bytes> payload = netlink::Payload(reply, GENL_HDRLEN, what);
  if (!payload) return payload.error();
  Result<netlink::Attrs> attrs = netlink::Attrs::Parse(*payload, kReplyPolicy, what);
  if (!attrs) return attrs.error();
  netlink::Bytes raw = attrs->Raw(ETHTOOL_A_MODULE_EEPROM_DATA);  // binary, <= LENGTH
  // A range copy, not memcpy: a 0-byte attribute (the driver read nothing) makes an empty
  // vector whose data() is null, and memcpy with a null pointer is undefined even for 0 bytes.
  const auto* bytes = reinterpret_cast<const uint8_t*>(raw.data());
  return ExactHalfPage(std::vector<uint8_t>(bytes, bytes + raw.size()), what);
}

namespace {

class KernelModuleEepromIo final : public ModuleEepromIo {
 public:
  explicit KernelModuleEepromIo(bool ioctl_only) : netlink_absent_(ioctl_only) {}

  Result<std::vector<uint8_t>> ReadHalfPage(const std::string& ifname,
                                            ModulePageAddress address) override {
    if (netlink_absent_) return ReadIoctl(ifname, address);
    Result<std::vector<uint8_t>> data = ReadNetlink(ifname, address);
    // No ethtool family (ENOENT, kernels before 5.6: remembered), no MODULE_EEPROM_GET
    // (EOPNOTSUPP before 5.13, or a driver without module access): try the ioctl.
    if (data.ok()) {
      last_method_ = ModuleAccessMethod::kNetlink;
      return data;
    }
    if (data.error().errnum == ENOENT) netlink_absent_ = true;
    if (!netlink_absent_ && !data.error().NotSupported()) return data;
    const std::string netlink_error = data.error().message;
    Result<std::vector<uint8_t>> ioctl = ReadIoctl(ifname, address);
    if (ioctl.ok()) fallback_reason_ = netlink_error;
    return ioctl;
  }

  ModuleAccessMethod LastMethod() const override { return last_method_; }
  std::string FallbackReason() const override { return fallback_reason_; }

 private:
  Result<void> OpenGenl() {
    if (socket_) return {};
    Result<netlink::Socket> socket = netlink::Socket::Open(NETLINK_GENERIC);
    if (!socket) return socket.error();
    Result<netlink::GenlFamily> family = netlink::ResolveGenlFamily(*socket, ETHTOOL_GENL_NAME);
    if (!family) return family.error();
    family_id_ = family->id;
    socket_ = std::move(*socket);
    return {};
  }

  Result<std::vector<uint8_t>> ReadNetlink(const std::string& ifname, ModulePageAddress a) {
    if (auto opened = OpenGenl(); !opened) return opened.error();
    const std::string what = "ETHTOOL_MSG_MODULE_EEPROM_GET " + Describe(ifname, a);
    netlink::Message request =
        netlink::GenlRequest(family_id_, ETHTOOL_MSG_MODULE_EEPROM_GET, ETHTOOL_GENL_VERSION, 0);
    const size_t header = request.BeginNest(ETHTOOL_A_MODULE_EEPROM_HEADER);
    request.PutString(ETHTOOL_A_HEADER_DEV_NAME, ifname);
    request.EndNest(header);
    // The kernel refuses a read that crosses the lower/upper boundary, and a lower-page read with
    // a page other than 0.
    request.PutU32(ETHTOOL_A_MODULE_EEPROM_OFFSET, a.upper ? kModuleHalfPage : 0);
    request.PutU32(ETHTOOL_A_MODULE_EEPROM_LENGTH, kModuleHalfPage);
    request.PutU8(ETHTOOL_A_MODULE_EEPROM_PAGE, a.upper ? a.page : 0);
    request.PutU8(ETHTOOL_A_MODULE_EEPROM_BANK, a.bank);
    request.PutU8(ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, kI2cAddress);
    std::optional<Result<std::vector<uint8_t>>> data;
    Result<void> status = socket_->Request(
        request,
        [&](const netlink::NlMessage& reply) -> Result<void> {
          data.emplace(ParseModuleEepromReply(reply, what));
          if (!*data) return data->error();
          return {};
        },
        what);
    if (!status) return status.error();
    if (!data) return MakeError(EPROTO, what + ": no reply");
    return std::move(*data);
  }

  // ETHTOOL_GMODULEEEPROM addresses one flat image. For SFF-8636/8436 (ETH_MODULE_SFF_8636_MAX_LEN
  // = 640) it is lower page, upper 00h, 01h, 02h, 03h: upper page N at 128 * (N + 1).
  static std::optional<uint32_t> FlatOffset(const ethtool_modinfo& info, ModulePageAddress a) {
    if (!a.upper) return 0;
    if (a.bank != 0) return std::nullopt;
    const bool paged_qsfp = info.type == ETH_MODULE_SFF_8636 || info.type == ETH_MODULE_SFF_8436;
    if (a.page != 0 && (!paged_qsfp || a.page > 3)) return std::nullopt;
    const uint32_t offset = kModuleHalfPage * (a.page + 1u);
    if (offset + kModuleHalfPage > info.eeprom_len) return std::nullopt;
    return offset;
  }

  Result<std::vector<uint8_t>> ReadIoctl(const std::string& ifname, ModulePageAddress a) {
    Result<std::vector<uint8_t>> data = ReadIoctlOnce(ifname, a);
    if (data.ok()) last_method_ = ModuleAccessMethod::kIoctl;
    return data;
  }

  Result<std::vector<uint8_t>> ReadIoctlOnce(const std::string& ifname, ModulePageAddress a) {
    ethtool_modinfo info{};
    info.cmd = ETHTOOL_GMODULEINFO;
    if (auto done = ioctl_.Call(ifname, &info, "ETHTOOL_GMODULEINFO"); !done) return done.error();
    const std::string what = "ETHTOOL_GMODULEEEPROM " + Describe(ifname, a);
    std::optional<uint32_t> offset = FlatOffset(info, a);
    if (!offset) {
      return MakeError(EOPNOTSUPP, fmt::format("{}: not in the ioctl's flat image (type {}, {} "
                                               "bytes)",
                                               what, info.type, info.eeprom_len));
    }
    // struct ethtool_eeprom is followed by `len` data bytes.
    std::vector<unsigned char> buffer(sizeof(ethtool_eeprom) + kModuleHalfPage);
    ethtool_eeprom request{};
    request.cmd = ETHTOOL_GMODULEEEPROM;
    request.offset = *offset;
    request.len = kModuleHalfPage;
    std::memcpy(buffer.data(), &request, sizeof(request));
    if (auto done = ioctl_.Call(ifname, buffer.data(), what); !done) return done.error();
    std::memcpy(&request, buffer.data(), sizeof(request));
    const size_t got = std::min<size_t>(request.len, kModuleHalfPage);
    const auto* data = buffer.data() + sizeof(ethtool_eeprom);
    return ExactHalfPage(std::vector<uint8_t>(data, data + got), what);
  }

  std::optional<netlink::Socket> socket_;
  uint16_t family_id_ = 0;
  bool netlink_absent_ = false;
  ModuleAccessMethod last_method_ = ModuleAccessMethod::kNetlink;
  std::string fallback_reason_ = "ioctl only";  // replaced by netlink's error once it falls back
  EthtoolSocket ioctl_;
};

}  // namespace

std::unique_ptr<ModuleEepromIo> MakeKernelModuleEepromIo(bool ioctl_only) {
  return std::make_unique<KernelModuleEepromIo>(ioctl_only);
}

constexpr EnumName<ModuleAccessMethod> kModuleAccessMethodNames[] = {
    {ModuleAccessMethod::kNetlink, "netlink"}, {ModuleAccessMethod::kIoctl, "ioctl"}};
constexpr EnumName<ModuleSpec> kModuleSpecNames[] = {{ModuleSpec::kSff8636, "sff8636"},
                                                     {ModuleSpec::kCmis, "cmis"}};

std::string_view ModuleAccessMethodName(ModuleAccessMethod method) {
  return NameOf(kModuleAccessMethodNames, method);
}

std::string_view ModuleSpecName(ModuleSpec spec) { return NameOf(kModuleSpecNames, spec); }

std::string FormatModulePages(const std::vector<uint8_t>& pages) {
  std::string out;
  for (uint8_t page : pages) out += fmt::format("{}{:02x}h", out.empty() ? "" : " ", page);
  return out;
}

std::vector<uint8_t> ModuleExtraPages(const std::vector<uint8_t>& lower) {
  if (lower.size() < 3) return {};
  // SFF-8636 lower page byte 2 bit 2: Flat_mem; page 03h holds the thresholds.
  if (IsSff8636Identifier(lower[0])) {
    return (lower[2] & 0x04) ? std::vector<uint8_t>{} : std::vector<uint8_t>{0x03};
  }
  // CMIS lower page byte 2 bit 7: MemoryModel; 01h advertising, 02h thresholds, 11h lanes.
  if (IsCmisIdentifier(lower[0])) {
    return (lower[2] & 0x80) ? std::vector<uint8_t>{} : std::vector<uint8_t>{0x01, 0x02, 0x11};
  }
  return {};
}

Result<Transceiver> DecodeModule(const ModulePages& pages) {
  if (pages.lower.empty()) return MakeError(0, "module EEPROM: lower page missing");
  const uint8_t identifier = pages.lower[0];  // SFF-8024 identifier, byte 0 in both specs
  if (IsSff8636Identifier(identifier)) return DecodeSff8636(pages);
  if (IsCmisIdentifier(identifier)) return DecodeCmis(pages);
  return MakeError(EMEDIUMTYPE,
                   fmt::format("module EEPROM: identifier 0x{:02x} is neither SFF-8636 "
                               "(0x0c/0x0d/0x11) nor CMIS (0x18/0x19/0x1e)",
                               identifier));
}

Result<ModulePages> ModuleEepromCollector::ReadPages(const std::string& ifname,
                                                     ModuleAccess* access) {
  ModuleAccess used;
  auto note = [&] {
    if (io_.LastMethod() != ModuleAccessMethod::kIoctl) return;
    used.method = ModuleAccessMethod::kIoctl;
    used.fallback_reason = io_.FallbackReason();
  };
  ModulePages pages;
  Result<std::vector<uint8_t>> lower = io_.ReadHalfPage(ifname, {.page = 0, .upper = false});
  if (!lower) return lower.error();
  note();
  pages.lower = std::move(*lower);
  Result<std::vector<uint8_t>> page0 = io_.ReadHalfPage(ifname, {.page = 0x00});
  if (!page0) return page0.error();
  note();
  pages.upper[0x00] = std::move(*page0);
  for (uint8_t page : ModuleExtraPages(pages.lower)) {
    Result<std::vector<uint8_t>> data = io_.ReadHalfPage(ifname, {.page = page});
    if (!data) {
      // An optional page the module or driver does not offer (or the ioctl's flat image does not
      // hold: CMIS 01h/02h/11h): decode without it, and say which.
      if (data.error().NotSupported() || data.error().errnum == EINVAL) {
        used.unread_pages.push_back(page);
        continue;
      }
      return data.error();
    }
    note();
    pages.upper[page] = std::move(*data);
  }
  if (access) *access = std::move(used);
  return pages;
}

Result<Transceiver> ModuleEepromCollector::Read(const std::string& ifname, ModuleAccess* access) {
  Result<ModulePages> pages = ReadPages(ifname, access);
  if (!pages) return pages.error();
  Result<Transceiver> decoded = DecodeModule(*pages);
  if (!decoded) {
    return MakeError(decoded.error().errnum, ifname + ": " + decoded.error().message);
  }
  return decoded;
}

}  // namespace roceqos
