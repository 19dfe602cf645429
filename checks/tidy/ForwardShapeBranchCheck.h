// ddp-forward-shape-branch: a branch in forward() of a torch::nn::Module whose
// condition depends on the input (its shape or values) or on the rank, and
// whose arms run different submodules, use different parameters or produce
// different shapes, so ranks disagree on which gradients exist.
#pragma once

#include "clang-frontend/ApiMatcher.h"
#include "clang-frontend/RankDependence.h"

#include "clang-tidy/ClangTidyCheck.h"

#include <memory>

namespace ddplint::tidy {

class ForwardShapeBranchCheck : public clang::tidy::ClangTidyCheck {
public:
  ForwardShapeBranchCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context);
  ~ForwardShapeBranchCheck() override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) override;
  bool isLanguageVersionSupported(const clang::LangOptions &lang) const override {
    return lang.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void onEndOfTranslationUnit() override;

private:
  void checkForward(const clang::CXXMethodDecl *forward, clang::ASTContext &ctx);
  clangfe::DependenceAnalyzer &deps(clang::ASTContext &ctx);

  clangfe::UserApi user_;
  // Built on the first forward() of a unit: rank dependence is per unit.
  std::unique_ptr<clangfe::ApiMatcher> api_;
  std::unique_ptr<clangfe::LocTable> locs_;
  std::unique_ptr<clangfe::DependenceAnalyzer> deps_;
  clang::ASTContext *depsCtx_ = nullptr;
};

} // namespace ddplint::tidy
