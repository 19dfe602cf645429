// Ranks synchronise the same buffers in different orders.
#include "scenario_api.hpp"

#include <algorithm>

namespace ddph {
namespace {

void run(RankCtx& ctx) {
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  at::Tensor runningMean = at::zeros({16});
  at::Tensor seen = at::zeros({1}, at::kLong);
  const int odd = ctx.world - 1;
  for (int step = 0; step < ctx.steps; ++step) {
    at::Tensor x = trainStep(ctx, m, step, 31);
    // Buffers are synchronised in the order their producers finished, which
    // is timing-dependent: from step 2 on, the last rank sees the counter
    // ready before the statistics.
    std::vector<std::pair<std::string, at::Tensor*>> ready = {{"buf:running_mean", &runningMean},
                                                              {"buf:samples_seen", &seen}};
    if (ctx.rank == odd && step >= 2) std::reverse(ready.begin(), ready.end());
    if (!ctx.bad) {
      // Fixed: a canonical order that does not depend on timing.
      std::sort(ready.begin(), ready.end(), [](auto& a, auto& b) { return a.first < b.first; });
    }
    runningMean.add_(x.mean(0).repeat({4}));
    seen.add_(8);
    for (auto& b : ready) ctx.allreduce(*b.second, b.first.c_str());
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "order-mismatch", "same collectives, different order",
                       "from step 2 the last rank allreduces samples_seen before running_mean",
                       "buffers are synchronised in sorted-name order on every rank", 2, false, 0, &run);

}  // namespace ddph
