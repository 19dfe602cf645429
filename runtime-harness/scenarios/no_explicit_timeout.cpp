// A process group without an explicit timeout: when one rank blocks, c10d
// would let the others wait for the backend default (30 min for Gloo).
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "scenario_api.hpp"

namespace ddph {
namespace {

void run(RankCtx& ctx) {
  const ddpg::RankSlot& s = *ctx.rec.slot();
  ctx.rec.setMetrics("{\"c10d_timeout_s\":" + std::to_string(double(s.pgTimeoutMs.load()) / 1000.0) +
                     ",\"timeout_explicit\":" + (s.pgTimeoutExplicit.load() ? "true" : "false") + "}");
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  const int odd = ctx.world - 1;
  for (int step = 0; step < ctx.steps; ++step) {
    if (ctx.rank == odd && step == 2) {
      std::string shard = ctx.workDir + "/shard-" + std::to_string(ctx.rank) + ".bin";
      ddpg::Mark r(ctx.rec, ddpg::MarkKind::Read, "read_shard", shard);
      // Bad: a read that never returns (a hung network mount), stood in for
      // by a wait nobody signals.  Fixed: the same read is merely slow.
      std::mutex mu;
      std::condition_variable cv;
      std::unique_lock<std::mutex> lk(mu);
      cv.wait_for(lk, ctx.bad ? std::chrono::seconds(120) : std::chrono::milliseconds(500));
    }
    trainStep(ctx, m, step, 29);
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "no-explicit-timeout", "process group created without a timeout",
                       "no timeout set (c10d default 1800 s); the last rank blocks in a read, the others would wait "
                       "30 min",
                       "createProcessGroup with an explicit timeout; the read is only slow", 2, true, 0, &run);

}  // namespace ddph
