// Module EEPROM decoders (sff8636.cc, cmis.cc through module_eeprom.cc DecodeModule). Input
// layout: up to 128 bytes of lower page, then records of one page-number byte and up to 128
// bytes of upper page, so short pages and odd page numbers are reached too.
#include <algorithm>

#include "collectors/transceiver/module_eeprom.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  roceqos::ModulePages pages;
  size_t lower = std::min<size_t>(size, 128);
  pages.lower.assign(data, data + lower);
  size_t at = lower;
  while (at < size) {
    uint8_t page = data[at++];
    size_t len = std::min<size_t>(size - at, 128);
    pages.upper[page].assign(data + at, data + at + len);
    at += len;
  }
  (void)roceqos::DecodeModule(pages);
  (void)roceqos::ModuleExtraPages(pages.lower);
  return 0;
}
