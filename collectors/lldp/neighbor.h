#pragma once

// What lldpd knows about the LLDP neighbours of the host's ports, as plain values: the identity
// a person documents as cabling (chassis, system name, port), the neighbour's 802.3 Maximum
// Frame Size and its IEEE 802.1Qaz DCBX TLVs decoded by dot1qaz.h. Filled by lldpd_client.h.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collectors/lldp/dot1qaz.h"

namespace roceqos::lldp {

struct Neighbor {
  std::string chassis_id;          // lldpctl_k_chassis_id (a MAC is formatted aa:bb:...)
  std::string system_name;         // lldpctl_k_chassis_name
  std::string port_id;             // lldpctl_k_port_id
  std::string port_description;    // lldpctl_k_port_descr
  std::string management_address;  // lldpctl_k_chassis_mgmt, the first lldpctl_k_mgmt_ip
  int64_t changed_at_unix = 0;     // lldpctl_k_port_age: when lldpd last changed it (epoch s)
  uint32_t ttl_seconds = 0;        // lldpctl_k_port_ttl
  std::optional<uint32_t> max_frame_size;  // lldpctl_k_port_dot3_mfs (802.3 clause 79.3.4)
  Dot1QazState dcbx;                       // from lldpctl_k_custom_tlvs
  /// One message per malformed 802.1Qaz TLV (which is then left out of `dcbx`).
  std::vector<std::string> tlv_errors;

  bool operator==(const Neighbor&) const = default;
};

/// One port lldpd handles.
struct LocalPort {
  uint64_t frames_received = 0;     // lldpctl_k_rx_cnt
  std::vector<Neighbor> neighbors;  // as lldpd lists them; usually one on a switch port
  /// Why lldpd's answer for this port could not be read (lldpctl_get_port failed while the
  /// connection stayed usable); empty when it was read. The other ports are read regardless.
  std::string error;

  bool operator==(const LocalPort&) const = default;
};

/// The answer of one query: the asked-for interfaces lldpd handles, by name. An interface lldpd
/// does not handle (excluded by its -I pattern, or not an Ethernet port) has no entry.
struct LldpdView {
  std::map<std::string, LocalPort> ports;

  bool operator==(const LldpdView&) const = default;
};

/// One custom TLV as liblldpctl hands it over (lldpctl_k_custom_tlv_oui, _oui_subtype,
/// _oui_info_string).
struct CustomTlv {
  std::vector<uint8_t> oui;
  uint8_t subtype = 0;
  std::vector<uint8_t> info;
};

/// Decodes the 802.1Qaz TLVs among `tlvs` into `neighbor.dcbx`; a malformed one is recorded in
/// `neighbor.tlv_errors` and skipped, so one bad TLV does not hide the neighbour. Other OUIs and
/// subtypes are ignored.
void AddCustomTlvs(Neighbor& neighbor, const std::vector<CustomTlv>& tlvs,
                   std::string_view context);

}  // namespace roceqos::lldp
