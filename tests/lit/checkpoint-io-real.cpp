// RUN: %check_ddp_tidy --prefix SAVE %s ddp-unguarded-save %t -- -- %torch_flags
// RUN: %check_ddp_tidy --prefix IO %s ddp-rank0-io-barrier %t -- -- %torch_flags
// Checkpoint IO against the real LibTorch 1.13 headers (libtorch-dev).
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <fstream>
#include <string>

void save_checkpoints(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg, torch::nn::Linear model,
                      int epoch) {
  const int rank = pg->getRank();
  torch::save(model, "last.pt");
// SAVE-MESSAGES: :[[@LINE-1]]:3: warning: every rank runs 'torch::save' to the same path, so the ranks overwrite one file concurrent{{.*}} [ddp-unguarded-save]
  torch::save(model, "shard_" + std::to_string(rank) + ".pt");
  pg->barrier()->wait();
  if (rank == 0) {
    torch::save(model, "best.pt");
    std::ofstream("metrics.csv", std::ios::app) << epoch << "\n";
  }
  torch::serialize::OutputArchive archive;
  model->save(archive);
  pg->barrier()->wait();
  if (rank == 0)
// IO-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; o{{.*}} [ddp-rank0-io-barrier]
    archive.save_to("archive.pt");
// IO-FIXES: {{^}}    archive.save_to("archive.pt");{{$}}
// IO-FIXES-NEXT: {{^}}  pg->barrier()->wait();{{$}}
  std::vector<at::Tensor> grads{torch::zeros({4})};
  pg->allreduce(grads)->wait();
}
