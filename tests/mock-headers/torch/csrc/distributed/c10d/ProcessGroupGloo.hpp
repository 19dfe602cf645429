#pragma once
#include "ProcessGroup.hpp"
namespace gloo { namespace transport { class Device {}; } }
namespace c10d {
class ProcessGroupGloo : public ProcessGroup {
public:
  struct Options : public ProcessGroup::Options {
    explicit Options(std::chrono::milliseconds timeout = kProcessGroupDefaultTimeout)
        : ProcessGroup::Options("gloo", timeout) {}
    static c10::intrusive_ptr<Options> create(
        std::chrono::milliseconds timeout = kProcessGroupDefaultTimeout) {
      return c10::make_intrusive<Options>(timeout);
    }
    std::vector<std::shared_ptr<::gloo::transport::Device>> devices;
    int threads = 2;
  };
  static std::shared_ptr<::gloo::transport::Device> createDeviceForHostname(const std::string &) {
    return nullptr;
  }
  static std::shared_ptr<::gloo::transport::Device> createDefaultDevice() { return nullptr; }
  explicit ProcessGroupGloo(const c10::intrusive_ptr<Store> &store, int rank, int size,
                            c10::intrusive_ptr<Options> options = Options::create())
      : ProcessGroup(rank, size) {}
};
} // namespace c10d
