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
  // Who passes a guard: every rank, one process per node (a node-local rank 0
  // test), or one rank or an unknown subset, or nobody but the creator of a
  // missing file.  A per-node writer is still many writers on shared storage.
  enum Reach { AllRanks = 0, PerNode = 1, Restricted = 2 };
  auto reach = [&](const engine::Conj &g) {
    if (I.rankSet(g).size() <= 1 || I.probesFile(g))
      return Restricted;
    bool perNode = false;
    for (const auto &l : g) {
      const engine::Atom &a = I.atoms[l.atom];
      if (a.kind != Cond::Kind::Atom || a.dep != Dep::Rank)
        continue;
      if (!a.localMain || !l.pol)
        return Restricted;
      perNode = true;
    }
    return perNode ? PerNode : AllRanks;
  };
  auto withLoop = [](const engine::Conj &g, const engine::Ev &e) {
    engine::Conj all = g;
    all.insert(all.end(), e.inLoop.begin(), e.inLoop.end());
    return all;
  };
  // Which functions every rank (or every node's local rank 0) may enter:
  // roots, and callees reached on such a path of such a function.
  std::map<std::string, std::vector<std::pair<std::string, Reach>>> callers;
  for (const auto &f : I.program.functions) {
    auto *r = I.analyze(f.key);
    if (!r)
      continue;
    for (const auto &p : r->paths)
      for (const auto &e : p.seq)
        if (e.isCall)
          callers[e.op].emplace_back(f.key, reach(withLoop(p.guard, e)));
  }
  std::map<std::string, Reach> open;
  std::function<Reach(const std::string &, int)> entered = [&](const std::string &k, int d) {
    auto it = open.find(k);
    if (it != open.end())
      return it->second;
    if (d > I.limits.maxCallDepth)
      return Restricted;
    open[k] = Restricted; // recursion: assume guarded
    auto c = callers.find(k);
    Reach res = c == callers.end() ? AllRanks : Restricted;
    if (c != callers.end())
      for (const auto &[caller, guarded] : c->second)
        res = std::min(res, std::max(guarded, entered(caller, d + 1)));
    open[k] = res;
    return res;
  };
  std::vector<Finding> out;
  std::set<Loc> seen;
  for (const auto &f : I.program.functions) {
    auto *r = I.analyze(f.key);
    if (!r)
      continue;
    const Reach fnReach = entered(f.key, 0);
    if (fnReach == Restricted)
      continue;
    for (const auto &p : r->paths) {
      for (const auto &e : p.seq) {
        if (e.isCall || e.kind != EventKind::CheckpointWrite || !e.node ||
            e.node->pathDep != Dep::Uniform || seen.count(e.loc))
          continue;
        const Reach at = std::max(fnReach, reach(withLoop(p.guard, e)));
        if (at == Restricted)
          continue;
        seen.insert(e.loc);
        Finding fd;
        fd.rule = "ddp-unguarded-save";
        fd.loc = e.loc;
        if (at == AllRanks)
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
