// From what the ranks left on the board to a verdict: who stopped, where,
// and why.  Pure logic over plain structs, so it is unit-tested without
// processes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ddp_guardrails/board.hpp"

namespace ddph {

struct RecView {
  int64_t seq = 0;
  std::string op, shapes, dtype, tag;
  int root = -1, reduceOp = -1;
  int64_t numel = 0;
  ddpg::RecState state = ddpg::RecState::Enqueued;
  int64_t tEnqueue = 0, tIssued = 0, tEnd = 0;
  // What ranks must agree on for the collective to match.
  std::string signature() const;
  std::string pretty() const;  // "allreduce #12 [4,4] float (grad:fc.weight)"
};

struct MarkView {
  std::string name, resource;
  ddpg::MarkKind kind = ddpg::MarkKind::Other;
  int64_t tBegin = 0, tEnd = 0;  // tEnd 0: still open
};

struct RankView {
  int rank = 0;
  int pid = 0;
  ddpg::Phase phase = ddpg::Phase::Empty;
  bool exited = false;
  int exitCode = -1;  // when exited normally
  int signal = 0;     // when killed by a signal
  int64_t exitNs = 0;
  int64_t heartbeatNs = 0, progressNs = 0;
  // Measured offset to rank 0's clock and its error bound; the applied
  // offset is 0 when the measurement cannot tell it from 0.
  int64_t clockOffsetRawNs = 0, clockOffsetNs = 0, clockUncertNs = 0;
  int64_t pgTimeoutMs = 0;
  bool pgTimeoutExplicit = false;
  int64_t nextSeq = 0;
  std::vector<RecView> recs;  // by seq, oldest first
  std::vector<MarkView> marks;
  std::string error, errorResource;
  int64_t errorNs = 0;
  std::string metrics;  // JSON object text or ""
  std::string logTail;  // last lines of the rank's stderr
  std::string wchan;    // kernel wait channel of the main thread when sampled
  std::vector<std::string> stack;  // main thread's frames at the verdict, innermost first
  bool abnormalExit() const { return exited && (signal != 0 || exitCode != 0); }
  const RecView* at(int64_t seq) const;
  const MarkView* openMark() const;
};

RankView readSlot(const ddpg::RankSlot& s, int rank);

enum class Trigger { AllDone, Failure, Hang, WallClock };
const char* triggerName(Trigger t);

struct Snapshot {
  std::vector<RankView> ranks;
  Trigger trigger = Trigger::AllDone;
  int64_t triggerNs = 0;  // when the supervisor decided
  int64_t cutoffNs = 0;   // records enqueued later are ignored (0: none)
};

struct Verdict {
  std::string outcome;  // completed | hang | crash | error | race | timeout
  bool problem = false;
  std::vector<int> culprits;
  bool ambiguous = false;
  std::string analysis;  // which evidence decided the culprit
  int64_t divergenceSeq = -1;
  std::string culpritOp;   // what the culprit did at the divergence point
  std::string expectedOp;  // what the others did there
  std::map<int, std::string> doing;  // per rank, in words
  std::string summary;
  bool sequencesIdentical = false;
  int64_t commonPrefix = 0;
  int64_t onsetNs = 0, detectNs = 0;
  double latencyS() const { return onsetNs && detectNs ? double(detectNs - onsetNs) / 1e9 : -1; }
};

struct AnalyzeOptions {
  int64_t stallNs = 2000000000;
  int64_t frozenNs = 1000000000;
};

Verdict analyze(const Snapshot& snap, const AnalyzeOptions& opts);

std::string signalName(int sig);
// The string value of `"key":"..."` in a flat JSON object, "" if absent.
std::string jsonStringField(const std::string& json, const std::string& key);
std::string joinRanks(const std::vector<int>& r);

}  // namespace ddph
