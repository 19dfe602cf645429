#pragma once
#include "tidy/CheckSupport.h"

namespace ddplint::tidy {

// Collectives that not every rank reaches, or reaches in another order.
// Docs: docs/checks/ddp-divergent-collective.md
class DivergentCollectiveCheck : public ModelBasedCheck {
public:
  DivergentCollectiveCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context)
      : ModelBasedCheck(name, context, "ddp-divergent-collective") {}

protected:
  void run(core::Analyzer &analyzer, clangfe::ModelBuilder &model, clang::ASTContext &) override {
    for (const auto &f : analyzer.divergentCollectives())
      emit(f, model);
  }
};

} // namespace ddplint::tidy
