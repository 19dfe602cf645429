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

// Main process first (`if rank != 0: barrier()`, the call, `if rank == 0:
// barrier()`; the bundled example's load_or_build_blobs): some ranks wait in
// a barrier before they reach the target and others do not, so rank 0 fills
// the cache alone and the rest find it.
bool orderedBefore(const engine::PathEngine::FnResult &res,
                   const std::function<bool(const engine::Ev &)> &target) {
  // How many barriers each path passes before the target: one more on some
  // paths than on others is the extra wait main-process-first adds (a
  // barrier every rank passes earlier orders nothing).
  std::set<size_t> counts;
  for (const auto &q : res.paths) {
    size_t barriers = 0;
    for (const auto &x : q.seq) {
      if (target(x)) {
        counts.insert(barriers);
        break;
      }
      barriers += !x.isCall && (x.kind == EventKind::Barrier || x.kind == EventKind::GroupBarrier);
    }
  }
  return counts.size() > 1;
}

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
        const engine::Conj g = engine::PathEngine::withLoop(p.guard, e);
        Reach at = std::max(fnReach, I.reach(g, e.at));
        // The create-once cache (`if not os.path.exists(cache): ...
        // torch.save(data, cache)`, MOSS's and FlagAI's tokenised data): the
        // probe decides nothing on a first run, when every rank finds the
        // file missing and writes it at once.
        // Only where the program shows the call (or the function is an
        // entry): around an API that nothing here calls, the caller's
        // ordering (main process first) decides who finds it missing.
        bool firstRun = false;
        auto shown = [&] {
          auto c = I.callers_.find(f.key);
          return (c != I.callers_.end() && !c->second.empty()) || f.key == "<module>" ||
                 f.name == "main";
        };
        auto ordered = [&] {
          const Loc where = e.loc;
          if (orderedBefore(*r, [&](const engine::Ev &x) { return !x.isCall && x.loc == where; }))
            return true;
          auto c = I.callers_.find(f.key);
          if (c == I.callers_.end())
            return false;
          for (const auto &[caller, reach] : c->second)
            if (auto *cr = I.analyze(caller);
                cr && orderedBefore(*cr, [&](const engine::Ev &x) { return x.isCall && x.op == f.key; }))
              return true;
          return false;
        };
        if (at == Reach::Restricted && I.probesFile(g) && shown() && !ordered()) {
          engine::Conj rest;
          for (const engine::Lit &l : g)
            if (!I.atoms[l.atom].probesFile)
              rest.push_back(l);
          at = std::max(fnReach, I.reach(rest, e.at));
          firstRun = at != Reach::Restricted;
        }
        if (at != Reach::Restricted)
          at = std::max(at, I.enteredGiven(f.key, e.node));
        if (at == Reach::Restricted)
          continue;
        seen.insert(e.loc);
        Finding fd;
        fd.rule = "ddp-unguarded-save";
        fd.loc = e.loc;
        if (firstRun && at == Reach::AllRanks)
          fd.message = "on a first run every rank finds the file missing and runs '" + e.op +
                       "' to the same path, so the ranks write one file concurrently and tear "
                       "it (or read it half-written); build it on rank 0 and barrier before "
                       "the others read it, or make the path rank-specific";
        else if (at == Reach::AllRanks)
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
