// The command-line parser (exporter/app/cli.cc ParseCommandLine): the input is split at NUL bytes
// into argv[1..]; every command line must end in a Config, a subcommand or an exit code.
#include <sstream>
#include <string>
#include <vector>

#include "exporter/app/cli.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> words{"roce_qos_exporter"};
  for (size_t start = 0; start <= input.size() && words.size() < 64;) {
    size_t end = input.find('\0', start);
    if (end == std::string::npos) end = input.size();
    words.push_back(input.substr(start, end - start));
    start = end + 1;
  }
  std::vector<const char*> argv;
  for (const std::string& word : words) argv.push_back(word.c_str());
  std::ostringstream out, err;
  (void)roceqos::ParseCommandLine(argv, out, err);
  return 0;
}
