// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-unguarded-save,ddp-rank0-io-barrier %t -- -config="{CheckOptions: {ddp-rank0-io-barrier.RequireBarrierBefore: true}}" -- %mock_flags
// Patterns from training code nobody here wrote: helper-guarded rank-0 blocks,
// a patience counter only rank 0 keeps, a throw on rank 0's validation path,
// a loop over the rank's own shard, a rank-derived role whose arms issue the
// same collective through different helpers, a path that embeds the rank
// through a helper.
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

bool is_main_process(int r) { return r == 0; }
std::string ckpt_path(int r) { return "ckpt_rank" + std::to_string(r) + ".pt"; }
std::vector<at::Tensor> load_shard(int r, int world);

// ---- true positives ---------------------------------------------------------

void patience_break(PG pg, std::vector<at::Tensor> &t, at::Tensor val_loss) {
  const int rank = pg->getRank();
  int patience = 0;
  float best = 1e9f;
  for (int epoch = 0; epoch < 100; ++epoch) {
    pg->allreduce(t)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' is skipped by ranks where 'patience > 5' holds (a rank-local value): they break out of the loop{{.*}} [ddp-divergent-collective]
    if (rank == 0) {
      if (val_loss.item<float>() < best)
        patience = 0;
      else
        ++patience;
    }
    if (patience > 5)
// CHECK-MESSAGES: :[[@LINE-1]]:9: note: condition on a rank-local value here
      break;
  }
}

void throw_on_rank0_validation(PG pg, std::vector<at::Tensor> &t, bool checkpoint_ok) {
  if (pg->getRank() == 0) {
    if (!checkpoint_ok)
      throw std::runtime_error("validation failed");
  }
  pg->broadcast(t)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'broadcast' is never reached by ranks where 'pg->getRank() == 0' holds: they throw early{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-6]]:7: note: rank-dependent condition here
}

void own_shard_loop(PG pg, int world) {
  std::vector<at::Tensor> shard = load_shard(pg->getRank(), world);
  for (size_t i = 0; i < shard.size(); ++i) {
    std::vector<at::Tensor> g{shard[i]};
    pg->allreduce(g)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' runs in a loop whose trip count depends on 'i < shard.size()', which depends on the rank{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:22: note: trip count decided here
  }
}

void helper_guarded_io(PG pg, torch::nn::Linear model, int epochs) {
  const int rank = pg->getRank();
  for (int epoch = 0; epoch < epochs; ++epoch) {
    std::vector<at::Tensor> g{torch::zeros({4})};
    pg->allreduce(g)->wait();
    if (is_main_process(rank)) {
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it{{.*}} [ddp-rank0-io-barrier]
      torch::save(model, "latest.pt");
    }
  }
}

// ---- hard negatives ---------------------------------------------------------

void bcast_a(PG pg, std::vector<at::Tensor> &t) { pg->broadcast(t)->wait(); }
void bcast_b(PG pg, std::vector<at::Tensor> &t) { pg->broadcast(t)->wait(); }

// Every role issues exactly one broadcast: the sequences match.
void role_switch(PG pg, std::vector<at::Tensor> &t) {
  const int role = pg->getRank() % 2;
  switch (role) {
  case 0:
    bcast_a(pg, t);
    break;
  default:
    bcast_b(pg, t);
    break;
  }
  pg->barrier()->wait();
}

// The path embeds the rank through a helper: one file per rank.
void per_rank_checkpoint(PG pg, torch::nn::Linear model) {
  torch::save(model, ckpt_path(pg->getRank()));
  pg->barrier()->wait();
}

// A stop flag agreed by an allreduce before the test.
void agreed_stop(PG pg, std::vector<at::Tensor> &t, at::Tensor loss) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    std::vector<at::Tensor> stop{loss};
    pg->allreduce(stop)->wait();
    if (stop[0].item<float>() > 0)
      break;
    pg->allreduce(t)->wait();
  }
}

// A rank-0 write after the last collective: nothing races with it.
void final_save(PG pg, torch::nn::Linear model) {
  std::vector<at::Tensor> g{torch::zeros({4})};
  pg->allreduce(g)->wait();
  if (pg->getRank() == 0)
    torch::save(model, "final.pt");
}
