// ddp-dataloader-recreated: a data loader built inside a loop (the epoch loop),
// so its worker threads are started and joined on every iteration.
#pragma once

#include "clang-frontend/ApiMatcher.h"

#include "clang-tidy/ClangTidyCheck.h"

#include "llvm/ADT/DenseSet.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ddplint::tidy {

class DataloaderRecreatedCheck : public clang::tidy::ClangTidyCheck {
public:
  DataloaderRecreatedCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context);
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) override;
  bool isLanguageVersionSupported(const clang::LangOptions &lang) const override {
    return lang.CPlusPlus;
  }
  void registerMatchers(clang::ast_matchers::MatchFinder *finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void onEndOfTranslationUnit() override;

private:
  bool isFactory(const clang::FunctionDecl *fd) const;
  void checkFunction(const clang::FunctionDecl *fd, const clang::SourceManager &sm);

  clangfe::UserApi user_;
  std::vector<std::string> factories_; // catalog + DataLoaderFactories
  // Functions of this unit that build a loader outside any loop of their own,
  // and the name of the factory they call.
  std::map<const clang::FunctionDecl *, std::string> helpers_;
  // Calls of the unit's own functions, resolved at the end of the unit, when
  // every helper is known.
  struct Call {
    const clang::CallExpr *call;
    const clang::FunctionDecl *callee; // canonical
    const clang::FunctionDecl *caller; // canonical; null outside functions
    bool inLoop;
  };
  std::vector<Call> calls_;
  // Instantiations of one template share their locations: report once.
  llvm::DenseSet<clang::SourceLocation> reported_;
};

} // namespace ddplint::tidy
