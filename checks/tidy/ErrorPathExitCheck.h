#pragma once
#include "tidy/CheckSupport.h"

namespace ddplint::tidy {

// An early exit on a failed call's status before a collective: the failing
// rank leaves while the others wait.  One report per function.
// Docs: docs/checks/ddp-error-path-exit.md
class ErrorPathExitCheck : public ModelBasedCheck {
public:
  ErrorPathExitCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context)
      : ModelBasedCheck(name, context, "ddp-error-path-exit") {}

protected:
  void run(core::Analyzer &analyzer, clangfe::ModelBuilder &model, clang::ASTContext &) override {
    for (const auto &f : analyzer.errorPathExits())
      emit(f, model);
  }
};

} // namespace ddplint::tidy
