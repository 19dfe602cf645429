// Rank 0 writes a checkpoint with no barrier after it; the other ranks load
// it right away (to evaluate the new weights) and read a partial file.
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "checkpoint_io.hpp"

namespace ddph {
namespace {

void loadWhenPresent(RankCtx& ctx, const std::string& path) {
  ddpg::Mark r(ctx.rec, ddpg::MarkKind::Read, "load_checkpoint", path);
  struct stat st {};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (stat(path.c_str(), &st) != 0) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error(path + " never appeared");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::vector<char> bytes = readFile(path);
  try {
    int64_t step = loadCheckpoint(bytes);
    std::printf("rank %d loaded checkpoint of step %lld\n", ctx.rank, (long long)step);
  } catch (const std::exception& e) {
    std::string first = e.what();
    first = first.substr(0, first.find('\n'));
    ctx.rec.setError("loading " + path + " (" + std::to_string(bytes.size()) + " bytes) failed: " + first, path);
    throw;
  }
}

void run(RankCtx& ctx) {
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  const std::string path = ctx.workDir + "/ckpt-step2.pt";
  for (int step = 0; step < ctx.steps; ++step) {
    trainStep(ctx, m, step, 17);
    if (step != 2) continue;
    std::vector<char> bytes = serializeCheckpoint(m, step, at::zeros({100000}));
    if (ctx.bad) {
      if (ctx.rank == 0) {
        ddpg::Mark w(ctx.rec, ddpg::MarkKind::Write, "save_checkpoint", path);
        writeSlowly(ctx, path, bytes, 0.8);
      } else {
        loadWhenPresent(ctx, path);
      }
    } else {
      ddpg::collectiveSave(*ctx.pg, *ctx.store, path, [&](std::ostream& o) {
        size_t chunk = bytes.size() / 16 + 1;
        for (size_t off = 0; off < bytes.size(); off += chunk) {
          o.write(bytes.data() + off, std::streamsize(std::min(chunk, bytes.size() - off)));
          ctx.rec.progress();
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }, &ctx.rec);
      if (ctx.rank != 0) loadWhenPresent(ctx, path);
    }
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "rank0-checkpoint-read-before-complete", "checkpoint read before rank 0 finished it",
                       "rank 0 writes the checkpoint with no barrier; the others load it while it is half written",
                       "guardrails collectiveSave (barrier, tmp + rename, broadcast ok) before anyone loads", 2, false,
                       0, &run);

}  // namespace ddph
