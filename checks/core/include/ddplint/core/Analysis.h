// Rank-divergence analysis over the program model.  The core enumerates the
// paths of each function with the rank conditions that guard them, and compares
// the collective sequences that different ranks can execute: divergence is a
// property of ranks, not of text, so `if (rank != 0) barrier(); ... if (rank ==
// 0) barrier();` is correct and `if (rank == 0) allreduce();` is not.
#pragma once

#include "ddplint/core/Model.h"

#include <string>
#include <vector>

namespace ddplint::core {

struct Note {
  Loc loc = 0;
  std::string message;
};

// A fix-it the core asks for; the frontend renders it in its language.
enum class FixKind : std::uint8_t {
  None,
  // Insert the timeout argument at `anchor` (C++: `std::chrono::seconds(N)`
  // into an empty Options::create(); Python: `, timeout=timedelta(seconds=N)`).
  InsertTimeoutArg,
  // Append an options argument with a timeout at `anchor` (C++:
  // `, <text>::create(std::chrono::seconds(N))`, `text` = the options class).
  InsertTimeoutOptionsArg,
  // The string literal at `anchor` spells `oldText`: make it spell `text`.
  RenameEnvVar,
  // Data loader arguments: insert `persistent_workers=True` /
  // `pin_memory=True` at `anchor` (the end of the argument list), or, when
  // the argument is written as False, replace the value at `anchor` by True.
  InsertPersistentWorkers,
  SetPersistentWorkersTrue,
  InsertPinMemory,
  SetPinMemoryTrue,
};

struct FixHint {
  FixKind kind = FixKind::None;
  Loc anchor = 0;
  std::string text;    // InsertTimeoutOptionsArg: the options class; RenameEnvVar: the new name
  std::string oldText; // RenameEnvVar: the name written
};

struct Finding {
  std::string rule; // e.g. "ddp-divergent-collective"
  Loc loc = 0;
  std::string message;
  std::vector<Note> notes;
  // For fix-its: the node the finding is about (the `if` of a rank-0 block).
  const Node *node = nullptr;
  bool missingBefore = false, missingAfter = false;
  // The rank-0 region is the rest of the function after an early return, so
  // the barrier after it belongs after the call of the function.
  bool regionToEnd = false;
  // Fix-its for the frontend to render (fact-based rules, FactRules.h).
  std::vector<FixHint> fixes;
};

struct AnalysisLimits {
  std::size_t maxPaths = 512; // per function; beyond it paths are dropped, never invented
  int maxCallDepth = 16;
};

class Analyzer {
public:
  explicit Analyzer(const Program &program, AnalysisLimits limits = {});
  ~Analyzer();
  Analyzer(const Analyzer &) = delete;
  Analyzer &operator=(const Analyzer &) = delete;

  // ddp-divergent-collective over every function of the program.
  std::vector<Finding> divergentCollectives();
  // ddp-unguarded-save: checkpoint writes that every rank runs to one path.
  std::vector<Finding> unguardedSaves();
  // ddp-error-path-exit: early exits on a failed call's status before a
  // collective (at most one per function).
  std::vector<Finding> errorPathExits();
  // ddp-rank0-io-barrier: rank-0-only blocks that write files without barriers.
  std::vector<Finding> rank0IoWithoutBarrier(bool requireBefore);

  // The collective sequence a call of `key` contributes (for tests and tools).
  std::vector<std::string> summary(const std::string &key);

  struct Impl;

private:
  Impl *impl_;
};

// True when exactly one of the representative ranks satisfies `c` and it is rank 0:
// the block guarded by `c` runs on the main process only.
bool isMainOnly(const Cond &c);

} // namespace ddplint::core
