// Verdict logic on hand-built snapshots: each case is a situation the
// supervisor meets, with the answer a person would give.
#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>

#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include "catalog.hpp"
#include "report.hpp"
#include "verdict.hpp"

using namespace ddph;
using ddpg::RecState;

namespace {

RecView rec(int64_t seq, const std::string& op, const std::string& shapes, const std::string& tag,
            RecState st = RecState::Completed, int64_t t = 0) {
  RecView r;
  r.seq = seq;
  r.op = op;
  r.shapes = shapes;
  r.dtype = "Float";
  r.tag = tag;
  r.state = st;
  r.tEnqueue = t ? t : 1000 + seq * 10;
  r.tIssued = r.tEnqueue + 1;
  r.tEnd = st == RecState::Completed ? r.tEnqueue + 5 : 0;
  return r;
}

// A training prefix: two broadcasts, then `steps` x (weight, bias) grads.
std::vector<RecView> prefix(int steps) {
  std::vector<RecView> v{rec(0, "broadcast", "[4,4]", "init:w"), rec(1, "broadcast", "[4]", "init:b")};
  for (int s = 0; s < steps; ++s) {
    v.push_back(rec(int64_t(v.size()), "allreduce", "[4,4]", "grad:w"));
    v.push_back(rec(int64_t(v.size()), "allreduce", "[4]", "grad:b"));
  }
  return v;
}

RankView rank(int r, std::vector<RecView> recs) {
  RankView v;
  v.rank = r;
  v.pid = 100 + r;
  v.recs = std::move(recs);
  v.nextSeq = v.recs.empty() ? 0 : v.recs.back().seq + 1;
  v.heartbeatNs = v.progressNs = 1000;
  return v;
}

Snapshot snap(std::vector<RankView> ranks, Trigger t, int64_t at = 1000000) {
  Snapshot s;
  s.ranks = std::move(ranks);
  s.trigger = t;
  s.triggerNs = at;
  s.cutoffNs = at;
  return s;
}

}  // namespace

TEST_CASE("identical sequences that all exit 0 are a clean run") {
  auto a = rank(0, prefix(3)), b = rank(1, prefix(3));
  a.exited = b.exited = true;
  a.exitCode = b.exitCode = 0;
  Verdict v = analyze(snap({a, b}, Trigger::AllDone), {});
  CHECK(v.outcome == "completed");
  CHECK_FALSE(v.problem);
  CHECK(v.sequencesIdentical);
  CHECK(v.culprits.empty());
}

TEST_CASE("an extra collective after a periodic prefix names its rank even at world size 2") {
  auto p = prefix(3);
  auto r0 = p, r1 = p;
  r0.push_back(rec(8, "allreduce", "[1]", "eval:metric", RecState::Waiting));
  r1.push_back(rec(8, "allreduce", "[4,4]", "grad:w", RecState::Waiting));
  Verdict v = analyze(snap({rank(0, r0), rank(1, r1)}, Trigger::Hang), {});
  CHECK(v.outcome == "hang");
  CHECK(v.divergenceSeq == 8);
  REQUIRE(v.culprits == std::vector<int>{0});
  CHECK_FALSE(v.ambiguous);
  CHECK(v.culpritOp.find("eval:metric") != std::string::npos);
  CHECK(v.expectedOp.find("grad:w") != std::string::npos);
}

TEST_CASE("without a pattern, a majority decides; a tie is reported as ambiguous") {
  std::vector<RecView> ok{rec(0, "allreduce", "[8]", "a", RecState::Waiting)};
  std::vector<RecView> odd{rec(0, "allreduce", "[4]", "b", RecState::Waiting)};
  Verdict maj = analyze(snap({rank(0, ok), rank(1, ok), rank(2, odd)}, Trigger::Hang), {});
  CHECK(maj.culprits == std::vector<int>{2});
  CHECK_FALSE(maj.ambiguous);
  Verdict tie = analyze(snap({rank(0, ok), rank(1, odd)}, Trigger::Hang), {});
  CHECK(tie.ambiguous);
  CHECK(tie.culprits == std::vector<int>{0, 1});
}

TEST_CASE("a rank that never joins the collective the others wait in is the culprit") {
  auto p = prefix(2);
  auto waiting = p;
  waiting.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Waiting));
  auto stuck = rank(2, p);
  MarkView m;
  m.name = "read_shard";
  m.resource = "/data/shard-2";
  m.kind = ddpg::MarkKind::Read;
  m.tBegin = 2000;
  stuck.marks.push_back(m);
  Verdict v = analyze(snap({rank(0, waiting), rank(1, waiting), stuck}, Trigger::Hang), {});
  CHECK(v.culprits == std::vector<int>{2});
  CHECK(v.divergenceSeq == 6);
  CHECK(v.doing[2].find("read_shard") != std::string::npos);
  CHECK(v.doing[0].find("blocked in allreduce #6") != std::string::npos);
}

TEST_CASE("with identical sequences, the first rank killed by a signal is the culprit") {
  auto p = prefix(2);
  auto dead = rank(1, p), other = rank(0, p);
  dead.exited = true;
  dead.signal = 9;
  dead.exitNs = 5000;
  other.exited = true;
  other.exitCode = 3;
  other.exitNs = 6000;
  other.error = "Connection reset by peer";
  other.errorNs = 5500;
  Verdict v = analyze(snap({other, dead}, Trigger::Failure), {});
  CHECK(v.outcome == "crash");
  CHECK(v.culprits == std::vector<int>{1});
  CHECK(v.doing[1].find("SIGKILL") != std::string::npos);
}

TEST_CASE("a rank killed inside a collective is named, not the peers that failed with it") {
  // Ring allreduce: rank 0 completed #6 and went on to #7; ranks 1 and 3
  // failed in #6 when rank 2 was killed there.
  auto p = prefix(2);
  auto r0 = rank(0, p), r1 = rank(1, p), r2 = rank(2, p), r3 = rank(3, p);
  r0.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Completed));
  r0.recs.push_back(rec(7, "allreduce", "[4]", "grad:b", RecState::Failed));
  r1.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Failed));
  r2.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Waiting));
  r3.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Failed));
  for (auto* r : {&r0, &r1, &r3}) {
    r->exited = true;
    r->exitCode = 3;
    r->error = "Connection closed by peer";
    r->errorNs = 7000;
    r->exitNs = 8000;
  }
  r2.exited = true;
  r2.signal = 9;
  r2.exitNs = 6000;
  Verdict v = analyze(snap({r0, r1, r2, r3}, Trigger::Failure), {});
  CHECK(v.culprits == std::vector<int>{2});
  CHECK(v.outcome == "crash");
}

TEST_CASE("a rank that dies of SIGPIPE under a killed peer is its victim, not a second culprit") {
  // Seen in CI: rank 2 was killed in #6; rank 3, writing to it in #6, died of
  // SIGPIPE; ranks 0 and 1 went on to #7 and failed there.
  auto p = prefix(2);
  auto r0 = rank(0, p), r1 = rank(1, p), r2 = rank(2, p), r3 = rank(3, p);
  r0.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w"));
  r0.recs.push_back(rec(7, "allreduce", "[4]", "grad:b", RecState::Failed));
  r1.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Failed));
  r2.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Waiting));
  r3.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Waiting));
  for (auto* r : {&r0, &r1}) {
    r->exited = true;
    r->exitCode = 3;
    r->error = "Connection reset by peer";
    r->errorNs = 7000;
    r->exitNs = 8000;
  }
  r2.exited = r3.exited = true;
  r2.signal = SIGKILL;
  r2.exitNs = 6000;
  r3.signal = SIGPIPE;
  r3.exitNs = 6100;
  Verdict v = analyze(snap({r0, r1, r2, r3}, Trigger::Failure), {});
  CHECK(v.outcome == "crash");
  CHECK(v.culprits == std::vector<int>{2});

  // Same deaths with no divergence left to explain them: still rank 2, even
  // when the SIGPIPE is reaped first.
  r0.recs.pop_back();
  r0.recs.back().state = RecState::Failed;
  r3.exitNs = 5900;
  v = analyze(snap({r0, r1, r2, r3}, Trigger::Failure), {});
  CHECK(v.culprits == std::vector<int>{2});
}

TEST_CASE("collectives a rank issues after its own error do not count as divergence") {
  auto p = prefix(2);
  auto a = rank(0, p), b = rank(1, p);
  a.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Failed, 400000));
  b.recs.push_back(rec(6, "allreduce", "[4,4]", "grad:w", RecState::Failed, 410000));
  a.error = b.error = "Connection reset by peer";
  a.errorNs = 450000;
  b.errorNs = 460000;
  // Rank 1's error handler runs a barrier: a consequence, not evidence.
  b.recs.push_back(rec(7, "barrier", "", "cleanup", RecState::Failed, 470000));
  a.nextSeq = 7;
  b.nextSeq = 8;
  a.exited = b.exited = true;
  a.exitCode = b.exitCode = 3;
  a.exitNs = 500000;
  b.exitNs = 510000;
  Verdict v = analyze(snap({a, b}, Trigger::Failure), {});
  CHECK(v.divergenceSeq == -1);
  CHECK(v.culprits == std::vector<int>{0});  // the first error
}

TEST_CASE("overlapping writes of one file by two ranks are a race; a read during a write blames the writer") {
  auto w = [](int64_t b, int64_t e, ddpg::MarkKind k) {
    MarkView m;
    m.name = "io";
    m.resource = "/ckpt.pt";
    m.kind = k;
    m.tBegin = b;
    m.tEnd = e;
    return m;
  };
  auto a = rank(0, prefix(1)), b = rank(1, prefix(1));
  a.exited = b.exited = true;
  a.exitCode = b.exitCode = 0;
  a.marks.push_back(w(100, 500, ddpg::MarkKind::Write));
  b.marks.push_back(w(300, 700, ddpg::MarkKind::Write));
  Verdict race = analyze(snap({a, b}, Trigger::AllDone), {});
  CHECK(race.outcome == "race");
  CHECK(race.culprits == std::vector<int>{0, 1});

  b.marks.clear();
  b.marks.push_back(w(200, 250, ddpg::MarkKind::Read));
  Verdict rd = analyze(snap({a, b}, Trigger::AllDone), {});
  CHECK(rd.culprits == std::vector<int>{0});

  // Sequential IO is fine.
  b.marks.clear();
  b.marks.push_back(w(600, 650, ddpg::MarkKind::Read));
  CHECK(analyze(snap({a, b}, Trigger::AllDone), {}).outcome == "completed");
}

TEST_CASE("a finding in a rank's metrics is a performance verdict") {
  auto a = rank(0, prefix(1));
  a.exited = true;
  a.exitCode = 0;
  a.metrics = R"({"workers":2,"finding":"6 worker threads \"started\""})";
  CHECK(jsonStringField(a.metrics, "finding") == "6 worker threads \"started\"");
  Verdict v = analyze(snap({a}, Trigger::AllDone), {});
  CHECK(v.outcome == "perf");
  CHECK(v.culprits == std::vector<int>{0});
  CHECK(v.latencyS() < 0);
}

TEST_CASE("the board is shared with forked children and survives their death") {
  ddpg::Board b = ddpg::Board::createAnonymous(2);
  pid_t pid = fork();
  if (pid == 0) {
    ddpg::RankRecorder r(&b.slot(1));
    r.setError("boom", "/x");
    b.slot(1).nextSeq.store(3);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  RankView v = readSlot(b.slot(1), 1);
  CHECK(v.error == "boom");
  CHECK(v.errorResource == "/x");
}

TEST_CASE("every harness scenario id of the catalog has a rule row with trigger, root cause and guardrail") {
  Catalog c = loadCatalog(DDPH_TEST_CATALOG);
  int scenarios = 0;
  for (auto& r : c.rules) {
    for (auto& s : r.scenarios) {
      ++scenarios;
      const RuleRow* row = c.forScenario(s);
      REQUIRE(row);
      // Two rules may share a scenario (ddp-launch-env reproduces through the
      // C++ rule's rank-stall-watchdog); the verdict names the first of them.
      const RuleRow* first = nullptr;
      for (auto& other : c.rules)
        if (!first && std::find(other.scenarios.begin(), other.scenarios.end(), s) !=
                          other.scenarios.end())
          first = &other;
      CHECK(row == first);
      CHECK_FALSE(row->trigger.empty());
      CHECK_FALSE(row->rootCause.empty());
      CHECK_FALSE(row->guardrail.empty());
    }
  }
  CHECK(scenarios >= 11);
  CHECK(c.forScenario("no-such-scenario") == nullptr);
  CHECK_THROWS(loadCatalog("/nonexistent/catalog.yaml"));
}

TEST_CASE("a broken catalog is an error at its line, as in the build, not a half row") {
  char path[] = "/tmp/ddph-catalog-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string text =
      "version: 1\nrules:\n  - id: ddp-x\n    severity: fatal\n    languages: [c++]\n";
  REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fd);
  std::string what;
  try {
    loadCatalog(path);
  } catch (const std::exception& e) {
    what = e.what();
  }
  unlink(path);
  CHECK(what.find(std::string(path) + ":4:15: error: severity must be error, warning or note") !=
        std::string::npos);
}

TEST_CASE("a rank's state survives the JSON round trip that external-launcher supervisors use") {
  auto r = rank(2, prefix(1));
  r.exited = true;
  r.signal = 9;
  r.exitNs = 123456;
  r.error = "quote \" backslash \\ newline \n tab \t";
  r.errorNs = 777;
  r.metrics = R"({"finding":"x","n":3})";
  r.stack = {"c10d::Work::wait [libtorch_cpu.so]"};
  MarkView m;
  m.name = "save_checkpoint";
  m.resource = "/ckpt.pt";
  m.kind = ddpg::MarkKind::Write;
  m.tBegin = 10;
  m.tEnd = 20;
  r.marks.push_back(m);
  Json j;
  rankJson(j, r, "doing");
  RankView back = rankFromJson(YAML::Load(j.str()));
  CHECK(back.rank == 2);
  CHECK(back.signal == 9);
  CHECK(back.exitNs == 123456);
  CHECK(back.error == r.error);
  CHECK(back.recs.size() == r.recs.size());
  CHECK(back.recs.back().signature() == r.recs.back().signature());
  CHECK(back.recs.back().state == r.recs.back().state);
  REQUIRE(back.marks.size() == 1);
  CHECK(back.marks[0].kind == ddpg::MarkKind::Write);
  CHECK(back.marks[0].resource == "/ckpt.pt");
  CHECK(jsonStringField(back.metrics, "finding") == "x");
  CHECK(back.stack == r.stack);
}
