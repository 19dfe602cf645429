// ddp-unguarded-save: a checkpoint write that every rank runs to a path that
// does not depend on the rank (only in programs that show they run
// distributed), or that one process per node runs (a node-local rank 0 guard)
// to a path shared by the nodes.
#include "RuleSupport.h"

#include "engine/PathEngine.h"

#include <functional>
#include <map>
#include <set>

namespace ddplint::core::rules {
namespace {

std::vector<Finding> decide(const RuleContext &ctx) {
  engine::PathEngine &I = ctx.paths();
  if (!I.program.distributed)
    return {};
  std::vector<Finding> out;
  std::set<Loc> seen;
  for (const auto &f : I.program.functions) {
    auto *r = I.analyze(f.key);
    if (!r)
      continue;
    const Reach fnReach = I.entered(f.key);
    if (fnReach == Reach::Restricted)
      continue;
    for (const auto &p : r->paths) {
      for (const auto &e : p.seq) {
        if (e.isCall || e.kind != EventKind::CheckpointWrite || !e.node ||
            e.node->pathDep != Dep::Uniform || seen.count(e.loc))
          continue;
        Reach at = std::max(fnReach, I.reach(engine::PathEngine::withLoop(p.guard, e), e.at));
        if (at != Reach::Restricted)
          at = std::max(at, I.enteredGiven(f.key, e.node));
        if (at == Reach::Restricted)
          continue;
        seen.insert(e.loc);
        Finding fd;
        fd.rule = "ddp-unguarded-save";
        fd.loc = e.loc;
        if (at == Reach::AllRanks)
          fd.message = "every rank runs '" + e.op +
                       "' to the same path, so the ranks overwrite one file concurrently and "
                       "tear it; write on rank 0 only between barriers, or make the path "
                       "rank-specific";
        else
          fd.message = "'" + e.op +
                       "' is guarded by the node-local rank, so one process per node writes "
                       "the same path: on storage shared by the nodes they tear one file; "
                       "guard it with the global rank (RANK == 0, is_main_process), or make "
                       "the path node-specific";
        out.push_back(std::move(fd));
      }
    }
  }
  sortByLoc(out);
  return out;
}

} // namespace

const RuleDefinition UnguardedSave = {NeedPaths, &decide};

} // namespace ddplint::core::rules
