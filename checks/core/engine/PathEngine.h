// The path engine: what the path rules share (internal to checks/core; the
// rules in checks/core/rules include it, nothing outside the core does).
//
// Each function body becomes a set of paths: a guard (a conjunction of
// literals over condition atoms), the events on the path, and how it ended.
// Two paths can be taken by two different ranks when their uniform literals
// agree (uniform values are the same on all ranks) and their rank literals can
// be satisfied by two different ranks; if such a pair issues different
// collective sequences, the ranks diverge.  Divergence is a property of ranks,
// not of text, so `if (rank != 0) barrier(); ... if (rank == 0) barrier();` is
// correct and `if (rank == 0) allreduce();` is not.
//
// The engine finds where ranks diverge (Divergence records, in the order it
// finds them, one per collective and one per deciding branch); the rules word
// them: ddp-divergent-collective (rules/DivergentCollective.cpp) and
// ddp-error-path-exit (rules/ErrorPathExit.cpp).  ddp-unguarded-save and
// ddp-rank0-io-barrier read the paths and call summaries.
#pragma once

#include "ddplint/core/Finding.h"
#include "ddplint/core/Model.h"
#include "ddplint/core/Rules.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ddplint::core {

namespace engine {

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
  bool invariant = false; // Cond::invariant
  std::string group; // Cond::group
};

struct Lit {
  int atom;
  bool pol;
  Loc loc = 0;   // the condition that added it (an atom can be tested many times)
  int text = -1; // its spelling there (index into PathEngine::texts)
  // The spelling is of the negation (`local_rank % 2 == 1` read as "not local
  // rank 0"): it holds where the literal does not.
  bool spelledNegated = false;
  // The `if` that added it, and whether the path has left that `if`: a
  // decision already closed does not enclose what the path does next, so it
  // does not explain a collective that runs after it.
  const Node *from = nullptr;
  size_t closedAt = SIZE_MAX; // the path's event count when it left that `if`
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
  // The collective this one takes the place of when that is the next one
  // (Node::standsInFor); a loop of such events stands in for it too.
  std::string standsInFor;
  std::string head; // a loop's: its iteration's first collective ("" : op)
  const std::string &headOp() const { return head.empty() ? op : head; }
  // The group it runs on (Node::group of the event, or of the outermost call
  // that names one): a pointer into the program's nodes, which outlive it.
  const std::string *group = nullptr;
  size_t guardLen = 0; // how much of the path's guard was decided before it
  size_t at = 0;       // its index in the path's sequence (see Lit::closedAt)
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
  std::string exitVia; // the call that ends the process (`sys.exit`), for messages
  Conj exitGuard;      // the decisions that enclose the exit (not the ones left before it)
  // For a `return` or `break`, the same: verl's `if is_last_step: if rank == 0:
  // print(...); return` leaves on every rank, the rank test closed before it.
  Conj leavesUnder;
  bool leavesUnderSet = false;
  // The exit leaves a loop with the same iterations on every rank, decided
  // only by what every rank sees alike (`for k in cfg: if k in args: raise`):
  // every rank that reaches the loop leaves there, so no rank pairs it with
  // a path that runs the loop to its end.
  bool uniformExit = false;
  // The path calls its own function again (fairseq's OOM handler: `return
  // self.valid_step(sample, raise_oom=True)`): the retry issues what the
  // function issues, which no summary says yet.
  bool retries = false;
};

// Where the ranks part, as the engine found it; the rules word it.
struct Divergence {
  enum class Kind : std::uint8_t {
    ExitSkips,  // ranks that `exit` early never reach `event`
    RunsOnlyOn, // `event` runs only on the ranks of `lit`
    Order,      // `event` runs where the other ranks issue `otherOp`
    LoopExit,   // ranks that leave the loop skip `event` (or further iterations)
    TripCount,  // `event` is in `loop`, whose trip count differs across ranks
    ErrorExit,  // a rank leaves on a failed status while the others wait in `event`
  };
  Kind kind = Kind::RunsOnlyOn;
  Ev event;
  bool hasLit = false;
  Lit lit{};         // the deciding condition (when hasLit)
  ExitKind exit = ExitKind::None;
  Loc exitLoc = 0;
  std::string exitVia;        // the call that ends the process, if the exit is one
  std::string otherOp;        // Order
  bool reachesEvent = false;  // LoopExit: the leaving ranks skip `event` itself
  const Node *loop = nullptr; // TripCount
};

// Three-valued evaluation of a condition for one rank (other atoms unknown).
enum class Tri { False, True, Unknown };
Tri evalTri(const Cond &c, std::int64_t rank);
// The rank constants a condition compares against, and their neighbours.
void collectConstants(const Cond &c, std::set<std::int64_t> &out);
// Wording shared by the path rules.
// `via`: the call that ends the process (`sys.exit`), when the exit is one.
std::string exitWord(ExitKind k, const std::string &via = {});
std::string eventName(const Ev &e);

class PathEngine {
public:
  PathEngine(const Program &p, AnalysisLimits l);

  const Program &program;
  // Program::find is a scan; a program with hundreds of linked functions asks
  // it at every call of every walk.
  const Function *function(const std::string &key) const {
    auto it = byKey_.find(key);
    return it == byKey_.end() ? nullptr : it->second;
  }
  AnalysisLimits limits;

  struct FnResult {
    bool done = false, running = false;
    std::vector<Path> paths;
    std::vector<Ev> summary; // collectives a call contributes
    bool alwaysTerminates = false;
    // Every path raises (a Python `def error(msg): ...; sys.exit(msg)`, a
    // C++ `[[noreturn]] fail()` that throws): a call of it is where the
    // caller's path ends, as a `raise` written there would end it.
    bool alwaysThrows = false;
    std::string throwsVia; // how its first path leaves (`sys.exit`), for messages
    // A path that leaves the process after the helper's collectives, on a
    // rank's own health check (audiocraft's `run_step`: sync the gradients,
    // step, then `if not loss.isfinite().all(): raise`): the rank- and
    // data-dependent literals of its guard.  The call is where those ranks
    // leave while the others go on into the caller's next collective.
    Conj exitsAfter;
    ExitKind exitsAfterKind = ExitKind::None;
    std::string exitsAfterVia;
  };
  std::map<std::string, FnResult> fns;
  std::vector<Atom> atoms;
  std::vector<std::string> texts; // literals' spellings: `me == 0` and `rank == 0` share an atom
  std::map<std::string, int> atomIndex;
  std::vector<std::int64_t> reps; // representative ranks
  std::vector<Divergence> divergences; // ddp-divergent-collective
  std::vector<Divergence> errorExits;  // ddp-error-path-exit
  std::set<std::string> errorExitFns; // one error-path finding per function
  std::vector<std::string> fnStack;   // the functions being analysed
  std::set<Loc> reportedAt;
  std::set<const Node *> loopsReported;
  // Loops that only one rank runs (under `rank == 0`): their trip count has no
  // other rank to differ from; the arms around them are compared instead.
  std::set<const Node *> singleRankLoops;
  struct LoopResult {
    std::vector<Path> bodyPaths;
    std::vector<Ev> symbol;
    // Each completing iteration's settings (the uniform decisions it took)
    // and its symbol: a path that entered the loop having decided a setting
    // runs the iterations that agree with it (CLAP's `if not
    // args.parallel_eval: return` before a loop whose gather is under `if
    // args.parallel_eval:`).
    std::vector<std::pair<std::vector<Lit>, std::vector<Ev>>> bySettings;
    // The body's call sites and IO, each with the guard decided before it,
    // once per distinct (event, guard): what every path through the loop
    // carries out of it.  Built on first use.
    std::vector<Ev> carried;
    bool carriedReady = false;
  };
  std::map<const Node *, LoopResult> loops;
  int depth = 0;
  bool depthRefused = false; // a callee was skipped for depth: the summary is partial

  // Every function of the program analysed (paths, summaries, divergences).
  void analyzeAll();

  // --- limits -------------------------------------------------------------
  // Where the analysis stopped short, once per function and kind: reported
  // to the user (a finding may be missing there), never silent.
  enum class Limit : std::uint8_t { Paths, PathEvents, CompareWindow, CallDepth, ConditionCases };
  std::vector<AnalysisNotice> notices;
  std::set<std::pair<std::string, Limit>> noticed;
  void limitReached(Limit kind, std::size_t count = 0);

  // --- atoms and guards -------------------------------------------------
  int intern(const Cond &c);

  // Disjunctive normal form of c (or of !c), capped: conditions are small.
  std::vector<Conj> dnf(const Cond &c, bool pol);

  bool selfConsistent(const Conj &g);

  // The representative ranks that satisfy the guard's rank comparisons.
  std::vector<std::int64_t> rankSet(const Conj &g);

  bool hasOpaqueRank(const Conj &g);

  bool probesFile(const Conj &g);

  // A literal of `a` that depends on the rank (or rank-local data) and that
  // `b` does not share: the only kind of decision that can part two ranks.
  bool separatedBy(const Conj &a, const Conj &b);

  // Can two different ranks take p and q in the same run?
  bool pairFeasible(const Conj &p, const Conj &q);

  // --- walking ----------------------------------------------------------
  static bool live(const Path &p) { return p.exit == ExitKind::None; }

  std::map<const Node *, bool> relevance;
  // Whether a node can change a path: an event, a call, an exit, or a loop or
  // branch that contains one.
  bool relevant(const Node &n);
  bool anyKid(const Node &n, std::map<const Node *, bool> &memo,
              bool (PathEngine::*test)(const Node &));
  // A uniform `if` whose arms hold no collective, barrier or exit (writes and
  // prints under argument flags): every rank takes the same arm, so its arms
  // are followed one after the other on the same path instead of doubling the
  // paths.  Twenty such `if`s before a training loop are one path, not 2^20.
  bool foldable(const Node &ifNode);
  bool holdsSync(const Node &n);
  static bool plainUniform(const Cond &c);
  std::map<const Node *, bool> syncRelevance;

  static bool sameEvents(const Path &a, const Path &b);

  // Two paths with the same events whose guards differ only in the polarity
  // of one uniform literal are one path without that literal: the uniform
  // decision does not matter for them.  Keeps sequences of uniform ifs linear.
  void mergeUniform(std::vector<Path> &paths);
  void mergeLeftUniform(std::vector<Path> &paths);

  // Keeps at most `max` paths, spread over the rank decisions they took (a
  // class of ranks is never dropped whole while another keeps many paths);
  // reports the limit.
  void cap(std::vector<Path> &paths, std::size_t max);
  void cap(std::vector<Path> &paths) { cap(paths, limits.maxPaths); }

  std::vector<Path> walk(const Node &n, std::vector<Path> in);

  static std::vector<Ev> syncOnly(const std::vector<Ev> &seq);

  static bool barriersOnly(const std::vector<Ev> &seq);

  // Index of the first difference between the sync sequences, or -1.
  static long firstDiff(const std::vector<Ev> &a, const std::vector<Ev> &b);

  // --- divergences --------------------------------------------------------
  // The literal of `p` that separates it from `q` (absent or negated there).
  const Lit *separating(const Path &p, const Path &q);

  // "ranks where 'rank == 0' holds" for a literal (nullptr: "some ranks").
  std::string who(const Lit *l) const;
  // The literal's spelling where it was tested (else its atom's).
  std::string spelling(const Lit &l) const;
  // The position of the condition that added the literal.
  Loc condLoc(const Lit &l) const;

  bool isErrorCheck(const Lit *l) const { return l && atoms[l->atom].errorCheck; }

  // A rank that leaves on a failed call's status: its own finding, once per
  // function, at the exit (a check macro's hidden return points at the macro).
  void reportErrorExit(const Lit *l, const Ev &e, const Path &skips);

  // One finding per collective, and one per rank-dependent decision: the
  // paths that one branch separates differ in many places, all caused by it.
  std::set<Loc> reportedSplits;
  void report(Divergence d, const Lit *split = nullptr);

  // The literal where two paths split: their guards are built in execution
  // order, so the first position where they differ is the branch that
  // separated them.
  const Lit *splitLit(const Path &p, const Path &q);

  // The innermost decision before an event (within the first `len` literals)
  // that the other path did not take the same way: the branch the event sits in.
  const Lit *innermost(const Path &p, const Path &q, size_t len, size_t at);

  // The last rank-dependent decision on a path: the condition of its early exit.
  const Lit *lastLit(const Path &p);
  const Lit *leavingLit(const Path &p);

  void skipFinding(const Ev &e, const Path &runs, const Path &skips);

  // Aligns the collective sequences of two paths that different ranks take
  // (a longest common subsequence that prefers pairing the very same call) and
  // reports the first place where they part: a collective only one side
  // issues, or two collectives issued in another order.  Later differences
  // of the same pair are consequences of the first.
  void align(const Path &pa, const Path &pb, std::vector<Ev> a, std::vector<Ev> b);

  // A throw decided only by uniform checks is the same on every rank: the
  // job is failing everywhere.  One rank's throw (under `rank == 0`, or on a
  // failed status) is not: it is reported like any other early exit.
  bool errorPath(const Path &p);

  void comparePaths(const std::vector<Path> &paths);

  LoopResult &analyzeLoop(const Node &n);
  void carry(LoopResult &lr);

  FnResult *analyze(const std::string &key);

  // --- who runs what ------------------------------------------------------
  // Who passes a guard (with the loop guard an event carries out of its loop).
  // `at`: the event's index in its path.  A file probe closed before it on
  // the arm where the file exists (`if not os.path.exists(train_dir):
  // exit(1)` at start-up) checked the run's inputs, there for every rank; it
  // says nothing of who writes later.
  Reach reach(const Conj &g, size_t at = SIZE_MAX);
  static Conj withLoop(const Conj &g, const Ev &e);
  // Who may enter a function: the program's roots are entered by every rank;
  // a callee by whoever reaches one of its calls, here or in another module
  // (Program::externalCalls).
  Reach entered(const std::string &key, int depth = 0);
  // Who may reach `target`, a node of function `key`: as entered(), but a
  // caller's path whose guard tests the same setting the other way does not
  // reach it (RWKV's `if trainer.is_global_zero or 'deepspeed_stage_3' in
  // args.strategy: my_save(args, ...)`, and in my_save `if 'deepspeed_stage_3'
  // in args.strategy: ... else: torch.save(...)`).  The setting is matched by
  // its spelling, the same words in both functions.
  Reach enteredGiven(const std::string &key, const Node *target);
  std::map<std::string, std::vector<std::pair<std::string, Conj>>> callerGuards_;
  std::map<std::string, std::vector<std::pair<std::string, Reach>>> callers_;
  std::map<std::string, Reach> entered_;
  bool callersReady_ = false;
  std::unordered_map<std::string, const Function *> byKey_;
};

} // namespace engine
} // namespace ddplint::core
