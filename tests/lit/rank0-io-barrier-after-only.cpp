// RUN: %check_ddp_tidy %s ddp-rank0-io-barrier %t -- -- %mock_flags
// The default (RequireBarrierBefore: false): only the barrier after the block is required.
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

void barrier_after_only(PG pg, torch::nn::Linear model) {
  if (pg->getRank() == 0)
    torch::save(model, "checkpoint.pt");
  pg->barrier()->wait();
}

void no_barrier_after(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  pg->barrier()->wait();
  if (pg->getRank() == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; o{{.*}} [ddp-rank0-io-barrier]
    torch::save(model, "latest.pt");
  pg->allreduce(g)->wait();
}

// CHECK-FIXES: {{^}}    torch::save(model, "latest.pt");{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->allreduce(g)->wait();{{$}}
