#include "tidy/RuleCheck.h"

#include "clang-frontend/FactsBuilder.h"
#include "clang-frontend/FixRenderer.h"
#include "clang-frontend/ModelBuilder.h"

#include "clang/Lex/ExternalPreprocessorSource.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"

namespace ddplint::tidy {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

// Records TORCH_VERSION_MAJOR/MINOR from <torch/version.h> or the command line.
class VersionCallbacks : public PPCallbacks {
public:
  VersionCallbacks(Preprocessor &pp, RuleCheck &check) : pp_(pp), check_(check) {}
  void MacroDefined(const Token &name, const MacroDirective *md) override {
    const IdentifierInfo *ii = name.getIdentifierInfo();
    if (!ii || !md)
      return;
    std::optional<int> *slot = nullptr;
    if (ii->getName() == "TORCH_VERSION_MAJOR")
      slot = &check_.versionMajor;
    else if (ii->getName() == "TORCH_VERSION_MINOR")
      slot = &check_.versionMinor;
    if (!slot)
      return;
    const MacroInfo *mi = md->getMacroInfo();
    if (!mi || mi->getNumTokens() != 1 || !mi->tokens().front().is(tok::numeric_constant))
      return;
    unsigned value = 0;
    if (!llvm::StringRef(pp_.getSpelling(mi->tokens().front())).getAsInteger(10, value))
      *slot = static_cast<int>(value);
  }

private:
  Preprocessor &pp_;
  RuleCheck &check_;
};

// A precompiled header or preamble (the ddplint CLI's cache, clangd) brings
// <torch/version.h> in already defined, with no MacroDefined callback: the
// macro as the preprocessor has it once the unit is parsed.
void readVersionMacro(Preprocessor &pp, llvm::StringRef name, std::optional<int> &slot) {
  if (slot)
    return;
  IdentifierInfo *ii = pp.getIdentifierInfo(name);
  if (ii->isOutOfDate() && pp.getExternalSource())
    pp.getExternalSource()->updateOutOfDateIdentifier(*ii);
  const MacroInfo *mi = pp.getMacroInfo(ii);
  if (!mi || mi->getNumTokens() != 1 || !mi->tokens().front().is(tok::numeric_constant))
    return;
  unsigned value = 0;
  if (!llvm::StringRef(pp.getSpelling(mi->tokens().front())).getAsInteger(10, value))
    slot = static_cast<int>(value);
}

} // namespace

RuleCheck::RuleCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context,
                     core::RuleId rule)
    : ClangTidyCheck(name, context), rule_(rule),
      needs_(core::ruleSpec(rule).definition ? core::ruleSpec(rule).definition->needs : 0) {
  // Read as strings: the bool and integer overloads of OptionsView are not
  // exported by clang-tidy, so a plugin that calls them fails to load.
  options_ = core::RuleOptions::of(rule, [this](std::string_view option) {
    return std::optional<std::string>(Options.get(llvm::StringRef(option.data(), option.size())));
  });
}

void RuleCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) {
  for (const auto &[name, value] : options_.values())
    Options.store(opts, name, value);
}

bool RuleCheck::isLanguageVersionSupported(const LangOptions &lo) const {
  return !lo.ObjC && core::ruleSpec(rule_).appliesTo(lo.CPlusPlus ? "c++" : "c");
}

void RuleCheck::registerMatchers(MatchFinder *finder) {
  finder->addMatcher(translationUnitDecl().bind("tu"), this);
}

void RuleCheck::registerPPCallbacks(const SourceManager &, Preprocessor *pp, Preprocessor *) {
  if (!(needs_ & core::NeedVersions))
    return;
  pp->addPPCallbacks(std::make_unique<VersionCallbacks>(*pp, *this));
  pp_ = pp;
}

void RuleCheck::check(const MatchFinder::MatchResult &result) {
  if (!result.Nodes.getNodeAs<TranslationUnitDecl>("tu"))
    return;
  ctx_ = result.Context;
  if (pp_) { // the unit is parsed; macros from a PCH are there too
    readVersionMacro(*pp_, "TORCH_VERSION_MAJOR", versionMajor);
    readVersionMacro(*pp_, "TORCH_VERSION_MINOR", versionMinor);
  }
}

// The version macros are complete at the end of the unit: decide there.
void RuleCheck::onEndOfTranslationUnit() {
  if (ctx_)
    runRule(*ctx_);
  versionMajor.reset();
  versionMinor.reset();
  ctx_ = nullptr;
}

void RuleCheck::runRule(ASTContext &ctx) {
  const clangfe::ApiMatcher api(core::builtinApi(), core::wrappersOf(options_));
  // The path rules read the program model; the others read facts (each kind
  // is a walk of its own, so only what the rule needs is built).
  std::unique_ptr<clangfe::ModelBuilder> model;
  std::unique_ptr<clangfe::FactsBuilder> facts;
  core::Program factsProgram;
  const core::Program *program = &factsProgram;
  if (needs_ & core::NeedPaths) {
    model = std::make_unique<clangfe::ModelBuilder>(ctx, api);
    program = &model->program();
  } else {
    facts = std::make_unique<clangfe::FactsBuilder>(ctx, api);
    if (needs_ & core::NeedVersions)
      facts->addVersions(factsProgram.facts, versionMajor, versionMinor);
    if (needs_ & core::NeedProcessGroups)
      facts->addProcessGroups(factsProgram.facts);
    if (needs_ & core::NeedEnvironment)
      facts->addEnvironment(factsProgram.facts);
    if (needs_ & core::NeedDataLoaders) {
      std::vector<std::string> factories = core::builtinApi().dataLoaderFactories;
      for (const auto &f : api.user().dataLoaderFactories)
        factories.push_back(f);
      facts->addDataLoaders(factsProgram.facts, factories);
    }
    if (needs_ & core::NeedForwards)
      facts->addForwards(factsProgram.facts);
  }
  const clangfe::LocTable &locs = model ? model->locs() : facts->locs();
  core::RuleRunner runner(*program);
  const clangfe::FixContext fc{ctx, api, locs, model.get()};
  for (const core::Finding &f : runner.run(rule_, options_)) {
    {
      // The message is an argument, so '%' in source text (rank % 2) is not a
      // format directive.
      DiagnosticBuilder d = diag(locs.get(f.loc), "%0");
      d << f.message;
      for (const auto &fix : clangfe::renderFixes(f, fc))
        d << fix;
    } // the warning is flushed here, so its notes follow it
    for (const auto &n : f.notes)
      if (n.external.file.empty())
        diag(locs.get(n.loc), "%0", DiagnosticIDs::Note) << n.message;
  }
}

} // namespace ddplint::tidy
