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
  // (function, reach, first run, the path's decisions, the block the write
  // is a statement of): writes side by side are one place to fix; a save in
  // the epoch loop and one after it, or one in another `if`, are two.
  using GroupKey = std::tuple<std::string, int, bool, std::vector<std::tuple<int, bool, Loc>>, const Node *>;
  std::map<const Node *, const Node *> blockOf;
  std::function<void(const Node &, const Node *)> mapBlocks = [&](const Node &n, const Node *block) {
    blockOf[&n] = block;
    for (const Node &k : n.kids)
      mapBlocks(k, n.kind == Node::Kind::Block ? &n : block);
  };
  for (const auto &f : I.program.functions)
    mapBlocks(f.body, nullptr);
  std::vector<GroupKey> keys; // one per finding in `out`
  std::vector<std::string> ops;
  std::map<std::string, bool> callerOrdered;
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
          // Whether a caller orders the call is the function's, not the
          // write's: asked once per function.
          auto [known, fresh] = callerOrdered.try_emplace(f.key, false);
          if (!fresh)
            return known->second;
          auto c = I.callers_.find(f.key);
          if (c == I.callers_.end())
            return false;
          for (const auto &[caller, reach] : c->second)
            if (auto *cr = I.analyze(caller);
                cr && orderedBefore(*cr, [&](const engine::Ev &x) { return x.isCall && x.op == f.key; }))
              return known->second = true;
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
        // Writes side by side under one guard (the model, then the training
        // arguments beside it) are one bug with one fix: the first is
        // reported and the others are its notes.
        GroupKey key{f.key, int(at), firstRun, {}, blockOf[e.node]};
        for (const engine::Lit &l : g)
          std::get<3>(key).emplace_back(l.atom, l.pol, l.loc);
        keys.push_back(std::move(key));
        ops.push_back(e.op);
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
  std::vector<size_t> order(out.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return out[a].loc < out[b].loc; });
  std::map<GroupKey, size_t> first;
  std::vector<Finding> kept;
  for (size_t i : order) {
    auto [at, fresh] = first.try_emplace(keys[i], kept.size());
    if (fresh) {
      kept.push_back(std::move(out[i]));
      continue;
    }
    const bool everyRank = std::get<1>(keys[i]) == int(Reach::AllRanks);
    kept[at->second].notes.emplace_back(
        out[i].loc, everyRank ? "every rank also runs '" + ops[i] + "' here, under the same conditions"
                              : "'" + ops[i] + "' here is under the same node-local guard");
  }
  sortByLoc(kept);
  return kept;
}

} // namespace

const RuleDefinition UnguardedSave = {NeedPaths, &decide};

} // namespace ddplint::core::rules
