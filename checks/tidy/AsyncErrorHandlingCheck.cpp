#include "tidy/AsyncErrorHandlingCheck.h"

#include "clang/Lex/ExternalPreprocessorSource.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace ddplint::tidy {

namespace {

// Records TORCH_VERSION_MAJOR/MINOR from <torch/version.h> or the command line.
class VersionCallbacks : public PPCallbacks {
public:
  VersionCallbacks(Preprocessor &pp, AsyncErrorHandlingCheck &check) : pp_(pp), check_(check) {}
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
  AsyncErrorHandlingCheck &check_;
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

AsyncErrorHandlingCheck::AsyncErrorHandlingCheck(llvm::StringRef name,
                                                 clang::tidy::ClangTidyContext *context)
    : FactBasedCheck(name, context, "ddp-async-error-handling") {}

void AsyncErrorHandlingCheck::registerPPCallbacks(const SourceManager &, Preprocessor *pp,
                                                  Preprocessor *) {
  pp->addPPCallbacks(std::make_unique<VersionCallbacks>(*pp, *this));
  pp_ = pp;
}

void AsyncErrorHandlingCheck::check(const MatchFinder::MatchResult &result) {
  // The version macros are complete at the end of the unit: decide there.
  if (result.Nodes.getNodeAs<TranslationUnitDecl>("tu")) {
    ctx_ = result.Context;
    if (pp_) { // the unit is parsed; macros from a PCH are there too
      readVersionMacro(*pp_, "TORCH_VERSION_MAJOR", versionMajor);
      readVersionMacro(*pp_, "TORCH_VERSION_MINOR", versionMinor);
    }
  }
}

void AsyncErrorHandlingCheck::onEndOfTranslationUnit() {
  if (ctx_)
    runOn(*ctx_);
  versionMajor.reset();
  versionMinor.reset();
  ctx_ = nullptr;
}

void AsyncErrorHandlingCheck::run(core::Program &program, clangfe::FactsBuilder &facts,
                                  ASTContext &) {
  // The facts per LibTorch version come from rules/nccl-async-error.yaml.
  facts.addVersions(program.facts, versionMajor, versionMinor);
  facts.addProcessGroups(program.facts);
  facts.addEnvironment(program.facts);
  for (const core::Finding &f : core::asyncErrorHandlingFindings(program)) {
    std::vector<FixItHint> fixes;
    for (const core::FixHint &h : f.fixes) {
      const SourceLocation at = facts.locs().get(h.anchor);
      // The new name is the old one with a prefix: insert it after the quote.
      if (h.kind == core::FixKind::RenameEnvVar && at.isValid() &&
          llvm::StringRef(h.text).ends_with(h.oldText))
        fixes.push_back(FixItHint::CreateInsertion(
            at.getLocWithOffset(1), h.text.substr(0, h.text.size() - h.oldText.size())));
    }
    emit(f, facts, fixes);
  }
}

} // namespace ddplint::tidy
