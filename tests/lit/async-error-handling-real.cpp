// Against the real LibTorch 1.13 headers: the version comes from the real
// <torch/version.h> (through <torch/torch.h>).  The real ProcessGroupNCCL.hpp
// needs a CUDA build of LibTorch (c10/cuda/impl/cuda_cmake_macros.h) and is
// empty without USE_C10D_NCCL, so the group class is declared below exactly as
// LibTorch 1.13 declares it (constructor and Options), on the real
// c10d::ProcessGroup and c10::make_intrusive.
// RUN: %check_ddp_tidy %s ddp-async-error-handling %t -- -- %torch_flags
// RUN: %check_ddp_tidy --prefix QUIET %s ddp-async-error-handling %t-set -- -- %torch_flags -DSET_ENV
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <cstdlib>

namespace c10d {
class ProcessGroupNCCL : public ProcessGroup {
public:
  struct Options : ProcessGroup::Options {
    explicit Options(bool is_high_priority_stream = false)
        : ProcessGroup::Options("nccl"), is_high_priority_stream(is_high_priority_stream) {}
    static c10::intrusive_ptr<Options> create(bool is_high_priority_stream = false) {
      return c10::make_intrusive<Options>(is_high_priority_stream);
    }
    bool is_high_priority_stream;
  };
  ProcessGroupNCCL(const c10::intrusive_ptr<Store> &store, int rank, int size,
                   c10::intrusive_ptr<Options> options = Options::create())
      : ProcessGroup(rank, size) {}
  const std::string getBackendName() const override { return "nccl"; }
};
} // namespace c10d

c10::intrusive_ptr<c10d::ProcessGroup> makeGroup(const c10::intrusive_ptr<c10d::Store> &store,
                                                 int rank, int size) {
#ifdef SET_ENV
  setenv("NCCL_ASYNC_ERROR_HANDLING", "1", 1);
#endif
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = std::chrono::seconds(60);
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: NCCL process group 'ProcessGroupNCCL' is created with async error handling off: LibTorch 1.13 reads NCCL_ASYNC_ERROR_HANDLING with default 0 (NoHandling), off, and the program never sets it, so a failed or hung collective is not aborted and the other ranks wait forever; call setenv("NCCL_ASYNC_ERROR_HANDLING", "1", 1) before creating the group [ddp-async-error-handling]
}
