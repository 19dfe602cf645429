// Early stopping decided on one rank: it leaves the loop (and the process)
// while the others issue the next gradient allreduce.
#include "scenario_api.hpp"

namespace ddph {
namespace {

void run(RankCtx& ctx) {
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  const int stopper = ctx.world - 1;
  for (int step = 0; step < ctx.steps; ++step) {
    m.zeroGrad();
    auto g = at::detail::createCPUGenerator(ctx.seed + uint64_t(ctx.rank) * 7919 + uint64_t(step));
    at::Tensor x = at::randn({8, 4}, g);
    at::Tensor loss = (x.matmul(m.params[0].second.t()) + m.params[1].second).pow(2).mean();
    // Each rank's validation loss comes from its own shard; the last rank's
    // shard happens to be easy and converges at step 3.
    double valLoss = (ctx.rank == stopper && step >= 3) ? 0.001 : 1.0;
    if (ctx.bad) {
      if (valLoss < 0.01) {
        std::printf("rank %d: early stop at step %d\n", ctx.rank, step);
        ctx.exitProcess(0);  // `return` from main on this rank only
      }
    } else {
      // Agree first: any rank that wants to stop stops everyone.
      at::Tensor stop = at::full({1}, valLoss < 0.01 ? 1 : 0, at::kInt);
      {
        ddpg::TracedProcessGroup::TagScope t("stop_flag");
        std::vector<at::Tensor> v{stop};
        c10d::AllreduceOptions o;
        o.reduceOp = c10d::ReduceOp::MAX;
        ctx.pg->allreduce(v, o)->wait();
      }
      if (stop.item<int>() != 0) break;
    }
    loss.backward();
    ctx.compute(ctx.stepS);
    syncGrads(ctx, m);
    m.sgd(0.01);
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "early-exit", "rank-dependent early exit before a collective",
                       "the last rank's early-stopping check fires and it exits; the others allreduce gradients",
                       "the stop flag is allreduced (MAX) every step and all ranks break together", 2, false, 0, &run);

}  // namespace ddph
