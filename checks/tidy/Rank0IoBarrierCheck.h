#pragma once
#include "tidy/CheckSupport.h"

namespace ddplint::tidy {

// A rank-0-only block that writes files without barriers around it.
// Docs: docs/checks/ddp-rank0-io-barrier.md
class Rank0IoBarrierCheck : public ModelBasedCheck {
public:
  Rank0IoBarrierCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context);
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) override;

protected:
  void run(core::Analyzer &analyzer, clangfe::ModelBuilder &model, clang::ASTContext &ctx) override;

private:
  bool requireBefore_;
};

} // namespace ddplint::tidy
