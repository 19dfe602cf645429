// RUN: %check_ddp_tidy %s ddp-rank0-io-barrier %t -- -config="{CheckOptions: {ddp-rank0-io-barrier.BarrierAroundEveryWrite: true}}" -- %mock_flags
// With BarrierAroundEveryWrite every rank-0 write block needs a barrier on
// entry and exit: hazards stay warnings, the rest are remarks (policy notes).
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <fstream>

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

void train(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    pg->allreduce(g)->wait();
    if (pg->getRank() == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it; other ranks {{.*}} [ddp-rank0-io-barrier]
      torch::save(model, "epoch.pt");
  }
  if (pg->getRank() == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: remark: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it (BarrierAroundEveryWrite: {{.*}}); put a barrier before and after it [ddp-rank0-io-barrier]
    torch::save(model, "final.pt");
}

void log_line(PG pg, float loss, std::vector<at::Tensor> &g) {
  pg->allreduce(g)->wait();
  if (pg->getRank() == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: remark: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it (BarrierAroundEveryWrite: {{.*}}); put a barrier before and after it [ddp-rank0-io-barrier]
    std::ofstream("train.log", std::ios::app) << loss;
  pg->allreduce(g)->wait();
}

void bracketed(PG pg, torch::nn::Linear model) {
  pg->barrier()->wait();
  if (pg->getRank() == 0)
    torch::save(model, "bracketed.pt");
  pg->barrier()->wait();
}

// CHECK-FIXES: {{^}}  pg->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  if (pg->getRank() == 0){{$}}
