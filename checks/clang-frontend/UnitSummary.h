// Summaries across translation units.  A training loop calls `sync_if_main()`
// or `save_checkpoint()` defined in another .cc of the project; the rules
// must see those bodies as if they were in the unit.  Each unit's own
// functions are kept as a summary: their model (collectives, barriers and
// writes in order, with their guards, exits and calls), the symbol each
// exported function is linked by (its mangled name), whether it returns the
// rank or a rank predicate (`bool is_main() { return rank() == 0; }`), and
// the files it was made from, with their sizes, times and hashes.
//
// The ddplint CLI makes the summaries as it lints each unit and stores them
// (SummaryStore, in its cache folder); a later run, the clang-tidy plugin and
// clangd read the summaries of the other units of the compilation database
// and link the functions a unit calls.  A summary whose files changed since
// is stale: it is not linked, and the unit is told at the call
// (an analysis-limit note), so that a partial run never reads old code as
// current.  The CLI's run over the whole database refreshes them.
#pragma once

#include "ddplint/core/Finding.h"
#include "ddplint/core/Model.h"
#include "ddplint/core/Rules.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddplint::clangfe {

struct SummaryInput {
  std::string path; // absolute
  std::uint64_t size = 0;
  std::int64_t mtime = 0;
  std::uint64_t hash = 0; // of the contents
};

struct ExportedFunction {
  std::string symbol; // the mangled name (a C function: its name)
  std::string key;    // its function in UnitSummary::functions
  std::string name;   // for messages
  bool returnsRank = false;
  // `return rank == 0;`: the condition a call of it stands for (no positions).
  std::optional<core::Cond> predicate;
};

// UnitSummary::unresolved names a global this way (a function by its symbol).
inline constexpr const char *kRankGlobalPrefix = "global:";

struct UnitSummary {
  std::string unit;      // the main file, absolute
  std::string configKey; // what else the model depends on: ddplint's version, the wrappers
  std::vector<SummaryInput> inputs;
  std::vector<core::ExternalPlace> places; // place n is places[n - 1]
  std::vector<core::Function> functions;   // positions are place numbers
  std::vector<ExportedFunction> exports;
  // The symbols of the unit's globals that hold the rank (miniAMR's `my_pe`,
  // set by MPI_Comm_rank in main.c and tested in every other file).
  std::vector<std::string> rankGlobals;
  bool distributed = false;
  // Not stored: the symbols of other units this unit called and could not
  // link (no summary yet, or a stale one).  The CLI lints such a unit again
  // once the run has made the summaries it lacked.
  std::vector<std::string> unresolved;
};

std::string serializeSummary(const UnitSummary &s);
// Null (with `error`) for a file that is not a complete summary.
std::optional<UnitSummary> parseSummary(const std::string &text, std::string &error);

// The hash SummaryInput::hash holds.
std::uint64_t contentHash(const std::string &bytes);
// The configKey of a summary made under these wrappers.
std::string summaryConfigKey(const core::Wrappers &w);
// Did a summary's files change since it was made?  `why` names the first that did.
bool summaryIsStale(const UnitSummary &s, std::string *why = nullptr);

// The folder the summaries of one cache folder live in.
std::string summaryFolder(const std::string &cacheDir);
// The default cache folder: $XDG_CACHE_HOME/ddplint, else ~/.cache/ddplint
// (the CLI's default; the plugin and clangd read the summaries there).
std::string defaultCacheFolder();

// Summaries on disk, one file per unit (named by a hash of its path),
// written to a temporary name and renamed into place.
class SummaryStore {
public:
  explicit SummaryStore(std::string folder) : folder_(std::move(folder)) {}
  std::optional<UnitSummary> load(const std::string &unit, std::string *error = nullptr) const;
  bool save(const UnitSummary &s, std::string *error = nullptr) const;
  const std::string &folder() const { return folder_; }
  // The summaries kept (and their bytes); clear() removes them (and the
  // folder, once empty) and says how many files went.
  size_t count(std::uint64_t *bytes = nullptr) const;
  unsigned clear(std::string &error) const;

private:
  std::string fileFor(const std::string &unit) const;
  std::string folder_;
};

// The summaries of a database's units, by exported symbol.
class SummaryIndex {
public:
  struct Unit {
    UnitSummary summary;
    bool stale = false;
    std::string staleWhy;
  };
  void add(UnitSummary s);
  struct Hit {
    const Unit *unit = nullptr;
    const ExportedFunction *function = nullptr;
  };
  // The exported function `symbol` of a unit other than `exceptUnit`.
  std::optional<Hit> find(const std::string &symbol, const std::string &exceptUnit) const;
  // Whether a fresh summary of a unit other than `exceptUnit` says the global
  // `symbol` holds the rank.
  bool rankGlobal(const std::string &symbol, const std::string &exceptUnit) const;
  size_t size() const { return units_.size(); }
  const std::vector<std::unique_ptr<Unit>> &units() const { return units_; }

  // Reads the summaries of `units` from `store` (missing ones are left out).
  static std::shared_ptr<const SummaryIndex> load(const SummaryStore &store,
                                                  const std::vector<std::string> &units);

private:
  std::vector<std::unique_ptr<Unit>> units_;
  std::multimap<std::string, std::pair<const Unit *, size_t>> bySymbol_;
  std::multimap<std::string, const Unit *> rankGlobals_;
};

// Where a unit's checks find the other units' summaries.  The CLI sets the
// run's index; without one (clang-tidy, clangd) the summaries of the units of
// the nearest compile_commands.json above the file (in a folder or its
// build/) are read from the default cache folder ($DDPLINT_CACHE_DIR, when
// set, instead), once per process and database.
void setRunSummaries(std::shared_ptr<const SummaryIndex> index);
std::shared_ptr<const SummaryIndex> summariesFor(const std::string &mainFile);

// Where a unit's checks hand the summary of its own functions (the CLI, to
// store them); none by default.  Called from the thread that linted the unit.
void setSummarySink(std::function<void(UnitSummary)> sink);
void sendSummary(UnitSummary s);
bool summarySinkSet();

} // namespace ddplint::clangfe
