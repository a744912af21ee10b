#include "collectors/kubelet/pod_resources.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

#include "base/utf8.h"
#include "collectors/pci_function.h"
#include "kubelet/podresources_v1.grpc.pb.h"
#include "kubelet/podresources_v1.pb.h"

namespace roceqos::kubelet {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// RFC 1123 label (IsDNS1123Label in k8s.io/apimachinery validation): namespaces and container
// names. Lower-case alphanumerics and '-', starting and ending alphanumeric.
bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelName) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s)
    if (!IsLowerAlnum(c) && c != '-') return false;
  return true;
}

// RFC 1123 subdomain (IsDNS1123Subdomain): pod names. Labels joined by '.'.
bool IsDns1123Subdomain(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s)
    if (!IsLowerAlnum(c) && c != '-' && c != '.') return false;
  return true;
}

// A qualified resource name (IsQualifiedName: "[prefix/]name", the name part of 63 characters of
// [A-Za-z0-9_.-], alphanumeric at both ends; the prefix a DNS subdomain). Extended resources
// always carry a prefix, "nvidia.com/gpu".
bool IsResourceName(std::string_view s) {
  if (s.empty() || s.size() > kMaxResourceName) return false;
  const size_t slash = s.find('/');
  std::string_view name = s;
  if (slash != std::string_view::npos) {
    if (!IsDns1123Subdomain(s.substr(0, slash), 253)) return false;
    name = s.substr(slash + 1);
  }
  if (name.empty() || name.size() > kMaxLabelName) return false;
  auto alnum = [](char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// A device ID is the plugin's own string: well-formed UTF-8 without control characters or
// spaces, so it prints as one token in a label, a log field and a sysfs path component check.
bool IsDeviceId(std::string_view s) {
  if (s.empty() || s.size() > kMaxDeviceId || !IsValidUtf8(s)) return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  return true;
}

// One ContainerDevices entry; adds at most `budget` device IDs and counts what it leaves out.
std::optional<DeviceAllocation> MapDevices(const v1::ContainerDevices& in, size_t& budget,
                                           PodResourcesList& out) {
  if (!IsResourceName(in.resource_name())) {
    ++out.dropped;
    return std::nullopt;
  }
  DeviceAllocation devices;
  devices.resource_name = in.resource_name();
  for (const std::string& id : in.device_ids()) {
    if (!IsDeviceId(id)) {
      ++out.dropped;
      continue;
    }
    if (budget == 0) {
      out.truncated = true;
      break;
    }
    --budget;
    devices.device_ids.push_back(id);
  }
  for (const v1::NUMANode& node : in.topology().nodes()) {
    if (node.id() < 0 || node.id() > kMaxNumaNode) continue;  // no such node: no hint
    if (devices.numa_nodes.size() == kMaxNumaNodesPerDevice) break;
    devices.numa_nodes.push_back(node.id());
  }
  if (devices.device_ids.empty()) return std::nullopt;
  return devices;
}

std::optional<ContainerAllocation> MapContainer(const v1::ContainerResources& in,
                                                PodResourcesList& out) {
  if (!IsDns1123Label(in.name())) {
    ++out.dropped;
    return std::nullopt;
  }
  ContainerAllocation container;
  container.name = in.name();
  size_t budget = kMaxDeviceIdsPerContainer;
  for (const v1::ContainerDevices& devices : in.devices()) {
    if (auto mapped = MapDevices(devices, budget, out)) {
      container.devices.push_back(std::move(*mapped));
    }
  }
  return container;
}

std::optional<PodAllocation> MapPod(const v1::PodResources& in, PodResourcesList& out) {
  if (!IsDns1123Label(in.namespace_()) || !IsDns1123Subdomain(in.name(), kMaxPodName)) {
    ++out.dropped;
    return std::nullopt;
  }
  PodAllocation pod;
  pod.namespace_name = in.namespace_();
  pod.name = in.name();
  for (const v1::ContainerResources& container : in.containers()) {
    if (pod.containers.size() == kMaxContainersPerPod) {
      out.truncated = true;
      break;
    }
    if (auto mapped = MapContainer(container, out)) pod.containers.push_back(std::move(*mapped));
  }
  return pod;
}

Error ListError(ListFailure failure, int errnum, const std::string& what) {
  return MakeError(errnum, std::string(NameOf(kListFailureNames, failure)) + ": " + what);
}

// What gRPC's status means here, named. The messages keep gRPC's own text for the log.
Error StatusError(const grpc::Status& status, const std::string& socket_path,
                  const ListOptions& options) {
  const std::string detail = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return ListError(ListFailure::kUnavailable, ECONNREFUSED,
                       "kubelet pod-resources List on " + socket_path + ": " + detail);
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return ListError(ListFailure::kDeadlineExceeded, ETIMEDOUT,
                       "kubelet pod-resources List on " + socket_path + ": no answer within " +
                           std::to_string(options.deadline.count()) + " ms");
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ListError(ListFailure::kResponseTooLarge, EMSGSIZE,
                       "kubelet pod-resources List on " + socket_path + ": answer over " +
                           std::to_string(options.max_response_bytes) + " bytes: " + detail);
    case grpc::StatusCode::UNIMPLEMENTED:
      return ListError(ListFailure::kUnimplemented, EOPNOTSUPP,
                       "kubelet pod-resources List on " + socket_path +
                           ": the kubelet does not serve v1.PodResourcesLister: " + detail);
    case grpc::StatusCode::PERMISSION_DENIED:
      return ListError(ListFailure::kPermissionDenied, EACCES,
                       "kubelet pod-resources List on " + socket_path + ": " + detail);
    default:
      return ListError(ListFailure::kMalformed, EPROTO,
                       "kubelet pod-resources List on " + socket_path + ": gRPC status " +
                           std::to_string(static_cast<int>(status.error_code())) + ": " + detail);
  }
}

// gRPC reports a missing or forbidden socket as UNAVAILABLE with connect(2)'s text deep in its
// message; the two commonest misconfigurations (the socket not mounted, the exporter not allowed
// to connect) are checked first so they are named.
Result<void> CheckSocket(const std::string& socket_path) {
  struct stat st {};
  if (stat(socket_path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return ListError(ListFailure::kSocketMissing, ENOENT,
                       "kubelet pod-resources socket not found: " + socket_path);
    }
    if (err == EACCES) {
      return ListError(ListFailure::kPermissionDenied, EACCES,
                       "kubelet pod-resources socket: permission denied: " + socket_path);
    }
    return ListError(ListFailure::kUnavailable, err, "stat " + socket_path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return ListError(ListFailure::kUnavailable, ENOTSOCK,
                     "kubelet pod-resources socket is not a socket: " + socket_path);
  }
  // connect(2) on a unix socket needs write permission on the socket file.
  if (faccessat(AT_FDCWD, socket_path.c_str(), W_OK, AT_EACCESS) != 0 && errno == EACCES) {
    return ListError(ListFailure::kPermissionDenied, EACCES,
                     "kubelet pod-resources socket: permission denied (connecting needs write "
                     "access): " +
                         socket_path);
  }
  return {};
}

class KubeletSource final : public PodResourcesSource {
 public:
  KubeletSource(std::string socket_path, ListOptions options)
      : socket_path_(std::move(socket_path)), options_(options) {}
  Result<PodResourcesList> List() override { return ListPodResources(socket_path_, options_); }

 private:
  std::string socket_path_;
  ListOptions options_;
};

}  // namespace

ListFailure ListFailureOf(const Error& error) {
  switch (error.errnum) {
    case ENOENT:
      return ListFailure::kSocketMissing;
    case EACCES:
      return ListFailure::kPermissionDenied;
    case ECONNREFUSED:
    case ENOTSOCK:
      return ListFailure::kUnavailable;
    case ETIMEDOUT:
      return ListFailure::kDeadlineExceeded;
    case EMSGSIZE:
      return ListFailure::kResponseTooLarge;
    case EOPNOTSUPP:
      return ListFailure::kUnimplemented;
    default:
      return ListFailure::kMalformed;
  }
}

PodResourcesList MapListResponse(const v1::ListPodResourcesResponse& response) {
  PodResourcesList out;
  for (const v1::PodResources& pod : response.pod_resources()) {
    if (out.pods.size() == kMaxPods) {
      out.truncated = true;
      break;
    }
    if (auto mapped = MapPod(pod, out)) out.pods.push_back(std::move(*mapped));
  }
  return out;
}

Result<PodResourcesList> MapListResponseBytes(std::span<const std::byte> bytes) {
  if (bytes.size() > static_cast<size_t>(kDefaultMaxResponseBytes)) {
    return ListError(ListFailure::kResponseTooLarge, EMSGSIZE,
                     "PodResources answer of " + std::to_string(bytes.size()) + " bytes");
  }
  v1::ListPodResourcesResponse response;
  if (!response.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return ListError(ListFailure::kMalformed, 0, "PodResources answer does not parse");
  }
  return MapListResponse(response);
}

Result<PodResourcesList> ListPodResources(const std::string& socket_path,
                                          const ListOptions& options) {
  if (auto checked = CheckSocket(socket_path); !checked) return checked.error();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_response_bytes);
  // No retries and no reconnect backoff carried between calls: each poll is one fresh attempt.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  auto channel =
      grpc::CreateCustomChannel("unix:" + socket_path, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options.deadline);
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, v1::ListPodResourcesRequest(), &response);
  if (!status.ok()) return StatusError(status, socket_path, options);
  return MapListResponse(response);
}

std::vector<AllocatedDevice> AllocatedDevices(const PodResourcesList& list) {
  std::vector<AllocatedDevice> rows;
  for (const PodAllocation& pod : list.pods) {
    for (const ContainerAllocation& container : pod.containers) {
      for (const DeviceAllocation& devices : container.devices) {
        for (const std::string& id : devices.device_ids) {
          rows.push_back({pod.namespace_name, pod.name, container.name, devices.resource_name, id});
        }
      }
    }
  }
  return rows;
}

std::optional<std::string> PciAddressOfDeviceId(std::string_view device_id) {
  if (device_id.size() > 16) return std::nullopt;  // "0000:3b:00.2"; a VMD domain is 5 digits
  std::string lower(device_id);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!IsPciAddress(lower)) return std::nullopt;
  return lower;
}

std::optional<std::string> VfPhysfnAddress(const std::string& sysfs_root,
                                           std::string_view vf_address) {
  if (!IsPciAddress(vf_address)) return std::nullopt;  // nothing outside the PCI tree is read
  std::error_code error;
  const std::filesystem::path link =
      std::filesystem::path(sysfs_root) / "bus/pci/devices" / std::string(vf_address) / "physfn";
  const std::filesystem::path target = std::filesystem::read_symlink(link, error);
  if (error) return std::nullopt;
  std::string pf = target.filename().string();
  if (!IsPciAddress(pf)) return std::nullopt;
  return pf;
}

std::unique_ptr<PodResourcesSource> MakeKubeletSource(std::string socket_path,
                                                      ListOptions options) {
  return std::make_unique<KubeletSource>(std::move(socket_path), options);
}

}  // namespace roceqos::kubelet
