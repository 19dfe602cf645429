// ddp-dataloader-recreated: a data loader built inside a loop (not one per
// input, not kept in a container), or a helper that builds one called inside
// a loop.
#include "RuleSupport.h"

#include <map>
#include <set>

namespace ddplint::core::rules {
namespace {

// The loop whose every iteration runs the call: the innermost one that does
// not hand the call a new input each iteration.
const LoopInfo *recreatingLoop(const std::vector<LoopInfo> &loops, bool datasetCounts) {
  for (const LoopInfo &l : loops)
    if (!(datasetCounts && l.datasetDependsOnLoop))
      return &l;
  return nullptr;
}

std::string whyRecreated(const Program &program) {
  return std::string("its worker ") +
         (program.facts.language == SourceLanguage::Python ? "processes" : "threads") +
         " are started and joined on every iteration; build the loader once before the loop "
         "and iterate it every epoch";
}

std::vector<Finding> decide(const RuleContext &ctx) {
  const Program &program = ctx.program();
  const char *rule = "ddp-dataloader-recreated";
  const Facts &pf = program.facts;
  const std::string why = whyRecreated(program);
  std::vector<Finding> out;
  std::set<Loc> reported;
  // Functions that build a loader outside any loop of their own, and the
  // factory they call (the first one).
  std::map<std::string, std::string> helpers;
  // A Python DataLoader without worker processes starts none: say what it does redo.
  auto noWorkers = [&](const DataLoaderCreation &dl) {
    return pf.language == SourceLanguage::Python &&
           (dl.numWorkers == DataLoaderCreation::Workers::Absent ||
            dl.numWorkers == DataLoaderCreation::Workers::Zero);
  };
  for (const DataLoaderCreation &dl : pf.dataLoaders) {
    if (dl.storedInContainer)
      continue;
    if (recreatingLoop(dl.loops, /*datasetCounts=*/true)) {
      if (reported.insert(dl.loc).second)
        out.push_back(makeFinding(rule, dl.loc,
                           "data loader built by '" + dl.api + "' inside a loop; " +
                               (noWorkers(dl) ? std::string("its sampler, shuffling and batching "
                                                            "are set up again on every iteration; "
                                                            "build the loader once before the loop "
                                                            "and iterate it every epoch")
                                              : why)));
      continue;
    }
    helpers.emplace(dl.function, dl.api);
  }
  // Python frontends say when a helper is called with the loop's element
  // (`get_fold_dataloaders(fold)`): one loader per input, like a dataset
  // argument that depends on the loop.
  const bool helperArgsCount = pf.language == SourceLanguage::Python;
  auto inLoop = [&](const HelperCall &c) {
    return !c.storedInContainer && recreatingLoop(c.loops, /*datasetCounts=*/helperArgsCount);
  };
  // Helpers of helpers build loaders too (outside any loop of their own).
  for (bool changed = true; changed;) {
    changed = false;
    for (const HelperCall &c : pf.calls) {
      if (inLoop(c) || c.caller.empty() || helpers.count(c.caller))
        continue;
      auto it = helpers.find(c.callee);
      if (it != helpers.end()) {
        helpers.emplace(c.caller, it->second);
        changed = true;
      }
    }
  }
  for (const HelperCall &c : pf.calls) {
    if (!inLoop(c))
      continue;
    auto it = helpers.find(c.callee);
    if (it == helpers.end() || !reported.insert(c.loc).second)
      continue;
    out.push_back(makeFinding(rule, c.loc,
                       "'" + c.calleeName + "' builds a data loader (via '" + it->second +
                           "') and is called inside a loop; " + why));
  }
  return out;
}

} // namespace

const RuleDefinition DataloaderRecreated = {NeedDataLoaders, &decide};

} // namespace ddplint::core::rules
