#include "tests/fake_kubelet/fake_kubelet.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

#include "kubelet/podresources_v1.grpc.pb.h"

namespace roceqos::testing {
namespace {

void AddDevices(const YAML::Node& node, v1::ContainerResources& container) {
  for (const YAML::Node& d : node) {
    v1::ContainerDevices* devices = container.add_devices();
    if (d["resource"]) devices->set_resource_name(d["resource"].as<std::string>());
    for (const YAML::Node& id : d["ids"]) devices->add_device_ids(id.as<std::string>());
    for (const YAML::Node& numa : d["numa"]) {
      devices->mutable_topology()->add_nodes()->set_id(numa.as<int64_t>());
    }
  }
}

}  // namespace

Result<v1::ListPodResourcesResponse> ParsePodsYaml(const std::string& yaml) {
  try {
    const YAML::Node root = YAML::Load(yaml);
    v1::ListPodResourcesResponse response;
    for (const YAML::Node& p : root["pods"]) {
      v1::PodResources* pod = response.add_pod_resources();
      if (p["namespace"]) pod->set_namespace_(p["namespace"].as<std::string>());
      if (p["name"]) pod->set_name(p["name"].as<std::string>());
      for (const YAML::Node& c : p["containers"]) {
        v1::ContainerResources* container = pod->add_containers();
        if (c["name"]) container->set_name(c["name"].as<std::string>());
        AddDevices(c["devices"], *container);
      }
    }
    return response;
  } catch (const YAML::Exception& e) {
    return MakeError(0, std::string("pods file: ") + e.what());
  }
}

Result<v1::ListPodResourcesResponse> LoadPodsFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return MakeError(errno, "cannot read pods file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParsePodsYaml(text.str());
}

class FakeKubelet::Service final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext* context, const v1::ListPodResourcesRequest* /*request*/,
                    v1::ListPodResourcesResponse* response) override {
    std::unique_lock lock(mutex_);
    ++calls_;
    // A hung kubelet: hold the call until released, or until the client gives up (gRPC cancels
    // the server context at the client's deadline; it has no callback here, so it is looked at
    // every 10 ms).
    while (hang_ && !context->IsCancelled()) {
      released_.wait_for(lock, std::chrono::milliseconds(10));
    }
    if (context->IsCancelled()) return grpc::Status::CANCELLED;
    if (!pods_file_.empty()) {
      auto loaded = LoadPodsFile(pods_file_);
      if (!loaded) return {grpc::StatusCode::INTERNAL, loaded.error().message};
      *response = std::move(*loaded);
      return grpc::Status::OK;
    }
    *response = response_;
    return grpc::Status::OK;
  }

  std::mutex mutex_;
  std::condition_variable released_;
  v1::ListPodResourcesResponse response_;
  std::string pods_file_;
  bool hang_ = false;
  int calls_ = 0;
};

FakeKubelet::FakeKubelet() : service_(std::make_unique<Service>()) {}

Result<std::unique_ptr<FakeKubelet>> FakeKubelet::Start(const std::string& socket_path) {
  ::unlink(socket_path.c_str());
  std::unique_ptr<FakeKubelet> fake(new FakeKubelet());
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(fake->service_.get());
  fake->server_ = builder.BuildAndStart();
  if (!fake->server_) return MakeError(0, "fake kubelet: cannot listen on " + socket_path);
  return fake;
}

FakeKubelet::~FakeKubelet() {
  Release();
  // In-flight calls end at once: a hung one was released above.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

void FakeKubelet::SetResponse(v1::ListPodResourcesResponse response) {
  std::lock_guard lock(service_->mutex_);
  service_->response_ = std::move(response);
}

void FakeKubelet::SetPodsFile(std::string path) {
  std::lock_guard lock(service_->mutex_);
  service_->pods_file_ = std::move(path);
}

void FakeKubelet::Hang() {
  std::lock_guard lock(service_->mutex_);
  service_->hang_ = true;
}

void FakeKubelet::Release() {
  {
    std::lock_guard lock(service_->mutex_);
    service_->hang_ = false;
  }
  service_->released_.notify_all();
}

int FakeKubelet::calls() const {
  std::lock_guard lock(service_->mutex_);
  return service_->calls_;
}

}  // namespace roceqos::testing
