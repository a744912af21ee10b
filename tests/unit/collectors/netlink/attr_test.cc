#include "collectors/netlink/attr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <string>
#include <vector>

#include "collectors/netlink/socket.h"
#include "tests/unit/support/netlink_messages.h"

namespace roceqos::netlink {
namespace {

using testing::AttrStream;
using testing::Buffer;
using ::testing::HasSubstr;
using testing::RawAttr;

enum : uint16_t {
  kA8 = 1,
  kA16,
  kA32,
  kA64,
  kAStr,
  kABin,
  kANest,
  kAFlag,
  kAUnknown,
  kMax = kAFlag
};

constexpr auto kPolicy = MakePolicy<kMax + 1>({
    {kA8, attr::U8("TEST_A8")},
    {kA16, attr::U16("TEST_A16")},
    {kA32, attr::U32("TEST_A32")},
    {kA64, attr::U64("TEST_A64")},
    {kAStr, attr::String("TEST_STR", 8)},
    {kABin, attr::Binary("TEST_BIN", 2, 6)},
    {kANest, attr::Nested("TEST_NEST")},
    {kAFlag, attr::Flag("TEST_FLAG")},
});

constexpr auto kInnerPolicy = MakePolicy<3>({
    {1, attr::Required(attr::U32("INNER_ID"))},
    {2, attr::String("INNER_NAME")},
});

Buffer ValidStream() {
  Message msg(RTM_NEWLINK, 0);
  msg.PutU8(kA8, 0x12);
  msg.PutU16(kA16, 0x3456);
  msg.PutU32(kA32, 0x789abcde);
  msg.PutU64(kA64, 0x1122334455667788ULL);
  msg.PutString(kAStr, "mlx5_0");
  const unsigned char bin[4] = {1, 2, 3, 4};
  msg.Put(kABin, bin, sizeof(bin));
  size_t nest = msg.BeginNest(kANest);
  msg.PutU32(1, 42);
  msg.PutString(2, "inner");
  msg.EndNest(nest);
  msg.Put(kAFlag, nullptr, 0);
  msg.PutU32(kAUnknown, 7);  // beyond the policy: a newer kernel's attribute
  msg.PutU32(200, 7);
  return AttrStream(msg);
}

TEST(AttrsParse, ReadsEveryKindFromAValidStream) {
  Buffer stream = ValidStream();
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "test");
  ASSERT_TRUE(attrs) << attrs.error().message;
  EXPECT_EQ(attrs->U8(kA8), 0x12);
  EXPECT_EQ(attrs->U16(kA16), 0x3456);
  EXPECT_EQ(attrs->U32(kA32), 0x789abcdeu);
  EXPECT_EQ(attrs->U64(kA64), 0x1122334455667788ULL);
  EXPECT_EQ(attrs->String(kAStr), "mlx5_0");
  EXPECT_EQ(attrs->Raw(kABin).size(), 4u);
  EXPECT_TRUE(attrs->Has(kAFlag));
  EXPECT_FALSE(attrs->Has(kAUnknown));
  // Getters of the wrong width never read beyond the payload.
  EXPECT_EQ(attrs->U64(kA32), std::nullopt);
  EXPECT_EQ(attrs->U8(kA16), std::nullopt);

  Result<Attrs> inner = attrs->Nested(kANest, kInnerPolicy, "test nest");
  ASSERT_TRUE(inner) << inner.error().message;
  EXPECT_EQ(inner->U32(1), 42u);
  EXPECT_EQ(inner->String(2), "inner");
}

TEST(AttrsParse, MasksTheNestedAndByteOrderFlags) {
  Buffer stream = RawAttr(8, kA32 | NLA_F_NESTED | NLA_F_NET_BYTEORDER, {1, 0, 0, 0});
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "test");
  ASSERT_TRUE(attrs) << attrs.error().message;
  EXPECT_EQ(attrs->U32(kA32), 1u);
}

TEST(AttrsParse, ReadsValuesFromAnOddlyAlignedBuffer) {
  Buffer stream = ValidStream();
  std::vector<std::byte> shifted(stream.size() + 1);
  std::memcpy(shifted.data() + 1, stream.data(), stream.size());
  Result<Attrs> attrs = Attrs::Parse(Bytes(shifted).subspan(1), kPolicy, "test");
  ASSERT_TRUE(attrs) << attrs.error().message;
  EXPECT_EQ(attrs->U64(kA64), 0x1122334455667788ULL);
}

TEST(AttrsParse, AcceptsALastAttributeWithoutPadding) {
  Buffer stream = RawAttr(5, kA8, {9});  // nla_len 5, no padding to 8
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "test");
  ASSERT_TRUE(attrs) << attrs.error().message;
  EXPECT_EQ(attrs->U8(kA8), 9);
}

TEST(AttrsParse, RejectsATruncatedHeader) {
  Buffer stream = ValidStream();
  stream.resize(stream.size() + 3);  // three stray bytes cannot be a header
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "RTM_NEWLINK eth0");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message, HasSubstr("RTM_NEWLINK eth0"));
  EXPECT_THAT(attrs.error().message, HasSubstr("truncated attribute header"));
  EXPECT_EQ(attrs.error().errnum, 0);
}

TEST(AttrsParse, RejectsNlaLenBelowTheHeaderAndNamesTheAttribute) {
  Buffer stream = RawAttr(2, kA32, {0, 0, 0, 0});
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "ctx");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message, HasSubstr("TEST_A32 (type 3)"));
  EXPECT_THAT(attrs.error().message, HasSubstr("nla_len 2 is below the 4-byte header"));
}

TEST(AttrsParse, RejectsNlaLenBeyondThePayload) {
  Buffer stream = RawAttr(200, kAStr, {'a', 'b', 0, 0});
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "ctx");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message, HasSubstr("TEST_STR (type 5)"));
  EXPECT_THAT(attrs.error().message, HasSubstr("nla_len 200 exceeds the 8 byte(s) left"));
}

TEST(AttrsParse, RejectsIntegersOfTheWrongWidth) {
  for (auto [type, name] : {std::pair<uint16_t, const char*>{kA8, "TEST_A8"},
                            {kA16, "TEST_A16"},
                            {kA32, "TEST_A32"},
                            {kA64, "TEST_A64"}}) {
    Buffer stream = RawAttr(7, type, {1, 2, 3});  // 3-byte payload fits none of them
    Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "ctx");
    ASSERT_FALSE(attrs) << name;
    EXPECT_THAT(attrs.error().message, HasSubstr(name));
    EXPECT_THAT(attrs.error().message, HasSubstr("payload is 3 byte(s)"));
  }
}

TEST(AttrsParse, RejectsAStringWithoutNul) {
  Buffer stream = RawAttr(8, kAStr, {'m', 'l', 'x', '5'});
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "ctx");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message, HasSubstr("TEST_STR"));
  EXPECT_THAT(attrs.error().message, HasSubstr("no terminating NUL"));
}

TEST(AttrsParse, RejectsAnEmptyString) {
  Buffer stream = RawAttr(4, kAStr, {});
  EXPECT_FALSE(Attrs::Parse(stream, kPolicy, "ctx"));
}

TEST(AttrsParse, ANameMustNotBeEmpty) {
  constexpr auto kNames = MakePolicy<2>({{1, attr::NonEmptyString("TEST_NAME", 16)}});
  Buffer empty = RawAttr(8, 1, {0, 'x', 0, 0});  // NUL first: an empty name with junk after it
  Result<Attrs> attrs = Attrs::Parse(empty, kNames, "ctx");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message,
              HasSubstr("TEST_NAME (type 1): string is 0 character(s), expected at least 1"));
  Buffer one = RawAttr(6, 1, {'x', 0});
  attrs = Attrs::Parse(one, kNames, "ctx");
  ASSERT_TRUE(attrs) << attrs.error().message;
  EXPECT_EQ(attrs->String(1), "x");
  // A plain String accepts the empty text.
  Buffer empty_str = RawAttr(5, kAStr, {0});
  attrs = Attrs::Parse(empty_str, kPolicy, "ctx");
  ASSERT_TRUE(attrs) << attrs.error().message;
  EXPECT_EQ(attrs->String(kAStr), "");
}

TEST(AttrsParse, RejectsOversizedStringsAndBinaries) {
  Message msg(RTM_NEWLINK, 0);
  msg.PutString(kAStr, "123456789");  // 10 bytes with the NUL, the policy allows 8
  Buffer stream = AttrStream(msg);
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "ctx");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message, HasSubstr("exceeds the maximum of 8"));

  Message bin(RTM_NEWLINK, 0);
  const char big[7] = {};
  bin.Put(kABin, big, sizeof(big));
  Buffer bin_stream = AttrStream(bin);
  attrs = Attrs::Parse(bin_stream, kPolicy, "ctx");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message, HasSubstr("TEST_BIN"));
  EXPECT_THAT(attrs.error().message, HasSubstr("expected 2..6"));
}

TEST(AttrsParse, RejectsAFlagWithPayload) {
  Buffer stream = RawAttr(8, kAFlag, {1, 0, 0, 0});
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "ctx");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message, HasSubstr("TEST_FLAG"));
}

TEST(AttrsParse, ReportsGarbageInsideANestWhenTheNestIsParsed) {
  Buffer stream = RawAttr(12, kANest, {0xff, 0xff, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00});
  Result<Attrs> attrs = Attrs::Parse(stream, kPolicy, "ctx");
  ASSERT_TRUE(attrs) << attrs.error().message;
  Result<Attrs> inner = attrs->Nested(kANest, kInnerPolicy, "ctx TEST_NEST");
  ASSERT_FALSE(inner);
  EXPECT_THAT(inner.error().message, HasSubstr("ctx TEST_NEST"));
  EXPECT_THAT(inner.error().message, HasSubstr("INNER_ID (type 1)"));
  EXPECT_THAT(inner.error().message, HasSubstr("exceeds"));
}

TEST(AttrsParse, ReportsAMissingRequiredAttribute) {
  Message msg(RTM_NEWLINK, 0);
  msg.PutString(2, "no id");
  Buffer stream = AttrStream(msg);
  Result<Attrs> attrs = Attrs::Parse(stream, kInnerPolicy, "ctx");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(attrs.error().message, HasSubstr("missing required attribute INNER_ID (type 1)"));
}

TEST(AttrsParse, KeepsTheLastOfARepeatedTypeAndMoreThanTheInlineSlots) {
  constexpr auto kWide = MakePolicy<20>({
      {1, attr::U32("W1")},
      {2, attr::U32("W2")},
      {3, attr::U32("W3")},
      {4, attr::U32("W4")},
      {5, attr::U32("W5")},
      {6, attr::U32("W6")},
      {7, attr::U32("W7")},
      {8, attr::U32("W8")},
      {9, attr::U32("W9")},
      {10, attr::U32("W10")},
      {11, attr::U32("W11")},
      {12, attr::U32("W12")},
  });
  Message msg(RTM_NEWLINK, 0);
  for (uint16_t type = 1; type <= 12; ++type) msg.PutU32(type, type * 100u);
  msg.PutU32(3, 333);
  msg.PutU32(11, 1111);
  Buffer stream = AttrStream(msg);
  Result<Attrs> attrs = Attrs::Parse(stream, kWide, "ctx");
  ASSERT_TRUE(attrs) << attrs.error().message;
  EXPECT_EQ(attrs->U32(3), 333u);
  EXPECT_EQ(attrs->U32(11), 1111u);
  EXPECT_EQ(attrs->U32(12), 1200u);
  EXPECT_EQ(attrs->U32(13), std::nullopt);
}

TEST(ForEachAttr, VisitsRepeatedTypesInOrderAndStopsAtTheFirstError) {
  Message msg(RTM_NEWLINK, 0);
  msg.PutU32(1, 10);
  msg.PutU32(1, 20);
  msg.PutU32(2, 30);
  Buffer stream = AttrStream(msg);
  std::vector<std::pair<uint16_t, size_t>> seen;
  Result<void> walked = ForEachAttr(stream, "ctx", [&](uint16_t type, Bytes payload) {
    seen.emplace_back(type, payload.size());
    return Result<void>();
  });
  ASSERT_TRUE(walked);
  EXPECT_EQ(seen, (std::vector<std::pair<uint16_t, size_t>>{{1, 4}, {1, 4}, {2, 4}}));

  int calls = 0;
  walked = ForEachAttr(stream, "ctx", [&](uint16_t, Bytes) -> Result<void> {
    ++calls;
    return MakeError(0, "stop here");
  });
  ASSERT_FALSE(walked);
  EXPECT_EQ(walked.error().message, "stop here");
  EXPECT_EQ(calls, 1);

  Buffer broken = stream;
  broken.push_back(std::byte{1});
  calls = 0;
  walked = ForEachAttr(broken, "list ctx", [&](uint16_t, Bytes) {
    ++calls;
    return Result<void>();
  });
  ASSERT_FALSE(walked);
  EXPECT_THAT(walked.error().message, HasSubstr("list ctx"));
}

// DCB (RTM_GETDCB) replies: struct dcbmsg (4-byte family header), DCB_ATTR_IFNAME, a nested
// DCB_ATTR_IEEE with structs and an APP table list, then DCB_ATTR_DCBX
// (docs/kernel-interfaces.md §1.6).
TEST(DcbReplyShape, IsParseableWithTheGenericLayer) {
  Message msg(RTM_GETDCB, 0);
  dcbmsg dcb{};
  dcb.cmd = DCB_CMD_IEEE_GET;
  msg.PutHeader(&dcb, sizeof(dcb));
  msg.PutString(DCB_ATTR_IFNAME, "ens1f0np0");
  size_t ieee = msg.BeginNest(DCB_ATTR_IEEE);
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = 0x08;
  pfc.delay = 7;
  pfc.requests[3] = 0x0102030405060708ULL;
  pfc.indications[3] = 99;
  msg.Put(DCB_ATTR_IEEE_PFC, &pfc, sizeof(pfc));
  size_t apps = msg.BeginNest(DCB_ATTR_IEEE_APP_TABLE);
  for (uint16_t dscp : {uint16_t{26}, uint16_t{48}}) {
    dcb_app app{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(dscp == 26 ? 3 : 6), dscp};
    msg.Put(DCB_ATTR_IEEE_APP, &app, sizeof(app));
  }
  msg.EndNest(apps);
  msg.EndNest(ieee);
  msg.PutU8(DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
  Buffer reply = testing::Finish(msg, 0, 1, 1);

  constexpr auto kTop = MakePolicy<DCB_ATTR_DCBX + 1>({
      {DCB_ATTR_IFNAME, attr::String("DCB_ATTR_IFNAME", IFNAMSIZ)},
      {DCB_ATTR_IEEE, attr::Nested("DCB_ATTR_IEEE")},
      {DCB_ATTR_DCBX, attr::U8("DCB_ATTR_DCBX")},
  });
  constexpr auto kIeee = MakePolicy<DCB_ATTR_IEEE_APP_TABLE + 1>({
      {DCB_ATTR_IEEE_PFC, attr::Struct<ieee_pfc>("DCB_ATTR_IEEE_PFC")},
      {DCB_ATTR_IEEE_APP_TABLE, attr::Nested("DCB_ATTR_IEEE_APP_TABLE")},
  });

  int messages = 0;
  Result<void> walked = ForEachMessage(reply, "RTM_GETDCB", [&](const NlMessage& m) {
    ++messages;
    Result<dcbmsg> header = FamilyHeader<dcbmsg>(m, "RTM_GETDCB");
    EXPECT_TRUE(header);
    if (header) {
      EXPECT_EQ(header->cmd, DCB_CMD_IEEE_GET);
    }
    Result<Bytes> payload = Payload(m, sizeof(dcbmsg), "RTM_GETDCB");
    if (!payload) return Result<void>(payload.error());
    Result<Attrs> top = Attrs::Parse(*payload, kTop, "RTM_GETDCB");
    if (!top) return Result<void>(top.error());
    EXPECT_EQ(top->String(DCB_ATTR_IFNAME), "ens1f0np0");
    EXPECT_EQ(top->U8(DCB_ATTR_DCBX), DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
    Result<Attrs> nest = top->Nested(DCB_ATTR_IEEE, kIeee, "DCB_ATTR_IEEE");
    if (!nest) return Result<void>(nest.error());
    ieee_pfc got{};
    EXPECT_TRUE(nest->CopyStruct(DCB_ATTR_IEEE_PFC, &got));
    EXPECT_EQ(got.pfc_en, 0x08);
    EXPECT_EQ(got.delay, 7);
    EXPECT_EQ(got.requests[3], 0x0102030405060708ULL);
    EXPECT_EQ(got.indications[3], 99u);
    std::vector<int> dscps;
    Result<void> listed = ForEachAttr(nest->Raw(DCB_ATTR_IEEE_APP_TABLE), "APP_TABLE",
                                      [&](uint16_t type, Bytes entry) -> Result<void> {
                                        dcb_app app;
                                        EXPECT_EQ(type, DCB_ATTR_IEEE_APP);
                                        EXPECT_EQ(entry.size(), sizeof(app));
                                        std::memcpy(&app, entry.data(), sizeof(app));
                                        dscps.push_back(app.protocol * 10 + app.priority);
                                        return {};
                                      });
    EXPECT_TRUE(listed);
    EXPECT_EQ(dscps, (std::vector<int>{263, 486}));
    return Result<void>();
  });
  ASSERT_TRUE(walked) << walked.error().message;
  EXPECT_EQ(messages, 1);
}

TEST(DcbReplyShape, StructPolicyRejectsATruncatedPfc) {
  constexpr auto kIeee = MakePolicy<DCB_ATTR_IEEE_PFC + 1>({
      {DCB_ATTR_IEEE_PFC, attr::Struct<ieee_pfc>("DCB_ATTR_IEEE_PFC")},
  });
  Message msg(RTM_GETDCB, 0);
  char short_pfc[100] = {};
  msg.Put(DCB_ATTR_IEEE_PFC, short_pfc, sizeof(short_pfc));
  Buffer stream = AttrStream(msg);
  Result<Attrs> attrs = Attrs::Parse(stream, kIeee, "DCB_ATTR_IEEE");
  ASSERT_FALSE(attrs);
  EXPECT_THAT(
      attrs.error().message,
      HasSubstr("DCB_ATTR_IEEE_PFC (type 2): payload is 100 byte(s), expected exactly 136"));
}

}  // namespace
}  // namespace roceqos::netlink
