// The 802.1Qaz TLV decoder (collectors/lldp/dot1qaz.cc): the input is a sequence of custom TLVs
// as liblldpctl hands them over, each as subtype (1 byte), OUI-info length (2 bytes, big endian,
// clamped to what is left) and the OUI info, all under the 802.1 OUI so every one reaches a
// decoder; the first byte picks another OUI instead when odd, to cover the pass-through path.
#include <algorithm>
#include <array>

#include "collectors/lldp/dot1qaz.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto input = roceqos::fuzz::AsBytes(data, size);
  if (input.empty()) return 0;
  std::array<uint8_t, 3> oui = roceqos::lldp::kIeee8021Oui;
  if ((data[0] & 1) != 0) oui = {0x00, 0x1B, 0x21};
  input = input.subspan(1);
  roceqos::lldp::Dot1QazState state;
  while (input.size() >= 3) {
    auto subtype = static_cast<uint8_t>(input[0]);
    size_t len = (static_cast<size_t>(input[1]) << 8) | static_cast<size_t>(input[2]);
    input = input.subspan(3);
    len = std::min(len, input.size());
    auto added = roceqos::lldp::AddCustomTlv(state, oui, subtype, input.first(len), "fuzz0");
    if (added && *added && state.application_priority)
      (void)state.application_priority->DscpPriorities(static_cast<uint8_t>(len % 64));
    input = input.subspan(len);
  }
  return 0;
}
