#include "tidy/InitTimeoutCheck.h"

namespace ddplint::tidy {

using namespace clang;

InitTimeoutCheck::InitTimeoutCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context)
    : FactBasedCheck(name, context, "ddp-init-timeout"),
      defaultTimeoutSeconds_(Options.get("DefaultTimeoutSeconds", 300U)) {}

void InitTimeoutCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) {
  FactBasedCheck::storeOptions(opts);
  Options.store(opts, "DefaultTimeoutSeconds", defaultTimeoutSeconds_);
}

void InitTimeoutCheck::run(core::Program &program, clangfe::FactsBuilder &facts, ASTContext &) {
  facts.addProcessGroups(program.facts);
  const std::string timeoutExpr =
      "std::chrono::seconds(" + std::to_string(defaultTimeoutSeconds_) + ")";
  for (const core::Finding &f : core::initTimeoutFindings(program)) {
    std::vector<FixItHint> fixes;
    for (const core::FixHint &h : f.fixes) {
      const SourceLocation at = facts.locs().get(h.anchor);
      if (at.isInvalid())
        continue;
      if (h.kind == core::FixKind::InsertTimeoutArg)
        fixes.push_back(FixItHint::CreateInsertion(at, timeoutExpr));
      else if (h.kind == core::FixKind::InsertTimeoutOptionsArg)
        fixes.push_back(
            FixItHint::CreateInsertion(at, ", " + h.text + "::create(" + timeoutExpr + ")"));
    }
    emit(f, facts, fixes);
  }
}

} // namespace ddplint::tidy
