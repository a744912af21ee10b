#include "collectors/transceiver/module_eeprom.h"

#include <gtest/gtest.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <map>
#include <tuple>

#include "collectors/netlink/genl.h"
#include "tests/unit/support/module_pages.h"

namespace roceqos {
namespace {

using testing_support::LoadModulePagesFixture;

// Serves a page image; records every read; pages can be made to fail with an errno.
class FakeModuleIo : public ModuleEepromIo {
 public:
  explicit FakeModuleIo(ModulePages pages) : pages_(std::move(pages)) {}

  Result<std::vector<uint8_t>> ReadHalfPage(const std::string& ifname,
                                            ModulePageAddress a) override {
    const int key = a.upper ? a.page : -1;
    reads.push_back(key);
    last_ifname = ifname;
    if (auto f = failures.find(key); f != failures.end()) return MakeError(f->second, "injected");
    if (!a.upper) return pages_.lower;
    auto page = pages_.upper.find(a.page);
    if (page == pages_.upper.end()) return MakeError(EINVAL, "no such page");
    return page->second;
  }

  std::vector<int> reads;  // -1 = lower page
  std::map<int, int> failures;
  std::string last_ifname;

 private:
  ModulePages pages_;
};

ModulePages Fixture(const char* name) {
  auto pages = LoadModulePagesFixture(name);
  EXPECT_TRUE(pages.ok()) << pages.error().message;
  return pages.ok() ? *pages : ModulePages{};
}

TEST(ModuleEeprom, ReadsExactlyThePagesEachSpecNeeds) {
  FakeModuleIo qsfp(Fixture("qsfp28_sr4.pages"));
  ModuleEepromCollector a(qsfp);
  auto t = a.Read("sim0");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(qsfp.reads, (std::vector<int>{-1, 0x00, 0x03}));
  EXPECT_EQ(qsfp.last_ifname, "sim0");
  EXPECT_TRUE(t->thresholds.has_value());

  FakeModuleIo cmis(Fixture("qsfpdd_sr8_cmis.pages"));
  ModuleEepromCollector b(cmis);
  auto c = b.Read("sim1");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(cmis.reads, (std::vector<int>{-1, 0x00, 0x01, 0x02, 0x11}));
  EXPECT_EQ(c->lanes.size(), 8u);
}

TEST(ModuleEeprom, FlatModuleReadsTwoHalfPages) {
  ModulePages pages = Fixture("qsfp28_sr4.pages");
  pages.lower[2] |= 0x04;
  FakeModuleIo io(pages);
  auto t = ModuleEepromCollector(io).Read("sim0");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(io.reads, (std::vector<int>{-1, 0x00}));
  EXPECT_FALSE(t->thresholds.has_value());
}

TEST(ModuleEeprom, RefusedOptionalPageIsLeftOutOtherErrorsFail) {
  FakeModuleIo refused(Fixture("qsfpdd_sr8_cmis.pages"));
  refused.failures[0x11] = EOPNOTSUPP;  // e.g. the ioctl fallback: page 11h is not reachable
  auto t = ModuleEepromCollector(refused).Read("sim1");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->lanes.empty());
  EXPECT_TRUE(t->thresholds.has_value());

  FakeModuleIo broken(Fixture("qsfpdd_sr8_cmis.pages"));
  broken.failures[0x02] = EIO;
  auto failed = ModuleEepromCollector(broken).Read("sim1");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().errnum, EIO);
  EXPECT_EQ(broken.reads, (std::vector<int>{-1, 0x00, 0x01, 0x02}));  // stops at the failure
}

TEST(ModuleEeprom, NoModuleAccessIsNotSupported) {
  FakeModuleIo io(Fixture("qsfp28_sr4.pages"));
  io.failures[-1] = EOPNOTSUPP;
  auto t = ModuleEepromCollector(io).Read("veth0");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(t.error().NotSupported());
  EXPECT_EQ(io.reads, (std::vector<int>{-1}));
}

TEST(ModuleEeprom, UnknownIdentifierNamesDeviceAndByte) {
  ModulePages pages = Fixture("qsfp28_sr4.pages");
  pages.lower[0] = 0x03;  // SFP: SFF-8472, not decoded
  FakeModuleIo io(pages);
  auto t = ModuleEepromCollector(io).Read("eth3");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().errnum, EMEDIUMTYPE);
  EXPECT_EQ(t.error().message,
            "eth3: module EEPROM: identifier 0x03 is neither SFF-8636 (0x0c/0x0d/0x11) nor CMIS "
            "(0x18/0x19/0x1e)");
  EXPECT_EQ(io.reads, (std::vector<int>{-1, 0x00}));  // no extra pages for an unknown module
}

TEST(ModuleEeprom, DecodeModuleDispatchesOnIdentifier) {
  auto qsfp = DecodeModule(Fixture("qsfp28_sr4.pages"));
  ASSERT_TRUE(qsfp.ok());
  EXPECT_EQ(qsfp->spec, ModuleSpec::kSff8636);
  auto cmis = DecodeModule(Fixture("qsfpdd_sr8_cmis.pages"));
  ASSERT_TRUE(cmis.ok());
  EXPECT_EQ(cmis->spec, ModuleSpec::kCmis);
  EXPECT_FALSE(DecodeModule(ModulePages{}).ok());
}

// An ETHTOOL_MSG_MODULE_EEPROM_GET reply carrying `data` as ETHTOOL_A_MODULE_EEPROM_DATA; the
// message is kept alive in `keep` because NlMessage only views it.
netlink::NlMessage EepromReply(const std::vector<uint8_t>& data, netlink::Message& keep) {
  keep = netlink::GenlRequest(0x1c, ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY, ETHTOOL_GENL_VERSION, 0);
  const size_t header = keep.BeginNest(ETHTOOL_A_MODULE_EEPROM_HEADER);
  keep.PutString(ETHTOOL_A_HEADER_DEV_NAME, "sim0");
  keep.EndNest(header);
  keep.Put(ETHTOOL_A_MODULE_EEPROM_DATA, data.data(), data.size());
  return {*keep.header(), keep.bytes().subspan(sizeof(nlmsghdr))};
}

TEST(ModuleEepromReply, CarriesTheHalfPage) {
  std::vector<uint8_t> page(kModuleHalfPage);
  for (size_t i = 0; i < page.size(); ++i) page[i] = static_cast<uint8_t>(i);
  netlink::Message keep(0, 0);
  auto data = ParseModuleEepromReply(EepromReply(page, keep), "sim0 page 00h");
  ASSERT_TRUE(data.ok()) << data.error().message;
  EXPECT_EQ(*data, page);
}

// A driver that answers with no bytes (the kernel copies its return value as the length) gives a
// 0-byte attribute: an error naming the read, not a memcpy into an empty vector's null data()
// (undefined even for 0 bytes; the ASan+UBSan tree aborts on it).
TEST(ModuleEepromReply, AnEmptyDataAttributeIsAShortRead) {
  netlink::Message keep(0, 0);
  auto data = ParseModuleEepromReply(EepromReply({}, keep), "sim0 page 00h");
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.error().errnum, EIO);
  EXPECT_EQ(data.error().message, "sim0 page 00h: 0 bytes read, expected 128");
  auto short_read = ParseModuleEepromReply(EepromReply({1, 2, 3}, keep), "sim0 page 00h");
  ASSERT_FALSE(short_read.ok());
  EXPECT_EQ(short_read.error().message, "sim0 page 00h: 3 bytes read, expected 128");
}

// The real kernel: loopback has no module EEPROM (netlink answers EOPNOTSUPP, and so does the
// ioctl fallback), and a missing device is ENODEV, not "absent".
TEST(ModuleEepromKernel, LoopbackHasNoModuleAndMissingDeviceIsEnodev) {
  auto io = MakeKernelModuleEepromIo();
  ModuleEepromCollector collector(*io);
  auto lo = collector.Read("lo");
  ASSERT_FALSE(lo.ok());
  if (lo.error().errnum == EPERM) GTEST_SKIP() << "needs CAP_NET_ADMIN: " << lo.error().message;
  EXPECT_TRUE(lo.error().NotSupported()) << lo.error().message;
  auto missing = collector.Read("roceqos-none0");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().errnum, ENODEV) << missing.error().message;
  auto ioctl = MakeKernelModuleEepromIo(/*ioctl_only=*/true);
  auto lo_ioctl = ModuleEepromCollector(*ioctl).Read("lo");
  ASSERT_FALSE(lo_ioctl.ok());
  EXPECT_TRUE(lo_ioctl.error().NotSupported()) << lo_ioctl.error().message;
  EXPECT_NE(lo_ioctl.error().message.find("ETHTOOL_GMODULEINFO lo"), std::string::npos)
      << lo_ioctl.error().message;
  auto bad = collector.Read(std::string(40, 'x'));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().errnum, 0);
}

}  // namespace
}  // namespace roceqos
