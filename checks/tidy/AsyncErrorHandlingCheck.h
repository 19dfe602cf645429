// ddp-async-error-handling: an NCCL process group in a translation unit that
// never enables asynchronous NCCL error handling (LibTorch older than 2.2, where
// it is off by default), or, with 2.2 and newer, the deprecated spelling of
// the environment variable.  Facts: clangfe::FactsBuilder (versions, process
// groups, environment); decision and message: core::asyncErrorHandlingFindings.
#pragma once

#include "tidy/CheckSupport.h"

#include <optional>

namespace ddplint::tidy {

class AsyncErrorHandlingCheck : public FactBasedCheck {
public:
  AsyncErrorHandlingCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context);
  void registerPPCallbacks(const clang::SourceManager &sm, clang::Preprocessor *pp,
                           clang::Preprocessor *moduleExpanderPP) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void onEndOfTranslationUnit() override;

  // TORCH_VERSION_MAJOR / MINOR as the preprocessor saw them.
  std::optional<int> versionMajor, versionMinor;

protected:
  void run(core::Program &program, clangfe::FactsBuilder &facts, clang::ASTContext &ctx) override;

private:
  clang::ASTContext *ctx_ = nullptr;
  clang::Preprocessor *pp_ = nullptr; // for version macros that came from a PCH
};

} // namespace ddplint::tidy
