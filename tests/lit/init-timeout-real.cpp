// The Gloo paths against the real LibTorch 1.13 headers (%torch_flags defines
// USE_C10D_GLOO, without which ProcessGroupGloo.hpp declares nothing).
// The real ProcessGroupNCCL.hpp needs a CUDA build of
// LibTorch (c10/cuda/impl/cuda_cmake_macros.h), so NCCL is covered by the mock
// test init-timeout.cpp.
// RUN: %check_ddp_tidy %s ddp-init-timeout %t -- -- %torch_flags
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

c10::intrusive_ptr<c10d::ProcessGroup> defaults(const std::string &path, int rank, int size) {
  auto store = c10::make_intrusive<c10d::FileStore>(path, size);
  auto opts = c10d::ProcessGroupGloo::Options::create();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: process group options 'ProcessGroupGloo::Options' are created without an explicit timeout; a hung collective waits the backend default (30 min for Gloo) before failing; pass a timeout [ddp-init-timeout]
  // CHECK-FIXES: auto opts = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(1800));
  opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
}

c10::intrusive_ptr<c10d::ProcessGroup> noOptions(const std::string &path, int rank, int size) {
  auto store = c10::make_intrusive<c10d::FileStore>(path, size);
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: process group 'ProcessGroupGloo' is created without an explicit timeout; a hung collective waits the backend default (30 min for Gloo) before failing; pass options with a timeout [ddp-init-timeout]
  // CHECK-FIXES: return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(1800)));
}

c10::intrusive_ptr<c10d::ProcessGroup> explicitTimeout(const std::string &path, int rank, int size) {
  auto store = c10::make_intrusive<c10d::FileStore>(path, size);
  auto opts = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(30));
  opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
}

c10::intrusive_ptr<c10d::ProcessGroup> assignedTimeout(const std::string &path, int rank, int size) {
  auto store = c10::make_intrusive<c10d::FileStore>(path, size);
  auto opts = c10d::ProcessGroupGloo::Options::create();
  opts->timeout = std::chrono::seconds(30);
  opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
}
