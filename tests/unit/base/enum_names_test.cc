#include "base/enum_names.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

namespace roceqos {
namespace {

enum class Colour : uint8_t { kRed, kGreen, kBlue };
constexpr EnumName<Colour> kColourNames[] = {{Colour::kRed, "red"}, {Colour::kGreen, "green"}};

TEST(EnumNames, LooksUpBothWaysAndFallsBackForValuesTheTableLacks) {
  EXPECT_EQ(NameOf(kColourNames, Colour::kGreen), "green");
  EXPECT_EQ(NameOf(kColourNames, Colour::kBlue), "unknown");
  EXPECT_EQ(NameOf(kColourNames, Colour::kBlue, "?"), "?");
  EXPECT_EQ(ValueOf(kColourNames, "red"), Colour::kRed);
  EXPECT_EQ(ValueOf(kColourNames, "Red"), std::nullopt);  // names are exact
}

}  // namespace
}  // namespace roceqos
