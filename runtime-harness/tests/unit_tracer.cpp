// The tracer and guardrails on a real one-rank Gloo group.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <fstream>
#include <thread>
#include <unistd.h>

#include "ddp_guardrails/guardrails.hpp"
#include "verdict.hpp"

namespace {

struct OneRank {
  c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::HashStore>();
  std::unique_ptr<ddpg::RankSlot> slot = std::make_unique<ddpg::RankSlot>();
  c10::intrusive_ptr<ddpg::TracedProcessGroup> pg;
  OneRank() {
    ddpg::GroupSetup s;
    s.store = store;
    s.timeout = std::chrono::seconds(5);
    pg = c10::make_intrusive<ddpg::TracedProcessGroup>(ddpg::createProcessGroup(s), slot.get());
  }
};

}  // namespace

TEST_CASE("the tracer records op, shapes, dtype, options, tag, timestamps and state") {
  OneRank r;
  std::vector<at::Tensor> t{at::ones({2, 3})};
  {
    ddpg::TracedProcessGroup::TagScope tag("grad:w");
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    r.pg->allreduce(t, o)->wait();
  }
  std::vector<at::Tensor> l{at::zeros({5}, at::kLong)};
  c10d::BroadcastOptions bo;
  bo.rootRank = 0;
  auto w = r.pg->broadcast(l, bo);
  r.pg->barrier()->wait();
  w->wait();
  ddph::RankView v = ddph::readSlot(*r.slot, 0);
  REQUIRE(v.recs.size() == 3);
  CHECK(v.recs[0].op == "allreduce");
  CHECK(v.recs[0].shapes == "[2,3]");
  CHECK(v.recs[0].dtype == "Float");
  CHECK(v.recs[0].tag == "grad:w");
  CHECK(v.recs[0].reduceOp == int(c10d::ReduceOp::MAX));
  CHECK(v.recs[0].numel == 6);
  CHECK(v.recs[0].state == ddpg::RecState::Completed);
  CHECK(v.recs[0].tEnqueue <= v.recs[0].tIssued);
  CHECK(v.recs[0].tIssued <= v.recs[0].tEnd);
  CHECK(v.recs[1].op == "broadcast");
  CHECK(v.recs[1].root == 0);
  CHECK(v.recs[1].dtype == "Long");
  CHECK(v.recs[1].tag.empty());
  CHECK(v.recs[2].op == "barrier");
  CHECK(v.recs[1].state == ddpg::RecState::Completed);
}

TEST_CASE("the ring keeps the newest records with their true sequence numbers") {
  OneRank r;
  std::vector<at::Tensor> t{at::ones({1})};
  const size_t n = ddpg::kMaxRecords + 7;
  for (size_t i = 0; i < n; ++i) r.pg->allreduce(t)->wait();
  ddph::RankView v = ddph::readSlot(*r.slot, 0);
  CHECK(v.nextSeq == int64_t(n));
  REQUIRE(v.recs.size() == ddpg::kMaxRecords);
  CHECK(v.recs.front().seq == 7);
  CHECK(v.recs.back().seq == int64_t(n - 1));
}

TEST_CASE("a failing collective is recorded as failed with its error") {
  OneRank r;
  // Gloo rejects an allreduce over tensors of different sizes.
  std::vector<at::Tensor> bad{at::ones({2}), at::ones({3})};
  CHECK_THROWS(r.pg->allreduce(bad)->wait());
  ddph::RankView v = ddph::readSlot(*r.slot, 0);
  REQUIRE(v.recs.size() == 1);
  CHECK(v.recs[0].state == ddpg::RecState::Failed);
  CHECK(v.error.find("allreduce #0 failed") != std::string::npos);
}

TEST_CASE("createProcessGroup refuses a missing timeout") {
  ddpg::GroupSetup s;
  s.store = c10::make_intrusive<c10d::HashStore>();
  s.timeout = std::chrono::milliseconds(0);
  CHECK_THROWS_WITH(ddpg::createProcessGroup(s), Catch::Contains("ddp-init-timeout"));
}

TEST_CASE("collectiveSave writes atomically and leaves no temporary file") {
  OneRank r;
  char dir[] = "/tmp/ddpg-unit.XXXXXX";
  REQUIRE(mkdtemp(dir));
  std::string path = std::string(dir) + "/ckpt.bin";
  ddpg::RankRecorder rec(r.slot.get());
  ddpg::collectiveSave(*r.pg, *r.store, path, [](std::ostream& o) { o << "payload"; }, &rec);
  std::ifstream f(path);
  std::string s;
  f >> s;
  CHECK(s == "payload");
  ddph::RankView v = ddph::readSlot(*r.slot, 0);
  REQUIRE(v.marks.size() == 1);
  CHECK(v.marks[0].name == "collective_save");
  CHECK(v.marks[0].tEnd >= v.marks[0].tBegin);
  CHECK(v.recs.size() == 2);  // barrier, barrier
  std::remove(path.c_str());
  CHECK(rmdir(dir) == 0);  // fails if a .tmp file was left behind
}

TEST_CASE("the heartbeat watchdog beats and reports a stall with what the rank was doing") {
  auto slot = std::make_unique<ddpg::RankSlot>();
  ddpg::RankRecorder rec(slot.get());
  std::atomic<int> stalls{0};
  std::string msg;
  std::mutex mu;
  {
    ddpg::Mark m(rec, ddpg::MarkKind::Read, "read_shard", "/data/x");
    ddpg::HeartbeatWatchdog::Options o;
    o.period = std::chrono::milliseconds(20);
    o.stallLimit = std::chrono::milliseconds(150);
    o.onStall = [&](const std::string& s) {
      std::lock_guard<std::mutex> g(mu);
      msg = s;
      stalls++;
    };
    ddpg::HeartbeatWatchdog wd(slot.get(), o);
    int64_t hb0 = slot->heartbeatNs.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    CHECK(slot->heartbeatNs.load() > hb0);
  }
  CHECK(stalls.load() >= 1);
  std::lock_guard<std::mutex> g(mu);
  CHECK(msg.find("read_shard") != std::string::npos);
  CHECK(msg.find("no progress") != std::string::npos);
}

TEST_CASE("clock offset of rank 0 to itself is zero") {
  c10d::HashStore store;
  auto r = ddpg::measureClockOffset(store, 0, 1);
  CHECK(r.first == 0);
  CHECK(r.second == 0);
}
