// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %torch_flags
// The same patterns against the real LibTorch 1.13 headers (libtorch-dev).
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <vector>

void train(const std::string &store_path, int world_size) {
  auto store = c10::make_intrusive<c10d::FileStore>(store_path, world_size);
  const int rank = std::stoi(std::getenv("RANK"));
  auto opts = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(30));
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, opts);
  torch::nn::Linear model(4, 2);
  std::vector<at::Tensor> grads{torch::zeros({4})};
  // main process first: every rank runs exactly one barrier
  if (rank != 0)
    pg->barrier()->wait();
  if (rank == 0)
    pg->barrier()->wait();
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto loss = model->forward(torch::randn({8, 4})).sum();
    pg->allreduce(grads)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' is skipped by ranks where 'loss.item<float>() < 0.1f' holds (a rank{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE+1]]:9: note: condition on a rank-local value here
    if (loss.item<float>() < 0.1f)
      break;
  }
  if (rank == 0) {
    std::vector<at::Tensor> metric{torch::ones({1})};
    pg->allreduce(metric)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' runs only on ranks where 'rank == 0' holds; the other ranks skip it{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:7: note: rank-dependent condition here
  }
  if (pg->getSize() > 1)
    pg->barrier()->wait();
}

