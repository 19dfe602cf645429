// ddp-forward-shape-branch: a branch in forward() of a torch::nn::Module whose
// condition depends on the input (its shape or values) or on the rank, and
// whose arms run different submodules, use different parameters or produce
// different shapes, so ranks disagree on which gradients exist.  Facts:
// clangfe::FactsBuilder::addForwards; decision and message:
// core::forwardShapeBranchFindings.
#pragma once

#include "tidy/CheckSupport.h"

namespace ddplint::tidy {

class ForwardShapeBranchCheck : public FactBasedCheck {
public:
  ForwardShapeBranchCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context)
      : FactBasedCheck(name, context, "ddp-forward-shape-branch") {}

protected:
  void run(core::Program &program, clangfe::FactsBuilder &facts, clang::ASTContext &) override {
    facts.addForwards(program.facts);
    for (const core::Finding &f : core::forwardShapeBranchFindings(program))
      emit(f, facts);
  }
};

} // namespace ddplint::tidy
