#pragma once
#include "ProcessGroup.hpp"
namespace c10d {
// LibTorch 1.13 spells the variable without the TORCH_ prefix (renamed in 2.2).
constexpr const char *NCCL_ASYNC_ERROR_HANDLING = "NCCL_ASYNC_ERROR_HANDLING";
constexpr const char *NCCL_BLOCKING_WAIT = "NCCL_BLOCKING_WAIT";
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
