// fake_kubelet --socket PATH --pods FILE [--hang]: the PodResources v1 server of
// tests/fake_kubelet/fake_kubelet.h as a process, for shell and testbed tests. List answers from
// FILE, read again on every call; --hang: List never answers (the client's deadline ends it).
// Runs until SIGTERM or SIGINT; prints "fake_kubelet: serving SOCKET" once it listens.
#include <signal.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "tests/fake_kubelet/fake_kubelet.h"

int main(int argc, char** argv) {
  std::string socket, pods;
  bool hang = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--socket" && i + 1 < argc) {
      socket = argv[++i];
    } else if (arg == "--pods" && i + 1 < argc) {
      pods = argv[++i];
    } else if (arg == "--hang") {
      hang = true;
    } else {
      std::fprintf(stderr, "usage: fake_kubelet --socket PATH --pods FILE [--hang]\n");
      return 2;
    }
  }
  if (socket.empty() || pods.empty()) {
    std::fprintf(stderr, "usage: fake_kubelet --socket PATH --pods FILE [--hang]\n");
    return 2;
  }
  if (auto parsed = roceqos::testing::LoadPodsFile(pods); !parsed) {
    std::fprintf(stderr, "fake_kubelet: %s\n", parsed.error().message.c_str());
    return 1;
  }
  // Blocked before gRPC starts its threads, so only sigwait below receives them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto fake = roceqos::testing::FakeKubelet::Start(socket);
  if (!fake) {
    std::fprintf(stderr, "%s\n", fake.error().message.c_str());
    return 1;
  }
  (*fake)->SetPodsFile(pods);
  if (hang) (*fake)->Hang();
  std::printf("fake_kubelet: serving %s\n", socket.c_str());
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  return 0;
}
