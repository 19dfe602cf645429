#include "tidy/RuleCheck.h"

#include "clang-frontend/FactsBuilder.h"
#include "clang-frontend/FixRenderer.h"
#include "clang-frontend/ModelBuilder.h"

#include "clang/Lex/ExternalPreprocessorSource.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/Support/Path.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

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

// A position in another file of the project (linked code of another unit):
// the file is loaded into this unit's sources, so the note can point there.
SourceLocation placeIn(SourceManager &sm, const core::ExternalPlace &p) {
  if (p.file.empty() || !p.line)
    return {};
  llvm::Expected<FileEntryRef> f = sm.getFileManager().getFileRef(p.file);
  if (!f) {
    llvm::consumeError(f.takeError());
    return {};
  }
  FileID fid = sm.getOrCreateFileID(*f, SrcMgr::C_User);
  return sm.translateLineCol(fid, p.line, p.column ? p.column : 1);
}

// Findings the rule made in another unit's code linked into this program:
// those the other unit reports itself (its functions alone show them) are
// dropped; those this unit's calls cause are reported at the call here,
// with a note at the code.  Notes in other units become places in their files.
std::vector<core::Finding> placeLinked(std::vector<core::Finding> findings,
                                       clangfe::ModelBuilder &model, core::RuleId rule,
                                       const core::RuleOptions &options) {
  const clangfe::LinkedCode &lc = model.linked();
  const clangfe::LocTable &locs = model.locs();
  std::optional<std::set<core::Loc>> alone;
  auto ownFinding = [&](core::Loc l) {
    if (!alone) {
      alone.emplace();
      core::Program p;
      p.distributed = model.program().distributed;
      p.facts = model.program().facts;
      const auto &fns = model.program().functions;
      p.functions.assign(fns.begin() + long(lc.ownFunctions), fns.end());
      core::RuleRunner r(p);
      for (const core::Finding &g : r.run(rule, options))
        alone->insert(g.loc);
    }
    return alone->count(l) != 0;
  };
  std::vector<core::Finding> out;
  std::set<std::tuple<std::string, core::Loc, std::string>> seen;
  for (core::Finding &f : findings) {
    if (const core::ExternalPlace *at = locs.external(f.loc)) {
      if (ownFinding(f.loc))
        continue;
      const clangfe::LinkedCode::Range *r = lc.rangeOf(f.loc);
      auto entry = r ? lc.entry.find(r->key) : lc.entry.end();
      if (!r || entry == lc.entry.end())
        continue;
      const std::string fn = core::quoteCode(r->name);
      core::Note code(0, "the code it is about, in " + fn);
      code.external = *at;
      f.notes.insert(f.notes.begin(), std::move(code));
      f.message = "in " + fn + " (defined in " + llvm::sys::path::filename(r->unit).str() +
                  "), reached from this call: " + f.message;
      f.loc = entry->second;
      f.fixes.clear(); // the fix belongs in the other file, whose own lint offers it
    }
    for (core::Note &n : f.notes)
      if (const core::ExternalPlace *at = n.loc ? locs.external(n.loc) : nullptr) {
        n.external = *at;
        n.loc = 0;
      }
    if (seen.emplace(f.rule, f.loc, f.message).second)
      out.push_back(std::move(f));
  }
  return out;
}

} // namespace

// The path rules of one unit share one analysis of it (the model and the path
// engine are the expensive part), per set of user wrappers, and one report of
// where that analysis stopped short.  Checks cannot see each other (clang-tidy
// does not export ClangTidyContext::isCheckEnabled to plugins), so the first
// path check that runs on a unit creates it and the others find it; it lives
// while any check of the unit holds it.
struct SharedAnalysis {
  const ASTContext *ctx = nullptr;
  struct Entry {
    std::unique_ptr<clangfe::ApiMatcher> api;
    std::unique_ptr<clangfe::ModelBuilder> model;
    std::unique_ptr<core::RuleRunner> runner;
  };
  std::map<std::vector<std::vector<std::string>>, Entry> byWrappers;
  std::set<std::pair<core::Loc, std::string>> noticesReported;
};

static std::shared_ptr<SharedAnalysis> sharedAnalysisFor(const ASTContext &ctx) {
  static thread_local std::weak_ptr<SharedAnalysis> current;
  std::shared_ptr<SharedAnalysis> s = current.lock();
  if (!s || s->ctx != &ctx) {
    s = std::make_shared<SharedAnalysis>();
    s->ctx = &ctx;
    current = s;
  }
  return s;
}

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
  if (needs_ & core::NeedPaths)
    shared_ = sharedAnalysisFor(*ctx_);
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
  shared_.reset();
}

void RuleCheck::runRule(ASTContext &ctx) {
  const core::Wrappers wrappers = core::wrappersOf(options_);
  std::optional<clangfe::ApiMatcher> ownApi;
  const clangfe::ApiMatcher *api = nullptr;
  // The path rules read the program model; the others read facts (each kind
  // is a walk of its own, so only what the rule needs is built).
  clangfe::ModelBuilder *model = nullptr;
  core::RuleRunner *runner = nullptr;
  std::unique_ptr<clangfe::FactsBuilder> facts;
  core::Program factsProgram;
  std::optional<core::RuleRunner> ownRunner;
  if (needs_ & core::NeedPaths) {
    SharedAnalysis::Entry &e =
        shared_->byWrappers[{wrappers.rankFunctions, wrappers.mainProcessFunctions,
                             wrappers.collectiveFunctions, wrappers.barrierFunctions,
                             wrappers.checkpointWriters, wrappers.dataLoaderFactories}];
    if (!e.model) {
      e.api = std::make_unique<clangfe::ApiMatcher>(core::builtinApi(), wrappers);
      e.model = std::make_unique<clangfe::ModelBuilder>(ctx, *e.api);
      e.runner = std::make_unique<core::RuleRunner>(e.model->program());
      // The CLI keeps each unit's summary for the units that call into it.
      if (clangfe::summarySinkSet())
        clangfe::sendSummary(e.model->summary());
    }
    api = e.api.get();
    model = e.model.get();
    runner = e.runner.get();
  } else {
    ownApi.emplace(core::builtinApi(), wrappers);
    api = &*ownApi;
    facts = std::make_unique<clangfe::FactsBuilder>(ctx, *api);
    if (needs_ & core::NeedVersions)
      facts->addVersions(factsProgram.facts, versionMajor, versionMinor);
    if (needs_ & core::NeedProcessGroups)
      facts->addProcessGroups(factsProgram.facts);
    if (needs_ & core::NeedEnvironment)
      facts->addEnvironment(factsProgram.facts);
    if (needs_ & core::NeedDataLoaders) {
      std::vector<std::string> factories = core::builtinApi().dataLoaderFactories;
      for (const auto &f : api->user().dataLoaderFactories)
        factories.push_back(f);
      facts->addDataLoaders(factsProgram.facts, factories);
    }
    if (needs_ & core::NeedForwards)
      facts->addForwards(factsProgram.facts);
    ownRunner.emplace(factsProgram);
    runner = &*ownRunner;
  }
  const clangfe::LocTable &locs = model ? model->locs() : facts->locs();
  const clangfe::FixContext fc{ctx, *api, locs, model};
  std::vector<core::Finding> findings = runner->run(rule_, options_);
  if (model && !model->linked().ranges.empty())
    findings = placeLinked(std::move(findings), *model, rule_, options_);
  SourceManager &sm = ctx.getSourceManager();
  for (const core::Finding &f : findings) {
    {
      // The message is an argument, so '%' in source text (rank % 2) is not a
      // format directive.
      DiagnosticBuilder d = diag(locs.get(f.loc), "%0",
                                 f.asNote ? DiagnosticIDs::Remark : DiagnosticIDs::Warning);
      d << f.message;
      for (const auto &fix : clangfe::renderFixes(f, fc))
        d << fix;
    } // the warning is flushed here, so its notes follow it
    for (const auto &n : f.notes) {
      if (n.external.file.empty()) {
        diag(locs.get(n.loc), "%0", DiagnosticIDs::Note) << n.message;
        continue;
      }
      SourceLocation at = placeIn(sm, n.external);
      if (at.isValid())
        diag(at, "%0", DiagnosticIDs::Note) << n.message;
      else
        diag(locs.get(f.loc), "%0 (%1:%2)", DiagnosticIDs::Note)
            << n.message << n.external.file << n.external.line;
    }
  }
  // Where the shared analysis stopped short: once per unit, by whichever path
  // rule met it first (a remark, so that no gate fails on it).
  if (model) {
    std::vector<core::AnalysisNotice> notices = model->linked().notices;
    for (const core::AnalysisNotice &n : runner->notices())
      notices.push_back(n);
    for (const core::AnalysisNotice &n : notices) {
      if (!shared_->noticesReported.emplace(n.loc, n.message).second)
        continue;
      // A limit met in another unit's linked code is that unit's to report.
      if (locs.external(n.loc))
        continue;
      diag(locs.get(n.loc), "%0", DiagnosticIDs::Remark) << n.message;
    }
  }
}

} // namespace ddplint::tidy
