// Uneven shards: one rank runs out of batches and waits in the final
// barrier while the others still allreduce gradients.
#include "scenario_api.hpp"

namespace ddph {
namespace {

void run(RankCtx& ctx) {
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  // 4*steps - 2 samples split by rank without padding: the last rank gets
  // two batches fewer.
  int localBatches = ctx.rank == ctx.world - 1 ? ctx.steps - 2 : ctx.steps;
  int batches = localBatches;
  if (!ctx.bad) {
    // Fixed: agree on the common number of batches (drop the remainder).
    at::Tensor n = at::full({1}, localBatches, at::kInt);
    ddpg::TracedProcessGroup::TagScope t("agree_batches");
    std::vector<at::Tensor> v{n};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MIN;
    ctx.pg->allreduce(v, o)->wait();
    batches = n.item<int>();
  }
  for (int step = 0; step < batches; ++step) {
    trainStep(ctx, m, step, 101);
  }
  ctx.barrier("end_of_training");
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "uneven-iterations", "ranks run different numbers of iterations",
                       "the last rank has two batches fewer and enters the final barrier early",
                       "ranks allreduce(MIN) their batch counts and all run that many", 2, false, 0, &run);

}  // namespace ddph
