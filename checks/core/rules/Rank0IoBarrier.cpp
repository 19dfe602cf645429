// ddp-rank0-io-barrier: a block that only rank 0 runs and that writes files,
// with no barrier every rank reaches right before and after it, where a
// collective can follow it (and, for the barrier before, precede it).  The
// fix-its insert the barriers around the block.
#include "RuleSupport.h"

#include "engine/PathEngine.h"

#include <functional>
#include <map>
#include <optional>
#include <set>

namespace ddplint::core::rules {
namespace {
struct Frame {
  const Node *block;
  size_t index;
};

struct CallSite {
  std::string caller;
  std::vector<Frame> frames;
  Loc at = 0;
};

// A collective that returns on no rank before rank 0 has reached it, whatever
// the backend: a barrier, and the object collectives, which hand every rank a
// Python object (`broadcast_object_list(flags, 0)` after a rank-0 save orders
// the save before the others go on, as a barrier would).  A tensor
// collective may return at once on NCCL, the kernel queued.
// The world's rendezvous (EventKind::Rendezvous, by its name): no rank
// leaves it before rank 0 has come.
bool makesWorld(const std::string &op) {
  for (const auto &init : builtinPythonApi().processGroupInits)
    if (!init.collective && endsWith(init.name, "." + op))
      return true;
  return false;
}

bool ordersRanks(const std::string &op) {
  if (op == "barrier" || makesWorld(op))
    return true;
  const auto end = [&](const char *s) {
    const std::string t(s);
    return op.size() >= t.size() && op.compare(op.size() - t.size(), t.size(), t) == 0;
  };
  // The job's teardown (FasterTransformer's examples: rank 0 writes its
  // output, then every rank calls MPI_Finalize): nothing after it reads the
  // file, and MPI_Finalize has no timeout to run out while rank 0 writes.
  return end("_object") || end("_object_list") || end("monitored_barrier") ||
         op == "MPI_Finalize" || op == "ncclCommFinalize" || end("destroy_process_group");
}

// A test that `leaf` picks the ranks of, alone or beside settings every rank
// shares (`and epoch % 5 == 0`, `and not evaluate`).
bool amongSettings(const Cond &c, bool (*leaf)(const Cond &)) {
  if (c.kind != Cond::Kind::And)
    return leaf(c);
  bool picks = false;
  for (const auto &k : c.kids) {
    if (amongSettings(k, leaf))
      picks = true;
    else if (k.dependence() != Dep::Uniform)
      return false;
  }
  return picks;
}

// The node-local rank 0's block (`if args.local_rank == 0:`, timm's
// `if saver is not None:` with the saver made there): one process per node
// writes while every other rank goes on, as past a rank-0 block; on one node
// it is rank 0's.
bool nodeMainOnly(const Cond &c) {
  return amongSettings(c, [](const Cond &k) { return k.kind == Cond::Kind::Atom && k.localMain; });
}

bool writerOnly(const Cond &c) { return isMainOnly(c) || nodeMainOnly(c); }

// The other half of a barrier pair's test: every rank but the writer
// (`if local_rank not in [-1, 0] and not evaluate:`, `if rank != 0:`).
bool othersOnly(const Cond &c) {
  return amongSettings(c, [](const Cond &k) {
    if (k.kind == Cond::Kind::Not && k.kids[0].kind == Cond::Kind::Atom && k.kids[0].localMain)
      return true;
    return k.dependence() == Dep::Rank && engine::evalTri(k, 0) == engine::Tri::False &&
           engine::evalTri(k, 1) == engine::Tri::True;
  });
}

// `return` (`if args.eval: evaluate(); save_on_master(...); return`): the
// function's later code does not follow the write.
bool returns(const Node &n) { return n.kind == Node::Kind::Exit && n.exit == ExitKind::Return; }

// A then-arm that only returns: `if (rank != 0) return;`.
bool returnsOnly(const Node &n) {
  if (n.kind == Node::Kind::Exit)
    return n.exit == ExitKind::Return;
  return n.kind == Node::Kind::Block && n.kids.size() == 1 && returnsOnly(n.kids[0]);
}

// The tests that hold where a frame stack points: those of the `if`s whose
// then-arm holds the position (`if last_step: save_checkpoint(...)`).
std::set<std::string> heldTests(const std::vector<Frame> &stack) {
  std::set<std::string> out;
  for (size_t i = 0; i + 1 < stack.size(); ++i) {
    const Node &n = stack[i].block->kids[stack[i].index];
    if (n.kind == Node::Kind::If && !n.cond.text.empty() && stack[i + 1].block == &n.kids[0])
      out.insert(n.cond.text);
  }
  return out;
}

// `if last_step: break` after `if last_step: save_checkpoint(...)`: on the
// path that wrote, the loop ends there (nanochat's last step), and the next
// iteration's collectives never come.
bool breaksWhen(const Node &n, const std::set<std::string> &held) {
  if (n.kind != Node::Kind::If || !held.count(n.cond.text) || n.kids.empty())
    return false;
  const Node *only = &n.kids[0];
  while (only->kind == Node::Kind::Block && only->kids.size() == 1)
    only = &only->kids[0];
  return only->kind == Node::Kind::Exit && only->exit == ExitKind::Break;
}

// `if last_step: {if rank0: save} break` (modded-nanogpt): a `break` right
// after the write block ends the loop on the path that wrote, too.
bool breaksAfter(const Node &n, const std::set<std::string> &held) {
  return (n.kind == Node::Kind::Exit && n.exit == ExitKind::Break) || breaksWhen(n, held);
}

// `sys.exit(0)` after an eval-only branch's save: the process ends there and
// nothing after it races with the write.
bool endsProcess(const Node &n) {
  return n.kind == Node::Kind::Exit &&
         (n.exit == ExitKind::Terminate || (n.exit == ExitKind::Throw && !n.name.empty()));
}

// A test's spelling without its layout: `(a) or (\n  b\n)` is `(a) or (b)`.
std::string spacesOut(const std::string &t) {
  std::string out;
  for (char c : t)
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r')
      out += c;
  return out;
}

// Whether the frame on top of `stack` is the body of a loop (of the node its
// parent frame points at).
bool loopBody(const Frame &fr, const std::vector<Frame> &rest) {
  if (rest.empty())
    return false;
  const Node &n = rest.back().block->kids[rest.back().index];
  return n.kind == Node::Kind::Loop && !n.kids.empty() && &n.kids[0] == fr.block;
}

std::vector<Finding> decide(const RuleContext &ctx) {
  engine::PathEngine &I = ctx.paths();
  const bool requireBefore = ctx.options().flag("RequireBarrierBefore");
  // The seed's literal rule: a barrier on entry and exit of every rank-0 write
  // block, hazard or not.  What the hazard analysis would not report comes
  // out as a note (policy), like ddp-launch-env's.
  const bool everyWrite = ctx.options().flag("BarrierAroundEveryWrite");
  if (!I.program.distributed)
    return {};
  // What a node contributes in sync terms: its first and last sync event.
  std::function<bool(const Node &, bool, std::string &)> edge = [&](const Node &n, bool first,
                                                                     std::string &op) -> bool {
    switch (n.kind) {
    case Node::Kind::Event:
      if (n.event == EventKind::Collective || n.event == EventKind::Barrier ||
          n.event == EventKind::Rendezvous || n.event == EventKind::GroupBarrier) {
        op = n.event == EventKind::Barrier || n.event == EventKind::GroupBarrier ? "barrier" : n.name;
        return true;
      }
      return false;
    case Node::Kind::Call: {
      auto *r = I.analyze(n.callee);
      if (!r || r->summary.empty())
        return false;
      const engine::Ev &e = first ? r->summary.front() : r->summary.back();
      op = e.kind == EventKind::Barrier ? "barrier" : e.op;
      return true;
    }
    case Node::Kind::Block: {
      if (first) {
        for (const auto &k : n.kids)
          if (edge(k, first, op))
            return true;
      } else {
        for (auto it = n.kids.rbegin(); it != n.kids.rend(); ++it)
          if (edge(*it, first, op))
            return true;
      }
      return false;
    }
    case Node::Kind::If:
    case Node::Kind::Loop:
      for (const auto &k : n.kids)
        if (edge(k, first, op)) {
          op = "conditional"; // not a barrier every rank reaches
          return true;
        }
      return false;
    default:
      return false;
    }
  };
  // The files the block being decided writes (their names as the code spells
  // them): a read of one of them by the other ranks, before anything orders
  // them after rank 0, reads what rank 0 may still be writing (BiSeNet's
  // final `torch.save` on rank 0, then every rank's evaluate() loading it).
  std::set<std::string> readKeys;
  enum class First { None, Read, Sync };
  std::map<const Function *, First> firstIn;
  std::function<First(const Node &, int)> firstOf = [&](const Node &n, int depth) -> First {
    switch (n.kind) {
    case Node::Kind::Event:
      if (n.event == EventKind::FileRead)
        return readKeys.count(n.pathKey) ? First::Read : First::None;
      return n.event == EventKind::Collective || n.event == EventKind::Barrier ||
                     n.event == EventKind::Rendezvous || n.event == EventKind::GroupBarrier
                 ? First::Sync
                 : First::None;
    case Node::Kind::Call: {
      const Function *f = I.function(n.callee);
      if (!f || depth > 4)
        return First::None;
      auto [it, fresh] = firstIn.emplace(f, First::None); // None while on the stack
      if (fresh)
        firstIn[f] = firstOf(f->body, depth + 1);
      return firstIn[f];
    }
    case Node::Kind::Block:
      for (const auto &k : n.kids)
        if (First r = firstOf(k, depth); r != First::None)
          return r;
      return First::None;
    case Node::Kind::If:
    case Node::Kind::Loop: {
      First out = First::None;
      for (const auto &k : n.kids) {
        const First r = firstOf(k, depth);
        if (r == First::Read)
          return r;
        if (r == First::Sync)
          out = r;
      }
      return out;
    }
    default:
      return First::None;
    }
  };
  auto readsFirst = [&](const Node &n) { return !readKeys.empty() && firstOf(n, 0) == First::Read; };
  Loc readAt = 0; // where the read the decision rested on is, for the note
  std::string readVia; // the call that reads it, when a helper does
  std::function<Loc(const Node &, int)> readLoc = [&](const Node &n, int depth) -> Loc {
    if (n.kind == Node::Kind::Event)
      return n.event == EventKind::FileRead && readKeys.count(n.pathKey) ? n.loc : 0;
    if (n.kind == Node::Kind::Call) {
      if (firstOf(n, depth) != First::Read)
        return 0;
      readVia = n.name;
      return n.loc;
    }
    for (const auto &k : n.kids)
      if (const Loc l = readLoc(k, depth))
        return l;
    return 0;
  };
  // How the paths through a node begin (end) in sync terms: every path that
  // synchronises in it does so first with a collective that orders rank 0's
  // write (Orders), some path meets a tensor collective first (Races), some
  // paths order and the others pass through without one (Partly: what comes
  // next decides for those), or none synchronises (None).  A barrier behind a
  // setting every rank shares (`if args.manifest: all_gather_object(...)`)
  // orders the write on the runs that take it; the runs that skip it meet
  // whatever follows (the epoch loop's unconditional barrier).
  // The writer's halves of barrier pairs: `if <writer>: barrier()` in a
  // function that also has `if <every other rank>: barrier()`; alone, a
  // barrier only the writer reaches is a divergence, not an order.
  std::set<const Node *> pairHalves;
  {
    auto barrierFirst = [&](const Node &arm) {
      std::string op;
      return edge(arm, true, op) && ordersRanks(op);
    };
    for (const auto &f : I.program.functions) {
      std::vector<const Node *> writers;
      bool others = false;
      std::function<void(const Node &)> scan = [&](const Node &n) {
        if (n.kind == Node::Kind::If && !n.kids.empty() && barrierFirst(n.kids[0])) {
          if (writerOnly(n.cond))
            writers.push_back(&n);
          else if (othersOnly(n.cond))
            others = true;
        }
        for (const auto &k : n.kids)
          scan(k);
      };
      scan(f.body);
      if (others)
        pairHalves.insert(writers.begin(), writers.end());
    }
  }
  enum class Sync { None, Orders, Partly, Races };
  std::function<Sync(const Node &, bool)> syncOf = [&](const Node &n, bool first) -> Sync {
    switch (n.kind) {
    case Node::Kind::Event:
    case Node::Kind::Call: {
      if (first && readsFirst(n)) {
        if (!readAt)
          readAt = readLoc(n, 0);
        return Sync::Races;
      }
      std::string op;
      if (!edge(n, first, op))
        return Sync::None;
      return ordersRanks(op) ? Sync::Orders : Sync::Races;
    }
    case Node::Kind::Block: {
      bool partly = false;
      auto step = [&](const Node &k) {
        const Sync s = syncOf(k, first);
        partly = partly || s == Sync::Partly;
        return s == Sync::Orders || s == Sync::Races ? s : Sync::None;
      };
      if (first) {
        for (const auto &k : n.kids)
          if (Sync s = step(k); s != Sync::None)
            return s;
      } else {
        for (auto it = n.kids.rbegin(); it != n.kids.rend(); ++it)
          if (Sync s = step(*it); s != Sync::None)
            return s;
      }
      return partly ? Sync::Partly : Sync::None;
    }
    case Node::Kind::If:
    case Node::Kind::Loop: {
      // An `if` without an else, and a loop that may run no iteration, pass
      // through without their body on some path.
      Sync a = n.kids.empty() ? Sync::None : syncOf(n.kids[0], first);
      Sync b = n.kind == Node::Kind::If && n.kids.size() > 1 ? syncOf(n.kids[1], first)
                                                              : Sync::None;
      // The writer's half of a barrier pair (the old Hugging Face examples:
      // `if local_rank not in [-1, 0]: barrier()` before the cache is made,
      // `if local_rank == 0: barrier()` after): the others wait in their
      // half until the writer comes, past its write.
      if (first && n.kind == Node::Kind::If && a == Sync::Orders && b == Sync::None &&
          writerOnly(n.cond) && pairHalves.count(&n))
        return Sync::Orders;
      if (a == Sync::Races || b == Sync::Races)
        return Sync::Races;
      if (a == Sync::Orders && b == Sync::Orders)
        return Sync::Orders;
      if (a == Sync::None && b == Sync::None)
        return Sync::None;
      return Sync::Partly;
    }
    default:
      return Sync::None;
    }
  };
  // Whether a node writes files, in helpers too; `logs`: a log line counts
  // (the literal rule's question), otherwise only what a rank can read
  // half-written or wait for.  Per function, once: a helper called from many
  // places is not walked again at each call (linked programs call the same
  // helpers hundreds of times).
  std::map<const Function *, bool> writesIn[2];
  std::function<bool(const Node &, bool)> writesFiles = [&](const Node &n, bool logs) -> bool {
    if (n.kind == Node::Kind::Event &&
        (n.event == EventKind::CheckpointWrite || n.event == EventKind::FileWrite ||
         (n.event == EventKind::LogWrite && logs)))
      return true;
    if (n.kind == Node::Kind::Call) {
      const Function *f = I.function(n.callee);
      if (!f)
        return false;
      auto &memo = writesIn[logs ? 1 : 0];
      auto [it, fresh] = memo.emplace(f, false); // false while on the stack: recursion
      if (fresh) {
        const bool w = writesFiles(f->body, logs);
        memo[f] = w;
        return w;
      }
      return it->second;
    }
    for (const auto &k : n.kids)
      if (writesFiles(k, logs))
        return true;
    return false;
  };
  auto writes = [&](const Node &n) { return writesFiles(n, false); };
  // The tests that hold at every write of a node, or none when it writes
  // nothing: `if last: save(...)` gives {"last"}; a write outside any test
  // of the node, {}.
  std::function<std::optional<std::set<std::string>>(const Node &)> writeTests =
      [&](const Node &n) -> std::optional<std::set<std::string>> {
    if (n.kind == Node::Kind::Event || n.kind == Node::Kind::Call)
      return writes(n) ? std::optional<std::set<std::string>>(std::set<std::string>()) : std::nullopt;
    auto meet = [](std::optional<std::set<std::string>> &acc, const std::set<std::string> &s) {
      if (!acc) {
        acc = s;
        return;
      }
      std::set<std::string> both;
      for (const auto &t : *acc)
        if (s.count(t))
          both.insert(t);
      acc = std::move(both);
    };
    std::optional<std::set<std::string>> acc;
    if (n.kind == Node::Kind::If) {
      if (auto t = n.kids.empty() ? std::nullopt : writeTests(n.kids[0])) {
        if (!n.cond.text.empty())
          t->insert(n.cond.text);
        meet(acc, *t);
      }
      if (n.kids.size() > 1)
        if (auto e = writeTests(n.kids[1]))
          meet(acc, *e);
      return acc;
    }
    for (const auto &k : n.kids)
      if (auto w = writeTests(k))
        meet(acc, *w);
    return acc;
  };
  // Where every function is called from: the caller and the frames down to the call.
  std::map<std::string, std::vector<CallSite>> callSites;
  // A loop whose iterations synchronise: whatever its body does, the next
  // iteration's collective comes after it.
  auto syncLoop = [&](const Node &n) {
    std::string op;
    return n.kind == Node::Kind::Loop && edge(n.kids[0], true, op);
  };
  std::set<std::string> calledInSyncLoop;
  // Bodies of loops that synchronise: past the end of one, the next
  // collective is the next iteration's first, not what follows the loop.
  std::set<const Node *> syncBodies;
  for (const auto &f : I.program.functions) {
    std::vector<Frame> stack;
    int inSyncLoop = 0;
    std::function<void(const Node &)> index = [&](const Node &n) {
      if (n.kind == Node::Kind::Call) {
        callSites[n.callee].push_back({f.key, stack, n.loc});
        if (inSyncLoop)
          calledInSyncLoop.insert(n.callee);
      }
      if (syncLoop(n)) {
        syncBodies.insert(&n.kids[0]);
        ++inSyncLoop;
        index(n.kids[0]);
        --inSyncLoop;
        return;
      }
      if (n.kind == Node::Kind::Block) {
        for (size_t i = 0; i < n.kids.size(); ++i) {
          stack.push_back({&n, i});
          index(n.kids[i]);
          stack.pop_back();
        }
        return;
      }
      for (const auto &k : n.kids)
        index(k);
    };
    index(f.body);
  }
  std::function<bool(std::vector<Frame>, bool, const std::string &, int)> syncNear;
  // Is the nearest collective before/after a position a barrier?  At the edge
  // of a function the search goes on at every call site (all must have one);
  // `missingAt` is then the call where one is missing.
  Loc missingAt = 0;
  // Every outermost call that misses one, for the first function's callers
  // (mdetr's and ibot's second `save_on_master(...)` in the same loop): each
  // is its own fix, so each is reported where another module reaches it.
  std::vector<Loc> missingSites;
  bool collectSites = false;
  // The depth whose call sites are collected: past helpers called from one
  // place only (InternVideo2's `save_model` -> `save_on_master`), the calls
  // the reader sees are their callers'.
  int collectAt = 0;
  // The statement where the first search after a block met a collective
  // before any barrier: blocks that run into the same one miss one barrier.
  const Node *raceAt = nullptr;
  // The tests inside the reported block that hold at each of its writes
  // (`if rank == 0: if save_step: torch.save(...)`): after the block, a
  // barrier under the same test (`if save_step: barrier()`) is on every path
  // that wrote.  Only in the block's own function, where the spelling names
  // the same values.
  std::set<std::string> writeHeld, carriedSelfTests;
  // The class a method's key names (`mod:Trainer.save_model` -> `mod:Trainer`).
  auto classOf = [](const std::string &key) {
    const size_t dot = key.rfind('.'), colon = key.rfind(':');
    if (dot == std::string::npos || (colon != std::string::npos && dot < colon))
      return std::string();
    return key.substr(0, dot);
  };
  std::function<bool(std::vector<Frame>, bool, const std::string &, int)> barrierNear =
      [&](std::vector<Frame> stack, bool after, const std::string &fn, int depth) -> bool {
    std::set<std::string> held = after ? heldTests(stack) : std::set<std::string>();
    if (after && depth == 0)
      held.insert(writeHeld.begin(), writeHeld.end());
    if (after)
      held.insert(carriedSelfTests.begin(), carriedSelfTests.end());
    // The same test spelled over one line or several.
    std::set<std::string> heldNorm;
    for (const auto &t : held)
      heldNorm.insert(spacesOut(t));
    bool leaving = false; // broke out of a loop: the rest of its body does not run
    while (!stack.empty()) {
      Frame fr = stack.back();
      stack.pop_back();
      const auto &kids = fr.block->kids;
      bool returned = false;
      if (leaving) {
        leaving = !loopBody(fr, stack);
        continue;
      }
      if (after) {
        for (size_t i = fr.index + 1; i < kids.size() && !returned && !leaving; ++i) {
          if (endsProcess(kids[i]))
            return true; // nothing runs after it on this rank
          leaving = breaksAfter(kids[i], held);
          // An `if` on a test that held where rank 0 wrote: its then-arm runs.
          const Node &next = kids[i].kind == Node::Kind::If && !kids[i].kids.empty() &&
                                     !kids[i].cond.text.empty() && heldNorm.count(spacesOut(kids[i].cond.text))
                                 ? kids[i].kids[0]
                                 : kids[i];
          if (!leaving)
            if (const Sync s = syncOf(next, true); s == Sync::Orders || s == Sync::Races) {
              if (s == Sync::Races && !raceAt)
                raceAt = &next;
              return s == Sync::Orders;
            }
          returned = returns(kids[i]);
        }
        if (leaving) {
          leaving = !loopBody(fr, stack);
          continue; // no next iteration either
        }
      } else {
        for (size_t i = fr.index; i-- > 0;)
          if (const Sync s = syncOf(kids[i], false); s == Sync::Orders || s == Sync::Races)
            return s == Sync::Orders;
      }
      if (returned) {
        stack.clear(); // what follows is the callers'
        break;
      }
      // Around the loop: the next (previous) iteration's first (last) collective.
      if (syncBodies.count(fr.block))
        if (const Sync s = syncOf(*fr.block, after); s != Sync::None) {
          if (after && s == Sync::Races && !raceAt)
            raceAt = fr.block;
          return s != Sync::Races;
        }
    }
    auto sites = callSites.find(fn);
    if (sites == callSites.end() || depth >= 4)
      return false;
    // A hook the framework runs between steps, or a signal handler, returns
    // into the run's next step whatever its explicit callers do after it
    // (CompVis' `melk`, also called before a `raise`).
    if (const Function *f = I.function(fn); after && f && f->runsEveryStep)
      return false;
    if (collectSites && depth == collectAt && sites->second.size() == 1 && depth + 1 < 4 &&
        callSites.count(sites->second.front().caller))
      ++collectAt;
    const bool collect = collectSites && depth == collectAt;
    bool missing = false;
    // `if self.deepspeed: if self.args.should_save: self._save(...)` in one
    // method, `if self.deepspeed: self.deepspeed.save_checkpoint(...)` after
    // its call in another of the class: a test of the object's own state
    // that held at the write holds in the caller too.
    std::set<std::string> selfTests;
    for (const auto &t : held)
      if (t.rfind("self.", 0) == 0)
        selfTests.insert(t);
    for (const auto &site : sites->second) {
      const Loc outer = missingAt;
      if (collect)
        missingAt = 0;
      const std::set<std::string> carriedBefore = carriedSelfTests;
      carriedSelfTests.clear();
      if (after && !classOf(fn).empty() && classOf(fn) == classOf(site.caller))
        carriedSelfTests = selfTests;
      const bool found = barrierNear(site.frames, after, site.caller, depth + 1);
      carriedSelfTests = carriedBefore;
      if (!found) {
        // A call after which nothing synchronises (the eval-only branch's
        // save, then `return`) races with nothing.
        // The literal rule (BarrierAroundEveryWrite) asks there too.
        if (after && !everyWrite && !syncNear(site.frames, after, site.caller, depth + 1)) {
          if (collect)
            missingAt = outer;
          continue;
        }
        if (!missingAt)
          missingAt = site.at; // the deepest search's: the outermost call
        if (!collect)
          return false;
        missingSites.push_back(missingAt);
        missingAt = outer ? outer : missingAt;
        missing = true;
      } else if (collect) {
        missingAt = outer;
      }
    }
    return !missing;
  };
  // Can anything synchronise the ranks after (before) a position: a collective
  // or barrier later (earlier) in the function, around any of its call sites,
  // or the next (previous) iteration of a loop that synchronises?
  // After: a rank-0 write after the last one races with nothing and makes
  // nobody wait, so it is not a hazard.
  // Before: until the program's first collective the ranks have exchanged
  // nothing, so no rank can be reading what an earlier phase wrote, and a
  // barrier before a start-up write (the output folder, the config) protects
  // nothing.  Only the program's entry is known to start the run: a function
  // without callers here may be called after collectives elsewhere.
  syncNear = [&](std::vector<Frame> stack, bool after, const std::string &fn, int depth) -> bool {
    std::string op;
    const std::set<std::string> held = after ? heldTests(stack) : std::set<std::string>();
    bool leaving = false;
    while (!stack.empty()) {
      Frame fr = stack.back();
      stack.pop_back();
      const auto &kids = fr.block->kids;
      if (leaving) {
        leaving = !loopBody(fr, stack);
        continue;
      }
      if (after) {
        bool returned = false;
        for (size_t i = fr.index + 1; i < kids.size() && !returned && !leaving; ++i) {
          if (endsProcess(kids[i]))
            return false; // the process ends: nothing after it synchronises
          leaving = breaksAfter(kids[i], held);
          if (!leaving && (edge(kids[i], true, op) || readsFirst(kids[i])))
            return true;
          returned = returns(kids[i]);
        }
        if (leaving) {
          leaving = !loopBody(fr, stack);
          continue;
        }
        if (returned)
          break; // what follows is the callers'
        // The next iteration of a loop that synchronises.
        if (syncBodies.count(fr.block) && edge(*fr.block, true, op))
          return true;
      } else {
        for (size_t i = fr.index; i-- > 0;)
          if (edge(kids[i], false, op))
            return true;
      }
    }
    if (calledInSyncLoop.count(fn))
      return true;
    if (const Function *f = I.function(fn); after && f && f->runsEveryStep)
      return true; // the framework's next step
    auto sites = callSites.find(fn);
    if (sites == callSites.end() || depth >= 4) {
      if (after)
        return false;
      const Function *f = I.function(fn);
      const bool entry = fn == "<module>" || (f && f->name == "main");
      return depth >= 4 || !entry;
    }
    for (const auto &site : sites->second)
      if (syncNear(site.frames, after, site.caller, depth + 1))
        return true;
    return false;
  };
  // Where each call is (its caller and frames), by the call's location.
  std::map<Loc, const CallSite *> siteAt;
  for (const auto &[callee, sites] : callSites)
    for (const auto &site : sites)
      siteAt.emplace(site.at, &site);
  // Whether a collective runs on the way from call `a` to call `b` of the
  // same function (b after a): the nodes after a's position, up to b's, on
  // b's path (an arm that b's path does not take is passed over).
  auto syncBetween = [&](const std::vector<Frame> &a, const std::vector<Frame> &b) {
    std::string op;
    std::map<const Node *, size_t> onPathToB;
    for (const auto &fr : b)
      onPathToB[fr.block] = fr.index;
    for (size_t level = a.size(); level-- > 0;) {
      const Frame &fr = a[level];
      auto stop = onPathToB.find(fr.block);
      const size_t end = stop != onPathToB.end() ? stop->second : fr.block->kids.size();
      for (size_t i = fr.index + 1; i < end; ++i)
        if (edge(fr.block->kids[i], true, op))
          return true;
      if (stop != onPathToB.end()) {
        // The node that holds b: what runs in it before b.
        for (size_t j = level + 1; j < b.size(); ++j)
          for (size_t i = 0; i < b[j].index; ++i)
            if (edge(b[j].block->kids[i], true, op))
              return true;
        // And b itself, when its helper synchronises before it writes
        // (DINO's `evaluate(...)`, whose rank-0 save comes after its loop).
        return edge(b.back().block->kids[b.back().index], true, op);
      }
    }
    return true; // b is not after a in one function: keep it
  };
  // The first thing after a position that synchronises is the world's
  // rendezvous (vits' rank-0 set-up before init_process_group): nothing can
  // come before it, and no group exists yet for a barrier before it.
  auto groupMadeNext = [&](std::vector<Frame> stack) {
    std::string op;
    while (!stack.empty()) {
      Frame fr = stack.back();
      stack.pop_back();
      for (size_t i = fr.index + 1; i < fr.block->kids.size(); ++i)
        if (edge(fr.block->kids[i], true, op))
          return makesWorld(op);
    }
    return false;
  };
  // The settings under which a rank-0 block writes: its own test's uniform
  // conjuncts (MambaVision's `saver is not None and args.recovery_interval
  // and (last_batch or ...)`) and one uniform test around every write inside
  // it (vits' `if global_step % hps.train.eval_interval == 0:`).  The barrier
  // after the block need wait only then, not on every step.  Python spelling
  // only (a negation's text is C's); "" when there is none.
  const bool python = I.program.facts.language == SourceLanguage::Python;
  auto writeGuard = [&](const Node &n) {
    std::vector<std::string> parts;
    std::function<void(const Cond &)> conjuncts = [&](const Cond &c) {
      if (c.kind == Cond::Kind::And) {
        for (const auto &k : c.kids)
          conjuncts(k);
        return;
      }
      if (c.dependence() == Dep::Uniform && c.kind != Cond::Kind::Not &&
          c.kind != Cond::Kind::Const && !c.text.empty())
        parts.push_back(c.text);
    };
    conjuncts(n.cond);
    std::string inner;
    bool every = true;
    for (const auto &k : n.kids[0].kids) {
      if (!writes(k))
        continue;
      const bool uniformIf = k.kind == Node::Kind::If && k.cond.kind != Cond::Kind::Not &&
                             k.cond.dependence() == Dep::Uniform && !k.cond.text.empty() &&
                             (k.kids.size() < 2 || !writes(k.kids[1]));
      if (uniformIf && (inner.empty() || inner == k.cond.text))
        inner = k.cond.text;
      else
        every = false;
    }
    if (every && !inner.empty())
      parts.push_back(inner);
    std::string out;
    for (const auto &p : parts) {
      const bool wrap = parts.size() > 1 && (p.find(" or ") != std::string::npos ||
                                             p.find(" if ") != std::string::npos);
      out += (out.empty() ? "" : " and ") + (wrap ? "(" + p + ")" : p);
    }
    return out;
  };
  // The function whose blocks are being decided (for a library hook's wording).
  const Function *current = nullptr;
  auto finding = [&](const Node &n, bool missBefore, bool missAfter, bool toEnd,
                     bool policy = false) {
    Finding fd;
    fd.rule = "ddp-rank0-io-barrier";
    fd.loc = n.loc;
    // The barriers go right around the `if`; for an early return the one
    // after belongs after the call of the function, which is not here.
    if (missBefore)
      fd.fixes.emplace_back(FixKind::InsertBarrierBefore, n.loc, "", "", 0, &n);
    if (missAfter && !toEnd)
      fd.fixes.emplace_back(FixKind::InsertBarrierAfter, n.loc,
                            python && n.kind == Node::Kind::If ? writeGuard(n) : "", "", 0, &n);
    // A writer guarded by its own argument (`save_pretrained(dir,
    // is_main_process=...)`): the frontend wraps the call in an `if` at the
    // call's own location, and "block" would point at no block.
    const Node *guardedCall = nullptr;
    if (!toEnd && n.kind == Node::Kind::If && n.kids[0].kids.size() == 1 &&
        n.kids[0].kids[0].kind == Node::Kind::Event && n.kids[0].kids[0].loc == n.loc)
      guardedCall = &n.kids[0].kids[0];
    const bool perNode = !toEnd && n.kind == Node::Kind::If && !isMainOnly(n.cond) && nodeMainOnly(n.cond);
    // A library's hook (detectron2's PeriodicCheckpointer): its write is the
    // library's, made where the hook is; the barrier belongs after the hook's
    // save in the loop that runs it, not in the code that makes it.
    const bool hook = current && current->libraryHook && guardedCall;
    if (hook)
      fd.fixes.clear();
    const std::string what =
        toEnd  ? "code after this early return runs only on rank 0 and writes files"
        : hook ? "'" + guardedCall->name + "' hook writes checkpoints only on rank 0 (" + n.cond.text +
                     "), every period between training steps"
        : guardedCall ? "'" + guardedCall->name +
                            "' writes files only on rank 0 (its own main-process guard)"
        : perNode     ? "block runs only on each node's local rank 0 and writes files"
                      : "block runs only on rank 0 and writes files";
    std::string where = missBefore && missAfter ? "before or after it"
                        : missBefore            ? "before it"
                                                : "after it";
    std::string put = missBefore && missAfter ? "before and after it"
                      : missBefore            ? "before it"
                                              : "after it";
    if (toEnd && missAfter)
      put += " (after the call of this function)";
    if (policy) {
      // No collective can race with it here: the literal rule asks anyway.
      fd.asNote = true;
      fd.message = what + ", with no barrier every rank reaches " + where +
                   " (BarrierAroundEveryWrite: every rank-0 write block is bracketed by "
                   "barriers; no collective can race with this write); put a barrier " + put;
      return fd;
    }
    const std::string why =
        missAfter ? std::string("other ranks may read a partial file or time out in their next collective "
                                "while ") + (perNode ? "it writes" : "rank 0 writes")
                  : std::string(perNode ? "it" : "rank 0") + " may write what the other ranks are still producing";
    fd.message = what + ", with no barrier every rank reaches " + where + "; " + why + "; put a barrier " +
                 (hook && !missBefore ? "after the hook's save: register after it, on every rank, a hook whose "
                                        "after_step waits at a barrier in the iterations it saves"
                                      : put);
    return fd;
  };
  // vits' `if rank == 0: train_and_evaluate(..., writers) else:
  // train_and_evaluate(..., None)`: every rank runs the helper; what it writes
  // is under its own rank-0 test, reported there.  The `if` writes only
  // through what its other arm does not call too.
  auto mainArmWrites = [&](const Node &n) {
    if (n.kids.size() < 2)
      return writes(n.kids[0]);
    std::set<std::string> elsewhere;
    std::function<void(const Node &)> calls = [&](const Node &k) {
      if (k.kind == Node::Kind::Call)
        elsewhere.insert(k.name);
      for (const auto &kk : k.kids)
        calls(kk);
    };
    calls(n.kids[1]);
    std::function<bool(const Node &)> own = [&](const Node &k) -> bool {
      if (k.kind == Node::Kind::Call && elsewhere.count(k.name))
        return false;
      if (k.kind == Node::Kind::Call || k.kind == Node::Kind::Event)
        return writes(k);
      for (const auto &kk : k.kids)
        if (own(kk))
          return true;
      return false;
    };
    return own(n.kids[0]);
  };
  // A helper that every caller calls inside a rank-0 block of its own
  // (composer's `if get_global_rank() == 0: _save_full_state_dict_to_disk(...)`,
  // whose body tests the rank again): the caller's block is the one the
  // other ranks go on past, and it is reported (or found ordered) there.
  auto onlyUnderMainBlocks = [&](const std::string &fn) {
    auto sites = callSites.find(fn);
    if (sites == callSites.end() || sites->second.empty())
      return false;
    for (const auto &site : sites->second) {
      bool inside = false;
      for (size_t i = 0; i + 1 < site.frames.size() && !inside; ++i) {
        const Node &k = site.frames[i].block->kids[site.frames[i].index];
        inside = k.kind == Node::Kind::If && writerOnly(k.cond) &&
                 site.frames[i + 1].block == &k.kids[0];
      }
      if (!inside)
        return false;
    }
    return true;
  };
  // The names of the files a node writes (checkpoints and files, in helpers
  // too): what a later read is matched against.
  std::function<void(const Node &, std::set<std::string> &, int)> keysOf =
      [&](const Node &n, std::set<std::string> &acc, int depth) {
        if (n.kind == Node::Kind::Event &&
            (n.event == EventKind::CheckpointWrite || n.event == EventKind::FileWrite) && !n.pathKey.empty())
          acc.insert(n.pathKey);
        if (n.kind == Node::Kind::Call && depth < 4)
          if (const Function *fn = I.function(n.callee))
            keysOf(fn->body, acc, depth + 1);
        for (const auto &k : n.kids)
          keysOf(k, acc, depth);
      };
  auto writtenKeys = [&](const Node &n) {
    std::set<std::string> acc;
    keysOf(n, acc, 0);
    return acc;
  };
  std::vector<Finding> out;
  std::map<size_t, const Node *> racesInto; // finding -> raceAt
  for (const auto &f : I.program.functions) {
    if (onlyUnderMainBlocks(f.key))
      continue;
    current = &f;
    std::vector<Frame> stack;
    int inSyncLoop = 0;
    // Inside a rank-0 block a second rank-0 test (`if is_main and not skip:`)
    // is the same block for the other ranks: the outer one is reported, and a
    // barrier put inside it only rank 0 would reach.
    int inMainBlock = 0;
    // After `if rank != 0: return` the rest of the function is that block
    // (icefall's `save_checkpoint` helper, then its library's
    // `save_checkpoint(..., rank=rank)`, guarded by its own argument).
    bool mainRest = false;
    const auto reportAt = [&](const Node &n) {
      readKeys.clear();
      firstIn.clear();
      readAt = 0;
      readVia.clear();
      if (n.kind == Node::Kind::If && writerOnly(n.cond))
        readKeys = writtenKeys(n.kids[0]);
      if (n.kind == Node::Kind::If && writerOnly(n.cond) && mainArmWrites(n) &&
          syncNear(stack, true, f.key, 0)) {
        bool missBefore = requireBefore && (inSyncLoop || syncNear(stack, false, f.key, 0)) &&
                          !barrierNear(stack, false, f.key, 0) && !groupMadeNext(stack);
        missingAt = 0;
        missingSites.clear();
        collectSites = true;
        collectAt = 0;
        raceAt = nullptr;
        writeHeld = writeTests(n.kids[0]).value_or(std::set<std::string>());
        bool missAfter = !barrierNear(stack, true, f.key, 0);
        writeHeld.clear();
        collectSites = false;
        const Loc via = missAfter ? missingAt : 0;
        // The literal rule wants the barrier before wherever it is missing.
        const bool literalBefore = everyWrite && !barrierNear(stack, false, f.key, 0);
        if (missBefore || missAfter) {
          out.push_back(finding(n, missBefore || literalBefore, missAfter, false));
          out.back().viaCall = via;
          if (missAfter && raceAt)
            racesInto[out.size() - 1] = raceAt;
          if (missAfter && readAt)
            out.back().notes.emplace_back(
                readAt, (readVia.empty() ? std::string("the file is read here") : quoteCode(readVia) + " reads the file") +
                            ", with nothing ordering the read after rank 0's write");
          // The other calls that miss one: the same finding where another
          // module reaches it (in this module they are one block, one report),
          // each a fix of its own when a collective runs between it and the
          // one before (mdetr's checkpoint, then evaluate(), then the best
          // model); the arms of one `if` share the barrier after it.
          if (python && missAfter && missingSites.size() > 1) {
            std::vector<const CallSite *> sites;
            for (const Loc site : missingSites)
              if (auto it = siteAt.find(site); it != siteAt.end())
                sites.push_back(it->second);
            std::sort(sites.begin(), sites.end(),
                      [](const CallSite *a, const CallSite *b) { return a->at < b->at; });
            const CallSite *kept = nullptr;
            for (const CallSite *site : sites) {
              const bool own = !kept || kept->caller != site->caller ||
                               syncBetween(kept->frames, site->frames);
              if (!own)
                continue;
              kept = site;
              if (site->at != via) {
                out.push_back(out.back());
                out.back().viaCall = site->at;
                // The blocks of one helper that race into the same
                // collective stay one finding at each call (see below).
                if (raceAt)
                  racesInto[out.size() - 1] = raceAt;
              }
            }
          }
        }
        else if (literalBefore)
          out.push_back(finding(n, true, false, false, true));
      } else if (everyWrite && n.kind == Node::Kind::If && writerOnly(n.cond) &&
                 writesFiles(n.kids[0], true)) {
        const bool missBefore = !barrierNear(stack, false, f.key, 0);
        const bool missAfter = !barrierNear(stack, true, f.key, 0);
        if (missBefore || missAfter)
          out.push_back(finding(n, missBefore, missAfter, false, true));
      } else if (n.kind == Node::Kind::If && !stack.empty() &&
                 isMainOnly(Cond::negate(n.cond)) && returnsOnly(n.kids[0])) {
        // `if (rank != 0) return;` makes the rest of the function rank 0's.
        const Frame &fr = stack.back();
        bool w = false;
        for (size_t i = fr.index + 1; i < fr.block->kids.size() && !w; ++i)
          w = writes(fr.block->kids[i]);
        // Nested too when nothing follows the blocks it is in (dinov3's
        // `do_test`: `else: sd = ...; if rank != 0: return; torch.save(...)`):
        // the rest of its block is then the rest of the function.
        bool tail = true;
        for (size_t k = 0; k + 1 < stack.size(); ++k)
          tail = tail && stack[k].index + 1 == stack[k].block->kids.size();
        if (w && ((stack.size() == 1 && (inSyncLoop || syncNear({}, true, f.key, 0))) ||
                  (stack.size() > 1 && tail && !inSyncLoop && syncNear({}, true, f.key, 0)))) {
          bool missBefore = requireBefore && (inSyncLoop || syncNear(stack, false, f.key, 0)) &&
                            !barrierNear(stack, false, f.key, 0);
          bool missAfter = !barrierNear({}, true, f.key, 0);
          if (missBefore || missAfter)
            out.push_back(finding(n, missBefore, missAfter, true));
        }
      }
    };
    std::function<void(const Node &)> visit = [&](const Node &n) {
      if (n.kind == Node::Kind::Block) {
        for (size_t i = 0; i < n.kids.size(); ++i) {
          stack.push_back({&n, i});
          visit(n.kids[i]);
          stack.pop_back();
        }
        return;
      }
      if (syncLoop(n)) {
        ++inSyncLoop;
        visit(n.kids[0]);
        --inSyncLoop;
        return;
      }
      if (!inMainBlock && !mainRest)
        reportAt(n);
      if (n.kind == Node::Kind::If && !stack.empty() && isMainOnly(Cond::negate(n.cond)) &&
          returnsOnly(n.kids[0])) {
        bool tail = true;
        for (size_t k = 0; k + 1 < stack.size(); ++k)
          tail = tail && stack[k].index + 1 == stack[k].block->kids.size();
        mainRest = mainRest || tail;
      }
      if (n.kind == Node::Kind::If && writerOnly(n.cond)) {
        ++inMainBlock;
        visit(n.kids[0]);
        --inMainBlock;
        visit(n.kids[1]);
        return;
      }
      for (const auto &k : n.kids)
        visit(k);
    };
    visit(f.body);
  }
  // Rank-0 blocks whose first search after them ran into the same collective
  // (the Hugging Face Trainer's `_save_checkpoint`: the weights in one arm of
  // save_model's chain, then the optimizer, then the hub copy, each its own
  // rank-0 block, then the next training step): one barrier before that
  // collective orders them all, so one finding, the other blocks as notes,
  // every block's barrier in its one fix.
  if (python) {
    // A block is decided once per specialisation of its function; the one
    // whose search met a collective names it for all.
    // A block's copies for its other calls (another `viaCall`) are fixes
    // of their own and keep their own report.
    std::map<std::pair<Loc, Loc>, const Node *> raceOfSite;
    std::map<Loc, const Node *> raceOfBlock;
    for (const auto &[i, race] : racesInto) {
      raceOfSite.emplace(std::make_pair(out[i].loc, out[i].viaCall), race);
      raceOfBlock.emplace(out[i].loc, race);
    }
    // By the collective they race into and the call that reaches them: one
    // finding per race at each call that is its own fix.
    std::map<std::pair<const Node *, Loc>, size_t> byRace;
    std::vector<Finding> merged;
    for (size_t i = 0; i < out.size(); ++i) {
      Finding &fd = out[i];
      const Node *race = nullptr;
      if (auto r = raceOfSite.find({fd.loc, fd.viaCall}); r != raceOfSite.end())
        race = r->second;
      else if (auto b = raceOfBlock.find(fd.loc); b != raceOfBlock.end() && !fd.viaCall)
        race = b->second;
      const bool after = std::any_of(fd.fixes.begin(), fd.fixes.end(), [](const FixHint &h) {
        return h.kind == FixKind::InsertBarrierAfter;
      });
      if (!race || fd.asNote || !after) {
        merged.push_back(std::move(fd));
        continue;
      }
      auto [it, fresh] = byRace.emplace(std::make_pair(race, fd.viaCall), merged.size());
      if (fresh) {
        merged.push_back(std::move(fd));
        continue;
      }
      Finding &first = merged[it->second];
      if (fd.loc == first.loc && fd.viaCall && first.viaCall && fd.viaCall != first.viaCall) {
        merged.push_back(std::move(fd));
        continue;
      }
      if (fd.loc == first.loc || std::any_of(first.notes.begin(), first.notes.end(),
                                             [&](const Note &k) { return k.loc == fd.loc; }))
        continue;
      // The writer as the block's own message names it.
      const bool perNodeBlock = fd.message.find("each node's local rank 0") != std::string::npos;
      first.notes.emplace_back(fd.loc, std::string(perNodeBlock ? "each node's local rank 0" : "rank 0") +
                                           " also writes files here, with no barrier after it before the "
                                           "same next collective");
      first.notes.insert(first.notes.end(), fd.notes.begin(), fd.notes.end());
      first.fixes.insert(first.fixes.end(), fd.fixes.begin(), fd.fixes.end());
    }
    out = std::move(merged);
  }
  return out;
}

} // namespace

const RuleDefinition Rank0IoBarrier = {NeedPaths, &decide};

} // namespace ddplint::core::rules
