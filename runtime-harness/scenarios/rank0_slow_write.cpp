// A slow rank-0 checkpoint write with no barrier: the others race into the
// next gradient allreduce and hit the (short) process-group timeout.
#include <chrono>
#include <thread>

#include "checkpoint_io.hpp"

namespace ddph {
namespace {

void run(RankCtx& ctx) {
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  const std::string path = ctx.workDir + "/ckpt.pt";
  const double writeS = 3.0;  // twice the process-group timeout
  for (int step = 0; step < ctx.steps; ++step) {
    trainStep(ctx, m, step, 13);
    if (step != 2) continue;
    std::vector<char> bytes = serializeCheckpoint(m, step, at::zeros({1000}));
    if (ctx.bad) {
      if (ctx.rank == 0) {
        ddpg::Mark w(ctx.rec, ddpg::MarkKind::Write, "save_checkpoint", path);
        writeSlowly(ctx, path, bytes, writeS);
      }
    } else {
      // The IO wait gets its own timeout, sized for the write.
      ddpg::collectiveSave(*ctx.pg, *ctx.store, path, [&](std::ostream& o) {
        size_t chunk = bytes.size() / 16 + 1;
        for (size_t off = 0; off < bytes.size(); off += chunk) {
          o.write(bytes.data() + off, std::streamsize(std::min(chunk, bytes.size() - off)));
          ctx.rec.progress();
          std::this_thread::sleep_for(std::chrono::duration<double>(writeS / 16));
        }
      }, &ctx.rec, std::chrono::seconds(30));
    }
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "rank0-slow-write-timeout", "slow rank-0 write makes the next collective time out",
                       "rank 0 spends 3 s writing; the others' next allreduce times out after 1.5 s",
                       "collectiveSave: the others wait in a barrier whose timeout is sized for IO", 2, false, 1.5,
                       &run);

}  // namespace ddph
