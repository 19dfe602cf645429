// ddp-dataloader-options (Python): a DataLoader with worker processes that
// does not pass persistent_workers=True, or not pin_memory=True in a program
// that trains on CUDA; one finding per loader, with fix-its.
#include "RuleSupport.h"

#include <set>

namespace ddplint::core::rules {
namespace {

std::vector<Finding> decide(const RuleContext &ctx) {
  const Program &program = ctx.program();
  const char *rule = "ddp-dataloader-options";
  const Facts &pf = program.facts;
  // A program that never runs distributed (Marigold's trainers: one
  // process) has no ranks to keep in step; the per-epoch worker restart is a
  // cost, not the hazard these rules are about (as for
  // ddp-dataloader-recreated).  A data module that makes a DistributedSampler
  // serves ranks, whoever starts them.
  if (!program.distributed && !(pf.shardsData && pf.processGroups.empty()))
    return {};
  std::vector<Finding> out;
  std::set<Loc> seen;
  auto missing = [](ArgState s) { return s == ArgState::Absent || s == ArgState::False; };
  for (const DataLoaderCreation &dl : pf.dataLoaders) {
    using W = DataLoaderCreation::Workers;
    if (dl.numWorkers != W::Positive && dl.numWorkers != W::Unknown)
      continue;
    const bool needPersistent = missing(dl.persistentWorkers);
    const bool needPin = pf.usesCuda && missing(dl.pinMemory);
    if ((!needPersistent && !needPin) || !seen.insert(dl.loc).second)
      continue;
    const std::string workers =
        dl.numWorkersText.empty() ? std::string("worker processes")
                                  : "num_workers=" + dl.numWorkersText;
    std::string msg = "data loader " + quoteCode(dl.api) + " with " + workers + " ";
    std::string pass;
    if (needPersistent) {
      msg += dl.persistentWorkers == ArgState::False ? "sets persistent_workers=False"
                                                     : "does not pass persistent_workers=True";
      msg += ", so its worker processes are shut down and started again every epoch";
      pass = "persistent_workers=True";
    }
    if (needPin) {
      if (needPersistent)
        msg += ", and ";
      msg += dl.pinMemory == ArgState::False ? "sets pin_memory=False"
                                             : "does not pass pin_memory=True";
      msg += " although the program trains on CUDA, so every batch is copied to the GPU "
             "from pageable memory";
      pass += pass.empty() ? "pin_memory=True" : " and pin_memory=True";
    }
    msg += "; pass ";
    msg += pass;
    Finding f = makeFinding(rule, dl.loc, std::move(msg));
    auto fix = [&](ArgState s, Loc valueLoc, FixKind insert, FixKind set) {
      if (s == ArgState::False && valueLoc)
        f.fixes.emplace_back(set, valueLoc, "", "");
      else if (s == ArgState::Absent && dl.argsEnd)
        f.fixes.emplace_back(insert, dl.argsEnd, "", "");
    };
    if (needPersistent)
      fix(dl.persistentWorkers, dl.persistentWorkersLoc, FixKind::InsertPersistentWorkers,
          FixKind::SetPersistentWorkersTrue);
    if (needPin)
      fix(dl.pinMemory, dl.pinMemoryLoc, FixKind::InsertPinMemory, FixKind::SetPinMemoryTrue);
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace

const RuleDefinition DataloaderOptions = {NeedDataLoaders, &decide};

} // namespace ddplint::core::rules
