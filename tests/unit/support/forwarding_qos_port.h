#pragma once

// A QosReader and QosWriter that forwards every call to a test's fake host: the QoS engine and its
// remediation worker each own a reader and a writer (netlink sockets are per thread), while a test
// wants them all to reach one fake device.

#include <string>
#include <vector>

#include "exporter/qos/qos_io.h"
#include "exporter/qos/qos_writer.h"

namespace roceqos {

template <typename Host>
class ForwardingQosPort : public QosReader, public QosWriter {
 public:
  explicit ForwardingQosPort(Host* host) : h_(host) {}
  Observed<QosState> ReadDcb(const std::string& n) override { return h_->ReadDcb(n); }
  DcqcnState ReadDcqcn(const std::string& n) override { return h_->ReadDcqcn(n); }
  RoceTosState ReadRoceTos(const std::string& d, uint32_t p) override {
    return h_->ReadRoceTos(d, p);
  }
  Observed<int> ReadTcpEcn() override { return h_->ReadTcpEcn(); }
  Observed<uint16_t> ReadStormTimeout(const std::string& n) override {
    return h_->ReadStormTimeout(n);
  }
  Result<void> SetDcb(const std::string& n, const DcbWrite& w) override { return h_->SetDcb(n, w); }
  Result<void> DeleteDcbApps(const std::string& n, const std::vector<DcbApp>& a) override {
    return h_->DeleteDcbApps(n, a);
  }
  Result<void> WriteDcqcn(const std::string& n, bool np, int p, bool e) override {
    return h_->WriteDcqcn(n, np, p, e);
  }
  Result<void> WriteTcpEcn(int v) override { return h_->WriteTcpEcn(v); }
  Result<void> WriteRoceTos(const std::string& d, uint32_t p, int t) override {
    return h_->WriteRoceTos(d, p, t);
  }
  Result<void> WriteDcqcnParam(const std::string& n, bool np, const std::string& p,
                               uint64_t v) override {
    return h_->WriteDcqcnParam(n, np, p, v);
  }

 private:
  Host* h_;
};

}  // namespace roceqos
