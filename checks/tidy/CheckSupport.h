// What every ddp check shares: the user's wrapper options and the API matcher.
#pragma once

#include "clang-frontend/ApiMatcher.h"

#include "clang-tidy/ClangTidyCheck.h"

namespace ddplint::tidy {

// Reads the wrapper options (RankFunctions, MainProcessFunctions, ...) that the
// catalog lists for this check; the others stay empty.
clangfe::UserApi readUserApi(clang::tidy::ClangTidyCheck::OptionsView &opts,
                             std::string_view ruleId);
void storeUserApi(clang::tidy::ClangTidyCheck::OptionsView &opts,
                  clang::tidy::ClangTidyOptions::OptionMap &map, const clangfe::UserApi &user,
                  std::string_view ruleId);

// The bool overloads of OptionsView are not exported by clang-tidy, so a
// plugin that calls them fails to load: options are read as strings.
bool parseBool(llvm::StringRef value, bool fallback);

// Joins a list back into the option format.
std::string joinList(const std::vector<std::string> &items);

// Whether the catalog's `languages:` for the rule include the unit's language.
bool ruleAppliesTo(std::string_view ruleId, const clang::LangOptions &lo);

} // namespace ddplint::tidy

#include "clang-frontend/ModelBuilder.h"
#include "ddplint/core/Analysis.h"

namespace ddplint::tidy {

// Base of the checks that read the program model: builds the model of the
// translation unit once per check run and hands it to `run`.
class ModelBasedCheck : public clang::tidy::ClangTidyCheck {
public:
  ModelBasedCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context,
                  std::string_view ruleId);
  void registerMatchers(clang::ast_matchers::MatchFinder *finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) override;
  bool isLanguageVersionSupported(const clang::LangOptions &lo) const override {
    return ruleAppliesTo(ruleId_, lo);
  }

protected:
  virtual void run(core::Analyzer &analyzer, clangfe::ModelBuilder &model,
                   clang::ASTContext &ctx) = 0;
  // Emits a finding with its notes; the message is passed as an argument so
  // that '%' in source text (rank % 2) is not read as a format directive.
  void emit(const core::Finding &f, clangfe::ModelBuilder &model,
            llvm::ArrayRef<clang::FixItHint> fixes = {});

  clangfe::UserApi user_;
  std::string ruleId_;
};

} // namespace ddplint::tidy

#include "clang-frontend/FactsBuilder.h"
#include "ddplint/core/FactRules.h"

namespace ddplint::tidy {

// Base of the checks decided on facts (ddplint/core/Facts.h): `run` asks the
// FactsBuilder for the facts its rule needs, calls the core rule
// (ddplint/core/FactRules.h) and emits the findings, rendering their FixHints.
// The unit is matched once; the builder walks the user's own functions.
class FactBasedCheck : public clang::tidy::ClangTidyCheck {
public:
  FactBasedCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context,
                 std::string_view ruleId);
  void registerMatchers(clang::ast_matchers::MatchFinder *finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) override;
  bool isLanguageVersionSupported(const clang::LangOptions &lo) const override {
    return lo.CPlusPlus;
  }

protected:
  virtual void run(core::Program &program, clangfe::FactsBuilder &facts,
                   clang::ASTContext &ctx) = 0;
  // Builds the facts of the unit in `ctx` and calls `run`.
  void runOn(clang::ASTContext &ctx);
  void emit(const core::Finding &f, clangfe::FactsBuilder &facts,
            llvm::ArrayRef<clang::FixItHint> fixes = {});

  clangfe::UserApi user_;
  std::string ruleId_;
};

} // namespace ddplint::tidy
