// ddp-init-timeout: a Gloo or NCCL process group (or its Options) created
// without an explicit timeout, so a hang is noticed only after the backend
// default (30 min for Gloo).
#pragma once

#include "tidy/UserCode.h"

#include "clang-tidy/ClangTidyCheck.h"

#include "llvm/ADT/DenseSet.h"

#include <string>
#include <vector>

namespace ddplint::tidy {

class InitTimeoutCheck : public clang::tidy::ClangTidyCheck {
public:
  InitTimeoutCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context);
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) override;
  bool isLanguageVersionSupported(const clang::LangOptions &lang) const override {
    return lang.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &result) override;

  // A process-group backend the check knows (from rules/api.yaml).
  struct Backend {
    std::string name;         // gloo | nccl
    std::string groupClass;   // c10d::ProcessGroupGloo
    std::string optionsClass; // c10d::ProcessGroupGloo::Options
    std::string factory;      // c10d::ProcessGroupGloo::Options::create
    int optionsArg = -1;      // index of the options argument of the group's constructor
    int timeoutArg = -1;      // index of the timeout argument of the factory (-1: none)
  };

private:
  void examine(const clang::Expr *e, const LocalParents &lp, const clang::FunctionDecl *fd);

  unsigned defaultTimeoutSeconds_;
  llvm::DenseSet<clang::SourceLocation> reported_;
  std::vector<Backend> backends_;
};

} // namespace ddplint::tidy
