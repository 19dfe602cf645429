// Unit tests of the analysis core on hand-built program models.  This target
// links ddplint-core only: if the core ever needs Clang, it stops linking.
//
// Loc values are arbitrary handles; tests number them in "source order"
// (conditions before the events they guard), as the Clang frontend does.
#include "ddplint/core/Rules.h"
#include "ddplint/core/Catalog.h"
#include "ddplint/core/Model.h"
#include "ddplint/core/ModelIO.h"
#include "engine/PathEngine.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace ddplint::core;

namespace {

// --- model builders -----------------------------------------------------

Cond rank(CmpOp op, std::int64_t value, Loc loc, std::string text = "rank", std::int64_t mod = 0) {
  Cond c = Cond::rankCmp(op, value, mod);
  c.loc = loc;
  c.text = std::move(text);
  return c;
}

Cond atom(std::string key, Dep dep, Loc loc) {
  Cond c = Cond::atom(key, dep);
  c.loc = loc;
  c.text = key;
  return c;
}

Node coll(std::string op, Loc loc) { return Node::makeEvent(EventKind::Collective, std::move(op), loc); }
Node barrier(Loc loc) { return Node::makeEvent(EventKind::Barrier, "barrier", loc); }
Node p2p(std::string op, Loc loc) { return Node::makeEvent(EventKind::PointToPoint, std::move(op), loc); }
Node save(Loc loc, Dep pathDep = Dep::Uniform, std::string op = "torch::save") {
  Node n = Node::makeEvent(EventKind::CheckpointWrite, std::move(op), loc);
  n.pathDep = pathDep;
  return n;
}
Node fileWrite(Loc loc) {
  Node n = Node::makeEvent(EventKind::FileWrite, "std::ofstream", loc);
  n.pathDep = Dep::Uniform;
  return n;
}
Node call(std::string key, Loc loc) { return Node::makeCall(key, key, loc); }
Node exitNode(ExitKind k, Loc loc) { return Node::makeExit(k, loc); }
Node ifThen(Cond c, std::vector<Node> thenB, Loc loc) {
  return Node::makeIf(std::move(c), Node::block(std::move(thenB)), Node::block(), loc);
}
Node ifElse(Cond c, std::vector<Node> thenB, std::vector<Node> elseB, Loc loc) {
  return Node::makeIf(std::move(c), Node::block(std::move(thenB)), Node::block(std::move(elseB)), loc);
}
Node loop(Dep trip, std::vector<Node> body, Loc loc, Loc tripLoc = 0, std::string tripText = "") {
  return Node::makeLoop(trip, std::move(tripText), tripLoc, Node::block(std::move(body)), loc);
}

Function fn(std::string key, std::vector<Node> body, Loc loc = 0) {
  Function f;
  f.key = key;
  f.name = key;
  f.loc = loc;
  f.body = Node::block(std::move(body));
  return f;
}

Program program(std::vector<Function> fns) {
  Program p;
  p.functions = std::move(fns);
  return p;
}

std::vector<Loc> locsOf(const std::vector<Finding> &fs) {
  std::vector<Loc> out;
  for (const auto &f : fs)
    out.push_back(f.loc);
  return out;
}

std::vector<Loc> noteLocs(const Finding &f) {
  std::vector<Loc> out;
  for (const auto &n : f.notes)
    out.push_back(n.loc);
  return out;
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

std::vector<Finding> divergent(const Program &p) {
  RuleRunner a(p);
  return a.run(RuleId::DivergentCollective);
}

// ddp-rank0-io-barrier asks for the barrier before (after) the block with a fix-it.
bool asks(const Finding &f, FixKind kind) {
  for (const auto &h : f.fixes)
    if (h.kind == kind)
      return true;
  return false;
}

// ddp-rank0-io-barrier with RequireBarrierBefore: true (the default asks
// only for the barrier after).
RuleOptions withBefore() {
  return RuleOptions::of(RuleId::Rank0IoBarrier, [](std::string_view name) {
    return name == "RequireBarrierBefore" ? std::optional<std::string>("true") : std::nullopt;
  });
}

} // namespace

// ===========================================================================
// The model itself
// ===========================================================================

TEST_CASE("Cond builders and dependence", "[model]") {
  CHECK(Cond::constant(true).dependence() == Dep::Uniform);
  CHECK(Cond::rankCmp(CmpOp::EQ, 0).dependence() == Dep::Rank);
  CHECK(Cond::atom("ws", Dep::Uniform).dependence() == Dep::Uniform);
  CHECK(Cond::atom("loss", Dep::Local).dependence() == Dep::Local);
  // join takes the strongest: Local > Rank > Uniform.
  CHECK(Cond::both(Cond::rankCmp(CmpOp::EQ, 0), Cond::atom("loss", Dep::Local)).dependence() == Dep::Local);
  CHECK(Cond::either(Cond::atom("ws", Dep::Uniform), Cond::rankCmp(CmpOp::NE, 0)).dependence() == Dep::Rank);
  CHECK(Cond::negate(Cond::rankCmp(CmpOp::EQ, 0)).dependence() == Dep::Rank);
  // Negating a constant folds it.
  Cond f = Cond::negate(Cond::constant(true));
  CHECK(f.kind == Cond::Kind::Const);
  CHECK_FALSE(f.constValue);
  Cond m = Cond::rankCmp(CmpOp::EQ, 0, 2);
  CHECK(m.mod == 2);
  CHECK(join(Dep::Uniform, Dep::Rank) == Dep::Rank);
  CHECK(join(Dep::Local, Dep::Rank) == Dep::Local);
}

TEST_CASE("Program::find", "[model]") {
  Program p = program({fn("a", {}), fn("b", {})});
  REQUIRE(p.find("b") != nullptr);
  CHECK(p.find("b")->name == "b");
  CHECK(p.find("c") == nullptr);
}

// ===========================================================================
// ddp-divergent-collective
// ===========================================================================

TEST_CASE("namesRecordFile: a model's settings are a record, its weights are not", "[model]") {
  CHECK(namesRecordFile("args.json"));
  CHECK(namesRecordFile("save_model_config_path"));
  CHECK(namesRecordFile("model_config.json"));
  CHECK(namesRecordFile("os.path.join(out, \"model\", \"config.json\")"));
  CHECK_FALSE(namesRecordFile("model.pt"));
  CHECK_FALSE(namesRecordFile("save_model_path"));
  CHECK_FALSE(namesRecordFile("model_params_file"));
  CHECK_FALSE(namesRecordFile("config_ckpt.pt"));
  CHECK(namesWeightsFile("model_step_100.pt"));
  CHECK(namesWeightsFile("optimizer_state"));
  CHECK_FALSE(namesWeightsFile("model.json"));
  CHECK(namesEvaluationFile("scores.json"));
  CHECK_FALSE(namesEvaluationFile("best_scores_model.pth"));
}

TEST_CASE("a collective only rank 0 reaches is one finding, with a note at the condition",
          "[divergent]") {
  // if (rank == 0) { allreduce(); }
  Program p = program({fn("main", {ifThen(rank(CmpOp::EQ, 0, 5, "rank == 0"), {coll("allreduce", 10)}, 4)})});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].rule == "ddp-divergent-collective");
  CHECK(fs[0].loc == 10);
  CHECK(contains(fs[0].message, "'allreduce'"));
  CHECK(contains(fs[0].message, "rank == 0"));
  REQUIRE(fs[0].notes.size() == 1);
  CHECK(fs[0].notes[0].loc == 5);
}

TEST_CASE("main process first: a barrier on each class of ranks is not flagged", "[divergent]") {
  // if (rank != 0) barrier(); prepare(); if (rank == 0) barrier();
  Program p = program({fn("main", {
      ifThen(rank(CmpOp::NE, 0, 5, "rank != 0"), {barrier(6)}, 4),
      fileWrite(8),
      ifThen(rank(CmpOp::EQ, 0, 11, "rank == 0"), {barrier(12)}, 10),
  })});
  CHECK(divergent(p).empty());
}

TEST_CASE("main process first with the same atom negated is not flagged", "[divergent]") {
  // if (!is_main) barrier(); ...; if (is_main) barrier();  with is_main == (rank == 0)
  Program p = program({fn("main", {
      ifThen(Cond::negate(rank(CmpOp::EQ, 0, 5, "is_main")), {barrier(6)}, 4),
      ifThen(rank(CmpOp::EQ, 0, 11, "is_main"), {barrier(12)}, 10),
  })});
  CHECK(divergent(p).empty());
}

TEST_CASE("identical arms are not flagged", "[divergent]") {
  Program p = program({fn("main", {ifElse(rank(CmpOp::EQ, 0, 5), {coll("allreduce", 10), barrier(11)},
                                          {coll("allreduce", 20), barrier(21)}, 4)})});
  CHECK(divergent(p).empty());
}

TEST_CASE("a condition on the world size alone is uniform", "[divergent]") {
  // if (world_size > 1) allreduce();
  Program p = program({fn("main", {ifThen(atom("world_size > 1", Dep::Uniform, 5), {coll("allreduce", 10)}, 4)})});
  CHECK(divergent(p).empty());
}

TEST_CASE("a uniform atom and a rank comparison: only the rank part diverges", "[divergent]") {
  // if (world_size > 1 && rank == 0) allreduce();
  Program p = program({fn("main", {ifThen(Cond::both(atom("ws", Dep::Uniform, 5), rank(CmpOp::EQ, 0, 6)),
                                          {coll("allreduce", 10)}, 4)})});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  CHECK(noteLocs(fs[0]) == std::vector<Loc>{6});
}

TEST_CASE("a different order of the same collectives is exactly one finding", "[divergent]") {
  // if (rank == 0) { allreduce(); barrier(); } else { barrier(); allreduce(); }
  Program p = program({fn("main", {ifElse(rank(CmpOp::EQ, 0, 5), {coll("allreduce", 10), barrier(11)},
                                          {barrier(20), coll("allreduce", 21)}, 4)})});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  CHECK(contains(fs[0].message, "different order"));
  CHECK(noteLocs(fs[0]) == std::vector<Loc>{5});
}

TEST_CASE("different collectives on two arms are one finding", "[divergent]") {
  // if (rank == 0) broadcast(); else allreduce();
  Program p = program({fn("main", {ifElse(rank(CmpOp::EQ, 0, 5), {coll("broadcast", 10)},
                                          {coll("allreduce", 20)}, 4)})});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
}

TEST_CASE("an early rank-dependent return before a collective is one finding", "[divergent]") {
  // if (rank == 0) return; allreduce();
  Program p = program({fn("main", {
      ifThen(rank(CmpOp::EQ, 0, 5, "rank == 0"), {exitNode(ExitKind::Return, 6)}, 4),
      coll("allreduce", 10),
  })});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  CHECK(contains(fs[0].message, "never reached"));
  CHECK(contains(fs[0].message, "return"));
  CHECK(noteLocs(fs[0]) == std::vector<Loc>{5});
}

TEST_CASE("a rank-dependent throw before a collective is one finding", "[divergent]") {
  Program p = program({fn("main", {
      ifThen(rank(CmpOp::GT, 0, 5), {exitNode(ExitKind::Throw, 6)}, 4),
      barrier(10),
  })});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  CHECK(contains(fs[0].message, "throw"));
}

TEST_CASE("a uniform early return is not flagged", "[divergent]") {
  Program p = program({fn("main", {
      ifThen(atom("args.dry_run", Dep::Uniform, 5), {exitNode(ExitKind::Return, 6)}, 4),
      coll("allreduce", 10),
  })});
  CHECK(divergent(p).empty());
}

TEST_CASE("break on a rank-local value in a loop with a collective is one finding", "[divergent][loop]") {
  // for (...) { allreduce(); if (loss < best) break; }
  Program p = program({fn("main", {loop(Dep::Uniform, {
      coll("allreduce", 10),
      ifThen(atom("loss < best", Dep::Local, 15), {exitNode(ExitKind::Break, 16)}, 14),
  }, 2)})});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  CHECK(contains(fs[0].message, "break"));
  CHECK(contains(fs[0].message, "rank-local"));
  CHECK(noteLocs(fs[0]) == std::vector<Loc>{15});
}

TEST_CASE("break on an agreed (uniform) stop flag is not flagged", "[divergent][loop]") {
  Program p = program({fn("main", {loop(Dep::Uniform, {
      coll("allreduce", 10),
      ifThen(atom("stop_flag", Dep::Uniform, 15), {exitNode(ExitKind::Break, 16)}, 14),
  }, 2)})});
  CHECK(divergent(p).empty());
}

TEST_CASE("continue on a rank-local value that skips a collective is one finding", "[divergent][loop]") {
  // for (...) { if (!isfinite(loss)) continue; allreduce(); }
  Program p = program({fn("main", {loop(Dep::Uniform, {
      ifThen(atom("!isfinite(loss)", Dep::Local, 15), {exitNode(ExitKind::Continue, 16)}, 14),
      coll("allreduce", 20),
  }, 2)})});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 20);
  CHECK(contains(fs[0].message, "continue"));
  CHECK(noteLocs(fs[0]) == std::vector<Loc>{15});
}

TEST_CASE("a loop whose trip count is rank-local is one finding at its collective", "[divergent][loop]") {
  // for (auto &b : local_shard) allreduce();
  Program p = program({fn("main", {loop(Dep::Local, {coll("allreduce", 10)}, 2, 3, "local_shard")})});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  CHECK(contains(fs[0].message, "trip count"));
  CHECK(contains(fs[0].message, "local_shard"));
  CHECK(noteLocs(fs[0]) == std::vector<Loc>{3});
}

TEST_CASE("a loop whose trip count is uniform is not flagged", "[divergent][loop]") {
  Program p = program({fn("main", {loop(Dep::Uniform, {coll("allreduce", 10)}, 2, 3, "epochs")})});
  CHECK(divergent(p).empty());
}

TEST_CASE("a loop with a rank-local trip count but no collective is not flagged", "[divergent][loop]") {
  Program p = program({fn("main", {loop(Dep::Local, {fileWrite(10), p2p("send", 11)}, 2, 3)})});
  CHECK(divergent(p).empty());
}

TEST_CASE("equal loops on both arms of a rank branch are not flagged", "[divergent][loop]") {
  Program p = program({fn("main", {ifElse(rank(CmpOp::EQ, 0, 5),
                                          {loop(Dep::Uniform, {coll("allreduce", 10)}, 9)},
                                          {loop(Dep::Uniform, {coll("allreduce", 20)}, 19)}, 4)})});
  CHECK(divergent(p).empty());
}

TEST_CASE("point-to-point under a rank condition is never flagged", "[divergent]") {
  // if (rank == 0) send(...); else recv(...);
  Program p = program({fn("main", {
      ifElse(rank(CmpOp::EQ, 0, 5), {p2p("send", 10)}, {p2p("recv", 20)}, 4),
      ifThen(rank(CmpOp::EQ, 1, 25), {p2p("send", 30), p2p("recv", 31)}, 24),
  })});
  CHECK(divergent(p).empty());
}

TEST_CASE("file writes under a rank condition are not collectives", "[divergent]") {
  Program p = program({fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {save(10), fileWrite(11)}, 4)})});
  CHECK(divergent(p).empty());
}

TEST_CASE("rank % 2 == 0 is a class of ranks", "[divergent]") {
  SECTION("a collective on even ranks only") {
    Program p = program({fn("main", {ifThen(rank(CmpOp::EQ, 0, 5, "rank % 2 == 0", 2), {coll("allgather", 10)}, 4)})});
    auto fs = divergent(p);
    REQUIRE(fs.size() == 1);
    CHECK(fs[0].loc == 10);
    CHECK(contains(fs[0].message, "rank % 2 == 0"));
  }
  SECTION("even and odd ranks each run one barrier") {
    Program p = program({fn("main", {
        ifThen(rank(CmpOp::EQ, 0, 5, "rank % 2 == 0", 2), {barrier(10)}, 4),
        ifThen(rank(CmpOp::EQ, 1, 15, "rank % 2 == 1", 2), {barrier(20)}, 14),
    })});
    CHECK(divergent(p).empty());
  }
}

TEST_CASE("rank classes: rank < 2 and rank >= 2 each run one barrier", "[divergent]") {
  Program p = program({fn("main", {
      ifThen(rank(CmpOp::LT, 2, 5), {barrier(10)}, 4),
      ifThen(rank(CmpOp::GE, 2, 15), {barrier(20)}, 14),
  })});
  CHECK(divergent(p).empty());
}

TEST_CASE("an opaque rank-dependent atom guarding a collective is flagged", "[divergent]") {
  // if (is_leader(rank)) barrier();   (unknown predicate of the rank)
  Program p = program({fn("main", {ifThen(atom("is_leader", Dep::Rank, 5), {barrier(10)}, 4)})});
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
}

// ---- interprocedural ------------------------------------------------------

TEST_CASE("a call of a helper that runs allreduce under rank 0 is flagged at the call", "[divergent][interproc]") {
  Program p = program({
      fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("sync_grads", 10)}, 4)}),
      fn("sync_grads", {coll("allreduce", 100)}),
  });
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  CHECK(contains(fs[0].message, "sync_grads"));
  CHECK(contains(fs[0].message, "allreduce"));
  CHECK(noteLocs(fs[0]) == std::vector<Loc>{5});
}

TEST_CASE("the helper may be defined before its caller", "[divergent][interproc]") {
  Program p = program({
      fn("sync_grads", {coll("allreduce", 100)}),
      fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("sync_grads", 10)}, 4)}),
  });
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
}

TEST_CASE("a transitive helper counts as a collective", "[divergent][interproc]") {
  Program p = program({
      fn("main", {ifThen(rank(CmpOp::NE, 0, 5), {call("outer", 10)}, 4)}),
      fn("outer", {call("inner", 50)}),
      fn("inner", {barrier(100)}),
  });
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
}

TEST_CASE("a helper without collectives under a rank branch is not flagged", "[divergent][interproc]") {
  Program p = program({
      fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("log", 10)}, 4)}),
      fn("log", {fileWrite(100)}),
  });
  CHECK(divergent(p).empty());
}

TEST_CASE("calls of one helper on both arms are not flagged", "[divergent][interproc]") {
  Program p = program({
      fn("main", {ifElse(rank(CmpOp::EQ, 0, 5), {call("sync", 10)}, {call("sync", 20)}, 4)}),
      fn("sync", {coll("allreduce", 100)}),
  });
  CHECK(divergent(p).empty());
}

TEST_CASE("a divergence inside a helper is reported once, in the helper", "[divergent][interproc]") {
  Program p = program({
      fn("main", {call("helper", 10), call("helper", 11)}),
      fn("helper", {ifThen(rank(CmpOp::EQ, 0, 95), {barrier(100)}, 94)}),
  });
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 100);
}

TEST_CASE("summary() is the collective sequence of a call, transitively", "[summary]") {
  Program p = program({
      fn("a", {coll("broadcast", 1), call("b", 2), barrier(3)}),
      fn("b", {call("c", 20), coll("allgather", 21)}),
      fn("c", {coll("allreduce", 30), p2p("send", 31), save(32)}),
      fn("none", {fileWrite(40)}),
  });
  RuleRunner an(p);
  CHECK(an.collectiveSummary("c") == std::vector<std::string>{"allreduce"});
  CHECK(an.collectiveSummary("b") == std::vector<std::string>{"allreduce", "allgather"});
  CHECK(an.collectiveSummary("a") == std::vector<std::string>{"broadcast", "allreduce", "allgather", "barrier"});
  CHECK(an.collectiveSummary("none").empty());
  CHECK(an.collectiveSummary("unknown").empty());
  CHECK(an.run(RuleId::DivergentCollective).empty());
}

TEST_CASE("summary() terminates on recursion", "[summary]") {
  auto start = std::chrono::steady_clock::now();
  Program p = program({
      // self-recursive: barrier; if (n > 0) self();
      fn("self", {barrier(1), ifThen(atom("n > 0", Dep::Uniform, 2), {call("self", 3)}, 2)}),
      // mutual recursion
      fn("ping", {coll("allreduce", 10), call("pong", 11)}),
      fn("pong", {coll("broadcast", 20), call("ping", 21)}),
  });
  RuleRunner an(p);
  CHECK(an.collectiveSummary("self") == std::vector<std::string>{"barrier"});
  auto ping = an.collectiveSummary("ping");
  REQUIRE_FALSE(ping.empty());
  CHECK(ping.front() == "allreduce");
  auto pong = an.collectiveSummary("pong");
  REQUIRE_FALSE(pong.empty());
  CHECK(pong.front() == "broadcast");
  CHECK(an.run(RuleId::DivergentCollective).empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("a deep call chain beyond maxCallDepth terminates", "[summary]") {
  std::vector<Function> fns;
  const int n = 40;
  for (int i = 0; i < n; ++i)
    fns.push_back(i + 1 < n ? fn("f" + std::to_string(i), {call("f" + std::to_string(i + 1), Loc(i + 1))})
                            : fn("f" + std::to_string(i), {barrier(1000)}));
  Program p = program(std::move(fns));
  auto start = std::chrono::steady_clock::now();
  RuleRunner an(p);
  CHECK(an.collectiveSummary("f39") == std::vector<std::string>{"barrier"});
  CHECK(an.collectiveSummary("f38") == std::vector<std::string>{"barrier"});
  CHECK(an.run(RuleId::DivergentCollective).empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("a call chain within maxCallDepth is summarised completely, callers first", "[summary]") {
  std::vector<Function> fns;
  const int n = 12;
  for (int i = 0; i < n; ++i)
    fns.push_back(i + 1 < n ? fn("f" + std::to_string(i), {call("f" + std::to_string(i + 1), Loc(i + 1))})
                            : fn("f" + std::to_string(i), {barrier(1000)}));
  fns.push_back(fn("main", {ifThen(rank(CmpOp::EQ, 0, 2000), {call("f0", 2001)}, 2000)}));
  Program p = program(std::move(fns));
  RuleRunner an(p);
  CHECK(an.collectiveSummary("f0") == std::vector<std::string>{"barrier"});
  CHECK(locsOf(an.run(RuleId::DivergentCollective)) == std::vector<Loc>{2001});
}

// Known bug (reported): a summary cut short by maxCallDepth is cached as the
// function's final summary, so which helpers count as collectives depends on
// the order of the functions in the program.  Here f0..f39 are listed callers
// first: f15 is first analysed at depth 15, its callee is refused, and f15
// keeps an empty summary although it reaches a barrier.
TEST_CASE("a summary cut by the depth limit is not cached", "[fixed-bug][summary]") {
  std::vector<Function> fns;
  const int n = 40;
  for (int i = 0; i < n; ++i)
    fns.push_back(i + 1 < n ? fn("f" + std::to_string(i), {call("f" + std::to_string(i + 1), Loc(i + 1))})
                            : fn("f" + std::to_string(i), {barrier(1000)}));
  Program p = program(std::move(fns));
  RuleRunner an(p);
  CHECK(an.collectiveSummary("f15") == std::vector<std::string>{"barrier"});
  CHECK(an.collectiveSummary("f30") == std::vector<std::string>{"barrier"});
}

// ---- exits that end the whole job ---------------------------------------------

TEST_CASE("a job-wide abort under a rank condition is not a divergence", "[divergent][exit]") {
  // if (rank == 0 && bad) MPI_Abort(...); allreduce();
  Program p = program({fn("main", {
      ifThen(rank(CmpOp::EQ, 0, 5), {exitNode(ExitKind::Terminate, 6)}, 4),
      coll("allreduce", 10),
  })});
  CHECK(divergent(p).empty());
}

TEST_CASE("a helper that always terminates acts as an abort at its call", "[divergent][exit]") {
  Program p = program({
      fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("fatal", 6)}, 4), coll("allreduce", 10)}),
      fn("fatal", {fileWrite(90), exitNode(ExitKind::Terminate, 91)}),
      // terminates on every path, through another helper
      fn("fatal2", {ifElse(atom("verbose", Dep::Uniform, 80), {call("fatal", 81)}, {exitNode(ExitKind::Terminate, 82)}, 79)}),
      fn("main2", {ifThen(rank(CmpOp::EQ, 0, 205), {call("fatal2", 206)}, 204), coll("allreduce", 210)}),
  });
  CHECK(divergent(p).empty());
}

TEST_CASE("a helper that only sometimes terminates does not excuse a rank return", "[divergent][exit]") {
  Program p = program({
      fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("maybe_fatal", 6), exitNode(ExitKind::Return, 7)}, 4),
                  coll("allreduce", 10)}),
      fn("maybe_fatal", {ifThen(atom("err", Dep::Uniform, 90), {exitNode(ExitKind::Terminate, 91)}, 89)}),
  });
  auto fs = divergent(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
}

// ===========================================================================
// isMainOnly
// ===========================================================================

TEST_CASE("isMainOnly truth table", "[isMainOnly]") {
  CHECK(isMainOnly(Cond::rankCmp(CmpOp::EQ, 0)));
  CHECK_FALSE(isMainOnly(Cond::rankCmp(CmpOp::NE, 0)));
  CHECK(isMainOnly(Cond::rankCmp(CmpOp::LT, 1)));
  CHECK(isMainOnly(Cond::rankCmp(CmpOp::LE, 0)));
  CHECK_FALSE(isMainOnly(Cond::rankCmp(CmpOp::LT, 2)));
  CHECK(isMainOnly(Cond::both(Cond::rankCmp(CmpOp::EQ, 0), Cond::atom("epoch % 10 == 0", Dep::Uniform))));
  CHECK(isMainOnly(Cond::both(Cond::atom("x", Dep::Local), Cond::rankCmp(CmpOp::EQ, 0))));
  CHECK_FALSE(isMainOnly(Cond::rankCmp(CmpOp::EQ, 1)));
  CHECK_FALSE(isMainOnly(Cond::atom("is_main", Dep::Rank)));
  CHECK_FALSE(isMainOnly(Cond::atom("flag", Dep::Uniform)));
  CHECK(isMainOnly(Cond::negate(Cond::rankCmp(CmpOp::NE, 0))));
  CHECK_FALSE(isMainOnly(Cond::negate(Cond::rankCmp(CmpOp::EQ, 0))));
  CHECK_FALSE(isMainOnly(Cond::either(Cond::rankCmp(CmpOp::EQ, 0), Cond::atom("x", Dep::Uniform))));
  CHECK_FALSE(isMainOnly(Cond::rankCmp(CmpOp::EQ, 0, 2))); // rank % 2 == 0: all even ranks
  CHECK_FALSE(isMainOnly(Cond::constant(true)));
  CHECK_FALSE(isMainOnly(Cond::constant(false)));
}

// ===========================================================================
// ddp-unguarded-save
// ===========================================================================

TEST_CASE("unguardedSaves", "[save]") {
  SECTION("a uniform path at top level is one finding") {
    Program p = program({fn("main", {barrier(1), save(10)})});
    RuleRunner an(p);
    auto fs = an.run(RuleId::UnguardedSave);
    REQUIRE(fs.size() == 1);
    CHECK(fs[0].rule == "ddp-unguarded-save");
    CHECK(fs[0].loc == 10);
    CHECK(contains(fs[0].message, "torch::save"));
  }
  SECTION("two saves under the same conditions: one finding, the second its note") {
    Program p = program({fn("main", {save(10), save(20, Dep::Uniform, "torch::pickle_save")})});
    RuleRunner an(p);
    auto fs = an.run(RuleId::UnguardedSave);
    CHECK(locsOf(fs) == std::vector<Loc>{10});
    REQUIRE(fs.size() == 1);
    REQUIRE(fs[0].notes.size() == 1);
    CHECK(fs[0].notes[0].loc == 20);
    CHECK(contains(fs[0].notes[0].message, "torch::pickle_save"));
  }
  SECTION("two saves under different conditions: two findings") {
    // Every epoch, then once after the loop: two places to guard.
    Program p = program({fn("main", {loop(Dep::Uniform, {save(10)}, 5), save(20)})});
    RuleRunner an(p);
    CHECK(locsOf(an.run(RuleId::UnguardedSave)) == std::vector<Loc>{10, 20});
  }
  SECTION("under rank == 0: none") {
    Program p = program({fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("after if (rank != 0) return: none") {
    Program p = program({fn("main", {ifThen(rank(CmpOp::NE, 0, 5), {exitNode(ExitKind::Return, 6)}, 4), save(10)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("under an opaque rank predicate: none") {
    Program p = program({fn("main", {ifThen(atom("is_main_process()", Dep::Rank, 5), {save(10)}, 4)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("under a uniform condition: still a finding") {
    Program p = program({fn("main", {ifThen(atom("epoch % 5 == 0", Dep::Uniform, 5), {save(10)}, 4)})});
    RuleRunner an(p);
    CHECK(locsOf(an.run(RuleId::UnguardedSave)) == std::vector<Loc>{10});
  }
  SECTION("a rank-dependent path: none") {
    Program p = program({fn("main", {save(10, Dep::Rank)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("a rank-local path: none") {
    Program p = program({fn("main", {save(10, Dep::Local)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("a file write that is not a checkpoint: none") {
    Program p = program({fn("main", {fileWrite(10)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("in a helper only called under rank == 0: none") {
    Program p = program({
        fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("save_ckpt", 10)}, 4)}),
        fn("save_ckpt", {save(100)}),
    });
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("in a helper called by every rank: one finding, in the helper") {
    Program p = program({
        fn("main", {call("save_ckpt", 10)}),
        fn("save_ckpt", {save(100)}),
    });
    RuleRunner an(p);
    CHECK(locsOf(an.run(RuleId::UnguardedSave)) == std::vector<Loc>{100});
  }
  SECTION("in a helper called once guarded and once not: one finding") {
    Program p = program({
        fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("save_ckpt", 10)}, 4), call("save_ckpt", 20)}),
        fn("save_ckpt", {save(100)}),
    });
    RuleRunner an(p);
    CHECK(locsOf(an.run(RuleId::UnguardedSave)) == std::vector<Loc>{100});
  }
  SECTION("in a helper two levels below a rank-0 guard: none") {
    Program p = program({
        fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("checkpoint", 10)}, 4)}),
        fn("checkpoint", {call("save_ckpt", 50)}),
        fn("save_ckpt", {save(100)}),
    });
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("recursive helpers terminate") {
    Program p = program({
        fn("a", {ifThen(rank(CmpOp::EQ, 0, 5), {call("b", 6)}, 4)}),
        fn("b", {save(100), call("b", 101)}),
    });
    RuleRunner an(p);
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
}

// Known bug (reported): the events of a loop body reach the enclosing path
// without the body path's guard, so `for (...) { if (rank == 0) save(); }` is
// reported as a save every rank runs.  Reproduced with clang-tidy on the mock
// headers.  Hidden tag: run with `core_tests "[known-bug]"`.
TEST_CASE("unguardedSaves: a rank-0 save inside an epoch loop is guarded", "[fixed-bug][save][loop]") {
  // for (epoch...) { train(); if (rank == 0) torch::save(model, "ckpt.pt"); }
  Program p = program({fn("main", {loop(Dep::Uniform, {
      coll("allreduce", 8),
      ifThen(rank(CmpOp::EQ, 0, 9), {save(10)}, 9),
  }, 2)})});
  RuleRunner an(p);
  CHECK(an.run(RuleId::UnguardedSave).empty());
}

TEST_CASE("unguardedSaves: an unguarded save inside a loop is one finding", "[save][loop]") {
  Program p = program({fn("main", {loop(Dep::Uniform, {coll("allreduce", 8), save(10)}, 2)})});
  RuleRunner an(p);
  CHECK(locsOf(an.run(RuleId::UnguardedSave)) == std::vector<Loc>{10});
}

TEST_CASE("unguardedSaves: a helper called under rank 0 inside a loop is guarded", "[fixed-bug][save][loop]") {
  Program p = program({
      fn("main", {loop(Dep::Uniform, {ifThen(rank(CmpOp::EQ, 0, 9), {call("save_ckpt", 10)}, 9)}, 2)}),
      fn("save_ckpt", {save(100)}),
  });
  RuleRunner an(p);
  CHECK(an.run(RuleId::UnguardedSave).empty());
}

// ===========================================================================
// ddp-rank0-io-barrier
// ===========================================================================

TEST_CASE("rank0IoWithoutBarrier", "[rank0io]") {
  SECTION("missing both barriers") {
    Program p = program({fn("main", {coll("allreduce", 1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4),
                                     coll("allreduce", 20)})});
    RuleRunner an(p);
    // The default asks for the barrier after only.
    auto def = an.run(RuleId::Rank0IoBarrier);
    REQUIRE(def.size() == 1);
    CHECK_FALSE(asks(def[0], FixKind::InsertBarrierBefore));
    CHECK(asks(def[0], FixKind::InsertBarrierAfter));
    CHECK(contains(def[0].message, "after it"));
    auto fs = an.run(RuleId::Rank0IoBarrier, withBefore());
    REQUIRE(fs.size() == 1);
    CHECK(fs[0].rule == "ddp-rank0-io-barrier");
    CHECK(fs[0].loc == 4); // the if
    CHECK(asks(fs[0], FixKind::InsertBarrierBefore));
    CHECK(asks(fs[0], FixKind::InsertBarrierAfter));
    REQUIRE(fs[0].fixes.size() == 2);
    REQUIRE(fs[0].fixes[0].node != nullptr);
    CHECK(fs[0].fixes[0].node->kind == Node::Kind::If);
    CHECK(fs[0].fixes[0].anchor == 4);
    CHECK(contains(fs[0].message, "before and after"));
  }
  SECTION("barrier before only: missing after") {
    Program p = program({fn("main", {barrier(1), ifThen(rank(CmpOp::EQ, 0, 5), {fileWrite(10)}, 4),
                                     coll("allreduce", 20)})});
    RuleRunner an(p);
    auto fs = an.run(RuleId::Rank0IoBarrier);
    REQUIRE(fs.size() == 1);
    CHECK(fs[0].loc == 4);
    CHECK_FALSE(asks(fs[0], FixKind::InsertBarrierBefore));
    CHECK(asks(fs[0], FixKind::InsertBarrierAfter));
    // Asking for the barrier before too changes nothing here.
    auto fs2 = an.run(RuleId::Rank0IoBarrier, withBefore());
    REQUIRE(fs2.size() == 1);
    CHECK(asks(fs2[0], FixKind::InsertBarrierAfter));
    CHECK_FALSE(asks(fs2[0], FixKind::InsertBarrierBefore));
  }
  SECTION("barrier after only") {
    // Not the entry, and not called here: a caller elsewhere may run
    // collectives before it, so the barrier before is asked for.
    Program p = program({fn("save_step", {ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4), barrier(20)})});
    RuleRunner an(p);
    auto fs = an.run(RuleId::Rank0IoBarrier, withBefore());
    REQUIRE(fs.size() == 1);
    CHECK(asks(fs[0], FixKind::InsertBarrierBefore));
    CHECK_FALSE(asks(fs[0], FixKind::InsertBarrierAfter));
    CHECK(contains(fs[0].message, "still producing"));
    CHECK(an.run(RuleId::Rank0IoBarrier).empty()); // the default: the barrier after is there
  }
  SECTION("start-up write in the entry: no barrier before needed") {
    // main before its first collective, and a helper main calls before any.
    Program p = program({fn("init_out", {ifThen(rank(CmpOp::EQ, 0, 7), {fileWrite(8)}, 6)}),
                         fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4), call("init_out", 12),
                                     barrier(20), coll("allreduce", 21)})});
    RuleRunner an(p);
    auto fs = an.run(RuleId::Rank0IoBarrier, withBefore());
    INFO((fs.empty() ? std::string() : fs[0].message));
    CHECK(fs.empty());
    // The same write after a collective needs both.
    Program q = program({fn("main", {coll("allreduce", 1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4),
                                     barrier(20)})});
    RuleRunner aq(q);
    auto fq = aq.run(RuleId::Rank0IoBarrier, withBefore());
    REQUIRE(fq.size() == 1);
    CHECK(asks(fq[0], FixKind::InsertBarrierBefore));
    CHECK_FALSE(asks(fq[0], FixKind::InsertBarrierAfter));
  }
  SECTION("barriers around: none") {
    Program p = program({fn("main", {barrier(1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10), fileWrite(11)}, 4), barrier(20)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::Rank0IoBarrier).empty());
    CHECK(an.run(RuleId::Rank0IoBarrier, withBefore()).empty());
  }
  SECTION("barriers through helpers count") {
    Program p = program({
        fn("main", {call("sync_all", 1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4), call("sync_all", 20)}),
        fn("sync_all", {barrier(100)}),
    });
    RuleRunner an(p);
    CHECK(an.run(RuleId::Rank0IoBarrier).empty());
  }
  SECTION("an allreduce is not a barrier") {
    Program p = program({fn("main", {barrier(1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4), coll("allreduce", 20)})});
    RuleRunner an(p);
    auto fs = an.run(RuleId::Rank0IoBarrier);
    REQUIRE(fs.size() == 1);
    CHECK(asks(fs[0], FixKind::InsertBarrierAfter));
  }
  SECTION("a conditional barrier after does not count") {
    // `if ((epoch + 1) % every == 0) barrier();`: the epochs it skips race.
    Program p = program({fn("main", {barrier(1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4),
                                     ifThen(atom("flag", Dep::Uniform, 15), {barrier(20)}, 14)})});
    RuleRunner an(p);
    auto fs = an.run(RuleId::Rank0IoBarrier);
    REQUIRE(fs.size() == 1);
    CHECK(asks(fs[0], FixKind::InsertBarrierAfter));
  }
  SECTION("an object collective after orders the ranks as a barrier does") {
    Program p = program({fn("main", {barrier(1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4),
                                     coll("broadcast_object_list", 20)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::Rank0IoBarrier).empty());
  }
  SECTION("rank 0 writes through a helper") {
    Program p = program({
        fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {call("write_metrics", 10)}, 4), coll("allreduce", 20)}),
        fn("write_metrics", {fileWrite(100)}),
    });
    RuleRunner an(p);
    CHECK(locsOf(an.run(RuleId::Rank0IoBarrier, withBefore())) == std::vector<Loc>{4});
  }
  SECTION("after the last collective nothing races with the write") {
    Program p = program({fn("main", {coll("allreduce", 1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::Rank0IoBarrier).empty());
  }
  SECTION("...but inside a loop that synchronises, the next iteration's collective does") {
    Program p = program({fn("main", {loop(Dep::Uniform, {coll("allreduce", 1),
                                                         ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4)}, 2)})});
    RuleRunner an(p);
    CHECK(locsOf(an.run(RuleId::Rank0IoBarrier)) == std::vector<Loc>{4});
  }
  SECTION("...and so does a collective after a call site of the writing function") {
    Program p = program({
        fn("main", {call("checkpoint", 10), coll("allreduce", 20)}),
        fn("checkpoint", {ifThen(rank(CmpOp::EQ, 0, 105), {save(110)}, 104)}),
    });
    RuleRunner an(p);
    CHECK(locsOf(an.run(RuleId::Rank0IoBarrier, withBefore())) == std::vector<Loc>{104});
  }
  SECTION("a program that is not distributed is never reported") {
    Program p = program({fn("main", {coll("allreduce", 1), ifThen(rank(CmpOp::EQ, 0, 5), {save(10)}, 4),
                                     coll("allreduce", 20)})});
    p.distributed = false;
    RuleRunner an(p);
    CHECK(an.run(RuleId::Rank0IoBarrier).empty());
    CHECK(an.run(RuleId::UnguardedSave).empty());
  }
  SECTION("blocks that are not main-only are not this check's business") {
    Program p = program({fn("main", {
        ifThen(rank(CmpOp::NE, 0, 5), {save(10)}, 4),
        ifThen(atom("is_main", Dep::Rank, 15), {save(20)}, 14),
        ifThen(rank(CmpOp::EQ, 0, 25, "rank % 2 == 0", 2), {save(30)}, 24),
    })});
    RuleRunner an(p);
    CHECK(an.run(RuleId::Rank0IoBarrier).empty());
  }
  SECTION("a rank-0 block without writes: none") {
    Program p = program({fn("main", {ifThen(rank(CmpOp::EQ, 0, 5), {p2p("send", 10)}, 4)})});
    RuleRunner an(p);
    CHECK(an.run(RuleId::Rank0IoBarrier).empty());
  }
}

// ===========================================================================
// Path explosion
// ===========================================================================

TEST_CASE("30 sequential uniform ifs, each with a collective, terminate fast and report nothing",
          "[limits]") {
  std::vector<Node> body;
  for (int i = 0; i < 30; ++i)
    body.push_back(ifThen(atom("flag" + std::to_string(i), Dep::Uniform, Loc(10 * i + 2)),
                          {coll("allreduce", Loc(10 * i + 3))}, Loc(10 * i + 1)));
  Program p = program({fn("main", std::move(body))});
  auto start = std::chrono::steady_clock::now();
  RuleRunner an(p);
  CHECK(an.run(RuleId::DivergentCollective).empty());
  CHECK(an.run(RuleId::UnguardedSave).empty());
  CHECK(an.run(RuleId::Rank0IoBarrier).empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("30 sequential rank-0 ifs terminate fast", "[limits]") {
  std::vector<Node> body;
  for (int i = 0; i < 30; ++i)
    body.push_back(ifElse(rank(CmpOp::EQ, 0, Loc(10 * i + 2)), {coll("allreduce", Loc(10 * i + 3))},
                          {coll("allreduce", Loc(10 * i + 4))}, Loc(10 * i + 1)));
  Program p = program({fn("main", std::move(body))});
  auto start = std::chrono::steady_clock::now();
  RuleRunner an(p);
  CHECK(an.run(RuleId::DivergentCollective).empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("nested uniform ifs and loops terminate fast", "[limits]") {
  Node inner = Node::block({coll("allreduce", 1)});
  for (int i = 0; i < 20; ++i) {
    std::vector<Node> kids;
    kids.push_back(ifElse(atom("u" + std::to_string(i), Dep::Uniform, Loc(100 + i)), {inner}, {coll("allreduce", Loc(200 + i))}, Loc(100 + i)));
    kids.push_back(loop(Dep::Uniform, {barrier(Loc(300 + i))}, Loc(300 + i)));
    inner = Node::block(std::move(kids));
  }
  Program p = program({fn("main", {inner})});
  auto start = std::chrono::steady_clock::now();
  RuleRunner an(p);
  (void)an.run(RuleId::DivergentCollective);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

// hypre's 1,600-line AMG set-up: a loop whose body branches on many settings,
// each arm with its own collective, so its body paths are capped at 512.  Each
// call in it was carried out of the loop once per distinct guard before it
// (thousands), and every path after the loop copied them all: 24 GB.  A call
// reached on both arms of a setting is carried once, without that setting.
TEST_CASE("a loop of many uniform branches carries each call out once", "[fixed-bug][limits][loop]") {
  std::vector<Node> body;
  for (int i = 0; i < 12; ++i) {
    const Loc at = Loc(10 * i + 10);
    body.push_back(ifThen(atom("setting" + std::to_string(i), Dep::Uniform, at + 1),
                          {coll("allreduce" + std::to_string(i), at + 2)}, at));
    body.push_back(call("helper", at + 3));
  }
  Program p = program({fn("helper", {fileWrite(5)}), fn("main", {loop(Dep::Uniform, std::move(body), 1000)})});
  RuleRunner an(p);
  CHECK(an.run(RuleId::DivergentCollective).empty());
  engine::PathEngine engine(p, AnalysisLimits{});
  engine.analyzeAll();
  REQUIRE(engine.loops.size() == 1);
  const auto &lr = engine.loops.begin()->second;
  CHECK(lr.bodyPaths.size() == 512);
  CHECK(lr.carried.size() == 12);
}

TEST_CASE("a stored node keeps whether its collective was assumed of an importer", "[model]") {
  Node assumed = coll("backward", 7);
  assumed.assumedDdp = true;
  for (const Node &n : {assumed, coll("allreduce", 8)}) {
    ModelWriter w([](Loc l) { return static_cast<std::uint32_t>(l); });
    w.node(n);
    const std::string text = w.take();
    ModelReader r(text, [](std::uint32_t p) { return static_cast<Loc>(p); });
    Node back;
    REQUIRE(r.node(back));
    CHECK(back.assumedDdp == n.assumedDdp);
    CHECK(r.atEnd());
  }
}

// Known limitation (reported, not yet fixed): after the per-function path cap
// drops paths, the else-side paths of a later rank branch are the ones
// dropped, so a real divergence after many uniform branches goes unreported.
// Hidden tag: run with `core_tests "[known-bug]"`.
TEST_CASE("a rank-0 collective after 10 uniform ifs is still found", "[fixed-bug][limits]") {
  std::vector<Node> body;
  for (int i = 0; i < 10; ++i)
    body.push_back(ifThen(atom("verbose" + std::to_string(i), Dep::Uniform, Loc(10 * i + 2)), {fileWrite(Loc(10 * i + 3))},
                          Loc(10 * i + 1)));
  body.push_back(ifThen(rank(CmpOp::EQ, 0, 1001), {coll("allreduce", 1002)}, 1000));
  Program p = program({fn("main", std::move(body))});
  RuleRunner an(p);
  CHECK(locsOf(an.run(RuleId::DivergentCollective)) == std::vector<Loc>{1002});
}

// ===========================================================================
// The catalog (generated from rules/ at build time)
// ===========================================================================

TEST_CASE("the builtin catalog has the ten rules and the core API entries", "[catalog]") {
  const auto &rules = builtinRules();
  CHECK(rules.size() == 10);
  for (const char *id : {"ddp-divergent-collective", "ddp-error-path-exit", "ddp-unguarded-save",
                         "ddp-rank0-io-barrier", "ddp-forward-shape-branch", "ddp-init-timeout",
                         "ddp-async-error-handling", "ddp-dataloader-recreated"}) {
    INFO(id);
    REQUIRE(findRule(id) != nullptr);
    CHECK(findRule(id)->runner == "program");
    CHECK(!findRule(id)->languages.empty());
    // Each is decided by its rule file, through the registry.
    REQUIRE(findRuleSpec(id) != nullptr);
    CHECK(findRuleSpec(id)->definition != nullptr);
  }
  // The rules that read the program model run on C as well; the LibTorch-only ones on C++.
  auto langs = [](const char *id) { return findRule(id)->languages; };
  // Every rule but the launch-file one runs on Python too (checks/python-frontend).
  CHECK(langs("ddp-divergent-collective") == std::vector<std::string>{"c", "c++", "python"});
  CHECK(langs("ddp-error-path-exit") == std::vector<std::string>{"c", "c++", "python"});
  CHECK(langs("ddp-init-timeout") == std::vector<std::string>{"c++", "python"});
  REQUIRE(findRule("ddp-dataloader-options") != nullptr);
  CHECK(findRule("ddp-dataloader-options")->runner == "program");
  CHECK(langs("ddp-dataloader-options") == std::vector<std::string>{"python"});
  // The launch-file rule lives in the catalog like the others, but it is
  // decided on launch files (`ddplint check-launch`), not on a program.
  REQUIRE(findRule("ddp-launch-env") != nullptr);
  CHECK(findRule("ddp-launch-env")->runner == "launch");
  CHECK(findRuleSpec("ddp-launch-env")->definition == nullptr);
  // The registry is the catalog, in its order, with the ids of the enum.
  REQUIRE(ruleRegistry().size() == rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    CHECK(ruleRegistry()[i].name == rules[i].id);
    CHECK(ruleRegistry()[i].info == &rules[i]);
    CHECK(static_cast<size_t>(ruleRegistry()[i].id) == i);
  }
  CHECK(ruleSpec(RuleId::Rank0IoBarrier).name == "ddp-rank0-io-barrier");
  CHECK(findRule("ddp-nonexistent") == nullptr);
  const ApiCatalog &api = builtinApi();
  auto has = [](const std::vector<std::string> &v, const std::string &s) {
    for (const auto &x : v)
      if (x == s)
        return true;
    return false;
  };
  CHECK(has(api.rankMethods, "getRank"));
  CHECK(has(api.worldSizeMethods, "getSize"));
  CHECK(has(api.rankEnvVars, "RANK"));
  CHECK(has(api.rankEnvVars, "LOCAL_RANK"));
  CHECK(has(api.rankEnvVars, "SLURM_PROCID"));
  CHECK(has(api.rankEnvVars, "OMPI_COMM_WORLD_RANK"));
  CHECK(has(api.rankEnvVars, "PMI_RANK"));
  CHECK(has(api.rankEnvVars, "NODE_RANK"));
  CHECK_FALSE(has(api.rankEnvVars, "WORLD_SIZE"));
  CHECK(has(api.collectiveMethods, "allreduce"));
  CHECK(has(api.barrierMethods, "barrier"));
  CHECK(has(api.pointToPointMethods, "send"));
  CHECK_FALSE(has(api.collectiveMethods, "send"));
}

TEST_CASE("API catalog: collective buffers and classes", "[catalog]") {
  const ApiCatalog &api = builtinApi();
  auto buffers = [&](const std::string &name, bool method) -> const CollectiveBuffers * {
    for (const auto &b : api.collectiveBuffers)
      if (b.name == name && b.method == method)
        return &b;
    return nullptr;
  };
  auto has = [](const std::vector<std::string> &v, const std::string &s) {
    for (const auto &x : v)
      if (x == s)
        return true;
    return false;
  };
  // The output of allreduce, broadcast and allgather is agreed; a send buffer never.
  const CollectiveBuffers *allreduce = buffers("MPI_Allreduce", false);
  REQUIRE(allreduce != nullptr);
  CHECK(allreduce->send == std::vector<int>{0});
  CHECK(allreduce->agreed == std::vector<int>{1});
  CHECK(allreduce->request == -1);
  REQUIRE(buffers("MPI_Bcast", false) != nullptr);
  CHECK(buffers("MPI_Bcast", false)->agreed == std::vector<int>{0});
  REQUIRE(buffers("MPI_Allgatherv", false) != nullptr);
  CHECK(buffers("MPI_Allgatherv", false)->agreed == std::vector<int>{3});
  REQUIRE(buffers("MPI_Iallgatherv", false) != nullptr);
  CHECK(buffers("MPI_Iallgatherv", false)->request == 8);
  REQUIRE(buffers("ncclBcast", false) != nullptr);
  CHECK(buffers("ncclBcast", false)->agreed == std::vector<int>{0});
  // Reduce, scan, exscan, alltoall, reduce_scatter: written, not agreed.
  for (const char *n : {"MPI_Reduce", "MPI_Scan", "MPI_Iexscan", "MPI_Alltoallw", "MPI_Reduce_scatter_block",
                        "ncclReduceScatter"}) {
    REQUIRE(buffers(n, false) != nullptr);
    CHECK(buffers(n, false)->agreed.empty());
    CHECK_FALSE(buffers(n, false)->recv.empty());
  }
  REQUIRE(buffers("allgather", true) != nullptr);
  CHECK(buffers("allgather", true)->agreed == std::vector<int>{0});
  CHECK(buffers("allgather", true)->send == std::vector<int>{1});
  REQUIRE(buffers("reduce", true) != nullptr);
  CHECK(buffers("reduce", true)->agreed.empty());
  // Every collective and barrier has an entry (gen_catalog enforces it).
  for (const auto &n : api.collectiveFunctions)
    CHECK(buffers(n, false) != nullptr);
  for (const auto &n : api.collectiveMethods)
    CHECK(buffers(n, true) != nullptr);
  CHECK(has(api.collectiveFunctions, "MPI_Iscan"));
  CHECK(has(api.collectiveFunctions, "MPI_Ialltoallv"));
  CHECK(has(api.collectiveFunctions, "MPI_Win_fence"));
  CHECK(has(api.oneSidedFunctions, "MPI_Put"));
  CHECK(has(api.queryFunctions, "MPI_Comm_rank"));
  CHECK(has(api.localApiFunctions, "MPI_Reduce_local"));
  CHECK(has(api.requestFunctions, "MPI_Wait"));
  CHECK(has(api.fileIoFunctions, "MPI_File_write_at"));
  CHECK(has(api.queryMethods, "getBackendName"));
  CHECK(has(api.localApiMethods, "startCoalescing"));
}

TEST_CASE("splitList", "[catalog]") {
  CHECK(splitList("a;b; c") == std::vector<std::string>{"a", "b", "c"});
  CHECK(splitList("").empty());
  CHECK(splitList(" one ") == std::vector<std::string>{"one"});
}
