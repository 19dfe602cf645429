// The path engine (PathEngine.h): paths with rank guards, call summaries, and
// the comparison of the collective sequences that different ranks can run.
#include "PathEngine.h"

#include "ddplint/core/Catalog.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <set>
#include <tuple>

namespace ddplint::core::engine {

namespace {

bool evalRank(const Atom &a, std::int64_t r) {
  std::int64_t v = a.mod > 0 ? r % a.mod : r;
  return compare(a.op, v, a.value);
}

std::string describe(const Atom &a, bool pol) {
  std::string t = a.text.empty() ? std::string("the condition") : quoteCode(a.text);
  if (pol)
    return "ranks where " + t + " holds";
  return "ranks where " + t + " does not hold";
}

} // namespace

Tri evalTri(const Cond &c, std::int64_t r) {
  switch (c.kind) {
  case Cond::Kind::Const:
    return c.constValue ? Tri::True : Tri::False;
  case Cond::Kind::RankCmp: {
    Atom a;
    a.op = c.op;
    a.value = c.value;
    a.mod = c.mod;
    return evalRank(a, r) ? Tri::True : Tri::False;
  }
  case Cond::Kind::Atom:
    return Tri::Unknown;
  case Cond::Kind::Not: {
    Tri t = evalTri(c.kids[0], r);
    return t == Tri::Unknown ? t : (t == Tri::True ? Tri::False : Tri::True);
  }
  case Cond::Kind::And: {
    Tri out = Tri::True;
    for (const auto &k : c.kids) {
      Tri t = evalTri(k, r);
      if (t == Tri::False)
        return Tri::False;
      if (t == Tri::Unknown)
        out = Tri::Unknown;
    }
    return out;
  }
  case Cond::Kind::Or: {
    Tri out = Tri::False;
    for (const auto &k : c.kids) {
      Tri t = evalTri(k, r);
      if (t == Tri::True)
        return Tri::True;
      if (t == Tri::Unknown)
        out = Tri::Unknown;
    }
    return out;
  }
  }
  return Tri::Unknown;
}

void collectConstants(const Cond &c, std::set<std::int64_t> &out) {
  if (c.kind == Cond::Kind::RankCmp) {
    for (std::int64_t d = -1; d <= 1; ++d)
      if (c.value + d >= 0)
        out.insert(c.value + d);
    for (std::int64_t i = 0; c.mod > 0 && i < 2 * c.mod && i < 64; ++i)
      out.insert(i);
  }
  for (const auto &k : c.kids)
    collectConstants(k, out);
}

// The decisions a path is still inside: those it has not left yet.
static Conj openLits(const Conj &guard) {
  Conj out;
  for (const Lit &l : guard)
    if (l.closedAt == SIZE_MAX)
      out.push_back(l);
  return out;
}

std::string exitWord(ExitKind k, const std::string &via) {
  if (!via.empty())
    return "exit (" + quoteCode(via) + ")";
  switch (k) {
  case ExitKind::Return: return "return";
  case ExitKind::Break: return "break out of the loop";
  case ExitKind::Continue: return "continue to the next iteration";
  case ExitKind::Throw: return "throw";
  default: return "exit";
  }
}

std::string eventName(const Ev &e) {
  const std::string &op = e.shown.empty() ? e.op : e.shown;
  const auto &setup = builtinApi().collectiveSetupFunctions;
  std::string s = e.kind == EventKind::Barrier
                      ? (op == "barrier" ? std::string("barrier") : "barrier " + quoteCode(op))
                  : std::find(setup.begin(), setup.end(), op) != setup.end()
                      ? quoteCode(op) + " (a call every rank makes together)"
                      : "collective " + quoteCode(op);
  if (!e.via.empty())
    s = "call to " + quoteCode(e.via) + ", which runs " + s + ",";
  return s;
}

PathEngine::PathEngine(const Program &p, AnalysisLimits l) : program(p), limits(l) {
  std::set<std::int64_t> cs = {0, 1, 2, 3};
  std::function<void(const Node &)> visit = [&](const Node &n) {
    if (n.kind == Node::Kind::If)
      collectConstants(n.cond, cs);
    for (const auto &k : n.kids)
      visit(k);
  };
  for (const auto &f : program.functions) {
    byKey_.emplace(f.key, &f);
    visit(f.body);
  }
  reps.assign(cs.begin(), cs.end());
  if (reps.size() > 64)
    reps.resize(64);
}

int PathEngine::intern(const Cond &c) {
  std::string key;
  if (c.kind == Cond::Kind::RankCmp)
    key = "rank%" + std::to_string(c.mod) + "#" + std::to_string(int(c.op)) + "#" +
          std::to_string(c.value);
  else
    key = "atom#" + c.key;
  if (!c.group.empty())
    key += "@" + c.group;
  auto it = atomIndex.find(key);
  if (it != atomIndex.end())
    return it->second;
  Atom a;
  a.kind = c.kind;
  a.op = c.op;
  a.value = c.value;
  a.mod = c.mod;
  a.key = c.key;
  a.dep = c.kind == Cond::Kind::RankCmp ? Dep::Rank : c.dep;
  a.text = c.text;
  a.loc = c.loc;
  a.probesFile = c.probesFile;
  a.errorCheck = c.errorCheck;
  a.sweep = c.sweep;
  a.localMain = c.localMain;
  a.invariant = c.invariant;
  a.group = c.group;
  atoms.push_back(a);
  atomIndex[key] = int(atoms.size()) - 1;
  return int(atoms.size()) - 1;
}

std::vector<Conj> PathEngine::dnf(const Cond &c, bool pol) {
  switch (c.kind) {
  case Cond::Kind::Const:
    return (c.constValue == pol) ? std::vector<Conj>{Conj{}} : std::vector<Conj>{};
  case Cond::Kind::RankCmp:
  case Cond::Kind::Atom: {
    Cond leaf = c;
    if (leaf.text.empty())
      leaf.text = c.text;
    texts.push_back(c.text);
    return {Conj{Lit{intern(leaf), pol, c.loc, int(texts.size()) - 1}}};
  }
  case Cond::Kind::Not: {
    std::vector<Conj> out = dnf(c.kids[0], !pol);
    // `not X` spelled as a whole by the user's text: the literal of X says
    // "holds" where that text does not.
    const Cond &k = c.kids[0];
    if (!c.text.empty() && (k.kind == Cond::Kind::Atom || k.kind == Cond::Kind::RankCmp) && k.text == c.text)
      for (auto &conj : out)
        for (auto &l : conj)
          if (l.text >= 0 && texts[size_t(l.text)] == c.text)
            l.spelledNegated = true;
    return out;
  }
  case Cond::Kind::And:
  case Cond::Kind::Or: {
    bool conj = (c.kind == Cond::Kind::And) == pol;
    if (!conj) {
      std::vector<Conj> out;
      for (const auto &k : c.kids)
        for (auto &d : dnf(k, pol))
          if (out.size() < 16)
            out.push_back(std::move(d));
          else
            limitReached(Limit::ConditionCases, 16);
      return out;
    }
    std::vector<Conj> acc{Conj{}};
    for (const auto &k : c.kids) {
      std::vector<Conj> next;
      for (const auto &a : acc)
        for (const auto &b : dnf(k, pol)) {
          Conj m = a;
          m.insert(m.end(), b.begin(), b.end());
          if (next.size() < 16)
            next.push_back(std::move(m));
          else
            limitReached(Limit::ConditionCases, 16);
        }
      acc = std::move(next);
    }
    return acc;
  }
  }
  return {Conj{}};
}

bool PathEngine::selfConsistent(const Conj &g) {
  for (size_t i = 0; i < g.size(); ++i)
    for (size_t j = i + 1; j < g.size(); ++j)
      if (g[i].atom == g[j].atom && g[i].pol != g[j].pol)
        return false;
  return !rankSet(g).empty();
}

std::vector<std::int64_t> PathEngine::rankSet(const Conj &g) {
  std::vector<std::int64_t> out;
  for (auto r : reps) {
    bool ok = true;
    for (const auto &l : g)
      if (atoms[l.atom].kind == Cond::Kind::RankCmp && evalRank(atoms[l.atom], r) != l.pol) {
        ok = false;
        break;
      }
    if (ok)
      out.push_back(r);
  }
  return out;
}

bool PathEngine::hasOpaqueRank(const Conj &g) {
  for (const auto &l : g)
    if (atoms[l.atom].kind == Cond::Kind::Atom && atoms[l.atom].dep == Dep::Rank)
      return true;
  return false;
}

bool PathEngine::probesFile(const Conj &g) {
  for (const auto &l : g)
    if (atoms[l.atom].probesFile)
      return true;
  return false;
}

bool PathEngine::separatedBy(const Conj &a, const Conj &b) {
  for (const auto &l : a) {
    if (atoms[l.atom].dep == Dep::Uniform)
      continue;
    bool shared = false;
    for (const auto &m : b)
      shared = shared || m == l;
    if (!shared)
      return true;
  }
  return false;
}

bool PathEngine::pairFeasible(const Conj &p, const Conj &q) {
  // Paths that differ only in uniform decisions (argument parsing, a
  // configuration flag) are never taken by two ranks of one run.
  if (!separatedBy(p, q) && !separatedBy(q, p))
    return false;
  for (const auto &a : p)
    for (const auto &b : q)
      if (a.atom == b.atom && a.pol != b.pol && atoms[a.atom].dep == Dep::Uniform)
        return false;
  auto s1 = rankSet(p), s2 = rankSet(q);
  if (s1.empty() || s2.empty())
    return false;
  return !(s1.size() == 1 && s2.size() == 1 && s1[0] == s2[0]);
}

bool PathEngine::relevant(const Node &n) {
  switch (n.kind) {
  case Node::Kind::Event:
  case Node::Kind::Call:
  case Node::Kind::Exit:
    return true;
  default:
    break;
  }
  return anyKid(n, relevance, &PathEngine::relevant);
}

// Whether `test` holds for some child of a block, if or loop, memoised per node.
bool PathEngine::anyKid(const Node &n, std::map<const Node *, bool> &memo,
                        bool (PathEngine::*test)(const Node &)) {
  auto it = memo.find(&n);
  if (it != memo.end())
    return it->second;
  bool r = false;
  for (const auto &k : n.kids)
    r = r || (this->*test)(k);
  memo[&n] = r;
  return r;
}

bool PathEngine::plainUniform(const Cond &c) {
  switch (c.kind) {
  case Cond::Kind::Const:
    return true;
  case Cond::Kind::RankCmp:
    return false;
  case Cond::Kind::Atom:
    return c.dep == Dep::Uniform && !c.probesFile && !c.errorCheck && !c.sweep && !c.localMain;
  default:
    for (const auto &k : c.kids)
      if (!plainUniform(k))
        return false;
    return true;
  }
}

bool PathEngine::holdsSync(const Node &n) {
  switch (n.kind) {
  case Node::Kind::Event:
    return n.event == EventKind::Collective || n.event == EventKind::Barrier;
  case Node::Kind::Exit:
    return true;
  case Node::Kind::Call: {
    if (n.callee.empty())
      return false;
    const FnResult *callee = analyze(n.callee);
    // A callee still being analysed (recursion) may hold anything.
    return !callee || callee->running || !callee->summary.empty() || callee->alwaysTerminates ||
           callee->alwaysThrows;
  }
  default:
    break;
  }
  return anyKid(n, syncRelevance, &PathEngine::holdsSync);
}

bool PathEngine::foldable(const Node &ifNode) {
  return plainUniform(ifNode.cond) && !holdsSync(ifNode.kids[0]) && !holdsSync(ifNode.kids[1]);
}

bool PathEngine::sameEvents(const Path &a, const Path &b) {
  if (a.exit != b.exit || a.seq.size() != b.seq.size())
    return false;
  for (size_t i = 0; i < a.seq.size(); ++i)
    if (a.seq[i].op != b.seq[i].op || a.seq[i].loc != b.seq[i].loc)
      return false;
  return true;
}

void PathEngine::mergeUniform(std::vector<Path> &paths) {
  bool merged = true;
  while (merged && paths.size() > 1) {
    merged = false;
    for (size_t i = 0; i < paths.size(); ++i)
      for (size_t j = i + 1; j < paths.size(); ++j) {
        const Conj &a = paths[i].guard, &b = paths[j].guard;
        if (a.size() != b.size() || !sameEvents(paths[i], paths[j]))
          continue;
        size_t diff = a.size();
        bool ok = true;
        for (size_t k = 0; k < a.size() && ok; ++k) {
          if (a[k] == b[k])
            continue;
          if (diff == a.size() && a[k].atom == b[k].atom &&
              atoms[a[k].atom].dep == Dep::Uniform)
            diff = k;
          else
            ok = false;
        }
        if (!ok || diff == a.size())
          continue;
        paths[i].guard.erase(paths[i].guard.begin() + long(diff));
        for (auto &e : paths[i].seq)
          if (e.guardLen > diff)
            --e.guardLen;
        paths.erase(paths.begin() + long(j));
        --j;
        merged = true;
      }
  }
}

void PathEngine::mergeLeftUniform(std::vector<Path> &paths) {
  // Paths alike in their events, their exit and their rank decisions, that
  // differ only in uniform decisions they have left (`if cfg.a: if cfg.b:
  // sys.exit()` leaves (a, not b) and (not a) alive, alike on every rank),
  // are one path whose guard is what they share.  That guard admits more
  // configurations than each did, so a path of other ranks that tests a
  // dropped decision could pair with one it excludes: such groups stay apart.
  auto isUniform = [&](const Lit &l) { return atoms[l.atom].dep == Dep::Uniform; };
  // Grouped by a hash of what must be alike, then compared in full: a
  // string key spelling every event made gigabytes of keys for a long
  // function's paths (FasterTransformer's ParallelGpt::forward).
  auto rankLits = [&](const Path &p) {
    Conj r;
    for (const Lit &l : p.guard)
      if (!isUniform(l))
        r.push_back(l);
    return r;
  };
  auto sameLits = [](const Conj &x, const Conj &y) {
    if (x.size() != y.size())
      return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].atom != y[i].atom || x[i].pol != y[i].pol)
        return false;
    return true;
  };
  auto alike = [&](const Path &x, const Path &y) {
    if (x.exit != y.exit || x.exitLoc != y.exitLoc || x.exitVia != y.exitVia ||
        x.uniformExit != y.uniformExit || x.seq.size() != y.seq.size() ||
        !sameLits(x.exitGuard, y.exitGuard) || !sameLits(rankLits(x), rankLits(y)))
      return false;
    for (size_t i = 0; i < x.seq.size(); ++i)
      if (x.seq[i].loc != y.seq[i].loc || x.seq[i].op != y.seq[i].op)
        return false;
    return true;
  };
  auto hashOf = [&](const Path &p) {
    size_t h = std::hash<std::string>{}(p.exitVia);
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(size_t(p.exit));
    mix(size_t(p.exitLoc));
    mix(size_t(p.uniformExit));
    for (const Lit &l : p.exitGuard)
      mix(size_t(l.atom) * 2 + l.pol);
    mix(0x5bd1e995);
    for (const Lit &l : p.guard)
      if (!isUniform(l))
        mix(size_t(l.atom) * 2 + l.pol);
    for (const auto &e : p.seq) {
      mix(std::hash<std::string>{}(e.op));
      mix(size_t(e.loc));
    }
    return h;
  };
  // Groups in the order of their first path.
  std::vector<std::vector<size_t>> groupList;
  std::unordered_map<size_t, std::vector<size_t>> byHash; // hash -> indices into groupList
  for (size_t i = 0; i < paths.size(); ++i) {
    auto &candidates = byHash[hashOf(paths[i])];
    bool placed = false;
    for (size_t g : candidates)
      if (alike(paths[groupList[g][0]], paths[i])) {
        groupList[g].push_back(i);
        placed = true;
        break;
      }
    if (!placed) {
      candidates.push_back(groupList.size());
      groupList.push_back({i});
    }
  }
  std::vector<bool> gone(paths.size(), false);
  for (auto &members : groupList) {
    if (members.size() < 2)
      continue;
    // What every member shares, by (atom, polarity); the rest is dropped.
    const Conj &first = paths[members[0]].guard;
    std::set<int> dropped;
    Conj keep;
    for (const Lit &l : first) {
      bool everywhere = true;
      for (size_t m : members)
        everywhere = everywhere && std::find(paths[m].guard.begin(), paths[m].guard.end(), l) !=
                                       paths[m].guard.end();
      if (everywhere || !isUniform(l))
        keep.push_back(l);
    }
    bool ok = true;
    for (size_t m : members)
      for (const Lit &l : paths[m].guard)
        if (std::find(keep.begin(), keep.end(), l) == keep.end()) {
          // Still open: it encloses what the path does next.
          ok = ok && l.closedAt != SIZE_MAX;
          dropped.insert(l.atom);
        }
    if (!ok || dropped.empty())
      continue;
    Conj ranks;
    for (const Lit &l : keep)
      if (!isUniform(l))
        ranks.push_back(l);
    for (size_t q = 0; q < paths.size() && ok; ++q) {
      if (std::find(members.begin(), members.end(), q) != members.end())
        continue;
      Conj theirs;
      bool tests = false;
      for (const Lit &l : paths[q].guard) {
        if (!isUniform(l))
          theirs.push_back(l);
        tests = tests || dropped.count(l.atom);
      }
      ok = !(tests && theirs != ranks);
    }
    if (!ok)
      continue;
    Path &kept = paths[members[0]];
    std::vector<size_t> cut;
    for (size_t k = 0; k < kept.guard.size(); ++k)
      if (std::find(keep.begin(), keep.end(), kept.guard[k]) == keep.end())
        cut.push_back(k);
    for (auto &e : kept.seq) {
      size_t before = 0;
      for (size_t k : cut)
        before += k < e.guardLen;
      e.guardLen -= before;
    }
    Conj g;
    for (size_t k = 0; k < kept.guard.size(); ++k)
      if (std::find(cut.begin(), cut.end(), k) == cut.end())
        g.push_back(kept.guard[k]);
    kept.guard = std::move(g);
    for (size_t i = 1; i < members.size(); ++i)
      gone[members[i]] = true;
  }
  size_t w = 0;
  for (size_t i = 0; i < paths.size(); ++i)
    if (!gone[i]) {
      if (w != i)
        paths[w] = std::move(paths[i]);
      ++w;
    }
  paths.resize(w);
}

void PathEngine::cap(std::vector<Path> &paths, std::size_t max) {
  // Long paths count against memory, not only many: fewer are kept when
  // together they hold more events than the budget.
  size_t events = 0;
  for (const Path &p : paths)
    events += p.seq.size();
  const bool heavy = events > limits.maxPathEvents && paths.size() > 1;
  if (heavy)
    max = std::min(max, std::max<size_t>(1, limits.maxPathEvents / (events / paths.size() + 1)));
  if (paths.size() <= max)
    return;
  // Before any path is dropped, fold the uniform decisions the paths have
  // left behind: ten config checks that each may `sys.exit()` before the
  // training loop are 1,024 paths that all go on alike.
  mergeLeftUniform(paths);
  if (paths.size() <= max)
    return;
  // Where the events decided how many stay, say so: the path limit's message
  // names the 512 it keeps, and fewer are kept here.
  limitReached(heavy ? Limit::PathEvents : Limit::Paths, heavy ? events : paths.size());
  // Dropping paths never invents a divergence; dropping every path of one
  // class of ranks would hide one.  Round robin over the rank decisions.
  std::map<std::vector<std::pair<int, bool>>, std::vector<size_t>> byRanks;
  std::vector<std::vector<size_t> *> order;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::vector<std::pair<int, bool>> key;
    for (const Lit &l : paths[i].guard)
      if (atoms[l.atom].dep != Dep::Uniform)
        key.emplace_back(l.atom, l.pol);
    auto [it, fresh] = byRanks.try_emplace(std::move(key));
    if (fresh)
      order.push_back(&it->second);
    it->second.push_back(i);
  }
  std::vector<bool> keep(paths.size(), false);
  size_t kept = 0;
  for (size_t round = 0; kept < max; ++round) {
    bool any = false;
    for (auto *group : order)
      if (round < group->size() && kept < max) {
        keep[(*group)[round]] = true;
        ++kept;
        any = true;
      }
    if (!any)
      break;
  }
  std::vector<Path> out;
  out.reserve(max);
  for (size_t i = 0; i < paths.size(); ++i)
    if (keep[i])
      out.push_back(std::move(paths[i]));
  paths = std::move(out);
}

void PathEngine::limitReached(Limit kind, std::size_t count) {
  const std::string key = fnStack.empty() ? std::string() : fnStack.back();
  if (!noticed.emplace(key, kind).second)
    return;
  const Function *fn = function(key);
  AnalysisNotice n;
  n.loc = fn ? fn->loc : 0;
  n.function = fn ? fn->name : key;
  const std::string name = quoteCode(n.function);
  switch (kind) {
  case Limit::Paths:
    n.message = std::string(kAnalysisLimitPrefix) + name + " has more than " + std::to_string(limits.maxPaths) +
 " paths through its branches; the analysis kept " + std::to_string(limits.maxPaths) +
                ", spread over the rank decisions, so a divergence, or a write every rank makes, on a path left out is not "
                "reported; code moved into functions of its own is analysed once per call";
    break;
  case Limit::PathEvents:
    n.message = std::string(kAnalysisLimitPrefix) + name + " has paths that together hold more than " +
                std::to_string(limits.maxPathEvents) +
                " calls and collectives; the analysis kept fewer paths, spread over the rank decisions, so "
                "a divergence, or a write every rank makes, on a path left out is not reported; code moved "
                "into functions of its own is analysed once per call";
    break;
  case Limit::CompareWindow:
    n.message = std::string(kAnalysisLimitPrefix) + "in " + name + " two paths agree on their first collectives "
                "and then differ in more than " + std::to_string(count) +
                " more; only those were compared, so a later divergence is not reported";
    break;
  case Limit::CallDepth:
    n.message = std::string(kAnalysisLimitPrefix) + "calls from " + name + " go deeper than " +
                std::to_string(limits.maxCallDepth) +
                " functions; the collectives of the deeper callees are not counted";
    break;
  case Limit::ConditionCases:
    n.message = std::string(kAnalysisLimitPrefix) + "a condition in " + name + " has more than " +
                std::to_string(count) + " cases; only those were followed";
    break;
  }
  notices.push_back(std::move(n));
}

// Call sites and IO inside a loop, for interprocedural IO reasoning, with the
// body's own guard: a rank-0 save in an epoch loop is guarded.  Only the
// decisions taken before each event count (a guard later in the body, `if
// local_rank == 0:` after an unguarded save, does not cover it), and of those
// only the ones its readers weigh: the rank tests and file probes that `reach`
// reads, and, at a call, the named settings `enteredGiven` matches.  A body of
// many uniform branches (a 1,500-line solver set-up) would otherwise carry
// each event once per body path, and every path after the loop would copy
// them all.  Two guards that differ only in one test's arm are the guard
// without it: the event is reached whichever way the test goes.
void PathEngine::carry(LoopResult &lr) {
  using Key = std::vector<std::pair<int, bool>>;
  auto weighed = [&](const Lit &l, bool call) {
    const Atom &a = atoms[l.atom];
    return a.kind == Cond::Kind::RankCmp || a.probesFile || a.dep != Dep::Uniform ||
           (call && a.kind == Cond::Kind::Atom && !a.text.empty());
  };
  // Each variant keeps the place of its first appearance, so the carried
  // events keep the body's order.
  std::map<std::tuple<const Node *, Loc, std::string>, std::map<Key, std::pair<size_t, Ev>>> groups;
  size_t seen = 0;
  for (const auto &bp : lr.bodyPaths)
    for (const auto &e : bp.seq) {
      if (!e.isCall && e.sync())
        continue;
      const size_t before = std::min(e.guardLen, bp.guard.size());
      // An event an inner loop carried out keeps the guard it had there.
      Conj kept;
      Key key;
      auto keep = [&](const Lit &l) {
        if (!weighed(l, e.isCall) ||
            std::find(key.begin(), key.end(), std::make_pair(l.atom, l.pol)) != key.end())
          return;
        kept.push_back(l);
        key.emplace_back(l.atom, l.pol);
      };
      for (size_t i = 0; i < before; ++i)
        keep(bp.guard[i]);
      for (const Lit &l : e.inLoop)
        keep(l);
      std::sort(key.begin(), key.end());
      auto &variants = groups[std::make_tuple(e.node, e.loc, e.via)];
      if (variants.count(key))
        continue;
      Ev c = e;
      c.inLoop = std::move(kept);
      variants.emplace(std::move(key), std::make_pair(seen++, std::move(c)));
    }
  std::vector<std::pair<size_t, Ev>> out;
  for (auto &[id, variants] : groups) {
    // One merge at a time: a merge erases the two entries it read.
    auto mergeOne = [&]() {
      for (auto it = variants.begin(); it != variants.end(); ++it)
        for (size_t i = 0; i < it->first.size(); ++i) {
          Key flipped = it->first;
          flipped[i].second = !flipped[i].second;
          std::sort(flipped.begin(), flipped.end());
          auto other = variants.find(flipped);
          if (other == variants.end())
            continue;
          const int atom = it->first[i].first;
          Key without = it->first;
          without.erase(without.begin() + long(i));
          auto merged = std::make_pair(std::min(it->second.first, other->second.first), it->second.second);
          auto &g = merged.second.inLoop;
          g.erase(std::remove_if(g.begin(), g.end(), [&](const Lit &l) { return l.atom == atom; }), g.end());
          variants.erase(other);
          variants.erase(it);
          auto [at, fresh] = variants.try_emplace(std::move(without), merged);
          if (!fresh)
            at->second.first = std::min(at->second.first, merged.first);
          return true;
        }
      return false;
    };
    while (variants.size() > 1 && mergeOne()) {
    }
    for (auto &[key, c] : variants)
      out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &[at, c] : out)
    lr.carried.push_back(std::move(c));
}

std::vector<Path> PathEngine::walk(const Node &n, std::vector<Path> in) {
  switch (n.kind) {
  case Node::Kind::Block:
    for (const auto &k : n.kids)
      in = walk(k, std::move(in));
    return in;
  case Node::Kind::Event: {
    Ev e;
    e.kind = n.event;
    e.op = n.name;
    e.standsInFor = n.standsInFor;
    e.loc = n.loc;
    e.node = &n;
    if (!n.group.empty())
      e.group = &n.group;
    for (auto &p : in)
      if (live(p)) {
        e.guardLen = p.guard.size();
        e.at = p.seq.size();
        p.seq.push_back(e);
      }
    return in;
  }
  case Node::Kind::Call: {
    FnResult *callee = n.callee.empty() ? nullptr : analyze(n.callee);
    // The function itself, or a variant of it specialised on its arguments
    // (`valid_step{raise_oom=1}` called from `valid_step{raise_oom=0}`).
    auto base = [](const std::string &k) { return k.substr(0, k.find('{')); };
    const bool recursive = !n.callee.empty() && !fnStack.empty() && base(fnStack.back()) == base(n.callee);
    Ev site;
    site.isCall = true;
    site.op = n.callee;
    site.loc = n.loc;
    site.node = &n;
    std::vector<Path> leaving;
    for (auto &p : in) {
      if (!live(p))
        continue;
      site.guardLen = p.guard.size();
      site.at = p.seq.size();
      p.seq.push_back(site);
      p.retries = p.retries || recursive;
      if (callee) {
        for (Ev e : callee->summary) {
          // Reported at this call, so named by it: the call the reader sees
          // on the line, not the helper deeper down that issues the event.
          e.via = n.name;
          e.loc = n.loc;
          if (!n.group.empty())
            e.group = &n.group; // the caller's name for the communicator it hands on
          e.guardLen = p.guard.size();
          e.at = p.seq.size();
          p.seq.push_back(e);
        }
        if (callee->alwaysTerminates) {
          p.exit = ExitKind::Terminate;
          p.exitVia.clear();
          p.exitGuard = openLits(p.guard);
        } else if (callee->alwaysThrows) {
          p.exit = ExitKind::Throw;
          p.exitLoc = n.loc;
          p.exitVia = callee->throwsVia;
          p.exitGuard = openLits(p.guard);
        } else if (!callee->exitsAfter.empty()) {
          Path q = p;
          q.guard.insert(q.guard.end(), callee->exitsAfter.begin(), callee->exitsAfter.end());
          if (selfConsistent(q.guard)) {
            q.exitGuard = openLits(q.guard);
            q.exit = callee->exitsAfterKind;
            q.exitLoc = n.loc;
            q.exitVia = callee->exitsAfterVia;
            leaving.push_back(std::move(q));
          }
        }
      }
    }
    for (auto &q : leaving)
      in.push_back(std::move(q));
    return in;
  }
  case Node::Kind::Exit:
    for (auto &p : in)
      if (live(p)) {
        p.exit = n.exit;
        p.exitLoc = n.loc;
        p.exitVia = n.name;
        if (n.exit == ExitKind::Throw || n.exit == ExitKind::Terminate)
          p.exitGuard = openLits(p.guard);
        if (n.exit == ExitKind::Return || n.exit == ExitKind::Break ||
            n.exit == ExitKind::Continue) {
          p.leavesUnderSet = true;
          p.leavesUnder = openLits(p.guard);
        }
      }
    return in;
  case Node::Kind::If: {
    if (!relevant(n))
      return in; // no event, call or exit in either arm: it cannot matter
    if (foldable(n))
      return walk(n.kids[1], walk(n.kids[0], std::move(in)));
    std::vector<Path> out, thenIn, elseIn;
    auto tConj = dnf(n.cond, true), eConj = dnf(n.cond, false);
    for (auto &p : in) {
      if (!live(p)) {
        out.push_back(std::move(p));
        continue;
      }
      for (const auto &c : tConj) {
        Path q = p;
        for (Lit l : c) {
          l.from = &n;
          q.guard.push_back(l);
        }
        if (selfConsistent(q.guard))
          thenIn.push_back(std::move(q));
      }
      for (const auto &c : eConj) {
        Path q = p;
        for (Lit l : c) {
          l.from = &n;
          q.guard.push_back(l);
        }
        if (selfConsistent(q.guard))
          elseIn.push_back(std::move(q));
      }
    }
    // A condition with several cases (`a || b`) multiplies the paths that
    // enter an arm; nested, that compounds before any arm's result is capped.
    cap(thenIn);
    cap(elseIn);
    auto t = walk(n.kids[0], std::move(thenIn));
    auto e = walk(n.kids[1], std::move(elseIn));
    for (auto *arm : {&t, &e})
      for (auto &p : *arm)
        for (auto &l : p.guard)
          if (l.from == &n && l.closedAt == SIZE_MAX)
            l.closedAt = p.seq.size();
    // Cap each arm to half, so an overflow never drops a whole arm.
    const size_t half = limits.maxPaths / 2;
    if (t.size() + e.size() > limits.maxPaths) {
      if (t.size() > half && e.size() > half) {
        cap(t, half);
        cap(e, half);
      } else if (t.size() > half) {
        cap(t, limits.maxPaths - e.size());
      } else {
        cap(e, limits.maxPaths - t.size());
      }
    }
    out.insert(out.end(), std::make_move_iterator(t.begin()), std::make_move_iterator(t.end()));
    out.insert(out.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));
    mergeUniform(out);
    cap(out);
    return out;
  }
  case Node::Kind::Loop: {
    if (!loops.count(&n)) {
      bool any = false, single = true;
      for (const auto &p : in)
        if (live(p)) {
          any = true;
          single = single && rankSet(p.guard).size() <= 1;
        }
      if (any && single)
        singleRankLoops.insert(&n);
    }
    LoopResult &lr = analyzeLoop(n);
    // The settings some path decided before the loop: a path that left one
    // of them open (an `or` took it another way) meets the others only
    // under the same setting. Built on the first path with several ways.
    std::optional<std::set<int>> decidedBefore;
    auto decidedByAnother = [&](int atom) {
      if (!decidedBefore) {
        decidedBefore.emplace();
        for (const auto &q : in)
          if (live(q))
            for (const Lit &l : q.guard)
              if (atoms[l.atom].dep == Dep::Uniform)
                decidedBefore->insert(l.atom);
      }
      return decidedBefore->count(atom) > 0;
    };
    std::vector<Path> out;
    for (auto &p : in) {
      if (!live(p)) {
        out.push_back(std::move(p));
        continue;
      }
      if (!lr.carriedReady) {
        carry(lr);
        lr.carriedReady = true;
      }
      // An iteration for each way of the settings this path has not
      // decided: a path that left `zero3` open before the loop (`if not
      // zero3 or rank == 0:`) runs the body's `if zero3: barrier()` on some
      // configurations and not on others, and each must meet the other
      // ranks' iteration under the same setting.
      std::vector<std::pair<const std::vector<Lit> *, const std::vector<Ev> *>> ways;
      if (!lr.bySettings.empty()) {
        auto contradicts = [&](const std::vector<Lit> &settings) {
          for (const auto &l : settings)
            for (const auto &m : p.guard)
              if (m.atom == l.atom && m.pol != l.pol)
                return true;
          return false;
        };
        auto sameSymbol = [](const std::vector<Ev> &a, const std::vector<Ev> &b) {
          if (a.size() != b.size())
            return false;
          for (size_t i = 0; i < a.size(); ++i)
            if (a[i].op != b[i].op)
              return false;
          return true;
        };
        // Iterations alike in their settings differ by a rank decision
        // inside the body, which the loop's own comparison reports: only a
        // configuration that excludes every one taken so far is another way.
        auto excludes = [](const std::vector<Lit> &a, const std::vector<Lit> &b) {
          for (const auto &l : a)
            for (const auto &m : b)
              if (l.atom == m.atom && l.pol != m.pol)
                return true;
          return false;
        };
        for (const auto &[settings, sym] : lr.bySettings) {
          if (contradicts(settings))
            continue;
          bool known = false;
          for (const auto &w : ways)
            known = known || sameSymbol(*w.second, sym) || !excludes(*w.first, settings);
          if (!known)
            ways.emplace_back(&settings, &sym);
        }
      }
      if (ways.empty())
        ways.emplace_back(nullptr, &lr.symbol);
      // Beyond a few, the first stands for all (as before the split); and
      // only a setting that another path decided before the loop splits this
      // one (settings first tested in the body are compared by the body's
      // own paths).
      auto decides = [&p](int atom) {
        for (const auto &m : p.guard)
          if (m.atom == atom)
            return true;
        return false;
      };
      bool openHere = false;
      if (ways.size() > 1)
        for (const auto &w : ways)
          for (const Lit &l : *w.first)
            openHere = openHere || (!decides(l.atom) && decidedByAnother(l.atom));
      if (ways.size() > 4 || !openHere)
        ways.resize(1);
      const bool split = ways.size() > 1;
      for (const auto &[settings, symbol] : ways) {
        Path normal = p;
        if (split)
          for (Lit l : *settings) {
            if (decides(l.atom))
              continue;
            l.closedAt = SIZE_MAX;
            normal.guard.push_back(l);
          }
        for (Ev e : *symbol) {
          e.guardLen = normal.guard.size();
          e.at = normal.seq.size();
          normal.seq.push_back(e);
        }
        // The decisions that led to the loop cover what it carries: a save in a
        // loop under `if rank == 0:` in an outer loop's body is rank 0's.
        for (Ev c : lr.carried) {
          c.guardLen = p.guard.size();
          c.at = normal.seq.size();
          normal.seq.push_back(std::move(c));
        }
        out.push_back(std::move(normal));
      }
      if (loopsReported.count(&n))
        continue; // the loop's own finding covers its early exits
      for (const auto &bp : lr.bodyPaths) {
        if (bp.exit != ExitKind::Return && bp.exit != ExitKind::Throw &&
            bp.exit != ExitKind::Terminate)
          continue;
        Path q = p;
        for (Lit l : bp.guard) {
          l.closedAt = SIZE_MAX; // counted on the body's path, not this one
          q.guard.push_back(l);
        }
        if (!selfConsistent(q.guard))
          continue;
        for (Ev e : lr.symbol) {
          e.at = q.seq.size();
          q.seq.push_back(std::move(e));
        }
        q.exit = bp.exit;
        q.exitLoc = bp.exitLoc; // the finding is placed at the exit, not at the next collective
        q.exitVia = bp.exitVia;
        // What encloses the loop encloses its exit, with what enclosed it in the body.
        q.exitGuard = openLits(p.guard);
        q.exitGuard.insert(q.exitGuard.end(), bp.exitGuard.begin(), bp.exitGuard.end());
        if (bp.leavesUnderSet) {
          q.leavesUnderSet = true;
          q.leavesUnder = p.guard;
          q.leavesUnder.insert(q.leavesUnder.end(), bp.leavesUnder.begin(), bp.leavesUnder.end());
        }
        q.uniformExit = n.trip == Dep::Uniform;
        for (const auto &l : bp.guard)
          q.uniformExit = q.uniformExit && atoms[l.atom].dep == Dep::Uniform;
        out.push_back(std::move(q));
      }
    }
    cap(out);
    return out;
  }
  }
  return in;
}

std::vector<Ev> PathEngine::syncOnly(const std::vector<Ev> &seq) {
  std::vector<Ev> out;
  for (const auto &e : seq)
    if (e.sync())
      out.push_back(e);
  // A collective that stands in for the next one (a DDP forward under
  // no_grad before the next training forward) is that one, issued early:
  // the later one then issues nothing.  Kept where something else, or
  // nothing, comes next (a rank-0 evaluation after the last step).
  const std::string *next = nullptr;
  std::vector<bool> keep(out.size(), true);
  for (size_t i = out.size(); i-- > 0;) {
    if (next && !out[i].standsInFor.empty() && out[i].standsInFor == *next) {
      keep[i] = false;
      continue;
    }
    next = &out[i].headOp();
  }
  if (std::find(keep.begin(), keep.end(), false) == keep.end())
    return out;
  std::vector<Ev> kept;
  for (size_t i = 0; i < out.size(); ++i)
    if (keep[i])
      kept.push_back(std::move(out[i]));
  return kept;
}

bool PathEngine::barriersOnly(const std::vector<Ev> &seq) {
  for (const auto &e : seq)
    if (e.kind != EventKind::Barrier)
      return false;
  return true;
}

long PathEngine::firstDiff(const std::vector<Ev> &a, const std::vector<Ev> &b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (a[i].op != b[i].op)
      return long(i);
  return a.size() == b.size() ? -1 : long(n);
}

const Lit *PathEngine::separating(const Path &p, const Path &q) {
  for (const auto &l : p.guard) {
    if (atoms[l.atom].dep == Dep::Uniform)
      continue;
    bool same = false;
    for (const auto &m : q.guard)
      if (m == l)
        same = true;
    if (!same)
      return &l;
  }
  return nullptr;
}

std::string PathEngine::who(const Lit *l) const {
  if (!l)
    return "some ranks";
  Atom spelled = atoms[l->atom];
  if (l->text >= 0 && !texts[size_t(l->text)].empty())
    spelled.text = texts[size_t(l->text)];
  std::string d = describe(spelled, l->spelledNegated ? !l->pol : l->pol);
  if (atoms[l->atom].dep == Dep::Local)
    d += " (a rank-local value)";
  return d;
}

std::string PathEngine::spelling(const Lit &l) const {
  return l.text >= 0 && !texts[size_t(l.text)].empty() ? texts[size_t(l.text)]
                                                      : atoms[l.atom].text;
}

Loc PathEngine::condLoc(const Lit &l) const { return l.loc ? l.loc : atoms[l.atom].loc; }

void PathEngine::reportErrorExit(const Lit *l, const Ev &e, const Path &skips) {
  const std::string fn = fnStack.empty() ? std::string() : fnStack.back();
  if (!errorExitFns.insert(fn).second)
    return;
  Divergence d;
  d.kind = Divergence::Kind::ErrorExit;
  d.event = e;
  d.hasLit = true;
  d.lit = *l;
  d.exit = skips.exit;
  d.exitLoc = skips.exitLoc;
  d.exitVia = skips.exitVia;
  errorExits.push_back(std::move(d));
}

void PathEngine::report(Divergence d, const Lit *split) {
  if (d.event.loc == 0 || reportedAt.count(d.event.loc))
    return;
  // A collective on one group under a test of another group's rank
  // (FasterTransformer's `if (pipeline_para_.rank_ == last) allgather(...,
  // tensor_para_)`): whether the test splits the collective's members depends
  // on how the groups were carved from the world, which is not known here
  // (the tensor-parallel group of one pipeline stage all share its rank).
  if (const Lit *l = d.hasLit ? &d.lit : split;
      l && d.event.group && !atoms[l->atom].group.empty() && atoms[l->atom].group != *d.event.group)
    return;
  if (isErrorCheck(split))
    return; // an error path, reported by ddp-error-path-exit
  Loc s = split ? (split->loc ? split->loc : atoms[split->atom].loc) : 0;
  if (s && reportedSplits.count(s))
    return;
  reportedAt.insert(d.event.loc);
  if (s)
    reportedSplits.insert(s);
  if (split && !d.hasLit) {
    d.hasLit = true;
    d.lit = *split;
  }
  divergences.push_back(std::move(d));
}

const Lit *PathEngine::splitLit(const Path &p, const Path &q) {
  size_t n = std::min(p.guard.size(), q.guard.size());
  for (size_t k = 0; k < n; ++k)
    if (!(p.guard[k] == q.guard[k]))
      return atoms[p.guard[k].atom].dep == Dep::Uniform ? separating(p, q) : &p.guard[k];
  return separating(p, q);
}

const Lit *PathEngine::innermost(const Path &p, const Path &q, size_t len, size_t at) {
  len = std::min(len, p.guard.size());
  for (size_t k = len; k-- > 0;) {
    const Lit &l = p.guard[k];
    if (atoms[l.atom].dep == Dep::Uniform || l.closedAt <= at)
      continue;
    bool shared = false;
    for (const auto &m : q.guard)
      shared = shared || (m == l && m.loc == l.loc);
    if (!shared)
      return &l;
  }
  return splitLit(p, q);
}

// The last rank-dependent decision that still encloses where the path
// leaves; one the path had closed before it (a rank-0 print) is not why it
// leaves.
const Lit *PathEngine::leavingLit(const Path &p) {
  // A throw: the rank decisions that enclose it (a sampled mask the path
  // left before it does not decide who throws).
  const bool throws = p.exit == ExitKind::Throw || p.exit == ExitKind::Terminate;
  if (!p.leavesUnderSet && !throws)
    return lastLit(p);
  const Conj &enclosing = p.leavesUnderSet ? p.leavesUnder : p.exitGuard;
  for (auto it = p.guard.rbegin(); it != p.guard.rend(); ++it) {
    if (atoms[it->atom].dep == Dep::Uniform)
      continue;
    for (const Lit &m : enclosing)
      if (m.atom == it->atom && m.pol == it->pol && m.loc == it->loc)
        return &*it;
  }
  return nullptr;
}

const Lit *PathEngine::lastLit(const Path &p) {
  for (auto it = p.guard.rbegin(); it != p.guard.rend(); ++it)
    if (atoms[it->atom].dep != Dep::Uniform)
      return &*it;
  return nullptr;
}

void PathEngine::skipFinding(const Ev &e, const Path &runs, const Path &skipsPath) {
  Divergence d;
  d.event = e;
  // An early exit explains the skip only when its condition is where the
  // two paths part; otherwise the collective sits in a branch of its own.
  const Lit *split = splitLit(skipsPath, runs);
  const Lit *exitLit = lastLit(skipsPath);
  // A swallowed failure, then an exit that no failure decides (`except
  // RuntimeError: pass` ... `if args.skip: continue`, or an OOM flag agreed
  // by all_reduce before `if oom: continue`): the failure's path skipped the
  // rest of the try, not the loop; the exit is every rank's.
  Path unexited;
  const Path *chosen = &skipsPath;
  if (skipsPath.exit != ExitKind::None && skipsPath.leavesUnderSet && isErrorCheck(exitLit)) {
    bool encloses = false;
    for (const Lit &m : skipsPath.leavesUnder)
      encloses = encloses || (m.atom == exitLit->atom && m.pol == exitLit->pol);
    if (!encloses) {
      unexited = skipsPath;
      unexited.exit = ExitKind::None;
      unexited.exitLoc = 0;
      unexited.exitVia.clear();
      chosen = &unexited;
    }
  }
  const Path &skips = *chosen;
  // A failure handled by running the function again: the retry issues the
  // same collectives (or fails again and is handled there).
  if ((skipsPath.retries || runs.retries) && (isErrorCheck(split) || isErrorCheck(exitLit)))
    return;
  if (skips.exit != ExitKind::None && skips.exit != ExitKind::Terminate && isErrorCheck(exitLit) &&
      (skips.exitLoc == 0 || skips.exitLoc < e.loc)) {
    reportErrorExit(exitLit, e, skips);
    return;
  }
  if (isErrorCheck(split)) {
    if (skips.exit != ExitKind::None) {
      if (skips.exit != ExitKind::Terminate)
        reportErrorExit(split, e, skips);
      return;
    }
    // A handler that swallows the exception and goes on (no exit at all)
    // skips what the body still had to run: the same error path, when the
    // collective is in that body (the other arm of the failure's test is
    // still open there).  One after the try that the two paths part on for
    // another reason is that reason's.
    bool inBody = false;
    for (size_t k = 0; k < runs.guard.size() && k < e.guardLen && !inBody; ++k)
      inBody = runs.guard[k].atom == split->atom && runs.guard[k].pol != split->pol &&
               runs.guard[k].closedAt > e.at;
    if (inBody) {
      reportErrorExit(split, e, skips);
      return;
    }
    d.kind = Divergence::Kind::RunsOnlyOn;
    const Lit *other = innermost(runs, skips, e.guardLen, e.at);
    if (other && !isErrorCheck(other))
      report(std::move(d), other);
    return;
  }
  // ...and only when the exit comes before the collective (Loc ids follow
  // source order): a `return` at the end of the function skips nothing.
  if (skips.exit != ExitKind::None && skips.exit != ExitKind::Terminate && split && exitLit &&
      split->atom == exitLit->atom && split->loc == exitLit->loc &&
      (skips.exitLoc == 0 || skips.exitLoc < e.loc)) {
    d.kind = Divergence::Kind::ExitSkips;
    d.exit = skips.exit;
    d.exitLoc = skips.exitLoc;
    d.exitVia = skips.exitVia;
    report(std::move(d), exitLit);
    return;
  }
  d.kind = Divergence::Kind::RunsOnlyOn;
  report(std::move(d), innermost(runs, skips, e.guardLen, e.at));
}

void PathEngine::align(const Path &pa, const Path &pb, std::vector<Ev> a, std::vector<Ev> b) {
  // The common prefix (the very same calls) pairs off by itself; the
  // alignment looks at what follows it, up to kMax collectives on each side.
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix].op == b[prefix].op &&
         a[prefix].loc == b[prefix].loc)
    ++prefix;
  a.erase(a.begin(), a.begin() + long(prefix));
  b.erase(b.begin(), b.begin() + long(prefix));
  const size_t kMax = 64;
  const bool window = a.size() > kMax || b.size() > kMax;
  if (a.size() > kMax)
    a.resize(kMax);
  if (b.size() > kMax)
    b.resize(kMax);
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> best(n + 1, std::vector<int>(m + 1, 0));
  for (size_t x = n; x-- > 0;)
    for (size_t y = m; y-- > 0;) {
      int v = std::max(best[x + 1][y], best[x][y + 1]);
      if (a[x].op == b[y].op)
        v = std::max(v, best[x + 1][y + 1] + (a[x].loc == b[y].loc ? 3 : 2));
      best[x][y] = v;
    }
  std::vector<bool> aMatched(n, false), bMatched(m, false);
  for (size_t x = 0, y = 0; x < n && y < m;) {
    if (a[x].op == b[y].op &&
        best[x][y] == best[x + 1][y + 1] + (a[x].loc == b[y].loc ? 3 : 2)) {
      aMatched[x] = bMatched[y] = true;
      ++x, ++y;
    } else if (best[x][y] == best[x + 1][y]) {
      ++x;
    } else {
      ++y;
    }
  }
  size_t fa = 0, fb = 0;
  while (fa < n && aMatched[fa])
    ++fa;
  while (fb < m && bMatched[fb])
    ++fb;
  if (fa == n && fb == m) {
    if (window)
      limitReached(Limit::CompareWindow, kMax);
    return;
  }
  // An op unmatched on both sides means the same collectives in another order.
  if (fa < n && fb < m) {
    bool swapped = false;
    for (size_t y = fb; y < m && !swapped; ++y)
      swapped = !bMatched[y] && b[y].op == a[fa].op;
    for (size_t x = fa; x < n && !swapped; ++x)
      swapped = !aMatched[x] && a[x].op == b[fb].op;
    if (swapped) {
      const bool aFirst = a[fa].loc <= b[fb].loc;
      const Ev &e = aFirst ? a[fa] : b[fb];
      // What the other ranks issue at that position of their sequence.
      const size_t at = aFirst ? fa : fb;
      const std::vector<Ev> &other = aFirst ? b : a;
      const Ev &o = at < other.size() ? other[at] : (aFirst ? b[fb] : a[fa]);
      const Lit *l = innermost(aFirst ? pa : pb, aFirst ? pb : pa, e.guardLen, e.at);
      Divergence d;
      d.kind = Divergence::Kind::Order;
      d.event = e;
      d.otherOp = o.op;
      report(std::move(d), l);
      return;
    }
  }
  // The earlier of the two first unmatched collectives (in path order).
  bool pickA = fb == m || (fa < n && fa <= fb);
  if (pickA)
    skipFinding(a[fa], pa, pb);
  else
    skipFinding(b[fb], pb, pa);
}

// A throw that only uniform decisions enclose: every rank that got there
// throws alike.  A rank decision the path had left before it (a sampled
// mask, `ones(...) if random() < 0.5 else zeros(...)`) is not why it throws.
bool PathEngine::errorPath(const Path &p) {
  if (p.exit != ExitKind::Throw)
    return false;
  for (const auto &l : p.exitGuard)
    if (atoms[l.atom].dep != Dep::Uniform)
      return false;
  return true;
}

void PathEngine::comparePaths(const std::vector<Path> &paths) {
  std::vector<std::vector<Ev>> syncs;
  syncs.reserve(paths.size());
  for (const auto &p : paths)
    syncs.push_back(syncOnly(p.seq));
  for (size_t i = 0; i < paths.size(); ++i)
    for (size_t j = i + 1; j < paths.size(); ++j) {
      if (paths[i].exit == ExitKind::Terminate || paths[j].exit == ExitKind::Terminate)
        continue; // a job-wide abort ends every rank
      if (errorPath(paths[i]) || errorPath(paths[j]))
        continue;
      if ((paths[i].uniformExit || paths[j].uniformExit) &&
          (paths[i].exitLoc != paths[j].exitLoc || paths[i].exit != paths[j].exit))
        continue;
      // Both ways end in the same throw: every rank fails there, whatever it
      // synchronised before (edm's "rank 0 goes first" pair, `if rank != 0:
      // barrier()` ... `if rank == 0: barrier()`, with a raise between).
      if (paths[i].exit == ExitKind::Throw && paths[j].exit == ExitKind::Throw &&
          paths[i].exitLoc != 0 && paths[i].exitLoc == paths[j].exitLoc)
        continue;
      if (firstDiff(syncs[i], syncs[j]) < 0)
        continue;
      if (!pairFeasible(paths[i].guard, paths[j].guard))
        continue;
      // `for (p = 0; p < size; ++p) { if (p == rank) barrier(); barrier(); }`:
      // each rank takes the branch once over the loop, so every rank issues
      // the same number of barriers, and barriers are interchangeable.
      if (const Lit *sl = splitLit(paths[i], paths[j]);
          sl && atoms[sl->atom].sweep && barriersOnly(syncs[i]) && barriersOnly(syncs[j]))
        continue;
      align(paths[i], paths[j], syncs[i], syncs[j]);
    }
}

PathEngine::LoopResult &PathEngine::analyzeLoop(const Node &n) {
  auto it = loops.find(&n);
  if (it != loops.end())
    return it->second;
  LoopResult lr;
  lr.bodyPaths = walk(n.kids[0], {Path{}});
  // The iteration's collectives, from the first path that completes it.
  std::vector<Ev> iter;
  bool any = false;
  for (const auto &p : lr.bodyPaths)
    if (p.exit == ExitKind::None || p.exit == ExitKind::Continue) {
      iter = syncOnly(p.seq);
      any = true;
      break;
    }
  if (!any && !lr.bodyPaths.empty())
    iter = syncOnly(lr.bodyPaths.front().seq);
  std::vector<Ev> all;
  for (const auto &p : lr.bodyPaths)
    for (const auto &e : syncOnly(p.seq))
      all.push_back(e);
  size_t before = divergences.size();

  // (a) iterations that complete with different collectives.
  std::vector<Path> completing;
  for (const auto &p : lr.bodyPaths)
    if (p.exit == ExitKind::None || p.exit == ExitKind::Continue)
      completing.push_back(p);
  comparePaths(completing);
  // (b) ranks that leave the loop early skip later iterations' collectives.
  // Independent of (a): an early stop is its own bug, with its own condition.
  size_t beforeExit = divergences.size();
  // The collective a later iteration runs, for the ranks that stay.  What
  // the leaving path decided on a value no iteration changes, they decide
  // alike in every iteration: HF's generation loop all-reduces only `if
  // synced_gpus` and breaks on a rank's own stop only `if not synced_gpus`,
  // so a rank that breaks leaves no all-reduce behind.
  auto laterEvent = [&](const Path &p) -> std::optional<Ev> {
    bool fixes = false;
    for (const Lit &l : p.guard)
      fixes = fixes || atoms[l.atom].invariant;
    if (!fixes)
      return iter.empty() ? all[0] : iter[0];
    for (const auto &q : completing) {
      bool agrees = true;
      for (const Lit &m : q.guard)
        if (atoms[m.atom].invariant)
          for (const Lit &l : p.guard)
            agrees = agrees && !(l.atom == m.atom && l.pol != m.pol);
      if (!agrees)
        continue;
      if (auto qs = syncOnly(q.seq); !qs.empty())
        return qs[0];
    }
    return std::nullopt;
  };
  if (!all.empty()) {
    for (const auto &p : lr.bodyPaths) {
      if (p.exit == ExitKind::None || p.exit == ExitKind::Continue ||
          p.exit == ExitKind::Terminate)
        continue;
      const Lit *sep = leavingLit(p);
      if (!sep)
        continue;
      const std::optional<Ev> later = laterEvent(p);
      if (isErrorCheck(sep)) {
        if (later)
          reportErrorExit(sep, *later, p);
        continue;
      }
      // Compare with the completing path closest to p: the same decisions
      // but the exit's, so other branches do not blur the difference.  The
      // exit's own decision first; then the rank decisions above it: a NaN
      // check that only rank 0 makes (`if is_master: ... if isnan(v): return`)
      // parts rank 0 from the others at `is_master`, where the others never
      // test `v` at all.
      bool decided = false; // a report was made (or merged into an earlier one)
      for (const Lit *cand = sep; cand && !decided;) {
        std::vector<const Path *> order;
        order.reserve(completing.size());
        for (const auto &q : completing)
          order.push_back(&q);
        // Literals count with their position: the same decision at the same
        // branch.  Only those up to the deciding one: what every rank decides
        // alike after it (`if is_master: ... if i % 10 == 0: return`) is not
        // where the ranks part, and the other ranks never reach it.
        const size_t upTo = static_cast<size_t>(cand - p.guard.data()) + 1;
        // Of q's decisions, a setting's that p never made does not count:
        // what every rank decides alike after p has left (`if max_norm > 0:`
        // after the NaN exit) is no difference between the two.  Another
        // rank-local decision q makes still does (it may be why q goes on).
        // A decision tested again (`keep = random() < p`, then `... if keep
        // else ...` and `if keep: raise`) is one decision: only its first
        // test counts.
        auto retest = [](const Conj &g, size_t i) {
          for (size_t k = 0; k < i; ++k)
            if (g[k].atom == g[i].atom)
              return true;
          return false;
        };
        auto distance = [&](const Path &q) {
          size_t mine = 0, same = 0, shared = 0;
          // Where q passed the exit's own test: a rank decision it makes
          // after that (a rank-0 checkpoint later in the iteration) cannot be
          // why it went on (detectron2's `assert isfinite(losses)` before
          // `reduce_dict`, then rank 0's periodic checkpoint).
          // Only for the exit's own decision: a rank decision above it is
          // compared as before (the exit nested in it).
          size_t passed = q.guard.size();
          for (size_t j = 0; cand == sep && j < q.guard.size() && passed == q.guard.size(); ++j)
            if (q.guard[j].atom == cand->atom && q.guard[j].loc == cand->loc)
              passed = j;
          for (size_t j = 0; j < q.guard.size(); ++j) {
            if (retest(q.guard, j))
              continue;
            const Lit &m = q.guard[j];
            bool made = atoms[m.atom].dep != Dep::Uniform && j <= passed;
            for (size_t i = 0; i < upTo && !made; ++i)
              made = p.guard[i].atom == m.atom && p.guard[i].loc == m.loc;
            shared += made;
          }
          for (size_t i = 0; i < upTo; ++i) {
            if (retest(p.guard, i))
              continue;
            // A setting of the exit's own condition that q never tested (`if
            // args.target_kl is not None and approx_kl > args.target_kl:
            // break` against the staying case `not approx_kl > ...`, which
            // leaves the setting open): q admits it, so it is no difference
            // between the two.
            bool tested = atoms[p.guard[i].atom].dep != Dep::Uniform || p.guard[i].from != cand->from;
            for (const auto &m : q.guard)
              tested = tested || m.atom == p.guard[i].atom;
            if (!tested)
              continue;
            ++mine;
            for (const auto &m : q.guard)
              same += p.guard[i] == m && p.guard[i].loc == m.loc;
          }
          return mine + shared - 2 * same;
        };
        std::stable_sort(order.begin(), order.end(), [&](const Path *x, const Path *y) {
          return distance(*x) < distance(*y);
        });
        for (const Path *qp : order) {
          const Path &q = *qp;
          if (!pairFeasible(p.guard, q.guard))
            continue;
          if (distance(q) > 2)
            break; // only the path that differs in the deciding decision alone
          auto ps = syncOnly(p.seq), qs = syncOnly(q.seq);
          long d = firstDiff(ps, qs);
          if (!(d >= 0 && size_t(d) < qs.size()) && !later)
            continue;
          const Ev &e = (d >= 0 && size_t(d) < qs.size()) ? qs[d] : *later;
          Divergence dv;
          dv.kind = Divergence::Kind::LoopExit;
          dv.event = e;
          dv.exit = p.exit;
          dv.exitVia = p.exitVia;
          dv.reachesEvent = d >= 0 && size_t(d) < qs.size();
          report(std::move(dv), cand);
          decided = true;
          break;
        }
        // The next rank decision above, when the exit's decision is nested in
        // it: no rank that takes its other arm ever makes the exit's decision
        // (a rank-0 block that closed before the exit does not qualify).
        const Lit *above = nullptr;
        for (const Lit *l = cand; l != p.guard.data();) {
          --l;
          if (atoms[l->atom].dep == Dep::Rank) {
            above = l;
            break;
          }
        }
        if (above) {
          const Lit &own = *sep;
          for (const auto &q : completing) {
            bool other = false, tests = false;
            for (const auto &m : q.guard) {
              other = other || (m.atom == above->atom && m.pol != above->pol);
              tests = tests || (m.atom == own.atom && m.loc == own.loc);
            }
            if (other && tests) {
              above = nullptr;
              break;
            }
          }
        }
        cand = above;
      }
      if (divergences.size() != beforeExit)
        break;
    }
  }
  // (c) a trip count that differs across ranks.
  if (!all.empty() && divergences.size() == beforeExit && n.trip != Dep::Uniform &&
      !singleRankLoops.count(&n)) {
    const Ev &e = iter.empty() ? all[0] : iter[0];
    Divergence d;
    d.kind = Divergence::Kind::TripCount;
    d.event = e;
    d.loop = &n;
    report(std::move(d));
  }
  if (divergences.size() != before)
    loopsReported.insert(&n);
  // Compare loops by what they issue, so equal loops on both arms match.
  auto symbolOf = [](const std::vector<Ev> &iter) {
    std::vector<Ev> out;
    if (iter.empty())
      return out;
    Ev sym;
    sym.kind = EventKind::Collective;
    sym.op = "loop{";
    for (const auto &e : iter)
      sym.op += e.op + ";";
    sym.op += "}";
    sym.loc = iter[0].loc;
    sym.via = iter[0].via;
    sym.kind = iter[0].kind;
    sym.shown = iter[0].shown.empty() ? iter[0].op : iter[0].shown;
    sym.head = iter[0].headOp();
    // An evaluation loop of no_grad forwards stands in for what each of them does.
    sym.standsInFor = iter[0].standsInFor;
    for (const auto &e : iter)
      if (e.standsInFor != sym.standsInFor)
        sym.standsInFor.clear();
    out.push_back(sym);
    return out;
  };
  lr.symbol = symbolOf(iter);
  for (const auto &p : completing) {
    std::vector<Lit> settings;
    for (const auto &l : p.guard)
      if (atoms[l.atom].dep == Dep::Uniform)
        settings.push_back(l);
    if (lr.bySettings.size() < 16)
      lr.bySettings.emplace_back(std::move(settings), symbolOf(syncOnly(p.seq)));
  }
  return loops.emplace(&n, std::move(lr)).first->second;
}

PathEngine::FnResult *PathEngine::analyze(const std::string &key) {
  const Function *fn = function(key);
  if (!fn)
    return nullptr;
  FnResult &r = fns[key];
  if (r.done)
    return &r;
  if (r.running)
    return nullptr; // recursion: no summary
  if (depth >= limits.maxCallDepth) {
    depthRefused = true;
    limitReached(Limit::CallDepth);
    return nullptr;
  }
  r.running = true;
  const bool outerRefused = depthRefused;
  depthRefused = false;
  ++depth;
  fnStack.push_back(key);
  std::vector<Path> paths = walk(fn->body, {Path{}});
  FnResult &res = fns[key];
  res.running = false;
  // A summary cut short by the depth limit is recomputed from a shallower caller.
  res.done = !depthRefused;
  depthRefused = depthRefused || outerRefused;
  res.paths = std::move(paths);
  bool allTerm = !res.paths.empty();
  for (const auto &p : res.paths)
    if (p.exit != ExitKind::Terminate)
      allTerm = false;
  res.alwaysTerminates = allTerm;
  res.alwaysThrows = !res.paths.empty() && !allTerm &&
                     std::all_of(res.paths.begin(), res.paths.end(),
                                 [](const Path &p) { return p.exit == ExitKind::Throw; });
  if (res.alwaysThrows)
    res.throwsVia = res.paths.front().exitVia;
  // What a call contributes: the longest synchronising sequence of a path
  // that returns.  Paths that differ by rank decisions are reported inside
  // the callee; those that differ by uniform ones (`if force or step % n`)
  // may all run, so the call may run the collectives of the longest.
  bool first = true;
  for (const auto &p : res.paths)
    if (p.exit == ExitKind::None || p.exit == ExitKind::Return) {
      auto seq = syncOnly(p.seq);
      if (first || seq.size() > res.summary.size())
        res.summary = std::move(seq);
      first = false;
    }
  const size_t before = divergences.size(), beforeErr = errorExits.size();
  comparePaths(res.paths);
  // Only a helper that synchronises first: a utility's sanity assert
  // (audiocraft's loudness normaliser, deep under a sample writer) is no step.
  // Or one that exits the process under a test of the rank itself (XLM's
  // end_epoch: `if params.is_master: ... exit()` when the stopping criterion
  // is met): `exit()` and `sys.exit()` end the worker with status 0, which
  // torchrun does not take for a failure, so the other ranks wait for it.  (A raise ends the worker with an error, and
  // torchrun and mp.spawn stop the others: a configuration check such as
  // `if device_index >= num_devices: raise` is no hang.)
  if (!res.alwaysThrows && !res.alwaysTerminates)
    for (const auto &p : res.paths) {
      if (p.exit != ExitKind::Throw && p.exit != ExitKind::Terminate)
        continue;
      // Where it leaves before a collective of its own, the helper's
      // comparison reported it there: one bug, one report.
      auto here = [&](const Divergence &d) { return d.exitLoc == p.exitLoc; };
      if (std::any_of(divergences.begin() + before, divergences.end(), here) ||
          std::any_of(errorExits.begin() + beforeErr, errorExits.end(), here))
        continue;
      // The health check may be of an agreed number (detectron2's
      // `_write_metrics`: rank 0 checks the gathered losses): then the rank
      // test around it is what parts the ranks.
      Conj lits;
      bool healthCheck = false;
      // The decisions around the exit; an `if` the path had left before it
      // is not why it exits.
      for (const Lit &l : p.exitGuard) {
        const Atom &a = atoms[l.atom];
        const bool check = a.kind == Cond::Kind::Atom && testsNonFinite(a.text);
        healthCheck = healthCheck || check;
        if (a.kind == Cond::Kind::Atom && a.dep == Dep::Uniform && !check)
          continue;
        lits.push_back(l);
        lits.back().from = nullptr;
        lits.back().closedAt = SIZE_MAX;
      }
      const bool parts = std::any_of(lits.begin(), lits.end(), [&](const Lit &l) {
        return atoms[l.atom].kind != Cond::Kind::Atom || atoms[l.atom].dep != Dep::Uniform;
      });
      const bool rankTest = std::any_of(lits.begin(), lits.end(), [&](const Lit &l) {
        return atoms[l.atom].kind != Cond::Kind::Atom || atoms[l.atom].dep == Dep::Rank;
      });
      // Python's `sys.exit` is a throw of SystemExit, named by its exit
      // function.  (C's `exit()` without MPI_Finalize makes mpirun abort the
      // job, and an uncaught C++ throw terminates: no hang either.)
      const bool exits = p.exit == ExitKind::Throw && !p.exitVia.empty();
      if (!parts || !((rankTest && exits) || (healthCheck && !res.summary.empty())))
        continue;
      res.exitsAfter = std::move(lits);
      res.exitsAfterKind = p.exit;
      res.exitsAfterVia = p.exitVia;
      break;
    }
  fnStack.pop_back();
  --depth;
  return &res;
}

void PathEngine::analyzeAll() {
  for (const auto &f : program.functions)
    analyze(f.key);
}

Reach PathEngine::reach(const Conj &g, size_t at) {
  if (rankSet(g).size() <= 1)
    return Reach::Restricted;
  for (const auto &l : g)
    if (atoms[l.atom].probesFile && !(l.pol && l.closedAt <= at))
      return Reach::Restricted;
  bool perNode = false;
  for (const auto &l : g) {
    const Atom &a = atoms[l.atom];
    // jukebox's `get_rank() % 8 == 0`: rank 0 of each node of eight, one
    // process per node as a node-local rank's test (a modulus known only at
    // run time, `rank % ngpus == 0`, likewise).
    if (a.kind == Cond::Kind::RankCmp && a.mod != 0 && a.op == core::CmpOp::EQ && a.value == 0 && l.pol)
      perNode = true;
    if (a.kind != Cond::Kind::Atom || a.dep != Dep::Rank)
      continue;
    if (!a.localMain || !l.pol)
      return Reach::Restricted;
    perNode = true;
  }
  return perNode ? Reach::PerNode : Reach::AllRanks;
}

Conj PathEngine::withLoop(const Conj &g, const Ev &e) {
  Conj all = g;
  all.insert(all.end(), e.inLoop.begin(), e.inLoop.end());
  return all;
}

Reach PathEngine::entered(const std::string &key, int depth) {
  if (!callersReady_) {
    callersReady_ = true;
    for (const auto &f : program.functions) {
      auto *r = analyze(f.key);
      if (!r)
        continue;
      // Each call site's guards over all the paths that reach it, merged
      // where two differ only in one test (`if local_rank == 0: saver =
      // Saver(...)` earlier in `main`: the call after it is reached on both
      // arms, by every rank, not only by the ranks of one arm).
      std::map<std::pair<std::string, Loc>, std::set<std::vector<std::pair<int, bool>>>> sites;
      for (const auto &p : r->paths)
        for (const auto &e : p.seq)
          if (e.isCall) {
            callerGuards_[e.op].emplace_back(f.key, withLoop(p.guard, e));
            std::vector<std::pair<int, bool>> g;
            for (const Lit &l : withLoop(p.guard, e)) {
              // `if not os.path.exists(train_dir): exit(1)` long before the
              // call: the run's inputs, there for every rank.  (Where the
              // path goes on only while a file is absent, the create-once
              // idiom, the test still decides who writes.)
              if (atoms[l.atom].probesFile && l.pol && l.closedAt <= e.at)
                continue;
              g.emplace_back(l.atom, l.pol);
            }
            std::sort(g.begin(), g.end());
            g.erase(std::unique(g.begin(), g.end()), g.end());
            sites[{e.op, e.loc}].insert(std::move(g));
          }
      for (auto &[site, guards] : sites) {
        for (int round = 0; round < 8 && guards.size() <= 256; ++round) {
          std::set<std::vector<std::pair<int, bool>>> merged;
          for (const auto &g : guards)
            for (size_t i = 0; i < g.size(); ++i) {
              auto flipped = g;
              flipped[i].second = !flipped[i].second;
              std::sort(flipped.begin(), flipped.end());
              if (!guards.count(flipped))
                continue;
              auto without = g;
              without.erase(without.begin() + long(i));
              merged.insert(std::move(without));
            }
          const size_t before = guards.size();
          guards.insert(merged.begin(), merged.end());
          if (guards.size() == before)
            break;
        }
        for (const auto &g : guards) {
          Conj c;
          for (const auto &[atom, pol] : g)
            c.push_back(Lit{atom, pol});
          callers_[site.first].emplace_back(f.key, reach(c));
        }
      }
    }
    for (const auto &x : program.externalCalls)
      callers_[x.callee].emplace_back(std::string(), x.reach);
  }
  auto it = entered_.find(key);
  if (it != entered_.end())
    return it->second;
  // The launcher's code runs in its one process, whoever calls it.
  if (const Function *f = function(key); f && f->launchesRanks)
    return entered_[key] = Reach::Restricted;
  if (depth > limits.maxCallDepth)
    return Reach::Restricted;
  entered_[key] = Reach::Restricted; // recursion: assume guarded
  // A function whose every call passes a setting it is specialised on
  // (RepVGG's `save_checkpoint(..., is_best=True)`, key `f{is_best=True}`):
  // its callers are its specialisations' callers, not none.
  std::vector<const std::vector<std::pair<std::string, Reach>> *> sites;
  if (auto c = callers_.find(key); c != callers_.end())
    sites.push_back(&c->second);
  else if (key.find('{') == std::string::npos)
    for (auto s = callers_.lower_bound(key + "{");
         s != callers_.end() && s->first.compare(0, key.size() + 1, key + "{") == 0; ++s)
      sites.push_back(&s->second);
  Reach res = sites.empty() ? Reach::AllRanks : Reach::Restricted;
  for (const auto *c : sites)
    for (const auto &[caller, guarded] : *c)
      res = std::min(res, caller.empty() ? guarded : std::max(guarded, entered(caller, depth + 1)));
  entered_[key] = res;
  return res;
}

Reach PathEngine::enteredGiven(const std::string &key, const Node *target) {
  const Reach plain = entered(key);
  if (plain == Reach::Restricted || !target)
    return plain;
  auto c = callerGuards_.find(key);
  const Function *f = function(key);
  if (c == callerGuards_.end() || !f)
    return plain; // a root
  for (const auto &x : program.externalCalls)
    if (x.callee == key && x.reach != Reach::Restricted)
      return plain; // callers elsewhere, whose guards are not here
  // The settings `target` is under in its function, by spelling and arm:
  // read off the tree, since an `if` that holds no collective is folded
  // out of the paths.
  std::vector<std::pair<std::string, bool>> tests, held;
  std::function<bool(const Node &)> find = [&](const Node &n) -> bool {
    if (&n == target) {
      held = tests;
      return true;
    }
    if (n.kind == Node::Kind::If) {
      const Cond *cond = &n.cond;
      bool pol = true;
      if (cond->kind == Cond::Kind::Not && cond->kids.size() == 1) {
        cond = &cond->kids[0];
        pol = false;
      }
      const bool setting = cond->kind == Cond::Kind::Atom && cond->dep == Dep::Uniform &&
                           !cond->text.empty();
      for (size_t i = 0; i < n.kids.size(); ++i) {
        if (setting)
          tests.emplace_back(cond->text, i == 0 ? pol : !pol);
        const bool found = find(n.kids[i]);
        if (setting)
          tests.pop_back();
        if (found)
          return true;
      }
      return false;
    }
    for (const auto &k : n.kids)
      if (find(k))
        return true;
    return false;
  };
  if (!find(f->body) || held.empty())
    return plain;
  Reach res = Reach::Restricted;
  for (const auto &[caller, guard] : c->second) {
    bool contradicts = false;
    for (const auto &[text, pol] : held)
      for (const Lit &m : guard) {
        const Atom &b = atoms[m.atom];
        if (b.kind == Cond::Kind::Atom && b.dep == Dep::Uniform && b.text == text && m.pol != pol)
          contradicts = true;
      }
    if (!contradicts)
      res = std::min(res, std::max(reach(guard), entered(caller, 1)));
  }
  return std::max(res, plain);
}

} // namespace ddplint::core::engine

namespace ddplint::core {

bool isMainOnly(const Cond &c) {
  using engine::Tri;
  std::set<std::int64_t> reps = {0, 1, 2, 3};
  engine::collectConstants(c, reps);
  bool zeroMay = false;
  for (auto r : reps) {
    Tri t = engine::evalTri(c, r);
    if (r == 0)
      zeroMay = t != Tri::False;
    else if (t != Tri::False)
      return false;
  }
  return zeroMay;
}

} // namespace ddplint::core
