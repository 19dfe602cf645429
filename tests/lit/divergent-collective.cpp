// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %mock_flags
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <cmath>
#include <cstdlib>
#include <mpi.h>
#include <nccl.h>
#include <stdexcept>
#include <string>
#include <vector>

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

// ---- true positives ---------------------------------------------------------

void rank0_only(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() == 0) {
    pg->allreduce(t)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' runs only on ranks where 'pg->getRank() == 0' holds; the other rank{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
  }
  pg->barrier()->wait();
}

void else_arm(PG pg, std::vector<at::Tensor> &t) {
  const int rank = pg->getRank();
  if (rank == 0) {
    torch::save(t, "x.pt");
  } else {
    pg->broadcast(t);
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'broadcast' runs only on ranks where 'rank == 0' does not hold; the other ranks{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-5]]:7: note: rank-dependent condition here
  }
}

void reduce_metric(PG pg, at::Tensor m) {
  std::vector<at::Tensor> v{m};
  pg->allreduce(v)->wait();
}

void evaluate_on_main(PG pg, at::Tensor metric) {
  const bool is_main = pg->getRank() == 0;
  if (is_main)
    reduce_metric(pg, metric);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: call to 'reduce_metric', which runs collective 'allreduce', runs only on ranks where 'is_m{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
}

void early_return(PG pg, std::vector<at::Tensor> &t) {
  int rank = std::atoi(std::getenv("RANK"));
  if (rank == 1)
    return;
  pg->allreduce(t);
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'allreduce' is never reached by ranks where 'rank == 1' holds: they return earl{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:7: note: rank-dependent condition here
}

void order_mismatch(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() % 2 == 0) {
    pg->allreduce(t);
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' runs in a different order across ranks: ranks where 'pg->getRank() {{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
    pg->barrier();
  } else {
    pg->barrier();
    pg->allreduce(t);
  }
}

void early_stop_local_loss(PG pg, std::vector<at::Tensor> &grads, at::Tensor loss) {
  for (int epoch = 0; epoch < 100; ++epoch) {
    pg->allreduce(grads)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' is skipped by ranks where 'l < 0.01f' holds (a rank-local value): t{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE+2]]:9: note: condition on a rank-local value here
    float l = loss.item<float>();
    if (l < 0.01f)
      break;
  }
}

void skip_nonfinite(PG pg, std::vector<at::Tensor> &grads, at::Tensor loss) {
  for (int step = 0; step < 100; ++step) {
    if (!std::isfinite(loss.item<float>()))
      continue;
    pg->allreduce(grads)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' is never reached by ranks where 'std::isfinite(loss.item<float>())'{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:10: note: condition on a rank-local value here
  }
}

void per_rank_shard(PG pg, std::vector<at::Tensor> &grads, const std::vector<std::vector<int>> &shards) {
  const auto &mine = shards[pg->getRank()];
  for (size_t i = 0; i < mine.size(); ++i) {
    pg->allreduce(grads)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' runs in a loop whose trip count depends on 'i < mine.size()', which{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:22: note: trip count decided here
  }
}

void ternary(PG pg, std::vector<at::Tensor> &t) {
  auto w = pg->getRank() == 0 ? pg->allreduce(t) : c10::intrusive_ptr<c10d::Work>();
// CHECK-MESSAGES: :[[@LINE-1]]:37: warning: collective 'allreduce' runs only on ranks where 'pg->getRank() == 0' holds; the other rank{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-2]]:12: note: rank-dependent condition here
}

void mpi_rank(float *buf) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    MPI_Barrier(MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'rank != 0' holds; the other ranks skip it {{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
  }
}

void nccl_rank(ncclComm_t comm, float *buf, cudaStream_t s) {
  int me = 0;
  ncclCommUserRank(comm, &me);
  switch (me) {
  case 0:
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'ncclAllReduce' runs only on ranks where 'me == 0' holds; the other ranks skip {{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:3: note: rank-dependent condition here
    break;
  default:
    break;
  }
}

void lambda_sync(PG pg, std::vector<at::Tensor> &t) {
  auto sync = [&] { pg->barrier()->wait(); };
  if (pg->getRank() == 0)
    sync();
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: call to 'sync', which runs barrier, runs only on ranks where 'pg->getRank() == 0' holds; t{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
}

// ---- hard negatives -----------------------------------------------------------

void main_process_first(PG pg) {
  const int rank = pg->getRank();
  if (rank != 0)
    pg->barrier()->wait();
  // rank 0 prepares the dataset here
  if (rank == 0)
    pg->barrier()->wait();
}

void identical_arms(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() == 0) {
    pg->allreduce(t);
  } else {
    pg->allreduce(t);
  }
}

void world_size_branch(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getSize() > 1)
    pg->allreduce(t);
}

void point_to_point(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() == 0)
    pg->send(t, 1, 0);
  else if (pg->getRank() == 1)
    pg->recv(t, 0, 0);
}

void matrix_rank(PG pg, std::vector<at::Tensor> &t, int rank) {
  // `rank` is a LoRA rank here: nothing in this function communicates with it.
  if (rank > 8)
    t.clear();
}

void lora(PG pg, std::vector<at::Tensor> &t) {
  int rank = 16; // a LoRA rank, not a process rank
  if (rank == 0)
    pg->allreduce(t);
}

void agreed_stop(PG pg, std::vector<at::Tensor> &grads, at::Tensor loss) {
  for (int epoch = 0; epoch < 100; ++epoch) {
    pg->allreduce(grads)->wait();
    at::Tensor stop = torch::tensor({loss.item<float>() < 0.01f ? 1.0f : 0.0f});
    std::vector<at::Tensor> flag{stop};
    pg->allreduce(flag)->wait();
    if (stop.item<float>() > 0)
      break;
  }
}

void distributed_sampler(PG pg, std::vector<at::Tensor> &grads) {
  auto ds = torch::data::datasets::MNIST("data");
  auto loader = torch::data::make_data_loader(
      ds, torch::data::samplers::DistributedRandomSampler(ds.size(), pg->getSize(), pg->getRank()),
      torch::data::DataLoaderOptions(32));
  for (auto &batch : *loader)
    pg->allreduce(grads)->wait();
}

void abort_is_job_wide(PG pg, std::vector<at::Tensor> &t, bool bad) {
  if (pg->getRank() == 0 && bad)
    MPI_Abort(MPI_COMM_WORLD, 1);
  pg->allreduce(t);
}


// Two bugs in one loop, two findings: the rank-0 evaluation and the early stop.
void two_bugs_in_one_loop(PG pg, std::vector<at::Tensor> &grads, at::Tensor loss) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    reduce_metric(pg, loss);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: call to 'reduce_metric', which runs collective 'allreduce', is skipped by ranks where 'loss.item<float>() < 0.1f' holds (a rank-local value): they break out of the loop{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE+5]]:9: note: condition on a rank-local value here
    if (pg->getRank() == 0)
      reduce_metric(pg, loss);
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: call to 'reduce_metric', which runs collective 'allreduce', runs only on ranks where 'pg->getRank() == 0' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:9: note: rank-dependent condition here
    if (loss.item<float>() < 0.1f)
      break;
  }
}

// An early stop behind a setting (cleanrl's `target_kl is not None and
// approx_kl > target_kl`): with the setting on, the stop is the rank's own.
void early_stop_behind_a_setting(PG pg, std::vector<at::Tensor> &grads, at::Tensor kl, bool use_target_kl) {
  for (int epoch = 0; epoch < 10; ++epoch) {
    pg->allreduce(grads)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:9: warning: collective 'allreduce' is skipped by ranks where 'kl.item<float>() > 0.02f' holds (a rank-local value): they break out of the loop{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE+1]]:26: note: condition on a rank-local value here
    if (use_target_kl && kl.item<float>() > 0.02f)
      break;
  }
}

// A throw on a rank-local condition leaves the other ranks in the allreduce.
void throw_on_local_nan(PG pg, std::vector<at::Tensor> &grads, at::Tensor loss) {
  if (!std::isfinite(loss.item<float>()))
    throw std::runtime_error("loss is NaN");
  pg->allreduce(grads)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'allreduce' is never reached by ranks where 'std::isfinite(loss.item<float>())' does not hold (a rank-local value): they throw early{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:8: note: condition on a rank-local value here
}

// A throw that only rank 0 can take (its validation path) leaves the others
// in the next collective, whatever the inner check is.
bool init_ok();
void rank0_validation_throw(PG pg, std::vector<at::Tensor> &grads) {
  if (pg->getRank() == 0) {
    if (!init_ok())
      throw std::runtime_error("init failed");
  }
  pg->allreduce(grads)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'allreduce' is never reached by ranks where 'pg->getRank() == 0' holds: they throw early{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-6]]:7: note: rank-dependent condition here
}

// A reporter whose every path throws ends its caller's path at the call, as
// a `throw` written there would: rank 0 leaves, the others wait in the
// allreduce.  The same reporter on a check every rank makes alike is not one.
[[noreturn]] void fail(const char *why) { throw std::runtime_error(why); }
void rank0_reporter_throws(PG pg, std::vector<at::Tensor> &grads) {
  if (pg->getRank() == 0)
    fail("rank 0 cannot open its log");
  pg->allreduce(grads)->wait();
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'allreduce' is never reached by ranks where 'pg->getRank() == 0' holds: they throw early{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:7: note: rank-dependent condition here
  if (!init_ok())
    fail("init failed");
  pg->allreduce(grads)->wait();
}

// Error handling every rank does alike is not a rank decision: a uniform
// check's throw, and a throw its own try block catches, are not reported.
void error_paths(PG pg, std::vector<at::Tensor> &grads) {
  if (!init_ok())
    throw std::runtime_error("init failed");
  if (pg->getRank() == 0) {
    try {
      throw std::runtime_error("retry");
    } catch (const std::exception &) {
    }
  }
  pg->allreduce(grads)->wait();
}

// A rank-named member beside a communicator is the process rank, even when it
// is filled elsewhere; a LoRA config's `rank` is not.
struct DistEnv {
  int rank;
  int world_size;
  PG pg;
};
struct LoraConfig {
  int rank;
  float alpha;
};
void member_rank(DistEnv &env, const LoraConfig &lora, std::vector<at::Tensor> &t) {
  if (lora.rank == 0)
    env.pg->allreduce(t);
  if (env.rank == 0)
    env.pg->barrier();
// CHECK-MESSAGES: :[[@LINE-1]]:13: warning: barrier runs only on ranks where 'env.rank == 0' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
}
