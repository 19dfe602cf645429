// A rank freezes (its process stops being scheduled, as with a wedged
// driver call): no error is ever raised, the others spin in the allreduce.
#include <signal.h>

#include <cstdlib>

#include "scenario_api.hpp"

namespace ddph {
namespace {

void run(RankCtx& ctx) {
  std::unique_ptr<ddpg::HeartbeatWatchdog> guard;
  if (!ctx.bad) {
    // The guardrails: async error handling for NCCL before any group is
    // created (createProcessGroup does it for NCCL), and an in-process
    // watchdog that aborts the rank with a message when it stops progressing.
    setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 0);
    ddpg::HeartbeatWatchdog::Options o;
    o.stallLimit = std::chrono::seconds(10);
    guard = std::make_unique<ddpg::HeartbeatWatchdog>(ctx.rec.slot(), o);
  }
  const char* aeh = std::getenv("TORCH_NCCL_ASYNC_ERROR_HANDLING");
  ctx.rec.setMetrics(std::string("{\"TORCH_NCCL_ASYNC_ERROR_HANDLING\":\"") + (aeh ? aeh : "(unset)") +
                     "\",\"in_process_watchdog\":" + (guard ? "true" : "false") + "}");
  TinyModel m({{"fc.weight", {4, 4}}, {"fc.bias", {4}}}, ctx.seed);
  broadcastParams(ctx, m);
  const int odd = ctx.world - 1;
  for (int step = 0; step < ctx.steps; ++step) {
    m.zeroGrad();
    auto g = at::detail::createCPUGenerator(ctx.seed + uint64_t(ctx.rank) * 37 + uint64_t(step));
    at::Tensor x = at::randn({8, 4}, g);
    (x.matmul(m.params[0].second.t()) + m.params[1].second).pow(2).mean().backward();
    ctx.compute(ctx.stepS);
    if (ctx.bad && ctx.rank == odd && step == 3) raise(SIGSTOP);
    syncGrads(ctx, m);
    m.sgd(0.01);
  }
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "rank-stall-watchdog", "a rank freezes without any error",
                       "the last rank stops (SIGSTOP) before its gradient allreduce; no error reaches anyone",
                       "TORCH_NCCL_ASYNC_ERROR_HANDLING set and the in-process watchdog armed; nothing freezes", 2,
                       false, 0, &run);

}  // namespace ddph
