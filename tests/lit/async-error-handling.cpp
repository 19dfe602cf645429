// LibTorch 1.13 (mock <torch/version.h>): NCCL_ASYNC_ERROR_HANDLING, default 0
// (rules/nccl-async-error.yaml), so the group is flagged unless the TU enables
// it.  The enabling variants are selected with -D.  1.13 does not read the
// TORCH_ name, so setting only that one is still flagged.
// RUN: %check_ddp_tidy --prefix OLD %s ddp-async-error-handling %t-old -- -- %mock_flags
// RUN: %check_ddp_tidy --prefix OLD %s ddp-async-error-handling %t-zero -- -- %mock_flags -DSET_TO_ZERO
// RUN: %check_ddp_tidy --prefix OLD %s ddp-async-error-handling %t-cur -- -- %mock_flags -DSET_CURRENT
// RUN: %check_ddp_tidy --prefix QUIET %s ddp-async-error-handling %t-leg -- -- %mock_flags -DSET_LEGACY
// LibTorch 2.0 and 2.1 default to 1 (TearDown): quiet unless the program sets it to 0.
// RUN: %check_ddp_tidy --prefix QUIET %s ddp-async-error-handling %t-21 -- -- %mock_flags \
// RUN:   -DTORCH_VERSION_MAJOR=2 -DTORCH_VERSION_MINOR=1
// RUN: %check_ddp_tidy --prefix OFF21 %s ddp-async-error-handling %t-21off -- -- %mock_flags \
// RUN:   -DTORCH_VERSION_MAJOR=2 -DTORCH_VERSION_MINOR=1 -DSET_LEGACY_ZERO
// RUN: %check_ddp_tidy --prefix QUIET %s ddp-async-error-handling %t-put -- -- %mock_flags -DSET_PUTENV
// RUN: %check_ddp_tidy --prefix QUIET %s ddp-async-error-handling %t-const -- -- %mock_flags -DSET_CONSTANT
// Without <torch/version.h> headers without c10d::Backend are taken as 1.13 or older.
// RUN: %check_ddp_tidy --prefix NOVER %s ddp-async-error-handling %t-nover -- -- %mock_flags -DNO_VERSION_HEADER
// LibTorch 2.2 and newer: only the deprecated spelling is flagged, with a fix-it.
// RUN: %check_ddp_tidy --prefix NEW %s ddp-async-error-handling %t-new -- -- %mock_flags \
// RUN:   -DTORCH_VERSION_MAJOR=2 -DTORCH_VERSION_MINOR=2 -DSET_LEGACY -DREAD_LEGACY
// RUN: %check_ddp_tidy --prefix QUIET %s ddp-async-error-handling %t-new3 -- -- %mock_flags \
// RUN:   -DTORCH_VERSION_MAJOR=2 -DTORCH_VERSION_MINOR=3 -DSET_CURRENT
// RUN: %check_ddp_tidy --prefix QUIET %s ddp-async-error-handling %t-new4 -- -- %mock_flags \
// RUN:   -DTORCH_VERSION_MAJOR=2 -DTORCH_VERSION_MINOR=4
#ifndef NO_VERSION_HEADER
#include <torch/version.h>
#endif
#include <cstdlib>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

c10::intrusive_ptr<c10d::Store> makeStore();

void configureEnv() {
  // Other NCCL variables do not enable anything.
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_BLOCKING_WAIT", "1", 1);
#ifdef SET_CURRENT
  setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 1);
#endif
#ifdef SET_LEGACY
  setenv("NCCL_ASYNC_ERROR_HANDLING", "1", 1);
  // NEW-MESSAGES: :[[@LINE-1]]:10: warning: 'NCCL_ASYNC_ERROR_HANDLING' is deprecated since LibTorch 2.2; use 'TORCH_NCCL_ASYNC_ERROR_HANDLING' [ddp-async-error-handling]
  // NEW-FIXES: setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 1);
  putenv(const_cast<char *>("NCCL_ASYNC_ERROR_HANDLING=1"));
  // NEW-MESSAGES: :[[@LINE-1]]:29: warning: 'NCCL_ASYNC_ERROR_HANDLING' is deprecated since LibTorch 2.2; use 'TORCH_NCCL_ASYNC_ERROR_HANDLING' [ddp-async-error-handling]
  // NEW-FIXES: putenv(const_cast<char *>("TORCH_NCCL_ASYNC_ERROR_HANDLING=1"));
#endif
#ifdef SET_PUTENV
  static char env[] = "TORCH_NCCL_ASYNC_ERROR_HANDLING=1";
  putenv(env);
#endif
#ifdef SET_CONSTANT
  // LibTorch 1.13's own constant for the variable.
  setenv(c10d::NCCL_ASYNC_ERROR_HANDLING, "1", 1);
#endif
#ifdef SET_LEGACY_ZERO
  setenv("NCCL_ASYNC_ERROR_HANDLING", "0", 1);
#endif
#ifdef SET_TO_ZERO
  // Explicitly off is not enabled.
  setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0", 1);
#endif
}

bool asyncErrorsOn() {
#ifdef READ_LEGACY
  return std::getenv("NCCL_ASYNC_ERROR_HANDLING") != nullptr;
  // NEW-MESSAGES: :[[@LINE-1]]:22: warning: 'NCCL_ASYNC_ERROR_HANDLING' is deprecated since LibTorch 2.2; use 'TORCH_NCCL_ASYNC_ERROR_HANDLING' [ddp-async-error-handling]
  // NEW-FIXES: return std::getenv("TORCH_NCCL_ASYNC_ERROR_HANDLING") != nullptr;
#else
  return false;
#endif
}

c10::intrusive_ptr<c10d::ProcessGroup> makeGroup(int rank, int size) {
  configureEnv();
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = std::chrono::seconds(60);
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(makeStore(), rank, size, opts);
  // OLD-MESSAGES: :[[@LINE-1]]:10: warning: NCCL process group 'ProcessGroupNCCL' is created with async error handling off: LibTorch 1.13 reads NCCL_ASYNC_ERROR_HANDLING with default 0 (NoHandling), off, and the program never sets it, so a failed or hung collective is not aborted and the other ranks wait forever; call setenv("NCCL_ASYNC_ERROR_HANDLING", "1", 1) before creating the group [ddp-async-error-handling]
  // NOVER-MESSAGES: :[[@LINE-2]]:10: warning: NCCL process group 'ProcessGroupNCCL' is created with async error handling off: LibTorch 1.13 or older (the headers declare no c10d::Backend) reads NCCL_ASYNC_ERROR_HANDLING with default 0 (NoHandling)
  // OFF21-MESSAGES: :[[@LINE-3]]:10: warning: NCCL process group 'ProcessGroupNCCL' is created with async error handling off: LibTorch 2.1 reads NCCL_ASYNC_ERROR_HANDLING with default 1 (TearDown), and the program sets it to 0, so
}

// The same missing setting: one diagnostic per translation unit, at the first group.
std::shared_ptr<c10d::ProcessGroupNCCL> makeSubgroup(int rank, int size) {
  auto opts = c10d::ProcessGroupNCCL::Options::create(true);
  opts->timeout = std::chrono::seconds(60);
  return std::make_shared<c10d::ProcessGroupNCCL>(makeStore(), rank, size, opts);
}

// Gloo groups have no NCCL communicator to abort.
c10::intrusive_ptr<c10d::ProcessGroup> makeGlooGroup(int rank, int size) {
  auto opts = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(60));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(makeStore(), rank, size, opts);
}
