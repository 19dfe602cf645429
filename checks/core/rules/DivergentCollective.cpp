// ddp-divergent-collective: a collective that not every rank reaches, or
// reaches in another order.  The path engine finds where the ranks part (one
// record per collective and per deciding branch); this file words them.
#include "RuleSupport.h"

#include "engine/PathEngine.h"

namespace ddplint::core::rules {
namespace {

using engine::Divergence;

const char *const kFixAdvice =
    "; call it on every rank, or agree on the condition first (allreduce or broadcast it)";

std::string message(const engine::PathEngine &paths, const Divergence &d) {
  const engine::Lit *l = d.hasLit ? &d.lit : nullptr;
  std::string event = engine::eventName(d.event);
  switch (d.kind) {
  case Divergence::Kind::ExitSkips:
    return event + " is never reached by " + paths.who(l) + ": they " + engine::exitWord(d.exit, d.exitVia) +
           " early while the other ranks block in it" + kFixAdvice;
  case Divergence::Kind::RunsOnlyOn:
    return event + " runs only on " + paths.who(l) + "; the other ranks skip it and the job hangs" +
           kFixAdvice;
  case Divergence::Kind::Order:
    return event + " runs in a different order across ranks: " + paths.who(l) + " issue " +
           quoteCode(d.event.op) + " where the others issue " + quoteCode(d.otherOp) +
           "; issue the collectives in the same order on every rank";
  case Divergence::Kind::LoopExit:
    return event + " is skipped by " + paths.who(l) + ": they " + engine::exitWord(d.exit, d.exitVia) +
           " while the other ranks run " + (d.reachesEvent ? "it" : "further iterations") +
           "; agree on the decision first (allreduce a stop flag) so every rank leaves the loop "
           "together";
  case Divergence::Kind::TripCount: {
    const Node &n = *d.loop;
    const std::string src = n.tripText.empty() ? "a rank-local value" : quoteCode(n.tripText);
    return event + " runs in a loop whose trip count depends on " + src + ", " +
           (n.trip == Dep::Rank ? "which depends on the rank" : "which differs across ranks") +
           "; ranks with fewer iterations leave the others blocked in it; make every rank run "
           "the same number of iterations (a distributed sampler, or allreduce the count)";
  }
  case Divergence::Kind::ErrorExit:
    break; // ddp-error-path-exit
  }
  return event;
}

std::vector<Finding> decide(const RuleContext &ctx) {
  const engine::PathEngine &paths = ctx.paths();
  std::vector<Finding> out;
  out.reserve(paths.divergences.size());
  for (const Divergence &d : paths.divergences) {
    Finding f = makeFinding("ddp-divergent-collective", d.event.loc, message(paths, d));
    if (d.kind == Divergence::Kind::TripCount)
      f.notes.emplace_back(d.loop->tripLoc ? d.loop->tripLoc : d.loop->loc,
                           "trip count decided here");
    else if (d.hasLit)
      f.notes.emplace_back(paths.condLoc(d.lit),
                         std::string(paths.atoms[d.lit.atom].dep == Dep::Local
                                         ? kRankLocalConditionNote
                                         : kRankConditionNote));
    out.push_back(std::move(f));
  }
  sortByLoc(out);
  return out;
}

} // namespace

const RuleDefinition DivergentCollective = {NeedPaths, &decide};

} // namespace ddplint::core::rules
