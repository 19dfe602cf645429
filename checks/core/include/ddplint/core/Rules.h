// The rule registry: every rule of rules/catalog.yaml, what it reads, and the
// function that decides it.  One table (generated from the catalog) that the
// clang-tidy checks (checks/tidy) and the Python linter
// (checks/python-frontend) both dispatch through.  Each rule is one file in
// checks/core/rules/<Name>.cpp that defines `rules::<Name>`, its
// RuleDefinition; the generator binds it to the catalog's entry by name.
#pragma once

#include "ddplint/core/Catalog.h"
#include "ddplint/core/Finding.h"
#include "ddplint/core/Model.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddplint::core {

// Every rule of the catalog, in catalog order.
enum class RuleId : std::uint8_t {
#define DDPLINT_RULE(ID, NAME) ID,
#include "ddplint/core/RuleList.inc"
#undef DDPLINT_RULE
};

// What a rule reads beyond the user's options.  A frontend builds only what
// the rules it runs need (the Clang frontend walks the unit once per kind).
enum Need : unsigned {
  NeedPaths = 1u << 0,         // the functions' bodies (Program::functions, `distributed`)
  NeedProcessGroups = 1u << 1, // Facts::processGroups
  NeedEnvironment = 1u << 2,   // Facts::env
  NeedVersions = 1u << 3,      // Facts::versions
  NeedDataLoaders = 1u << 4,   // Facts::dataLoaders, Facts::calls, Facts::usesCuda
  NeedForwards = 1u << 5,      // Facts::forwards
};

// A rule's option values: the catalog's defaults, overridden by the user's.
class RuleOptions {
public:
  RuleOptions() = default;
  // The options `rules/catalog.yaml` lists for `id`; `user(name)` gives the
  // user's value of one of them, if set (a clang-tidy CheckOptions entry, a
  // `.ddplint.yaml` setting).
  static RuleOptions of(RuleId id,
                        const std::function<std::optional<std::string>(std::string_view)> &user = {});
  // The value of an option ("" when the rule has no such option).
  const std::string &text(std::string_view name) const;
  // true/1/on/yes or false/0/off/no; anything else is the catalog's default.
  bool flag(std::string_view name) const;
  // A positive integer; anything else is the catalog's default.
  int number(std::string_view name) const;
  // "a;b; c" -> {"a", "b", "c"}.
  std::vector<std::string> list(std::string_view name) const;
  // Every option and its value, in catalog order (to write options back).
  const std::vector<std::pair<std::string, std::string>> &values() const { return values_; }

private:
  const RuleOption *spec(std::string_view name) const;
  const RuleInfo *rule_ = nullptr;
  std::vector<std::pair<std::string, std::string>> values_;
};

// The user's own distributed helpers: the list options of the same names
// (RankFunctions, ...).  Both frontends take them from here.
struct Wrappers {
  std::vector<std::string> rankFunctions, mainProcessFunctions, collectiveFunctions,
      barrierFunctions, checkpointWriters, dataLoaderFactories;
  void merge(const Wrappers &other);
  // The lists as one string: what a model built with them is keyed by
  // (stored summaries, the CLI's per-wrapper projects, cached callers).
  std::string key() const;
};
Wrappers wrappersOf(const RuleOptions &options);

// A launch file that starts the program, and the environment it gives it.
struct Launch {
  ExternalPlace place; // the launch command
  struct Variable {
    std::string name, value;
    bool valueKnown = true;
  };
  std::vector<Variable> env;
  // It may hand the program variables it does not show (envFrom, an
  // unreadable sourced file).
  bool mayInherit = false;
};
// The launch files that start a program (the CLI finds them, checks/launch
// reads them).  Called at most once per rule run, and only when a rule's
// decision could change.
using LaunchEnvironment = std::function<std::vector<Launch>()>;

// Where an analysis stopped short of the whole program (a path limit, a call
// chain too deep): a finding there may be missing, and the user is told.
inline constexpr std::string_view kAnalysisLimitPrefix = "analysis limit: "; // every message's start
// The notes ddp-divergent-collective puts at the decision that diverges.
inline constexpr std::string_view kRankLocalConditionNote = "condition on a rank-local value here";
inline constexpr std::string_view kRankConditionNote = "rank-dependent condition here";
struct AnalysisNotice {
  Loc loc = 0;          // the function
  std::string function; // its name
  std::string message;
};

struct AnalysisLimits {
  std::size_t maxPaths = 512; // per function; beyond it paths are dropped, never invented
  // Events held by one function's paths together: a long function with many
  // calls (FasterTransformer's 1,000-line ParallelGpt::forward) makes few
  // paths but long ones, and memory, not their number, is the limit there.
  std::size_t maxPathEvents = 50000;
  int maxCallDepth = 16;
};

namespace engine {
class PathEngine;
} // namespace engine

// Everything a rule decides on.
class RuleContext {
public:
  RuleContext(const Program &program, const RuleOptions &options,
              std::function<engine::PathEngine &()> paths, const LaunchEnvironment *launch)
      : program_(program), options_(options), paths_(std::move(paths)), launch_(launch) {}
  const Program &program() const { return program_; }
  const RuleOptions &options() const { return options_; }
  // The analysed paths, shared by the path rules of one run (built on first use).
  engine::PathEngine &paths() const { return paths_(); }
  // The launch files that start the program; null when nobody can say.
  const LaunchEnvironment *launch() const { return launch_; }

private:
  const Program &program_;
  const RuleOptions &options_;
  std::function<engine::PathEngine &()> paths_;
  const LaunchEnvironment *launch_;
};

// What a rule's file defines: what it reads and how it decides.
struct RuleDefinition {
  unsigned needs = 0; // Need bits
  std::vector<Finding> (*decide)(const RuleContext &context) = nullptr;
};

struct RuleSpec {
  RuleId id;
  std::string_view name;               // "ddp-divergent-collective"
  const RuleInfo *info;                // the catalog's entry
  const RuleDefinition *definition;    // null: not decided on a program (launch files)
  bool appliesTo(std::string_view language) const; // "c", "c++", "python"
};

// Every rule, in catalog order (generated: checks/catalog/gen_catalog.cpp).
const std::vector<RuleSpec> &ruleRegistry();
const RuleSpec &ruleSpec(RuleId id);
const RuleSpec *findRuleSpec(std::string_view name);

// Runs rules over one program.  The path rules share one analysis of it.
class RuleRunner {
public:
  explicit RuleRunner(const Program &program, AnalysisLimits limits = {});
  ~RuleRunner();
  RuleRunner(const RuleRunner &) = delete;
  RuleRunner &operator=(const RuleRunner &) = delete;

  // The rule's findings, with the catalog's default options.
  std::vector<Finding> run(RuleId id);
  std::vector<Finding> run(RuleId id, const RuleOptions &options,
                           const LaunchEnvironment *launch = nullptr);
  // The collective sequence a call of function `key` contributes (tests, tools).
  std::vector<std::string> collectiveSummary(const std::string &key);
  // Where the path analysis stopped short (empty when no path rule ran).
  std::vector<AnalysisNotice> notices() const;
  // The program's calls of functions whose keys start with `prefix` (another
  // module's, linked in), with who makes each and from where: that module's
  // Program::externalCalls.  The keys keep the prefix.
  std::vector<ExternalCall> callsInto(std::string_view prefix);

private:
  engine::PathEngine &paths();
  const Program &program_;
  AnalysisLimits limits_;
  std::unique_ptr<engine::PathEngine> paths_;
};

} // namespace ddplint::core
