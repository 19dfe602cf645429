// RUN: %check_ddp_tidy %s ddp-error-path-exit %t -- -- %torch_flags
// On the real LibTorch 1.13 headers: a rank that returns on a failed load
// leaves the others in the next allreduce.
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <string>
#include <vector>

enum class Status { Success, NotFound, Corrupt };

Status load_shard(const std::string &path, at::Tensor &out);

Status train_step(const c10::intrusive_ptr<c10d::ProcessGroupGloo> &pg, const std::string &path) {
  at::Tensor batch;
  Status st = load_shard(path, batch);
  if (st != Status::Success)
    return st;
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit: when 'st != Status::Success' reports a failure on one rank, that rank returns here while the other ranks wait in collective 'allreduce' and hang{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: failure checked here
  std::vector<at::Tensor> grads{batch};
  pg->allreduce(grads)->wait();
  if (load_shard(path + ".next", batch) != Status::Success)
    return Status::NotFound; // a second error path in the same function: one report per function
  pg->allreduce(grads)->wait();
  return Status::Success;
}

// Not an error path: the status is checked after the last collective.
Status finish(const c10::intrusive_ptr<c10d::ProcessGroupGloo> &pg, const std::string &path) {
  std::vector<at::Tensor> grads{torch::zeros({4})};
  pg->allreduce(grads)->wait();
  at::Tensor t;
  if (load_shard(path, t) != Status::Success)
    return Status::NotFound;
  return Status::Success;
}
