#include "tidy/Rank0IoBarrierCheck.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"

#include <set>

namespace ddplint::tidy {

using namespace clang;

Rank0IoBarrierCheck::Rank0IoBarrierCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context)
    : ModelBasedCheck(name, context, "ddp-rank0-io-barrier"),
      requireBefore_(parseBool(Options.get("RequireBarrierBefore", "true"), true)) {}

void Rank0IoBarrierCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) {
  ModelBasedCheck::storeOptions(opts);
  Options.store(opts, "RequireBarrierBefore", requireBefore_ ? "true" : "false");
}

namespace {

// The process groups a statement can see: variables, parameters and members of
// process-group type referenced in the enclosing function.  A fix-it is only
// offered when there is exactly one, so the barrier cannot go to the wrong group.
struct GroupFinder : RecursiveASTVisitor<GroupFinder> {
  const clangfe::ApiMatcher &api;
  std::set<const ValueDecl *> groups;
  const Expr *spelling = nullptr;
  explicit GroupFinder(const clangfe::ApiMatcher &a) : api(a) {}
  void consider(const ValueDecl *d, const Expr *e) {
    if (!d || !api.isProcessGroupType(d->getType()))
      return;
    if (groups.insert(cast<ValueDecl>(d->getCanonicalDecl())).second)
      spelling = e;
  }
  bool VisitDeclRefExpr(DeclRefExpr *e) {
    consider(e->getDecl(), e);
    return true;
  }
  bool VisitMemberExpr(MemberExpr *e) {
    if (isa<CXXThisExpr>(e->getBase()->IgnoreImpCasts()))
      consider(e->getMemberDecl(), e);
    return true;
  }
};

} // namespace

void Rank0IoBarrierCheck::run(core::Analyzer &analyzer, clangfe::ModelBuilder &model,
                              ASTContext &ctx) {
  const clangfe::ApiMatcher &api = model.api();
  for (const auto &f : analyzer.rank0IoWithoutBarrier(requireBefore_)) {
    std::vector<FixItHint> fixes;
    const auto *ifs = dyn_cast_or_null<IfStmt>(model.stmtOf(f.node));
    const FunctionDecl *fn = ifs ? model.functionOf(f.node) : nullptr;
    const SourceManager &sm = ctx.getSourceManager();
    if (ifs && fn && fn->getBody() && !ifs->getBeginLoc().isMacroID() &&
        !ifs->getEndLoc().isMacroID()) {
      GroupFinder gf(api);
      gf.TraverseStmt(const_cast<Stmt *>(fn->getBody()));
      for (const ParmVarDecl *p : fn->parameters())
        gf.consider(p, nullptr);
      if (gf.groups.size() == 1) {
        const ValueDecl *g = *gf.groups.begin();
        std::string name = gf.spelling ? model.deps().text(gf.spelling) : g->getNameAsString();
        QualType t = g->getType().getNonReferenceType();
        bool pointerLike = t->isPointerType() || !api.isProcessGroupClass(t->getAsCXXRecordDecl());
        std::string call = name + (pointerLike ? "->" : ".") + "barrier()->wait();";
        // Indentation of the `if`, so the inserted lines line up with it.
        unsigned col = sm.getSpellingColumnNumber(ifs->getIfLoc());
        std::string indent(col > 0 ? col - 1 : 0, ' ');
        if (f.missingBefore)
          fixes.push_back(FixItHint::CreateInsertion(ifs->getIfLoc(), (call + '\n').append(indent)));
        if (f.missingAfter && !f.regionToEnd) {
          // A then-statement without braces ends before its ';'.
          SourceLocation end = Lexer::findLocationAfterToken(
              ifs->getEndLoc(), tok::semi, sm, ctx.getLangOpts(), false);
          if (end.isInvalid())
            end = Lexer::getLocForEndOfToken(ifs->getEndLoc(), 0, sm, ctx.getLangOpts());
          if (end.isValid())
            fixes.push_back(FixItHint::CreateInsertion(end, ('\n' + indent).append(call)));
        }
      }
    }
    emit(f, model, fixes);
  }
}

} // namespace ddplint::tidy
