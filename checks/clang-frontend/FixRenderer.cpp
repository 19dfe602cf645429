#include "clang-frontend/FixRenderer.h"

#include "clang-frontend/ModelBuilder.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Lex/Lexer.h"

#include <set>
#include <string>

namespace ddplint::clangfe {

using namespace clang;

namespace {

std::string secondsExpr(int seconds) {
  return "std::chrono::seconds(" + std::to_string(seconds) + ")";
}

// The process groups a statement can see: variables, parameters and members of
// process-group type referenced in the enclosing function.  A barrier fix-it
// is only offered when there is exactly one, so it cannot go to the wrong group.
struct GroupFinder : RecursiveASTVisitor<GroupFinder> {
  const ApiMatcher &api;
  std::set<const ValueDecl *> groups;
  const Expr *spelling = nullptr;
  explicit GroupFinder(const ApiMatcher &a) : api(a) {}
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

// `pg->barrier()->wait();` right before or after the `if` of `hint.node`.
void barrierFix(const core::FixHint &hint, const FixContext &fc, std::vector<FixItHint> &out) {
  if (!fc.model || !hint.node)
    return;
  const auto *ifs = dyn_cast_or_null<IfStmt>(fc.model->stmtOf(hint.node));
  const FunctionDecl *fn = ifs ? fc.model->functionOf(hint.node) : nullptr;
  if (!ifs || !fn || !fn->getBody() || ifs->getBeginLoc().isMacroID() ||
      ifs->getEndLoc().isMacroID())
    return;
  GroupFinder gf(fc.api);
  gf.TraverseStmt(const_cast<Stmt *>(fn->getBody()));
  for (const ParmVarDecl *p : fn->parameters())
    gf.consider(p, nullptr);
  if (gf.groups.size() != 1)
    return;
  const SourceManager &sm = fc.ctx.getSourceManager();
  const ValueDecl *g = *gf.groups.begin();
  std::string name = gf.spelling ? fc.model->deps().text(gf.spelling) : g->getNameAsString();
  QualType t = g->getType().getNonReferenceType();
  bool pointerLike = t->isPointerType() || !fc.api.isProcessGroupClass(t->getAsCXXRecordDecl());
  std::string call = name + (pointerLike ? "->" : ".") + "barrier()->wait();";
  // Indentation of the `if`, so the inserted lines line up with it.
  unsigned col = sm.getSpellingColumnNumber(ifs->getIfLoc());
  std::string indent(col > 0 ? col - 1 : 0, ' ');
  if (hint.kind == core::FixKind::InsertBarrierBefore) {
    out.push_back(FixItHint::CreateInsertion(ifs->getIfLoc(), (call + '\n').append(indent)));
    return;
  }
  // A then-statement without braces ends before its ';'.
  SourceLocation end = Lexer::findLocationAfterToken(ifs->getEndLoc(), tok::semi, sm,
                                                     fc.ctx.getLangOpts(), false);
  if (end.isInvalid())
    end = Lexer::getLocForEndOfToken(ifs->getEndLoc(), 0, sm, fc.ctx.getLangOpts());
  if (end.isValid())
    out.push_back(FixItHint::CreateInsertion(end, ('\n' + indent).append(call)));
}

} // namespace

std::vector<FixItHint> renderFixes(const core::Finding &f, const FixContext &fc) {
  std::vector<FixItHint> out;
  for (const core::FixHint &h : f.fixes) {
    const SourceLocation at = fc.locs.get(h.anchor);
    switch (h.kind) {
    case core::FixKind::InsertTimeoutArg:
      if (at.isValid())
        out.push_back(FixItHint::CreateInsertion(at, secondsExpr(h.seconds)));
      break;
    case core::FixKind::InsertTimeoutOptionsArg:
      if (at.isValid())
        out.push_back(FixItHint::CreateInsertion(
            at, ", " + h.text + "::create(" + secondsExpr(h.seconds) + ")"));
      break;
    case core::FixKind::RenameEnvVar:
      // The new name is the old one with a prefix: insert it after the quote.
      if (at.isValid() && llvm::StringRef(h.text).ends_with(h.oldText))
        out.push_back(FixItHint::CreateInsertion(
            at.getLocWithOffset(1), h.text.substr(0, h.text.size() - h.oldText.size())));
      break;
    case core::FixKind::InsertBarrierBefore:
    case core::FixKind::InsertBarrierAfter:
      barrierFix(h, fc, out);
      break;
    default: // Python's DataLoader arguments
      break;
    }
  }
  return out;
}

} // namespace ddplint::clangfe
