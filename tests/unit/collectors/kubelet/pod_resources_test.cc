// The PodResources v1 client against the fake kubelet: a real gRPC server on a real unix socket.
#include "collectors/kubelet/pod_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kubelet/podresources_v1.pb.h"
#include "tests/fake_kubelet/fake_kubelet.h"

namespace roceqos::kubelet {
namespace {

using roceqos::testing::FakeKubelet;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kFixture = std::string(ROCEQOS_FIXTURES_DIR) + "/kubelet/dgx-two-jobs.yaml";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/kubelet-test-XXXXXX";
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

v1::ListPodResourcesResponse Fixture() {
  auto response = roceqos::testing::LoadPodsFile(kFixture);
  EXPECT_TRUE(response.ok()) << response.error().message;
  return response.ok() ? *response : v1::ListPodResourcesResponse();
}

ListOptions WithDeadline(std::chrono::milliseconds deadline) {
  ListOptions options;
  options.deadline = deadline;
  return options;
}

v1::ListPodResourcesResponse OnePod(const std::string& ns, const std::string& name) {
  v1::ListPodResourcesResponse response;
  v1::PodResources* pod = response.add_pod_resources();
  pod->set_namespace_(ns);
  pod->set_name(name);
  return response;
}

std::unique_ptr<FakeKubelet> Serve(const std::string& socket) {
  auto fake = FakeKubelet::Start(socket);
  EXPECT_TRUE(fake.ok()) << fake.error().message;
  return fake.ok() ? std::move(*fake) : nullptr;
}

TEST(PodResourcesTest, ListsPodsWithGpusAndVfs) {
  TempDir dir;
  auto fake = Serve(dir.Path("kubelet.sock"));
  fake->SetResponse(Fixture());
  auto list = ListPodResources(dir.Path("kubelet.sock"));
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(fake->calls(), 1);
  ASSERT_EQ(list->pods.size(), 4u);
  EXPECT_EQ(list->dropped, 0u);
  EXPECT_FALSE(list->truncated);
  const PodAllocation& llama = list->pods[0];
  EXPECT_EQ(llama.namespace_name, "training");
  EXPECT_EQ(llama.name, "llama-70b-worker-0");
  ASSERT_EQ(llama.containers.size(), 2u);
  EXPECT_EQ(llama.containers[1].name, "log-shipper");
  EXPECT_TRUE(llama.containers[1].devices.empty());
  const auto& devices = llama.containers[0].devices;
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].resource_name, "nvidia.com/gpu");
  EXPECT_EQ(devices[0].device_ids.size(), 4u);
  EXPECT_EQ(devices[0].device_ids[0], "GPU-0d8f2a6c-41e3-4b7e-9a1c-5e2f7d3b8c10");
  EXPECT_THAT(devices[0].numa_nodes, ElementsAre(0));
  EXPECT_EQ(devices[1].resource_name, "intel.com/sriov_rdma");
  EXPECT_THAT(devices[1].device_ids, ElementsAre("0000:3b:00.2", "0000:3b:00.3"));
  EXPECT_THAT(list->pods[1].containers[0].devices[1].numa_nodes, ElementsAre(1));
  EXPECT_EQ(list->pods[3].containers[0].devices[0].device_ids[0], "rdma_shared_dev_a_0");
}

TEST(PodResourcesTest, AllocatedDevicesAreOneRowPerDeviceAndVfsAreFoundByAddress) {
  TempDir dir;
  auto fake = Serve(dir.Path("kubelet.sock"));
  fake->SetResponse(Fixture());
  auto source = MakeKubeletSource(dir.Path("kubelet.sock"));
  auto list = source->List();
  ASSERT_TRUE(list.ok()) << list.error().message;
  const std::vector<AllocatedDevice> rows = AllocatedDevices(*list);
  ASSERT_EQ(rows.size(), 13u);  // 4 GPUs + 2 VFs, twice, and one shared RDMA device
  EXPECT_EQ(rows[4].pod, "llama-70b-worker-0");
  EXPECT_EQ(rows[4].container, "trainer");
  EXPECT_EQ(rows[4].resource_name, "intel.com/sriov_rdma");
  int vfs = 0;
  for (const AllocatedDevice& row : rows) vfs += PciAddressOfDeviceId(row.device_id) ? 1 : 0;
  EXPECT_EQ(vfs, 4);
}

TEST(PodResourcesTest, EmptyListIsNoPods) {
  TempDir dir;
  auto fake = Serve(dir.Path("kubelet.sock"));
  auto list = ListPodResources(dir.Path("kubelet.sock"));
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_TRUE(list->pods.empty());
  EXPECT_EQ(list->dropped, 0u);
}

TEST(PodResourcesTest, MissingSocketIsNamed) {
  TempDir dir;
  auto list = ListPodResources(dir.Path("kubelet.sock"));
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().errnum, ENOENT);
  EXPECT_THAT(list.error().message,
              HasSubstr("kubelet pod-resources socket not found: " + dir.Path("kubelet.sock")));
  EXPECT_EQ(ListFailureOf(list.error()), ListFailure::kSocketMissing);
}

TEST(PodResourcesTest, RegularFileIsNotASocket) {
  TempDir dir;
  std::ofstream(dir.Path("kubelet.sock")) << "x";
  auto list = ListPodResources(dir.Path("kubelet.sock"));
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.error().message, HasSubstr("is not a socket"));
  EXPECT_EQ(ListFailureOf(list.error()), ListFailure::kUnavailable);
}

TEST(PodResourcesTest, SocketNobodyListensOnIsUnavailable) {
  TempDir dir;
  // A socket file left behind by a kubelet that exited: bound, then closed.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = dir.Path("kubelet.sock");
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
  auto list = ListPodResources(path);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(ListFailureOf(list.error()), ListFailure::kUnavailable) << list.error().message;
  EXPECT_THAT(list.error().message, HasSubstr("unavailable: kubelet pod-resources List on"));
}

TEST(PodResourcesTest, KubeletThatNeverAnswersMeetsTheDeadline) {
  TempDir dir;
  auto fake = Serve(dir.Path("kubelet.sock"));
  fake->Hang();
  const auto start = std::chrono::steady_clock::now();
  auto list =
      ListPodResources(dir.Path("kubelet.sock"), WithDeadline(std::chrono::milliseconds(200)));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(ListFailureOf(list.error()), ListFailure::kDeadlineExceeded) << list.error().message;
  EXPECT_THAT(list.error().message, HasSubstr("no answer within 200 ms"));
  // The call waited for the deadline rather than failing at once. gRPC times it on its own clock,
  // which fired 20 us short of 200 ms by steady_clock in an ASan run: the bound allows 10 ms.
  EXPECT_GE(took, std::chrono::milliseconds(190));
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(PodResourcesTest, AnswerOverTheSizeCapIsRefused) {
  EXPECT_EQ(ListOptions().max_response_bytes, 16 << 20);
  TempDir dir;
  auto fake = Serve(dir.Path("kubelet.sock"));
  // One pod whose name alone is over the cap (64 KiB here, to stay quick under the sanitizers):
  // gRPC refuses the message before it is parsed.
  fake->SetResponse(OnePod("default", std::string(size_t{64} << 10, 'a')));
  ListOptions options = WithDeadline(std::chrono::seconds(20));
  options.max_response_bytes = 64 << 10;
  auto list = ListPodResources(dir.Path("kubelet.sock"), options);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(ListFailureOf(list.error()), ListFailure::kResponseTooLarge) << list.error().message;
  EXPECT_THAT(list.error().message, HasSubstr("answer over 65536 bytes"));
}

TEST(PodResourcesTest, PodsOverTheCapAreCutShort) {
  TempDir dir;
  auto fake = Serve(dir.Path("kubelet.sock"));
  v1::ListPodResourcesResponse many;
  for (size_t i = 0; i < kMaxPods + 100; ++i) {
    v1::PodResources* pod = many.add_pod_resources();
    pod->set_namespace_("default");
    pod->set_name("pod-" + std::to_string(i));
  }
  fake->SetResponse(std::move(many));
  auto list = ListPodResources(dir.Path("kubelet.sock"), WithDeadline(std::chrono::seconds(20)));
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(list->pods.size(), kMaxPods);
  EXPECT_EQ(list->pods.back().name, "pod-1023");
  EXPECT_TRUE(list->truncated);
}

TEST(PodResourcesTest, SocketWithoutWriteAccessIsPermissionDenied) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root connects to any socket whatever its mode; run this test as a "
                    "non-root user (e.g. setpriv --reuid=65534 --regid=65534 --clear-groups)";
  }
  TempDir dir;
  auto fake = Serve(dir.Path("kubelet.sock"));
  ASSERT_EQ(::chmod(dir.Path("kubelet.sock").c_str(), 0), 0);
  auto list = ListPodResources(dir.Path("kubelet.sock"));
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().errnum, EACCES);
  EXPECT_EQ(ListFailureOf(list.error()), ListFailure::kPermissionDenied);
  EXPECT_THAT(list.error().message, HasSubstr("permission denied"));
  EXPECT_EQ(fake->calls(), 0);
}

TEST(PodResourcesTest, PodsFileIsReadAgainOnEveryCall) {
  TempDir dir;
  auto fake = Serve(dir.Path("kubelet.sock"));
  const std::string pods = dir.Path("pods.yaml");
  std::ofstream(pods) << "pods:\n  - {namespace: a, name: one}\n";
  fake->SetPodsFile(pods);
  auto first = ListPodResources(dir.Path("kubelet.sock"));
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_EQ(first->pods.size(), 1u);
  std::ofstream(pods) << "pods:\n  - {namespace: a, name: one}\n  - {namespace: b, name: two}\n";
  auto second = ListPodResources(dir.Path("kubelet.sock"));
  ASSERT_TRUE(second.ok()) << second.error().message;
  ASSERT_EQ(second->pods.size(), 2u);
  EXPECT_EQ(second->pods[1].name, "two");
}

// --- MapListResponse: what is not label-safe is left out and counted.

TEST(MapListResponseTest, PodsWithNamesKubernetesRefusesAreDropped) {
  for (const auto& [ns, name] :
       std::vector<std::pair<std::string, std::string>>{{"", "p"},
                                                        {"Default", "p"},
                                                        {"default", ""},
                                                        {"default", "p{x=\"y\"}"},
                                                        {"default", std::string(254, 'a')},
                                                        {std::string(64, 'a'), "p"},
                                                        {"default", "-p"},
                                                        {"default", std::string("p\0q", 3)}}) {
    PodResourcesList list = MapListResponse(OnePod(ns, name));
    EXPECT_TRUE(list.pods.empty()) << ns << "/" << name;
    EXPECT_EQ(list.dropped, 1u) << ns << "/" << name;
  }
  EXPECT_EQ(MapListResponse(OnePod("default", std::string(253, 'a'))).pods.size(), 1u);
  EXPECT_EQ(MapListResponse(OnePod("kube-system", "coredns-5d78c9869d-x7r2k.v2")).pods.size(), 1u);
}

TEST(MapListResponseTest, BadResourceNamesDeviceIdsAndNumaNodesAreLeftOut) {
  v1::ListPodResourcesResponse response = OnePod("default", "p");
  v1::ContainerResources* container = response.mutable_pod_resources(0)->add_containers();
  container->set_name("c");
  v1::ContainerDevices* bad_resource = container->add_devices();
  bad_resource->set_resource_name("nvidia.com/gpu with space");
  bad_resource->add_device_ids("GPU-1");
  v1::ContainerDevices* devices = container->add_devices();
  devices->set_resource_name("nvidia.com/gpu");
  devices->add_device_ids("GPU-1");
  devices->add_device_ids("GPU 2");
  devices->add_device_ids("GPU-\x01");
  devices->add_device_ids("\xff\xfe");
  devices->add_device_ids(std::string(kMaxDeviceId + 1, 'g'));
  devices->add_device_ids("");
  devices->mutable_topology()->add_nodes()->set_id(-1);
  devices->mutable_topology()->add_nodes()->set_id(kMaxNumaNode + 1);
  devices->mutable_topology()->add_nodes()->set_id(3);
  PodResourcesList list = MapListResponse(response);
  ASSERT_EQ(list.pods.size(), 1u);
  ASSERT_EQ(list.pods[0].containers[0].devices.size(), 1u);
  const DeviceAllocation& kept = list.pods[0].containers[0].devices[0];
  EXPECT_THAT(kept.device_ids, ElementsAre("GPU-1"));
  EXPECT_THAT(kept.numa_nodes, ElementsAre(3));
  EXPECT_EQ(list.dropped, 6u);  // the resource entry and five device IDs
}

TEST(MapListResponseTest, DeviceIdsPerContainerAreCapped) {
  v1::ListPodResourcesResponse response = OnePod("default", "p");
  v1::ContainerResources* container = response.mutable_pod_resources(0)->add_containers();
  container->set_name("c");
  for (int r = 0; r < 3; ++r) {
    v1::ContainerDevices* devices = container->add_devices();
    devices->set_resource_name("example.com/dev" + std::to_string(r));
    for (int i = 0; i < 100; ++i) devices->add_device_ids("d" + std::to_string(i));
  }
  PodResourcesList list = MapListResponse(response);
  size_t ids = 0;
  for (const auto& devices : list.pods[0].containers[0].devices) ids += devices.device_ids.size();
  EXPECT_EQ(ids, kMaxDeviceIdsPerContainer);
  EXPECT_TRUE(list.truncated);
}

TEST(MapListResponseTest, BytesWithUnknownFieldsParseAndGarbageDoesNot) {
  std::string bytes = Fixture().SerializeAsString();
  // Fields this proto leaves out (a newer kubelet's, or cpu_ids) are skipped: field 7, varint 5.
  bytes += std::string("\x38\x05", 2);
  auto list = MapListResponseBytes(std::as_bytes(std::span(bytes.data(), bytes.size())));
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(list->pods.size(), 4u);
  const std::string garbage = "\x0a\xff\xff\xff\xff\x0f";
  auto bad = MapListResponseBytes(std::as_bytes(std::span(garbage.data(), garbage.size())));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ListFailureOf(bad.error()), ListFailure::kMalformed);
}

// fuzz/make_seeds.py encodes the fixture by hand: its bytes are what protobuf itself writes, and
// every seed maps.
TEST(MapListResponseTest, FuzzSeedsAreWhatTheKubeletWouldSend) {
  const std::filesystem::path seeds =
      std::filesystem::path(ROCEQOS_SOURCE_DIR) / "fuzz/corpus/pod_resources_fuzz";
  std::ifstream in(seeds / "seed-dgx-two-jobs", std::ios::binary);
  const std::string seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(seed, Fixture().SerializeAsString());
  int mapped = 0;
  for (const auto& entry : std::filesystem::directory_iterator(seeds)) {
    std::ifstream file(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    auto list = MapListResponseBytes(std::as_bytes(std::span(bytes.data(), bytes.size())));
    EXPECT_TRUE(list.ok()) << entry.path();
    ++mapped;
  }
  EXPECT_GE(mapped, 5);
}

TEST(PciAddressOfDeviceIdTest, VfAddressesAreRecognisedAndLowerCased) {
  EXPECT_EQ(PciAddressOfDeviceId("0000:3b:00.2"), "0000:3b:00.2");
  EXPECT_EQ(PciAddressOfDeviceId("0000:3B:01.7"), "0000:3b:01.7");
  EXPECT_EQ(PciAddressOfDeviceId("10000:01:00.1"), "10000:01:00.1");  // a VMD domain
  EXPECT_EQ(PciAddressOfDeviceId("GPU-0d8f2a6c-41e3-4b7e-9a1c-5e2f7d3b8c10"), std::nullopt);
  EXPECT_EQ(PciAddressOfDeviceId("0000:3b:00.8"), std::nullopt);
  EXPECT_EQ(PciAddressOfDeviceId("3b:00.2"), std::nullopt);
  EXPECT_EQ(PciAddressOfDeviceId("rdma_shared_dev_a_0"), std::nullopt);
}

TEST(PciAddressOfDeviceIdTest, VfIsFollowedToItsPf) {
  TempDir sysfs;
  const std::filesystem::path devices = sysfs.Path("bus/pci/devices");
  std::filesystem::create_directories(devices / "0000:3b:00.0");
  std::filesystem::create_directories(devices / "0000:3b:00.2");
  std::filesystem::create_symlink("../0000:3b:00.0", devices / "0000:3b:00.2/physfn");
  EXPECT_EQ(VfPhysfnAddress(sysfs.Path(""), "0000:3b:00.2"), "0000:3b:00.0");
  EXPECT_EQ(VfPhysfnAddress(sysfs.Path(""), "0000:3b:00.0"), std::nullopt);  // a PF
  EXPECT_EQ(VfPhysfnAddress(sysfs.Path(""), "0000:3b:00.3"), std::nullopt);  // gone
  EXPECT_EQ(VfPhysfnAddress(sysfs.Path(""), "../../etc"), std::nullopt);
}

TEST(ListFailureTest, EveryFailureHasItsName) {
  EXPECT_EQ(NameOf(kListFailureNames, ListFailure::kSocketMissing), "socket_missing");
  EXPECT_EQ(NameOf(kListFailureNames, ListFailure::kDeadlineExceeded), "deadline_exceeded");
  EXPECT_EQ(ListFailureOf(MakeError(ETIMEDOUT, "")), ListFailure::kDeadlineExceeded);
  EXPECT_EQ(ListFailureOf(MakeError(EOPNOTSUPP, "")), ListFailure::kUnimplemented);
}

}  // namespace
}  // namespace roceqos::kubelet
