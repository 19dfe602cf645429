// Every rank saves its checkpoint to the same path; loading it back shows
// the file is torn or belongs to another rank.
#include "checkpoint_io.hpp"

namespace ddph {
namespace {

void run(RankCtx& ctx) {
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  const std::string path = ctx.workDir + "/ckpt.pt";
  for (int step = 0; step < ctx.steps; ++step) {
    trainStep(ctx, m, step, 19);
    if (step != 2) continue;
    // The weights agree, but each rank also saves its own sampler state,
    // as real checkpoints do: the ranks' bytes differ in size and content.
    at::Tensor samplerState = at::full({20000 * (ctx.rank + 1)}, float(ctx.rank));
    std::vector<char> bytes = serializeCheckpoint(m, step, samplerState);
    if (ctx.bad) {
      ddpg::Mark w(ctx.rec, ddpg::MarkKind::Write, "save_checkpoint", path);
      writeSlowly(ctx, path, bytes, 0.4);
    } else {
      ddpg::collectiveSave(*ctx.pg, *ctx.store, path, [&](std::ostream& o) {
        o.write(bytes.data(), std::streamsize(bytes.size()));
      }, &ctx.rec);
    }
    if (ctx.bad) ctx.barrier("after_save");
    // Verify like a resume would: the file must be rank 0's checkpoint.
    at::Tensor expect = at::full({1}, int64_t(fnv1a(bytes) & 0x7fffffffffffffffll), at::kLong);
    ctx.broadcast(expect, 0, "ckpt_hash");
    ddpg::Mark r(ctx.rec, ddpg::MarkKind::Read, "verify_checkpoint", path);
    std::vector<char> file = readFile(path);
    try {
      loadCheckpoint(file);
    } catch (const std::exception& e) {
      std::string first = e.what();
      first = first.substr(0, first.find('\n'));
      ctx.rec.setError("load-back of " + path + " (" + std::to_string(file.size()) + " bytes) failed: " + first);
      throw;
    }
    if (int64_t(fnv1a(file) & 0x7fffffffffffffffll) != expect.item<int64_t>()) {
      ctx.rec.setError(path + " loads, but its " + std::to_string(file.size()) +
                       " bytes are not rank 0's checkpoint: another rank's bytes overwrote or interleaved with it");
      throw std::runtime_error("checkpoint content mismatch");
    }
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "shared-path-save", "every rank saves to one path",
                       "all ranks write ckpt.pt at once; the load-back finds a torn or foreign file",
                       "collectiveSave: only rank 0 writes, to a temp file renamed atomically", 2, false, 0, &run);

}  // namespace ddph
