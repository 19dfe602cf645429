// A collective under a rank-0 branch: rank 0 evaluates and reduces the
// metric; the other ranks are already in the next step's gradient allreduce.
#include "scenario_api.hpp"

namespace ddph {
namespace {

at::Tensor batch(const RankCtx& ctx, int step) {
  auto g = at::detail::createCPUGenerator(ctx.seed * 1000003 + uint64_t(ctx.rank) * 1009 + uint64_t(step));
  return at::randn({8, 4}, g);
}

// The helper people write: it looks local, but it communicates.
double evaluate(RankCtx& ctx, TinyModel& m) {
  at::NoGradGuard ng;
  at::Tensor x = batch(ctx, 1000);
  at::Tensor err = (x.matmul(m.params[0].second.t()) + m.params[1].second).pow(2).mean().reshape({1});
  ctx.allreduce(err, "eval:metric");
  return err.item<double>() / ctx.world;
}

void run(RankCtx& ctx) {
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  const int evalAfter = 2;
  for (int step = 0; step < ctx.steps; ++step) {
    m.zeroGrad();
    at::Tensor x = batch(ctx, step);
    (x.matmul(m.params[0].second.t()) + m.params[1].second).pow(2).mean().backward();
    ctx.compute(ctx.stepS);
    syncGrads(ctx, m);
    m.sgd(0.01);
    if (step == evalAfter) {
      if (ctx.bad) {
        if (ctx.rank == 0) std::printf("eval metric %.4f\n", evaluate(ctx, m));
      } else {
        double v = evaluate(ctx, m);  // every rank takes part
        if (ctx.rank == 0) std::printf("eval metric %.4f\n", v);
      }
    }
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "rank0-only-collective", "collective under a rank-0 branch",
                       "rank 0 runs evaluate(), which allreduces a metric; the others are in the next step",
                       "every rank calls evaluate(); only rank 0 prints", 2, false, 0, &run);

}  // namespace ddph
