// Path enumeration with rank guards.  Each function body becomes a set of
// paths: a guard (a conjunction of literals over condition atoms), the events
// on the path, and how it ended.  Two paths can be taken by two different
// ranks when their uniform literals agree (uniform values are the same on all
// ranks) and their rank literals can be satisfied by two different ranks; if
// such a pair issues different collective sequences, the ranks diverge.
#include "ddplint/core/Analysis.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace ddplint::core {

namespace {

struct Atom {
  Cond::Kind kind; // RankCmp or Atom
  CmpOp op = CmpOp::EQ;
  std::int64_t value = 0, mod = 0;
  std::string key;
  Dep dep = Dep::Uniform;
  std::string text;
  Loc loc = 0;
  bool probesFile = false;
  bool errorCheck = false;
  bool sweep = false;
  bool localMain = false;
};

struct Lit {
  int atom;
  bool pol;
  Loc loc = 0; // the condition that added it (an atom can be tested many times)
  int text = -1; // its spelling there (index into Impl::texts)
  bool operator==(const Lit &o) const { return atom == o.atom && pol == o.pol; }
};

using Conj = std::vector<Lit>;

struct Ev {
  EventKind kind = EventKind::Collective;
  bool isCall = false; // a call site (for interprocedural IO reasoning)
  std::string op;      // what is compared across ranks
  std::string via;     // helper through which the event happens, if any
  std::string shown;   // name for messages when `op` is a loop's signature
  Loc loc = 0;         // where to report: the event, or the call of the helper
  const Node *node = nullptr;
  size_t guardLen = 0; // how much of the path's guard was decided before it
  Conj inLoop;         // the guard inside a loop body that led to it (copied out of loops)
  bool sync() const {
    return !isCall && (kind == EventKind::Collective || kind == EventKind::Barrier);
  }
};

struct Path {
  Conj guard;
  std::vector<Ev> seq;
  ExitKind exit = ExitKind::None;
  Loc exitLoc = 0;
};

bool evalRank(const Atom &a, std::int64_t r) {
  std::int64_t v = a.mod > 0 ? r % a.mod : r;
  return compare(a.op, v, a.value);
}

// Three-valued evaluation of a condition for rank r (other atoms unknown).
enum class Tri { False, True, Unknown };
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

std::string describe(const Atom &a, bool pol) {
  std::string t = a.text.empty() ? std::string("the condition") : "'" + a.text + "'";
  if (pol)
    return "ranks where " + t + " holds";
  return "ranks where " + t + " does not hold";
}

std::string exitWord(ExitKind k) {
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
  std::string s = e.kind == EventKind::Barrier
                      ? (op == "barrier" ? std::string("barrier") : "barrier '" + op + "'")
                      : "collective '" + op + "'";
  if (!e.via.empty())
    s = "call to '" + e.via + "', which runs " + s + ",";
  return s;
}

const char *kFixAdvice =
    "; call it on every rank, or agree on the condition first (allreduce or broadcast it)";

} // namespace

struct Analyzer::Impl {
  const Program &program;
  AnalysisLimits limits;

  struct FnResult {
    bool done = false, running = false;
    std::vector<Path> paths;
    std::vector<Ev> summary; // collectives a call contributes
    bool alwaysTerminates = false;
  };
  std::map<std::string, FnResult> fns;
  std::vector<Atom> atoms;
  std::vector<std::string> texts; // literals' spellings: `me == 0` and `rank == 0` share an atom
  std::map<std::string, int> atomIndex;
  std::vector<std::int64_t> reps; // representative ranks
  std::vector<Finding> divergence;
  std::vector<Finding> errorExits;
  std::set<std::string> errorExitFns; // one error-path finding per function
  std::vector<std::string> fnStack;   // the functions being analysed
  std::set<Loc> reportedAt;
  std::set<const Node *> loopsReported;
  struct LoopResult {
    std::vector<Path> bodyPaths;
    std::vector<Ev> symbol;
    // The body's call sites and IO, each with the guard decided before it,
    // once per distinct (event, guard): what every path through the loop
    // carries out of it.  Built on first use.
    std::vector<Ev> carried;
    bool carriedReady = false;
  };
  std::map<const Node *, LoopResult> loops;
  int depth = 0;
  bool depthRefused = false; // a callee was skipped for depth: the summary is partial

  Impl(const Program &p, AnalysisLimits l) : program(p), limits(l) {
    std::set<std::int64_t> cs = {0, 1, 2, 3};
    std::function<void(const Node &)> visit = [&](const Node &n) {
      if (n.kind == Node::Kind::If)
        collectConstants(n.cond, cs);
      for (const auto &k : n.kids)
        visit(k);
    };
    for (const auto &f : program.functions)
      visit(f.body);
    reps.assign(cs.begin(), cs.end());
    if (reps.size() > 64)
      reps.resize(64);
  }

  // --- atoms and guards -------------------------------------------------
  int intern(const Cond &c) {
    std::string key;
    if (c.kind == Cond::Kind::RankCmp)
      key = "rank%" + std::to_string(c.mod) + "#" + std::to_string(int(c.op)) + "#" +
            std::to_string(c.value);
    else
      key = "atom#" + c.key;
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
    atoms.push_back(a);
    atomIndex[key] = int(atoms.size()) - 1;
    return int(atoms.size()) - 1;
  }

  // Disjunctive normal form of c (or of !c), capped: conditions are small.
  std::vector<Conj> dnf(const Cond &c, bool pol) {
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
    case Cond::Kind::Not:
      return dnf(c.kids[0], !pol);
    case Cond::Kind::And:
    case Cond::Kind::Or: {
      bool conj = (c.kind == Cond::Kind::And) == pol;
      if (!conj) {
        std::vector<Conj> out;
        for (const auto &k : c.kids)
          for (auto &d : dnf(k, pol))
            if (out.size() < 16)
              out.push_back(std::move(d));
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
          }
        acc = std::move(next);
      }
      return acc;
    }
    }
    return {Conj{}};
  }

  bool selfConsistent(const Conj &g) {
    for (size_t i = 0; i < g.size(); ++i)
      for (size_t j = i + 1; j < g.size(); ++j)
        if (g[i].atom == g[j].atom && g[i].pol != g[j].pol)
          return false;
    return !rankSet(g).empty();
  }

  // The representative ranks that satisfy the guard's rank comparisons.
  std::vector<std::int64_t> rankSet(const Conj &g) {
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

  bool hasOpaqueRank(const Conj &g) {
    for (const auto &l : g)
      if (atoms[l.atom].kind == Cond::Kind::Atom && atoms[l.atom].dep == Dep::Rank)
        return true;
    return false;
  }

  bool probesFile(const Conj &g) {
    for (const auto &l : g)
      if (atoms[l.atom].probesFile)
        return true;
    return false;
  }

  // A literal of `a` that depends on the rank (or rank-local data) and that
  // `b` does not share: the only kind of decision that can part two ranks.
  bool separatedBy(const Conj &a, const Conj &b) {
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

  // Can two different ranks take p and q in the same run?
  bool pairFeasible(const Conj &p, const Conj &q) {
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

  // --- walking ----------------------------------------------------------
  static bool live(const Path &p) { return p.exit == ExitKind::None; }

  std::map<const Node *, bool> relevance;
  // Whether a node can change a path: an event, a call, an exit, or a loop or
  // branch that contains one.
  bool relevant(const Node &n) {
    switch (n.kind) {
    case Node::Kind::Event:
    case Node::Kind::Call:
    case Node::Kind::Exit:
      return true;
    default:
      break;
    }
    auto it = relevance.find(&n);
    if (it != relevance.end())
      return it->second;
    bool r = false;
    for (const auto &k : n.kids)
      r = r || relevant(k);
    relevance[&n] = r;
    return r;
  }

  static bool sameEvents(const Path &a, const Path &b) {
    if (a.exit != b.exit || a.seq.size() != b.seq.size())
      return false;
    for (size_t i = 0; i < a.seq.size(); ++i)
      if (a.seq[i].op != b.seq[i].op || a.seq[i].loc != b.seq[i].loc)
        return false;
    return true;
  }

  // Two paths with the same events whose guards differ only in the polarity
  // of one uniform literal are one path without that literal: the uniform
  // decision does not matter for them.  Keeps sequences of uniform ifs linear.
  void mergeUniform(std::vector<Path> &paths) {
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

  void cap(std::vector<Path> &paths) {
    if (paths.size() > limits.maxPaths)
      paths.resize(limits.maxPaths); // dropping paths never invents a divergence
  }

  std::vector<Path> walk(const Node &n, std::vector<Path> in) {
    switch (n.kind) {
    case Node::Kind::Block:
      for (const auto &k : n.kids)
        in = walk(k, std::move(in));
      return in;
    case Node::Kind::Event: {
      Ev e;
      e.kind = n.event;
      e.op = n.name;
      e.loc = n.loc;
      e.node = &n;
      for (auto &p : in)
        if (live(p)) {
          e.guardLen = p.guard.size();
          p.seq.push_back(e);
        }
      return in;
    }
    case Node::Kind::Call: {
      FnResult *callee = n.callee.empty() ? nullptr : analyze(n.callee);
      Ev site;
      site.isCall = true;
      site.op = n.callee;
      site.loc = n.loc;
      site.node = &n;
      for (auto &p : in) {
        if (!live(p))
          continue;
        site.guardLen = p.guard.size();
        p.seq.push_back(site);
        if (callee) {
          for (Ev e : callee->summary) {
            if (e.via.empty())
              e.via = n.name;
            e.loc = n.loc;
            e.guardLen = p.guard.size();
            p.seq.push_back(e);
          }
          if (callee->alwaysTerminates)
            p.exit = ExitKind::Terminate;
        }
      }
      return in;
    }
    case Node::Kind::Exit:
      for (auto &p : in)
        if (live(p)) {
          p.exit = n.exit;
          p.exitLoc = n.loc;
        }
      return in;
    case Node::Kind::If: {
      if (!relevant(n))
        return in; // no event, call or exit in either arm: it cannot matter
      std::vector<Path> out, thenIn, elseIn;
      auto tConj = dnf(n.cond, true), eConj = dnf(n.cond, false);
      for (auto &p : in) {
        if (!live(p)) {
          out.push_back(std::move(p));
          continue;
        }
        for (const auto &c : tConj) {
          Path q = p;
          q.guard.insert(q.guard.end(), c.begin(), c.end());
          if (selfConsistent(q.guard))
            thenIn.push_back(std::move(q));
        }
        for (const auto &c : eConj) {
          Path q = p;
          q.guard.insert(q.guard.end(), c.begin(), c.end());
          if (selfConsistent(q.guard))
            elseIn.push_back(std::move(q));
        }
      }
      auto t = walk(n.kids[0], std::move(thenIn));
      auto e = walk(n.kids[1], std::move(elseIn));
      // Cap each arm to half, so an overflow never drops a whole arm.
      const size_t half = limits.maxPaths / 2;
      if (t.size() + e.size() > limits.maxPaths) {
        if (t.size() > half && e.size() > half) {
          t.resize(half);
          e.resize(half);
        } else if (t.size() > half) {
          t.resize(limits.maxPaths - e.size());
        } else {
          e.resize(limits.maxPaths - t.size());
        }
      }
      out.insert(out.end(), std::make_move_iterator(t.begin()), std::make_move_iterator(t.end()));
      out.insert(out.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));
      mergeUniform(out);
      cap(out);
      return out;
    }
    case Node::Kind::Loop: {
      LoopResult &lr = analyzeLoop(n);
      std::vector<Path> out;
      for (auto &p : in) {
        if (!live(p)) {
          out.push_back(std::move(p));
          continue;
        }
        if (!lr.carriedReady) {
          // Call sites and IO inside the loop, for interprocedural IO reasoning,
          // with the body's own guard: a rank-0 save in an epoch loop is guarded.
          // Body paths share their prefixes: an event reached under the same
          // decisions on several of them is carried once.
          std::set<std::tuple<const Node *, Loc, std::string, std::vector<std::pair<int, bool>>>>
              seen;
          for (const auto &bp : lr.bodyPaths)
            for (const auto &e : bp.seq)
              if (e.isCall || !e.sync()) {
                // Only the decisions taken before it: a guard later in the body
                // (`if local_rank == 0:` after an unguarded save) does not cover it.
                const size_t before = std::min(e.guardLen, bp.guard.size());
                std::vector<std::pair<int, bool>> decided;
                decided.reserve(before);
                for (size_t i = 0; i < before; ++i)
                  decided.emplace_back(bp.guard[i].atom, bp.guard[i].pol);
                if (!seen.emplace(e.node, e.loc, e.via, std::move(decided)).second)
                  continue;
                Ev c = e;
                c.inLoop.insert(c.inLoop.begin(), bp.guard.begin(), bp.guard.begin() + before);
                lr.carried.push_back(std::move(c));
              }
          lr.carriedReady = true;
        }
        Path normal = p;
        for (Ev e : lr.symbol) {
          e.guardLen = p.guard.size();
          normal.seq.push_back(e);
        }
        normal.seq.insert(normal.seq.end(), lr.carried.begin(), lr.carried.end());
        out.push_back(std::move(normal));
        if (loopsReported.count(&n))
          continue; // the loop's own finding covers its early exits
        for (const auto &bp : lr.bodyPaths) {
          if (bp.exit != ExitKind::Return && bp.exit != ExitKind::Throw &&
              bp.exit != ExitKind::Terminate)
            continue;
          Path q = p;
          q.guard.insert(q.guard.end(), bp.guard.begin(), bp.guard.end());
          if (!selfConsistent(q.guard))
            continue;
          q.seq.insert(q.seq.end(), lr.symbol.begin(), lr.symbol.end());
          q.exit = bp.exit;
          out.push_back(std::move(q));
        }
      }
      cap(out);
      return out;
    }
    }
    return in;
  }

  static std::vector<Ev> syncOnly(const std::vector<Ev> &seq) {
    std::vector<Ev> out;
    for (const auto &e : seq)
      if (e.sync())
        out.push_back(e);
    return out;
  }

  static bool barriersOnly(const std::vector<Ev> &seq) {
    for (const auto &e : seq)
      if (e.kind != EventKind::Barrier)
        return false;
    return true;
  }

  // Index of the first difference between the sync sequences, or -1.
  static long firstDiff(const std::vector<Ev> &a, const std::vector<Ev> &b) {
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i)
      if (a[i].op != b[i].op)
        return long(i);
    return a.size() == b.size() ? -1 : long(n);
  }

  // The literal of `p` that separates it from `q` (absent or negated there).
  const Lit *separating(const Path &p, const Path &q) {
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

  std::string who(const Lit *l) {
    if (!l)
      return "some ranks";
    Atom spelled = atoms[l->atom];
    if (l->text >= 0 && !texts[size_t(l->text)].empty())
      spelled.text = texts[size_t(l->text)];
    std::string d = describe(spelled, l->pol);
    if (atoms[l->atom].dep == Dep::Local)
      d += " (a rank-local value)";
    return d;
  }

  bool isErrorCheck(const Lit *l) const { return l && atoms[l->atom].errorCheck; }

  // A rank that leaves on a failed call's status: its own finding, once per
  // function, at the exit (a check macro's hidden return points at the macro).
  void reportErrorExit(const Lit *l, const Ev &e, const Path &skips) {
    const std::string fn = fnStack.empty() ? std::string() : fnStack.back();
    if (!errorExitFns.insert(fn).second)
      return;
    const Atom &a = atoms[l->atom];
    std::string spelled = l->text >= 0 && !texts[size_t(l->text)].empty() ? texts[size_t(l->text)] : a.text;
    Finding f;
    f.rule = "ddp-error-path-exit";
    f.loc = skips.exitLoc ? skips.exitLoc : e.loc;
    std::string how = skips.exit == ExitKind::Throw ? "throws" : skips.exit == ExitKind::Break ? "leaves the loop" : "returns";
    if (program.facts.language == SourceLanguage::Python) {
      // A caught exception: the frontend spells the atom "an exception is raised".
      f.message = "error-path exit: when " +
                  (a.errorCheck && spelled == "an exception is raised"
                       ? std::string("an exception is caught")
                       : "'" + spelled + "' reports a failure") +
                  " on one rank, that rank " + how + " here while the other ranks wait in " +
                  eventName(e) +
                  " and hang; re-raise it (torchrun and mp.spawn then stop every worker) or agree "
                  "on the failure first (all_reduce an error flag) so every rank leaves together";
      f.notes.push_back({l->loc ? l->loc : a.loc, "exception caught here"});
    } else {
      f.message = "error-path exit: when '" + spelled + "' reports a failure on one rank, that rank " +
                  how + " here while the other ranks wait in " + eventName(e) +
                  " and hang; abort the communicator instead (ncclCommAbort, MPI_Abort, or abort() "
                  "under a watchdog) so every rank fails fast";
      f.notes.push_back({l->loc ? l->loc : a.loc, "failure checked here"});
    }
    errorExits.push_back(std::move(f));
  }

  // One finding per collective, and one per rank-dependent decision: the
  // paths that one branch separates differ in many places, all caused by it.
  std::set<Loc> reportedSplits;
  void report(Finding f, const Lit *split = nullptr) {
    if (f.loc == 0 || reportedAt.count(f.loc))
      return;
    if (isErrorCheck(split))
      return; // an error path, reported by ddp-error-path-exit
    Loc s = split ? (split->loc ? split->loc : atoms[split->atom].loc) : 0;
    if (s && reportedSplits.count(s))
      return;
    reportedAt.insert(f.loc);
    if (s)
      reportedSplits.insert(s);
    divergence.push_back(std::move(f));
  }

  // The literal where two paths split: their guards are built in execution
  // order, so the first position where they differ is the branch that
  // separated them.
  const Lit *splitLit(const Path &p, const Path &q) {
    size_t n = std::min(p.guard.size(), q.guard.size());
    for (size_t k = 0; k < n; ++k)
      if (!(p.guard[k] == q.guard[k]))
        return atoms[p.guard[k].atom].dep == Dep::Uniform ? separating(p, q) : &p.guard[k];
    return separating(p, q);
  }

  // The innermost decision before an event (within the first `len` literals)
  // that the other path did not take the same way: the branch the event sits in.
  const Lit *innermost(const Path &p, const Path &q, size_t len) {
    len = std::min(len, p.guard.size());
    for (size_t k = len; k-- > 0;) {
      const Lit &l = p.guard[k];
      if (atoms[l.atom].dep == Dep::Uniform)
        continue;
      bool shared = false;
      for (const auto &m : q.guard)
        shared = shared || (m == l && m.loc == l.loc);
      if (!shared)
        return &l;
    }
    return splitLit(p, q);
  }

  // The last rank-dependent decision on a path: the condition of its early exit.
  const Lit *lastLit(const Path &p) {
    for (auto it = p.guard.rbegin(); it != p.guard.rend(); ++it)
      if (atoms[it->atom].dep != Dep::Uniform)
        return &*it;
    return nullptr;
  }

  void noteAt(Finding &f, const Lit *l) {
    if (!l)
      return;
    const Atom &a = atoms[l->atom];
    std::string what =
        a.dep == Dep::Local ? "condition on a rank-local value" : "rank-dependent condition";
    f.notes.push_back({l->loc ? l->loc : a.loc, what + " here"});
  }

  void skipFinding(const Ev &e, const Path &runs, const Path &skips) {
    Finding f;
    f.rule = "ddp-divergent-collective";
    f.loc = e.loc;
    // An early exit explains the skip only when its condition is where the
    // two paths part; otherwise the collective sits in a branch of its own.
    const Lit *split = splitLit(skips, runs);
    const Lit *exitLit = lastLit(skips);
    if (skips.exit != ExitKind::None && skips.exit != ExitKind::Terminate && isErrorCheck(exitLit) &&
        (skips.exitLoc == 0 || skips.exitLoc < e.loc)) {
      reportErrorExit(exitLit, e, skips);
      return;
    }
    if (isErrorCheck(split)) {
      if (skips.exit != ExitKind::None && skips.exit != ExitKind::Terminate)
        reportErrorExit(split, e, skips);
      return;
    }
    // ...and only when the exit comes before the collective (Loc ids follow
    // source order): a `return` at the end of the function skips nothing.
    if (skips.exit != ExitKind::None && skips.exit != ExitKind::Terminate && split && exitLit &&
        split->atom == exitLit->atom && split->loc == exitLit->loc &&
        (skips.exitLoc == 0 || skips.exitLoc < e.loc)) {
      f.message = eventName(e) + " is never reached by " + who(exitLit) + ": they " +
                  exitWord(skips.exit) + " early while the other ranks block in it" + kFixAdvice;
      noteAt(f, exitLit);
      report(std::move(f), exitLit);
      return;
    }
    const Lit *l = innermost(runs, skips, e.guardLen);
    f.message = eventName(e) + " runs only on " + who(l) +
                "; the other ranks skip it and the job hangs" + kFixAdvice;
    noteAt(f, l);
    report(std::move(f), l);
  }

  // Aligns the collective sequences of two paths that different ranks take
  // (a longest common subsequence that prefers pairing the very same call) and
  // reports the first place where they part: a collective only one side
  // issues, or two collectives issued in another order.  Later differences
  // of the same pair are consequences of the first.
  void align(const Path &pa, const Path &pb, std::vector<Ev> a, std::vector<Ev> b) {
    const size_t kMax = 64;
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
    if (fa == n && fb == m)
      return;
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
        const Lit *l = innermost(aFirst ? pa : pb, aFirst ? pb : pa, e.guardLen);
        Finding f;
        f.rule = "ddp-divergent-collective";
        f.loc = e.loc;
        f.message = eventName(e) + " runs in a different order across ranks: " + who(l) +
                    " issue '" + e.op + "' where the others issue '" + o.op +
                    "'; issue the collectives in the same order on every rank";
        noteAt(f, l);
        report(std::move(f), l);
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

  // A throw decided only by uniform checks is the same on every rank: the
  // job is failing everywhere.  One rank's throw (under `rank == 0`, or on a
  // failed status) is not: it is reported like any other early exit.
  bool errorPath(const Path &p) {
    if (p.exit != ExitKind::Throw)
      return false;
    for (const auto &l : p.guard)
      if (atoms[l.atom].dep != Dep::Uniform)
        return false;
    return true;
  }

  void comparePaths(const std::vector<Path> &paths) {
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

  LoopResult &analyzeLoop(const Node &n) {
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
    size_t before = divergence.size();

    // (a) iterations that complete with different collectives.
    std::vector<Path> completing;
    for (const auto &p : lr.bodyPaths)
      if (p.exit == ExitKind::None || p.exit == ExitKind::Continue)
        completing.push_back(p);
    comparePaths(completing);
    // (b) ranks that leave the loop early skip later iterations' collectives.
    // Independent of (a): an early stop is its own bug, with its own condition.
    size_t beforeExit = divergence.size();
    if (!all.empty()) {
      for (const auto &p : lr.bodyPaths) {
        if (p.exit == ExitKind::None || p.exit == ExitKind::Continue ||
            p.exit == ExitKind::Terminate)
          continue;
        const Lit *sep = lastLit(p);
        if (!sep)
          continue;
        if (isErrorCheck(sep)) {
          reportErrorExit(sep, iter.empty() ? all[0] : iter[0], p);
          continue;
        }
        // Compare with the completing path closest to p: the same decisions
        // but the exit's, so other branches do not blur the difference.
        std::vector<const Path *> order;
        order.reserve(completing.size());
        for (const auto &q : completing)
          order.push_back(&q);
        // Literals count with their position: the same decision at the same branch.
        auto distance = [&](const Path &q) {
          size_t same = 0;
          for (const auto &l : p.guard)
            for (const auto &m : q.guard)
              same += l == m && l.loc == m.loc;
          return p.guard.size() + q.guard.size() - 2 * same;
        };
        std::stable_sort(order.begin(), order.end(),
                         [&](const Path *x, const Path *y) { return distance(*x) < distance(*y); });
        for (const Path *qp : order) {
          const Path &q = *qp;
          if (!pairFeasible(p.guard, q.guard))
            continue;
          if (distance(q) > 2)
            break; // only the path that differs in the exit's decision alone
          auto ps = syncOnly(p.seq), qs = syncOnly(q.seq);
          long d = firstDiff(ps, qs);
          const Ev &e = (d >= 0 && size_t(d) < qs.size()) ? qs[d] : (iter.empty() ? all[0] : iter[0]);
          Finding f;
          f.rule = "ddp-divergent-collective";
          f.loc = e.loc;
          f.message = eventName(e) + " is skipped by " + who(sep) + ": they " + exitWord(p.exit) +
                      " while the other ranks run " +
                      (d >= 0 && size_t(d) < qs.size() ? "it" : "further iterations") +
                      "; agree on the decision first (allreduce a stop flag) so every rank "
                      "leaves the loop together";
          noteAt(f, sep);
          report(std::move(f), sep);
          break;
        }
        if (divergence.size() != beforeExit)
          break;
      }
    }
    // (c) a trip count that differs across ranks.
    if (!all.empty() && divergence.size() == beforeExit && n.trip != Dep::Uniform) {
      const Ev &e = iter.empty() ? all[0] : iter[0];
      Finding f;
      f.rule = "ddp-divergent-collective";
      f.loc = e.loc;
      std::string src = n.tripText.empty() ? "a rank-local value" : "'" + n.tripText + "'";
      f.message = eventName(e) + " runs in a loop whose trip count depends on " + src + ", " +
                  (n.trip == Dep::Rank ? "which depends on the rank" : "which differs across ranks") +
                  "; ranks with fewer iterations leave the others blocked in it; make every rank "
                  "run the same number of iterations (a distributed sampler, or allreduce the count)";
      f.notes.push_back({n.tripLoc ? n.tripLoc : n.loc, "trip count decided here"});
      report(std::move(f));
    }
    if (divergence.size() != before)
      loopsReported.insert(&n);
    // Compare loops by what they issue, so equal loops on both arms match.
    if (!iter.empty()) {
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
      lr.symbol.push_back(sym);
    }
    return loops.emplace(&n, std::move(lr)).first->second;
  }

  FnResult *analyze(const std::string &key) {
    const Function *fn = program.find(key);
    if (!fn)
      return nullptr;
    FnResult &r = fns[key];
    if (r.done)
      return &r;
    if (r.running)
      return nullptr; // recursion: no summary
    if (depth >= limits.maxCallDepth) {
      depthRefused = true;
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
    comparePaths(res.paths);
    fnStack.pop_back();
    --depth;
    return &res;
  }
};

Analyzer::Analyzer(const Program &program, AnalysisLimits limits)
    : impl_(new Impl(program, limits)) {
  for (const auto &f : program.functions)
    impl_->analyze(f.key);
}

Analyzer::~Analyzer() { delete impl_; }

std::vector<Finding> Analyzer::divergentCollectives() {
  auto out = impl_->divergence;
  std::sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) { return a.loc < b.loc; });
  return out;
}

std::vector<Finding> Analyzer::errorPathExits() {
  auto out = impl_->errorExits;
  std::sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) { return a.loc < b.loc; });
  return out;
}

std::vector<std::string> Analyzer::summary(const std::string &key) {
  std::vector<std::string> out;
  if (auto *r = impl_->analyze(key))
    for (const auto &e : r->summary)
      out.push_back(e.op);
  return out;
}

// --- ddp-unguarded-save ------------------------------------------------

std::vector<Finding> Analyzer::unguardedSaves() {
  Impl &I = *impl_;
  if (!I.program.distributed)
    return {};
  // Who passes a guard: every rank, one process per node (a node-local rank 0
  // test), or one rank or an unknown subset, or nobody but the creator of a
  // missing file.  A per-node writer is still many writers on shared storage.
  enum Reach { AllRanks = 0, PerNode = 1, Restricted = 2 };
  auto reach = [&](const Conj &g) {
    if (I.rankSet(g).size() <= 1 || I.probesFile(g))
      return Restricted;
    bool perNode = false;
    for (const auto &l : g) {
      const Atom &a = I.atoms[l.atom];
      if (a.kind != Cond::Kind::Atom || a.dep != Dep::Rank)
        continue;
      if (!a.localMain || !l.pol)
        return Restricted;
      perNode = true;
    }
    return perNode ? PerNode : AllRanks;
  };
  auto withLoop = [](const Conj &g, const Ev &e) {
    Conj all = g;
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
        fd.node = e.node;
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
  std::sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) { return a.loc < b.loc; });
  return out;
}

// --- ddp-rank0-io-barrier ----------------------------------------------

bool isMainOnly(const Cond &c) {
  std::set<std::int64_t> reps = {0, 1, 2, 3};
  collectConstants(c, reps);
  bool zeroMay = false;
  for (auto r : reps) {
    Tri t = evalTri(c, r);
    if (r == 0)
      zeroMay = t != Tri::False;
    else if (t != Tri::False)
      return false;
  }
  return zeroMay;
}

namespace {
struct Frame {
  const Node *block;
  size_t index;
};

// A then-arm that only returns: `if (rank != 0) return;`.
bool returnsOnly(const Node &n) {
  if (n.kind == Node::Kind::Exit)
    return n.exit == ExitKind::Return;
  return n.kind == Node::Kind::Block && n.kids.size() == 1 && returnsOnly(n.kids[0]);
}
} // namespace

std::vector<Finding> Analyzer::rank0IoWithoutBarrier(bool requireBefore) {
  Impl &I = *impl_;
  if (!I.program.distributed)
    return {};
  // What a node contributes in sync terms: its first and last sync event.
  std::function<bool(const Node &, bool, std::string &)> edge = [&](const Node &n, bool first,
                                                                     std::string &op) -> bool {
    switch (n.kind) {
    case Node::Kind::Event:
      if (n.event == EventKind::Collective || n.event == EventKind::Barrier) {
        op = n.event == EventKind::Barrier ? "barrier" : n.name;
        return true;
      }
      return false;
    case Node::Kind::Call: {
      auto *r = I.analyze(n.callee);
      if (!r || r->summary.empty())
        return false;
      const Ev &e = first ? r->summary.front() : r->summary.back();
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
  std::function<bool(const Node &)> writes = [&](const Node &n) -> bool {
    if (n.kind == Node::Kind::Event &&
        (n.event == EventKind::CheckpointWrite || n.event == EventKind::FileWrite))
      return true;
    if (n.kind == Node::Kind::Call) {
      const Function *f = I.program.find(n.callee);
      if (f && I.depth < I.limits.maxCallDepth) {
        ++I.depth;
        bool w = writes(f->body);
        --I.depth;
        return w;
      }
      return false;
    }
    for (const auto &k : n.kids)
      if (writes(k))
        return true;
    return false;
  };
  // Where every function is called from: the caller and the frames down to the call.
  std::map<std::string, std::vector<std::pair<std::string, std::vector<Frame>>>> callSites;
  // A loop whose iterations synchronise: whatever its body does, the next
  // iteration's collective comes after it.
  auto syncLoop = [&](const Node &n) {
    std::string op;
    return n.kind == Node::Kind::Loop && edge(n.kids[0], true, op);
  };
  std::set<std::string> calledInSyncLoop;
  for (const auto &f : I.program.functions) {
    std::vector<Frame> stack;
    int inSyncLoop = 0;
    std::function<void(const Node &)> index = [&](const Node &n) {
      if (n.kind == Node::Kind::Call) {
        callSites[n.callee].emplace_back(f.key, stack);
        if (inSyncLoop)
          calledInSyncLoop.insert(n.callee);
      }
      if (syncLoop(n)) {
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
  // Is the nearest collective before/after a position a barrier?  At the edge
  // of a function the search goes on at every call site (all must have one).
  std::function<bool(std::vector<Frame>, bool, const std::string &, int)> barrierNear =
      [&](std::vector<Frame> stack, bool after, const std::string &fn, int depth) -> bool {
    std::string op;
    while (!stack.empty()) {
      Frame fr = stack.back();
      stack.pop_back();
      const auto &kids = fr.block->kids;
      if (after) {
        for (size_t i = fr.index + 1; i < kids.size(); ++i)
          if (edge(kids[i], true, op))
            return op == "barrier";
      } else {
        for (size_t i = fr.index; i-- > 0;)
          if (edge(kids[i], false, op))
            return op == "barrier";
      }
    }
    auto sites = callSites.find(fn);
    if (sites == callSites.end() || depth >= 4)
      return false;
    for (const auto &[caller, frames] : sites->second)
      if (!barrierNear(frames, after, caller, depth + 1))
        return false;
    return true;
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
  std::function<bool(std::vector<Frame>, bool, const std::string &, int)> syncNear =
      [&](std::vector<Frame> stack, bool after, const std::string &fn, int depth) -> bool {
    std::string op;
    while (!stack.empty()) {
      Frame fr = stack.back();
      stack.pop_back();
      const auto &kids = fr.block->kids;
      if (after) {
        for (size_t i = fr.index + 1; i < kids.size(); ++i)
          if (edge(kids[i], true, op))
            return true;
      } else {
        for (size_t i = fr.index; i-- > 0;)
          if (edge(kids[i], false, op))
            return true;
      }
    }
    if (calledInSyncLoop.count(fn))
      return true;
    auto sites = callSites.find(fn);
    if (sites == callSites.end() || depth >= 4) {
      if (after)
        return false;
      const Function *f = I.program.find(fn);
      const bool entry = fn == "<module>" || (f && f->name == "main");
      return depth >= 4 || !entry;
    }
    for (const auto &[caller, frames] : sites->second)
      if (syncNear(frames, after, caller, depth + 1))
        return true;
    return false;
  };
  auto makeFinding = [&](const Node &n, bool missBefore, bool missAfter, bool toEnd) {
    Finding fd;
    fd.rule = "ddp-rank0-io-barrier";
    fd.loc = n.loc;
    fd.node = &n;
    fd.missingBefore = missBefore;
    fd.missingAfter = missAfter;
    fd.regionToEnd = toEnd;
    const char *what = toEnd ? "code after this early return runs only on rank 0 and writes files"
                             : "block runs only on rank 0 and writes files";
    std::string where = missBefore && missAfter ? "before or after it"
                        : missBefore            ? "before it"
                                                : "after it";
    std::string put = missBefore && missAfter ? "before and after it"
                      : missBefore            ? "before it"
                                              : "after it";
    if (toEnd && missAfter)
      put += " (after the call of this function)";
    fd.message = std::string(what) + ", with no barrier every rank reaches " + where +
                 "; other ranks may read a partial file or time out in their next collective "
                 "while rank 0 writes; put a barrier " + put;
    return fd;
  };
  std::vector<Finding> out;
  for (const auto &f : I.program.functions) {
    std::vector<Frame> stack;
    int inSyncLoop = 0;
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
      if (n.kind == Node::Kind::If && isMainOnly(n.cond) && writes(n.kids[0]) &&
          (inSyncLoop || syncNear(stack, true, f.key, 0))) {
        bool missBefore = requireBefore && (inSyncLoop || syncNear(stack, false, f.key, 0)) &&
                          !barrierNear(stack, false, f.key, 0);
        bool missAfter = !barrierNear(stack, true, f.key, 0);
        if (missBefore || missAfter)
          out.push_back(makeFinding(n, missBefore, missAfter, false));
      } else if (n.kind == Node::Kind::If && !stack.empty() &&
                 isMainOnly(Cond::negate(n.cond)) && returnsOnly(n.kids[0])) {
        // `if (rank != 0) return;` makes the rest of the function rank 0's.
        const Frame &fr = stack.back();
        bool w = false;
        for (size_t i = fr.index + 1; i < fr.block->kids.size() && !w; ++i)
          w = writes(fr.block->kids[i]);
        if (w && stack.size() == 1 && (inSyncLoop || syncNear({}, true, f.key, 0))) {
          bool missBefore = requireBefore && (inSyncLoop || syncNear(stack, false, f.key, 0)) &&
                            !barrierNear(stack, false, f.key, 0);
          bool missAfter = !barrierNear({}, true, f.key, 0);
          if (missBefore || missAfter)
            out.push_back(makeFinding(n, missBefore, missAfter, true));
        }
      }
      for (const auto &k : n.kids)
        visit(k);
    };
    visit(f.body);
  }
  return out;
}

} // namespace ddplint::core
