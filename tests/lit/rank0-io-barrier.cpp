// RUN: %check_ddp_tidy %s ddp-rank0-io-barrier %t -- -config="{CheckOptions: {ddp-rank0-io-barrier.RequireBarrierBefore: true}}" -- %mock_flags
// With RequireBarrierBefore (off by default) the barrier before the block is asked for too.
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

// ---- true positives ---------------------------------------------------------

void no_barriers(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &grads) {
// CHECK-FIXES: {{^}}  pg->allreduce(grads)->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  if (pg->getRank() == 0) {{[{]}}{{$}}
  pg->allreduce(grads)->wait();
  if (pg->getRank() == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches before or a{{.*}} [ddp-rank0-io-barrier]
    torch::save(model, "checkpoint.pt");
  }
  pg->allreduce(grads)->wait();
}
// CHECK-FIXES: {{^}}  }{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->allreduce(grads)->wait();{{$}}

void barrier_before_only(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  const int rank = pg->getRank();
  pg->barrier()->wait();
  if (rank == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; o{{.*}} [ddp-rank0-io-barrier]
    torch::save(model, "checkpoint.pt");
  pg->allreduce(g)->wait();
}
// CHECK-FIXES: {{^}}    torch::save(model, "checkpoint.pt");{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->allreduce(g)->wait();{{$}}

// ---- hard negatives: logs -----------------------------------------------------
// A log opened for appending, or named for one, takes a line at a time and
// nobody reads it during the run, nor a record of the run's settings: no
// barrier is asked for around them.
void metrics_log(c10d::ProcessGroup &group, float loss, int epochs, std::vector<at::Tensor> &g) {
  const bool is_main = group.getRank() == 0;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    group.barrier()->wait();
    if (is_main && epoch % 10 == 0) {
      std::ofstream log("metrics.csv", std::ios::app);
    }
    if (is_main) {
      FILE *f = std::fopen("progress.txt", "a");
      std::fprintf(f, "%d %f\n", epoch, loss);
      std::fclose(f);
    }
    if (is_main)
      std::ofstream(std::string("out/") + "train.log") << loss;
    // A record of the run's settings: read by people after the run.
    if (is_main && epoch == 0)
      std::ofstream(std::string("out/") + "config.yaml") << epochs;
    group.allreduce(g)->wait();
  }
}

// ...but a file in a log folder is an ordinary file.
void results_in_log_dir(c10d::ProcessGroup &group, const std::string &log_dir, std::vector<at::Tensor> &g) {
  group.barrier()->wait();
  if (group.getRank() == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; o{{.*}} [ddp-rank0-io-barrier]
    std::ofstream results(log_dir + "/state.bin");
  }
  group.allreduce(g)->wait();
}
// CHECK-FIXES: {{^}}    std::ofstream results(log_dir + "/state.bin");{{$}}
// CHECK-FIXES-NEXT: {{^}}  }{{$}}
// CHECK-FIXES-NEXT: {{^}}  group.barrier()->wait();{{$}}

void write_report(const char *path) {
  FILE *f = std::fopen(path, "w");
  std::fclose(f);
}

void helper_writes(PG pg, std::vector<at::Tensor> &grads) {
  pg->barrier()->wait();
  if (pg->getRank() == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; o{{.*}} [ddp-rank0-io-barrier]
    write_report("report.txt");
  pg->allreduce(grads);
}
// CHECK-FIXES: {{^}}    write_report("report.txt");{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->allreduce(grads);{{$}}

void barrier_after_only(PG pg, torch::nn::Linear model) {
  if (pg->getRank() == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches before it; {{.*}} [ddp-rank0-io-barrier]
    torch::save(model, "checkpoint.pt");
  pg->barrier()->wait();
}
// CHECK-FIXES: {{^}}  pg->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  if (pg->getRank() == 0){{$}}

void two_groups(PG world, PG local, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  world->barrier()->wait();
  local->barrier()->wait();
  if (world->getRank() == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; o{{.*}} [ddp-rank0-io-barrier]
    torch::save(model, "checkpoint.pt");
  world->allreduce(g)->wait();
}
// Two process groups in scope: no fix-it, the barrier could go to the wrong one.
// CHECK-FIXES: {{^}}  local->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  if (world->getRank() == 0){{$}}

// ---- hard negatives -----------------------------------------------------------

// The final save, after the last collective: no rank reads the file or waits
// for rank 0 afterwards, so there is nothing to race with.
void final_checkpoint(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  pg->allreduce(g)->wait();
  if (pg->getRank() == 0)
    torch::save(model, "final.pt");
}

// Not a distributed program's only signal: the save is guarded by a rank
// read from the environment and nothing follows it.
void env_rank_final_save(torch::nn::Linear model) {
  if (std::getenv("RANK") && std::string(std::getenv("RANK")) == "0")
    torch::save(model, "final.pt");
}

void barriers_around(PG pg, torch::nn::Linear model) {
  pg->barrier()->wait();
  if (pg->getRank() == 0)
    torch::save(model, "checkpoint.pt");
  pg->barrier()->wait();
}

void uniform_condition(PG pg, torch::nn::Linear model, int epoch) {
  if (epoch % 10 == 0)
    torch::save(model, "shard_" + std::to_string(pg->getRank()) + ".pt");
}

void not_main(PG pg, torch::nn::Linear model) {
  if (pg->getRank() != 0)
    torch::save(model, "shard_" + std::to_string(pg->getRank()) + ".pt");
}

void helper_behind_barriers(PG pg) {
  pg->barrier()->wait();
  if (pg->getRank() == 0)
    write_report("report.txt");
  pg->barrier(); // an unwaited barrier is still a barrier every rank enters
}

void read_only(PG pg) {
  if (pg->getRank() == 0) {
    std::ifstream in("config.json");
  }
}


// ---- across function boundaries ----------------------------------------------

void save_if_main(PG pg, torch::nn::Linear model) {
  if (pg->getRank() != 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: code after this early return runs only on rank 0 and writes files, with no barrier every rank reaches before or after it;{{.*}} put a barrier before and after it (after the call of this function) [ddp-rank0-io-barrier]
    return;
  torch::save(model, "checkpoint.pt");
}
// CHECK-FIXES: {{^}}void save_if_main(PG pg, torch::nn::Linear model) {{[{]}}{{$}}
// CHECK-FIXES-NEXT: {{^}}  pg->barrier()->wait();{{$}}
// CHECK-FIXES-NEXT: {{^}}  if (pg->getRank() != 0){{$}}

void caller_without_barriers(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  pg->allreduce(g);
  save_if_main(pg, model);
  pg->allreduce(g);
}

// After the early return the rest of the function is that rank-0 block: a
// second rank-0 test in it (icefall's helpers: the library's own `rank == 0`
// guard) is the same block, not a second report.
void save_if_main_nested(PG pg, torch::nn::Linear model, bool best) {
  if (pg->getRank() != 0)
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: code after this early return runs only on rank 0 and writes files, with no barrier every rank reaches before or after it;{{.*}} [ddp-rank0-io-barrier]
    return;
  torch::save(model, "last.pt");
  if (pg->getRank() == 0 && best)
    torch::save(model, "best.pt");
}

void caller_nested_without_barriers(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  pg->allreduce(g);
  save_if_main_nested(pg, model, true);
  pg->allreduce(g);
}

void save_if_main_between_barriers(PG pg, torch::nn::Linear model) {
  if (pg->getRank() != 0)
    return;
  torch::save(model, "checkpoint.pt");
}

void save_block_between_barriers(PG pg, torch::nn::Linear model) {
  if (pg->getRank() == 0)
    torch::save(model, "best.pt");
}

void caller_with_barriers(PG pg, torch::nn::Linear model) {
  pg->barrier()->wait();
  save_if_main_between_barriers(pg, model);
  pg->barrier()->wait();
  save_block_between_barriers(pg, model);
  pg->barrier()->wait();
}

// ---- the program's entry: before the first collective ---------------------------
// Until the ranks first synchronise nobody can be reading what rank 0 writes,
// so a start-up write needs the barrier after it only.  (barrier_after_only
// above is no entry and has no caller here: it is still reported.)

PG make_group();

int main() {
  PG pg = make_group();
  torch::nn::Linear model(2, 2);
  if (pg->getRank() == 0)
    torch::save(model, "init.pt");
  pg->barrier()->wait();
  std::vector<at::Tensor> g;
  pg->allreduce(g)->wait();
  for (int step = 0; step < 3; ++step) {
    pg->allreduce(g)->wait();
    if (pg->getRank() == 0)
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it; o{{.*}} [ddp-rank0-io-barrier]
      torch::save(model, "step.pt");
  }
  return 0;
}
