// The rule registry's lookups, rule options, and the runner that shares one
// path analysis between the rules of a run (Rules.h).  The table itself is
// generated from rules/catalog.yaml (ruleRegistry() in CatalogData.cpp).
#include "ddplint/core/Rules.h"

#include "engine/PathEngine.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ddplint::core {

bool RuleSpec::appliesTo(std::string_view language) const {
  return std::find(info->languages.begin(), info->languages.end(), language) !=
         info->languages.end();
}

const RuleSpec &ruleSpec(RuleId id) { return ruleRegistry()[static_cast<std::size_t>(id)]; }

const RuleSpec *findRuleSpec(std::string_view name) {
  for (const RuleSpec &s : ruleRegistry())
    if (s.name == name)
      return &s;
  return nullptr;
}

// --- options -------------------------------------------------------------------

RuleOptions RuleOptions::of(RuleId id,
                            const std::function<std::optional<std::string>(std::string_view)> &user) {
  RuleOptions o;
  o.rule_ = ruleSpec(id).info;
  for (const RuleOption &spec : o.rule_->options) {
    std::optional<std::string> v = user ? user(spec.name) : std::nullopt;
    o.values_.emplace_back(spec.name, v ? *v : spec.defaultValue);
  }
  return o;
}

const RuleOption *RuleOptions::spec(std::string_view name) const {
  if (!rule_)
    return nullptr;
  for (const RuleOption &o : rule_->options)
    if (o.name == name)
      return &o;
  return nullptr;
}

const std::string &RuleOptions::text(std::string_view name) const {
  static const std::string none;
  for (const auto &[n, v] : values_)
    if (n == name)
      return v;
  return none;
}

namespace {
std::optional<bool> parseFlag(std::string v) {
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "true" || v == "1" || v == "on" || v == "yes")
    return true;
  if (v == "false" || v == "0" || v == "off" || v == "no")
    return false;
  return std::nullopt;
}

std::optional<int> parsePositive(const std::string &v) {
  char *end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || !end || *end != '\0' || n <= 0 || n > 1000000000L)
    return std::nullopt;
  return static_cast<int>(n);
}
} // namespace

bool RuleOptions::flag(std::string_view name) const {
  if (auto v = parseFlag(text(name)))
    return *v;
  const RuleOption *s = spec(name);
  return s && parseFlag(s->defaultValue).value_or(false);
}

int RuleOptions::number(std::string_view name) const {
  if (auto v = parsePositive(text(name)))
    return *v;
  const RuleOption *s = spec(name);
  return s ? parsePositive(s->defaultValue).value_or(0) : 0;
}

std::vector<std::string> RuleOptions::list(std::string_view name) const {
  return splitList(text(name));
}

// --- wrappers ------------------------------------------------------------------

std::string Wrappers::key() const {
  std::string k;
  for (const auto *list : {&rankFunctions, &mainProcessFunctions, &collectiveFunctions,
                           &barrierFunctions, &checkpointWriters, &dataLoaderFactories}) {
    k += '|';
    for (const auto &name : *list)
      k += name + ';';
  }
  return k;
}

void Wrappers::merge(const Wrappers &o) {
  auto add = [](std::vector<std::string> &to, const std::vector<std::string> &from) {
    for (const auto &n : from)
      if (std::find(to.begin(), to.end(), n) == to.end())
        to.push_back(n);
  };
  add(rankFunctions, o.rankFunctions);
  add(mainProcessFunctions, o.mainProcessFunctions);
  add(collectiveFunctions, o.collectiveFunctions);
  add(barrierFunctions, o.barrierFunctions);
  add(checkpointWriters, o.checkpointWriters);
  add(dataLoaderFactories, o.dataLoaderFactories);
}

Wrappers wrappersOf(const RuleOptions &o) {
  Wrappers w;
  w.rankFunctions = o.list("RankFunctions");
  w.mainProcessFunctions = o.list("MainProcessFunctions");
  w.collectiveFunctions = o.list("CollectiveFunctions");
  w.barrierFunctions = o.list("BarrierFunctions");
  w.checkpointWriters = o.list("CheckpointWriters");
  w.dataLoaderFactories = o.list("DataLoaderFactories");
  return w;
}

// --- running ------------------------------------------------------------------

RuleRunner::RuleRunner(const Program &program, AnalysisLimits limits)
    : program_(program), limits_(limits) {}

RuleRunner::~RuleRunner() = default;

engine::PathEngine &RuleRunner::paths() {
  if (!paths_) {
    paths_ = std::make_unique<engine::PathEngine>(program_, limits_);
    paths_->analyzeAll();
  }
  return *paths_;
}

std::vector<Finding> RuleRunner::run(RuleId id) { return run(id, RuleOptions::of(id)); }

std::vector<Finding> RuleRunner::run(RuleId id, const RuleOptions &options,
                                     const LaunchEnvironment *launch) {
  const RuleDefinition *def = ruleSpec(id).definition;
  if (!def || !def->decide)
    return {};
  RuleContext ctx(program_, options, [this]() -> engine::PathEngine & { return paths(); },
                  launch);
  std::vector<Finding> out = def->decide(ctx);
  for (Finding &f : out) // a rule reports under its own id, whatever its file wrote
    f.rule = std::string(ruleSpec(id).name);
  return out;
}

namespace {
bool hasSyncEvent(const Node &n) {
  if (n.kind == Node::Kind::Event &&
      (n.event == EventKind::Collective || n.event == EventKind::Barrier))
    return true;
  for (const Node &k : n.kids)
    if (hasSyncEvent(k))
      return true;
  return false;
}
} // namespace

std::vector<ExternalCall> RuleRunner::callsInto(std::string_view prefix) {
  engine::PathEngine &I = paths();
  std::vector<ExternalCall> out;
  for (const auto &f : program_.functions) {
    auto *r = I.analyze(f.key);
    if (!r)
      continue;
    const Reach caller = I.entered(f.key);
    for (const auto &p : r->paths)
      for (const auto &e : p.seq)
        if (e.isCall && e.op.compare(0, prefix.size(), prefix) == 0)
          out.push_back({e.op, std::max(caller, I.reach(engine::PathEngine::withLoop(p.guard, e))),
                         f.key});
  }
  return out;
}

std::vector<AnalysisNotice> RuleRunner::notices() const {
  if (!paths_ || paths_->notices.empty())
    return {};
  // A program with no collective cannot diverge: a limit met there (a long
  // non-distributed main) hides nothing and is not worth a note.
  for (const Function &f : program_.functions)
    if (hasSyncEvent(f.body))
      return paths_->notices;
  return {};
}

std::vector<std::string> RuleRunner::collectiveSummary(const std::string &key) {
  std::vector<std::string> out;
  if (auto *r = paths().analyze(key))
    for (const auto &e : r->summary)
      out.push_back(e.op);
  return out;
}

} // namespace ddplint::core
