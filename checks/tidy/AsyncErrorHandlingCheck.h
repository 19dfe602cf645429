// ddp-async-error-handling: an NCCL process group in a translation unit that
// never enables asynchronous NCCL error handling (LibTorch older than 2.2, where
// it is off by default), or, with 2.2 and newer, the deprecated spelling of
// the environment variable.
#pragma once

#include "clang-tidy/ClangTidyCheck.h"

#include <optional>
#include <string>
#include <vector>

namespace ddplint::tidy {

class AsyncErrorHandlingCheck : public clang::tidy::ClangTidyCheck {
public:
  AsyncErrorHandlingCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context);
  bool isLanguageVersionSupported(const clang::LangOptions &lang) const override {
    return lang.CPlusPlus;
  }
  void registerPPCallbacks(const clang::SourceManager &sm, clang::Preprocessor *pp,
                           clang::Preprocessor *moduleExpanderPP) override;
  void registerMatchers(clang::ast_matchers::MatchFinder *finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void onEndOfTranslationUnit() override;

  // TORCH_VERSION_MAJOR / MINOR as the preprocessor saw them.
  std::optional<int> versionMajor, versionMinor;

private:
  struct EnvUse {
    std::string name;           // the variable, e.g. NCCL_ASYNC_ERROR_HANDLING
    std::optional<std::string> value; // set: the value; nullopt when unknown
    bool isSet = false;         // setenv/putenv (else a read)
    bool nameKnown = true;      // false: the name is not a constant we can read
    const clang::StringLiteral *literal = nullptr; // the literal spelling the name, for the fix-it
  };
  struct Creation {
    clang::SourceLocation loc;
    std::string cls;
  };

  bool isNcclGroup(const clang::CXXRecordDecl *rd) const;
  void examineCall(const clang::CallExpr *call);

  std::vector<std::string> ncclGroupClasses_;
  std::vector<std::string> envFunctions_; // setenv, putenv and the catalog's getenv family
  std::vector<EnvUse> env_;
  std::vector<Creation> creations_;
  const clang::ASTContext *ctx_ = nullptr;
};

} // namespace ddplint::tidy
