#pragma once
#include "tidy/CheckSupport.h"

namespace ddplint::tidy {

// A checkpoint write that every rank runs to one path.
// Docs: docs/checks/ddp-unguarded-save.md
class UnguardedSaveCheck : public ModelBasedCheck {
public:
  UnguardedSaveCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context)
      : ModelBasedCheck(name, context, "ddp-unguarded-save") {}

protected:
  void run(core::Analyzer &analyzer, clangfe::ModelBuilder &model, clang::ASTContext &) override {
    for (const auto &f : analyzer.unguardedSaves())
      emit(f, model);
  }
};

} // namespace ddplint::tidy
