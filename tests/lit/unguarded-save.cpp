// RUN: %check_ddp_tidy %s ddp-unguarded-save %t -- -- %mock_flags
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

// ---- true positives ---------------------------------------------------------

void every_rank_saves(PG pg, torch::nn::Linear model) {
  pg->barrier()->wait();
  torch::save(model, "checkpoint.pt");
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: every rank runs 'torch::save' to the same path, so the ranks overwrite one file concurrent{{.*}} [ddp-unguarded-save]
}

void archive_every_rank(PG pg, torch::serialize::OutputArchive &archive, const std::string &dir) {
  archive.save_to(dir + "/model.pt");
// CHECK-MESSAGES: :[[@LINE-1]]:11: warning: every rank runs 'torch::serialize::OutputArchive::save_to' to the same path, so the ranks {{.*}} [ddp-unguarded-save]
}

void save_helper(torch::nn::Linear model, const std::string &path) {
  torch::save(model, path);
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: every rank runs 'torch::save' to the same path, so the ranks overwrite one file concurrent{{.*}} [ddp-unguarded-save]
}

void train_loop(PG pg, torch::nn::Linear model) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    if (epoch % 2 == 0) // the same on every rank: not a guard
      save_helper(model, "epoch.pt");
  }
}

// One writer per node: LOCAL_RANK is the rank within the node, so on storage
// shared by the nodes, every node's local rank 0 writes the same file.
void local_rank_zero_saves(PG pg, torch::nn::Linear model) {
  const int local_rank = std::atoi(std::getenv("LOCAL_RANK"));
  pg->barrier()->wait();
  if (local_rank == 0)
    torch::save(model, "checkpoint.pt");
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'torch::save' is guarded by the node-local rank, so one process per node writes the same path{{.*}} [ddp-unguarded-save]
  pg->barrier()->wait();
}

// ---- hard negatives -----------------------------------------------------------

void global_rank_zero_saves(PG pg, torch::nn::Linear model) {
  const int rank = std::atoi(std::getenv("RANK")); // the global rank: one writer per job
  if (rank == 0)
    torch::save(model, "checkpoint.pt");
}

void rank0_saves(PG pg, torch::nn::Linear model) {
  if (pg->getRank() == 0)
    torch::save(model, "checkpoint.pt");
}

void others_return_first(PG pg, torch::nn::Linear model) {
  const int rank = pg->getRank();
  if (rank != 0)
    return;
  torch::save(model, "checkpoint.pt");
}

void per_rank_path(PG pg, torch::nn::Linear model) {
  const int rank = pg->getRank();
  torch::save(model, "shard_" + std::to_string(rank) + ".pt");
}

void guarded_helper(torch::nn::Linear model, const std::string &path) {
  torch::save(model, path);
}

void calls_guarded_helper(PG pg, torch::nn::Linear model) {
  if (pg->getRank() == 0)
    guarded_helper(model, "best.pt");
}

void save_to_memory(PG pg, torch::nn::Linear model) {
  std::ostringstream buffer;
  torch::save(model, buffer); // no file: every rank may serialise in memory
}


// A create-once cache: whoever finds the file missing writes it; with no call
// in the unit, the ordering around the call (main process first) decides who
// that is.
bool file_exists(const std::string &path);
namespace std { namespace filesystem { bool exists(const std::string &p); } }
void cache_blobs(torch::nn::Linear model, const std::string &cache) {
  if (std::filesystem::exists(cache))
    return;
  torch::save(model, cache);
}

// Called by every rank: on a first run every rank finds it missing and writes.
void cache_features(torch::nn::Linear model, const std::string &cache) {
  if (std::filesystem::exists(cache))
    return;
  torch::save(model, cache);
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: on a first run every rank finds the file missing and runs 'torch::save' to the same path{{.*}} [ddp-unguarded-save]
}

void prepare_features(PG pg, torch::nn::Linear model) {
  cache_features(model, "features.pt");
  pg->barrier()->wait();
}

void cache_blobs_once(torch::nn::Linear model, const std::string &cache) {
  if (!std::filesystem::exists(cache))
    torch::save(model, cache);
}

// Hard negative: rank 0 fills the cache, the others wait for it.
void prepare_features_rank0_first(PG pg, torch::nn::Linear model) {
  if (pg->getRank() == 0)
    cache_blobs_once(model, "blobs.pt");
  pg->barrier()->wait();
}
