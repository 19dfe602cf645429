// A data-dependent branch in forward(): the rank whose batch has an outlier
// also runs the auxiliary head, so it allreduces one gradient more.
#include "scenario_api.hpp"

namespace ddph {
namespace {

void run(RankCtx& ctx) {
  TinyModel m({{"trunk.weight", {4, 4}}, {"trunk.bias", {4}}, {"aux_head.weight", {2, 4}}}, ctx.seed);
  broadcastParams(ctx, m);
  const int odd = ctx.world - 1;
  for (int step = 0; step < ctx.steps; ++step) {
    m.zeroGrad();
    auto g = at::detail::createCPUGenerator(ctx.seed + uint64_t(ctx.rank) * 23 + uint64_t(step));
    at::Tensor x = at::randn({8, 4}, g);
    if (ctx.rank == odd && step == 2) x = x * 10;  // one batch with outliers
    at::Tensor h = x.matmul(m.params[0].second.t()) + m.params[1].second;
    at::Tensor loss = h.pow(2).mean();
    at::Tensor aux = h.matmul(m.params[2].second.t()).pow(2).mean();
    bool outlier = x.abs().max().item<float>() > 6.0f;
    if (ctx.bad) {
      if (outlier) loss = loss + aux;  // forward() takes a different submodule set
    } else {
      // Every rank runs the head; the mask zeroes its effect where unused,
      // so every rank has the same gradients to reduce.
      loss = loss + aux * (outlier ? 1.0 : 0.0);
    }
    loss.backward();
    ctx.compute(ctx.stepS);
    syncGrads(ctx, m);
    m.sgd(0.01);
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "forward-branch-submodule", "branch in forward() skips a submodule on some ranks",
                       "the last rank's outlier batch runs the aux head: it allreduces aux_head.weight, the others "
                       "the next trunk.weight",
                       "the aux head runs on every rank and is masked, so all ranks reduce the same gradients", 2,
                       false, 0, &run);

}  // namespace ddph
