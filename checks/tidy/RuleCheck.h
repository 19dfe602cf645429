// The clang-tidy check of every program rule that applies to C or C++: one
// class, bound to its rule by the generated subclasses (<Name>Check, from
// rules/catalog.yaml through CheckList.inc).  It reads the rule's options in
// its constructor and writes them back in storeOptions, builds what the rule
// needs (the program model, or the facts), asks the rule registry for the
// findings and renders their fix-its in C++.
#pragma once

#include "ddplint/core/Rules.h"

#include "clang-tidy/ClangTidyCheck.h"

#include <memory>
#include <optional>

namespace ddplint::tidy {

struct SharedAnalysis; // the path analysis of one unit, shared by the path rules

class RuleCheck : public clang::tidy::ClangTidyCheck {
public:
  RuleCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context, core::RuleId rule);
  void registerMatchers(clang::ast_matchers::MatchFinder *finder) override;
  void registerPPCallbacks(const clang::SourceManager &sm, clang::Preprocessor *pp,
                           clang::Preprocessor *moduleExpanderPP) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void onEndOfTranslationUnit() override;
  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) override;
  bool isLanguageVersionSupported(const clang::LangOptions &lo) const override;

  // TORCH_VERSION_MAJOR / MINOR as the preprocessor saw them.
  std::optional<int> versionMajor, versionMinor;

private:
  void runRule(clang::ASTContext &ctx);

  core::RuleId rule_;
  unsigned needs_;
  core::RuleOptions options_;
  clang::ASTContext *ctx_ = nullptr;
  clang::Preprocessor *pp_ = nullptr; // for version macros that came from a PCH
  std::shared_ptr<SharedAnalysis> shared_;
};

// The generated check classes: clang-tidy's naming (ddp-<name> is <Name>Check).
// NOLINTBEGIN(bugprone-macro-parentheses): CLASS is a class name, not an expression
#define DDPLINT_CHECK(NAME, CLASS, RULE)                                                     \
  class CLASS : public RuleCheck {                                                           \
  public:                                                                                    \
    CLASS(llvm::StringRef name, clang::tidy::ClangTidyContext *context)                     \
        : RuleCheck(name, context, core::RuleId::RULE) {}                                    \
  };
#include "CheckList.inc"
#undef DDPLINT_CHECK
// NOLINTEND(bugprone-macro-parentheses)

} // namespace ddplint::tidy
