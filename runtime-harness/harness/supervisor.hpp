// Forks the ranks, watches the board, decides when a run is over, and
// guarantees that every rank is killed and reaped whatever happens.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ddp_guardrails/board.hpp"
#include "verdict.hpp"

namespace ddph {

struct SuperviseOptions {
  int worldSize = 2;
  double wallS = 60;     // hard limit for the whole run
  double stallS = 2.0;   // no progress anywhere while someone waits: hang
  double graceS = 0.3;   // after the first failure, let the others report
  double frozenS = 1.0;  // heartbeat age that means "process not running"
  std::string logPrefix; // rank r writes stdout/stderr to logPrefix + r + ".log"
};

// Owns forked rank processes.  The destructor SIGKILLs and reaps every one
// still alive, so no early return or exception leaves a process behind.
class RankProcesses {
 public:
  RankProcesses() = default;
  ~RankProcesses() { killAll(); }
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;
  // `body` runs in the child and must not return normally (it _exits).
  void spawn(int rank, const std::string& logPath, const std::function<int()>& body);
  void killAll();
  struct Child { int rank; int pid; bool exited = false; int status = 0; int64_t exitNs = 0; };
  std::vector<Child>& children() { return kids_; }
  void poll();  // reaps exited children without blocking

 private:
  std::vector<Child> kids_;
  int pgid_ = 0;
};

// Runs until all ranks exit, one fails, a hang is seen or the wall clock
// runs out; returns what the board held at that moment (before any kill).
Snapshot supervise(ddpg::Board& board, RankProcesses& procs, const SuperviseOptions& opts);

// Installs SIGINT/SIGTERM handlers that kill the registered ranks first.
void installTerminationHandlers();

std::vector<std::string> stackFromLog(const std::string& path);
std::string tailOfFile(const std::string& path, size_t maxLines = 3, size_t maxChars = 600);

}  // namespace ddph
