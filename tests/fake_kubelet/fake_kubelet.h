#pragma once
// A fake kubelet: a real gRPC server of the PodResources v1 service (the exporter's own
// podresources_v1.proto, server side) on a unix socket, answering List from a pods file. The unit
// tests run it in-process; tests/fake_kubelet/main.cc is the standalone `fake_kubelet` for shell
// and testbed tests. The pods file (YAML, docs/kubelet.md "The fake kubelet"):
//
//   pods:
//     - namespace: training
//       name: llama-0
//       containers:
//         - name: trainer
//           devices:
//             - resource: nvidia.com/gpu
//               ids: [GPU-0d8f..., GPU-5c1e...]
//               numa: [0]
//
// Any key may be left out; values are not validated, so a test can send what a broken or hostile
// kubelet would.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "base/result.h"
#include "kubelet/podresources_v1.pb.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace roceqos::testing {

/// The answer a pods file describes.
Result<v1::ListPodResourcesResponse> ParsePodsYaml(const std::string& yaml);
Result<v1::ListPodResourcesResponse> LoadPodsFile(const std::string& path);

class FakeKubelet {
 public:
  /// Serves on `socket_path` (an existing file there is replaced) until destroyed.
  static Result<std::unique_ptr<FakeKubelet>> Start(const std::string& socket_path);
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  /// What List answers from now on.
  void SetResponse(v1::ListPodResourcesResponse response);
  /// When set, every List answers from this file, re-read on each call (the standalone binary:
  /// a shell test rewrites the file between scrapes).
  void SetPodsFile(std::string path);
  /// List never answers until Release() or the caller's deadline (a kubelet that hangs).
  void Hang();
  void Release();
  int calls() const;

  class Service;

 private:
  FakeKubelet();
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace roceqos::testing
