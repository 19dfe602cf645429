// ddp-init-timeout: a Gloo or NCCL process group (or its Options) created
// without an explicit timeout, so a hang is noticed only after the backend
// default (30 min for Gloo).  Facts: clangfe::FactsBuilder::addProcessGroups;
// decision and message: core::initTimeoutFindings.
#pragma once

#include "tidy/CheckSupport.h"

namespace ddplint::tidy {

class InitTimeoutCheck : public FactBasedCheck {
public:
  InitTimeoutCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context);
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) override;

protected:
  void run(core::Program &program, clangfe::FactsBuilder &facts, clang::ASTContext &ctx) override;

private:
  unsigned defaultTimeoutSeconds_;
};

} // namespace ddplint::tidy
