#pragma once
#include "ProcessGroup.hpp"
namespace c10d {
class ProcessGroupNCCL : public ProcessGroup {
public:
  struct Options : ProcessGroup::Options {
    explicit Options(bool is_high_priority_stream = false)
        : ProcessGroup::Options("nccl", std::chrono::milliseconds(10 * 60 * 1000)),
          is_high_priority_stream(is_high_priority_stream) {}
    static c10::intrusive_ptr<Options> create(bool is_high_priority_stream = false) {
      return c10::make_intrusive<Options>(is_high_priority_stream);
    }
    bool is_high_priority_stream;
  };
  ProcessGroupNCCL(const c10::intrusive_ptr<Store> &store, int rank, int size,
                   c10::intrusive_ptr<Options> options = Options::create())
      : ProcessGroup(rank, size) {}
};
} // namespace c10d
