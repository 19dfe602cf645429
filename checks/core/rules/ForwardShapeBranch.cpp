// ddp-forward-shape-branch: a branch in forward() on the input's shape or
// values, or on the rank, whose arms run different submodules, use different
// parameters or produce different shapes.
#include "RuleSupport.h"

#include <set>

namespace ddplint::core::rules {
namespace {

struct ArmSets {
  std::set<std::string> modules, params;
  std::multiset<std::string> shapes;
};

struct Divergence {
  enum Kind { None, Module, Param, Shape } kind = None;
  std::string name;
};

// What the first arm (the `then` side) runs that not every arm does.
std::string firstNotInAll(const std::vector<const std::set<std::string> *> &sets) {
  std::set<std::string> common = *sets.front();
  for (const auto *s : sets) {
    std::set<std::string> keep;
    for (const auto &n : common)
      if (s->count(n))
        keep.insert(n);
    common.swap(keep);
  }
  for (const auto *s : sets)
    for (const auto &n : *s)
      if (!common.count(n))
        return n;
  return "";
}

Divergence compare(const std::vector<ForwardArm> &arms) {
  Divergence d;
  if (arms.size() < 2)
    return d;
  for (const ForwardArm &a : arms)
    if (a.throws) // an error path, not a different computation
      return d;
  std::vector<ArmSets> eff;
  eff.reserve(arms.size());
  for (const ForwardArm &a : arms)
    eff.push_back({{a.effective.modules.begin(), a.effective.modules.end()},
                   {a.effective.params.begin(), a.effective.params.end()},
                   {a.effective.shapes.begin(), a.effective.shapes.end()}});
  std::vector<const std::set<std::string> *> modules, params;
  for (const ArmSets &e : eff) {
    modules.push_back(&e.modules);
    params.push_back(&e.params);
  }
  if (auto n = firstNotInAll(modules); !n.empty())
    return {Divergence::Module, n};
  if (auto n = firstNotInAll(params); !n.empty())
    return {Divergence::Param, n};
  // Shapes: only when the arms reshape differently themselves, or one of them
  // returns early; a one-armed `if (x.dim() == 3) x = x.unsqueeze(0);`
  // normalises the input to one shape.
  bool differ = false, anyReturns = false;
  unsigned reshaping = 0;
  for (size_t i = 0; i < arms.size(); ++i) {
    differ |= eff[i].shapes != eff.front().shapes;
    anyReturns |= arms[i].returns;
    reshaping += !arms[i].own.shapes.empty();
  }
  if (differ && (anyReturns || reshaping >= 2))
    return {Divergence::Shape, ""};
  return d;
}

std::vector<Finding> decide(const RuleContext &ctx) {
  const Program &program = ctx.program();
  const char *rule = "ddp-forward-shape-branch";
  std::vector<Finding> out;
  std::set<Loc> seen;
  for (const ForwardMethod &fm : program.facts.forwards) {
    // A branch inside a reported branch is not reported again.
    std::vector<bool> covered(fm.branches.size(), false);
    for (size_t i = 0; i < fm.branches.size(); ++i) {
      const ForwardBranch &b = fm.branches[i];
      if (b.parent >= 0 && static_cast<size_t>(b.parent) < i && covered[b.parent]) {
        covered[i] = true;
        continue;
      }
      const Divergence d = compare(b.arms);
      if (d.kind == Divergence::None)
        continue;
      std::string what;
      if (b.onShape)
        what = "the input's shape";
      else if (b.onValues)
        what = "the input's values";
      else if (b.onRank)
        what = "the rank";
      else
        continue;
      covered[i] = true;
      if (!seen.insert(b.loc).second)
        continue;
      std::string msg = "branch on " + what + " in forward() ";
      switch (d.kind) {
      case Divergence::Module:
        msg += "runs submodule '" + d.name +
               "' on some ranks only; ranks that skip it produce no gradient for its "
               "parameters and the gradient allreduce mismatches; run every submodule on "
               "every rank and mask the result";
        break;
      case Divergence::Param:
        msg += "uses parameter '" + d.name +
               "' on some ranks only; ranks that skip it produce no gradient for it and the "
               "gradient allreduce mismatches; use it on every rank and mask the result";
        break;
      case Divergence::Shape:
        msg += "produces different shapes on different ranks; collectives over the "
               "activations or their gradients then mismatch; keep shapes rank-uniform (pad or "
               "mask) instead of branching";
        break;
      case Divergence::None:
        break;
      }
      out.push_back(makeFinding(rule, b.loc, std::move(msg)));
    }
  }
  return out;
}

} // namespace

const RuleDefinition ForwardShapeBranch = {NeedForwards, &decide};

} // namespace ddplint::core::rules
