#pragma once

#include <cstdint>
#include <string>

#include "ddp_guardrails/board.hpp"
#include "scenario_registry.hpp"

namespace ddph {

enum class BackendKind { Gloo, Nccl };

struct RankLaunch {
  const ScenarioDef* scenario = nullptr;
  bool bad = true;
  int rank = 0, world = 1, localRank = 0;
  BackendKind backend = BackendKind::Gloo;
  ddpg::RankSlot* slot = nullptr;
  std::string storePath;   // FileStore (local ranks)
  std::string masterAddr;  // TCPStore (external launcher) when non-empty
  int masterPort = 0;
  std::string workDir;
  uint64_t seed = 0;
  int steps = 6;
  double pgTimeoutS = 20;
  double storeTimeoutS = 30;
};

// Body of one rank; runs in the forked child (or the launched process) and
// returns its exit code.  The first torch call of the process happens here.
int runRank(const RankLaunch& l);

// Compile-time versions, for reports (no torch include needed by callers).
std::string torchVersion();
std::string glooVersion();

}  // namespace ddph
