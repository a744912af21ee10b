#include "base/thread_name.h"

#include <pthread.h>

#include <string>

namespace roceqos {

void NameCurrentThread(std::string_view name) {
  const std::string cut(name.substr(0, kMaxThreadNameLength));
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace roceqos
