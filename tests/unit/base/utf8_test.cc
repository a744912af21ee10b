#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace roceqos {
namespace {

const std::string kFffd = std::string(kUtf8Replacement);

TEST(Utf8, WellFormedTextIsKept) {
  for (const std::string& text :
       std::vector<std::string>{"", "ens1f0np0", "leaf01 Ethernet12", "caf\xc3\xa9",
                                "\xe2\x82\xac 1", "\xf0\x9f\x98\x80", "\xed\x9f\xbf",
                                "\xee\x80\x80", "\xf4\x8f\xbf\xbf", std::string("nul\0in", 6)}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    EXPECT_EQ(ValidUtf8(text), text);
  }
}

// Each case: the bytes, and what U+FFFD substitution of maximal subparts makes of them.
struct Case {
  std::string in, out;
};

TEST(Utf8, IllFormedSequencesBecomeOneReplacementEach) {
  const Case cases[] = {
      {"leaf\xff"
       "01",
       "leaf" + kFffd + "01"},                              // a byte that never occurs
      {"\xfe\xff", kFffd + kFffd},                          // two of them
      {"\x80", kFffd},                                      // a lone continuation byte
      {"\xc0\xaf", kFffd + kFffd},                          // overlong '/' (2 bytes)
      {"\xc1\xbf", kFffd + kFffd},                          // overlong U+007F
      {"\xe0\x80\xaf", kFffd + kFffd + kFffd},              // overlong '/' (3 bytes)
      {"\xe0\x9f\xbf", kFffd + kFffd + kFffd},              // overlong U+07FF
      {"\xf0\x80\x80\xaf", kFffd + kFffd + kFffd + kFffd},  // overlong '/' (4 bytes)
      {"\xed\xa0\x80", kFffd + kFffd + kFffd},              // surrogate U+D800
      {"\xed\xbf\xbf", kFffd + kFffd + kFffd},              // surrogate U+DFFF
      {"\xf4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // U+110000, past the last
      {"\xf5\x80\x80\x80", kFffd + kFffd + kFffd + kFffd},  // F5 never starts a sequence
      {"a\xc3", "a" + kFffd},                               // truncated at the end
      {"\xe2\x82", kFffd},                                  // truncated 3-byte: one subpart
      {"\xf0\x9f\x98", kFffd},                              // truncated 4-byte: one subpart
      {"\xe2\x82"
       "x",
       kFffd + "x"},                                              // cut short by ASCII
      {"\xe2\x82\xe2\x82\xac", kFffd + "\xe2\x82\xac"},           // cut short by a new sequence
      {"\xc3\xa9\xff\xc3\xa9", "\xc3\xa9" + kFffd + "\xc3\xa9"},  // valid around an invalid one
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(IsValidUtf8(c.in)) << testing::PrintToString(c.in);
    EXPECT_EQ(ValidUtf8(c.in), c.out) << testing::PrintToString(c.in);
    EXPECT_TRUE(IsValidUtf8(ValidUtf8(c.in)));
  }
}

TEST(Utf8, NextStepGivesTheMaximalSubpart) {
  EXPECT_EQ(NextUtf8("\xf0\x9f\x98\x80").length, 4u);
  EXPECT_TRUE(NextUtf8("\xf0\x9f\x98\x80").valid);
  EXPECT_EQ(NextUtf8("\xf0\x9f\x98").length, 3u);
  EXPECT_FALSE(NextUtf8("\xf0\x9f\x98").valid);
  EXPECT_EQ(NextUtf8("\xf0\x8f").length, 1u);  // 8F cannot follow F0: the lead byte alone
  EXPECT_EQ(NextUtf8("A").length, 1u);
}

// Every byte value alone and every two-byte string: replacing is idempotent and always valid.
TEST(Utf8, EveryShortStringComesOutValid) {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string in{static_cast<char>(a), static_cast<char>(b)};
      const std::string out = ValidUtf8(in);
      ASSERT_TRUE(IsValidUtf8(out)) << a << " " << b;
      ASSERT_EQ(ValidUtf8(out), out);
      ASSERT_EQ(IsValidUtf8(in), out == in) << a << " " << b;
    }
  }
}

}  // namespace
}  // namespace roceqos
