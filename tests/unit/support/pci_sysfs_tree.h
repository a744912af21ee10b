#pragma once

// A synthetic sysfs laid out as the kernel's, in a temporary directory: a PCI function's directory
// under devices/, bus/pci/devices linking to it, class/net/<name> linking to the function's
// net/<name> (or to devices/virtual/net/<name>), infiniband/<device> under the function. Tests
// change it between reads the way a driver reload, a rename or a swap changes the real one.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace roceqos::testing {

class PciSysfsTree {
 public:
  PciSysfsTree() {
    char tmpl[] = "/tmp/roceqos-pcisysfs-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    std::filesystem::create_directories(root_ / "bus/pci/devices");
    std::filesystem::create_directories(root_ / "class/net");
  }
  ~PciSysfsTree() { std::filesystem::remove_all(root_); }
  PciSysfsTree(const PciSysfsTree&) = delete;
  PciSysfsTree& operator=(const PciSysfsTree&) = delete;

  const std::filesystem::path& root() const { return root_; }

  std::filesystem::path Function(const std::string& bdf) {
    const std::filesystem::path dir = root_ / "devices/pci0000:00" / bdf;
    std::filesystem::create_directories(dir);
    std::filesystem::create_directory_symlink("../../../bus/pci", dir / "subsystem");
    std::filesystem::create_directory_symlink("../../../devices/pci0000:00/" + bdf,
                                              root_ / "bus/pci/devices" / bdf);
    return dir;
  }
  /// `ifindex` is the file's text as written (a test of the parser may write anything).
  void Netdev(const std::filesystem::path& function, const std::string& name,
              const std::string& ifindex) {
    const std::filesystem::path dir = function / "net" / name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "ifindex") << ifindex;
    std::filesystem::create_directory_symlink("../../../" + function.filename().string(),
                                              dir / "device");
    std::filesystem::create_directory_symlink(dir, root_ / "class/net" / name);
  }
  void Unregister(const std::filesystem::path& function, const std::string& name) {
    std::filesystem::remove_all(function / "net" / name);
    std::filesystem::remove(root_ / "class/net" / name);
  }
  void VirtualNetdev(const std::string& name, const std::string& ifindex) {
    const std::filesystem::path dir = root_ / "devices/virtual/net" / name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "ifindex") << ifindex;
    std::filesystem::create_directory_symlink(dir, root_ / "class/net" / name);
  }
  static void Rdma(const std::filesystem::path& function, const std::string& name) {
    std::filesystem::create_directories(function / "infiniband" / name);
  }
  /// Port `port` of RDMA device `name` under the function, linked from class/infiniband/<name>,
  /// with a GID table of `size` zero entries (empty, as the kernel shows unused ones).
  std::filesystem::path RdmaPortGids(const std::filesystem::path& function, const std::string& name,
                                     int port, int size) {
    const std::filesystem::path device = function / "infiniband" / name;
    const std::filesystem::path dir = device / "ports" / std::to_string(port);
    std::filesystem::create_directories(dir / "gids");
    std::filesystem::create_directories(dir / "gid_attrs/types");
    std::filesystem::create_directories(dir / "gid_attrs/ndevs");
    for (int i = 0; i < size; ++i)
      std::ofstream(dir / "gids" / std::to_string(i))
          << "0000:0000:0000:0000:0000:0000:0000:0000\n";
    if (!std::filesystem::exists(root_ / "class/infiniband" / name)) {
      std::filesystem::create_directories(root_ / "class/infiniband");
      std::filesystem::create_directory_symlink(device, root_ / "class/infiniband" / name);
    }
    return dir;
  }
  /// Fills entry `index` of a port made by RdmaPortGids, as the kernel's show functions print it.
  static void GidEntry(const std::filesystem::path& port_dir, int index, const std::string& gid,
                       const std::string& type, const std::string& ndev) {
    const std::string i = std::to_string(index);
    std::ofstream(port_dir / "gids" / i) << gid << "\n";
    std::ofstream(port_dir / "gid_attrs/types" / i) << type << "\n";
    std::ofstream(port_dir / "gid_attrs/ndevs" / i) << ndev << "\n";
  }

 private:
  std::filesystem::path root_;
};

}  // namespace roceqos::testing
