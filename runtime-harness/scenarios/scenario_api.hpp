// What a scenario sees on its rank.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "ddp_guardrails/guardrails.hpp"
#include "scenario_registry.hpp"

namespace ddph {

struct RankCtx {
  int rank = 0, world = 1;
  bool bad = true;
  uint64_t seed = 0;
  int steps = 6;
  ddpg::Backend backend = ddpg::Backend::Gloo;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<ddpg::TracedProcessGroup> pg;
  ddpg::RankRecorder rec;
  std::string workDir;  // private to this run, shared by its ranks, removed after
  double pgTimeoutS = 0;
  double stepS = 0.02;  // simulated compute per training step

  void allreduce(at::Tensor& t, const char* tag);
  void broadcast(at::Tensor& t, int root, const char* tag);
  void barrier(const char* tag);
  void compute(double seconds);  // stands in for forward/backward time
  // Leaves the process the way a `return` from main or sys.exit() would.
  [[noreturn]] void exitProcess(int code);
};

// A model small enough to train in milliseconds, big enough that its
// gradients go through real collectives.
struct TinyModel {
  std::vector<std::pair<std::string, at::Tensor>> params;
  explicit TinyModel(const std::vector<std::pair<std::string, std::vector<int64_t>>>& shapes, uint64_t seed);
  void zeroGrad();
  void sgd(double lr);
};

// Manual DDP: allreduce-average every parameter gradient that exists, in
// parameter order (what C++ users write in place of DDP).
void syncGrads(RankCtx& ctx, TinyModel& m);
// Every rank starts from rank 0's weights.
void broadcastParams(RankCtx& ctx, TinyModel& m);
// One ordinary training step: a rank-specific batch (seeded by `salt`), the
// backward pass, the compute time, the gradient allreduce and the update.
// Returns the batch.
at::Tensor trainStep(RankCtx& ctx, TinyModel& m, int step, uint64_t salt);

#define DDPH_REGISTER_SCENARIO(var, ...) static ::ddph::ScenarioRegistrar var{::ddph::ScenarioDef{__VA_ARGS__}}

}  // namespace ddph
