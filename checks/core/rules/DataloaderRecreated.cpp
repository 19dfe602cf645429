// ddp-dataloader-recreated: a data loader built inside a loop (not one per
// input, not kept in a container), or a helper that builds one called inside
// a loop.
#include "RuleSupport.h"

#include <algorithm>
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

// What the loader redoes on every pass of `loop`, and what to do instead.
// With worker processes (threads in C++) it starts and joins them every time
// (a warning: worker churn costs seconds per pass and leaks memory and IPC
// handles); without, it only sets up its sampler again (a note).
std::string why(const Program &program, const LoopInfo &loop, bool workers) {
  const std::string pass = loop.perEpoch ? "epoch" : "iteration";
  const std::string fix = "; build the loader once before the loop and iterate it " +
                          std::string(loop.perEpoch ? "every epoch" : "on every pass");
  const bool python = program.facts.language == SourceLanguage::Python;
  if (!workers)
    return std::string("it has no worker ") + (python ? "processes" : "threads") +
           ", but its sampler, shuffling and batching are set up again every " + pass + fix;
  return std::string("its worker ") + (python ? "processes" : "threads") +
         " are started and joined every " + pass +
         ", which costs time on every pass and leaks memory and IPC handles" + fix;
}

bool hasWorkers(const DataLoaderCreation &dl) {
  return dl.numWorkers == DataLoaderCreation::Workers::Positive ||
         dl.numWorkers == DataLoaderCreation::Workers::Unknown;
}

struct Builder {
  std::string api;
  bool workers = false;
};

std::vector<Finding> decide(const RuleContext &ctx) {
  const Program &program = ctx.program();
  const char *rule = "ddp-dataloader-recreated";
  const Facts &pf = program.facts;
  // A program that never runs distributed (RWKV's first trainers: one
  // process, DataParallel) is outside what these rules reason about, as for
  // ddp-unguarded-save.
  if (!program.distributed && !(pf.shardsData && pf.processGroups.empty()))
    return {};
  std::vector<Finding> out;
  std::set<Loc> reported;
  // Functions that build a loader outside any loop of their own, and the
  // factory they call (the first one).
  std::map<std::string, Builder> helpers;
  for (const DataLoaderCreation &dl : pf.dataLoaders) {
    if (dl.storedInContainer)
      continue;
    if (const LoopInfo *loop = recreatingLoop(dl.loops, /*datasetCounts=*/true)) {
      if (reported.insert(dl.loc).second) {
        Finding f = makeFinding(rule, dl.loc,
                                "data loader built by " + quoteCode(dl.api) + " inside a loop; " +
                                    why(program, *loop, hasWorkers(dl)));
        f.asNote = !hasWorkers(dl);
        out.push_back(std::move(f));
      }
      continue;
    }
    helpers.emplace(dl.function, Builder{dl.api, hasWorkers(dl)});
  }
  // Python frontends say when a helper is called with the loop's element
  // (`get_fold_dataloaders(fold)`): one loader per input, like a dataset
  // argument that depends on the loop.
  const bool helperArgsCount = pf.language == SourceLanguage::Python;
  auto loopOf = [&](const HelperCall &c) -> const LoopInfo * {
    return c.storedInContainer ? nullptr
                               : recreatingLoop(c.loops, /*datasetCounts=*/helperArgsCount);
  };
  // Helpers of helpers build loaders too (outside any loop of their own).
  for (bool changed = true; changed;) {
    changed = false;
    for (const HelperCall &c : pf.calls) {
      if (loopOf(c) || c.caller.empty() || helpers.count(c.caller))
        continue;
      auto it = helpers.find(c.callee);
      if (it != helpers.end()) {
        helpers.emplace(c.caller, it->second);
        changed = true;
      }
    }
  }
  // One report per helper: its loader is one bug with one fix, however
  // many loops call it (an evaluation run every epoch and every N steps);
  // the other calls are notes.
  std::vector<const HelperCall *> sites;
  sites.reserve(pf.calls.size());
  for (const HelperCall &c : pf.calls)
    sites.push_back(&c);
  std::stable_sort(sites.begin(), sites.end(),
                   [](const HelperCall *a, const HelperCall *b) { return a->loc < b->loc; });
  std::map<std::string, size_t> byHelper;
  for (const HelperCall *cp : sites) {
    const HelperCall &c = *cp;
    const LoopInfo *loop = loopOf(c);
    if (!loop)
      continue;
    auto it = helpers.find(c.callee);
    if (it == helpers.end() || !reported.insert(c.loc).second)
      continue;
    if (auto seen = byHelper.find(c.callee); seen != byHelper.end()) {
      out[seen->second].notes.emplace_back(c.loc, "also called inside a loop here");
      continue;
    }
    byHelper.emplace(c.callee, out.size());
    Finding f = makeFinding(rule, c.loc,
                            quoteCode(c.calleeName) + " builds a data loader (via " +
                                quoteCode(it->second.api) + ") and is called inside a loop; " +
                                why(program, *loop, it->second.workers));
    f.asNote = !it->second.workers;
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace

const RuleDefinition DataloaderRecreated = {NeedDataLoaders, &decide};

} // namespace ddplint::core::rules
