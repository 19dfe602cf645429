// Cheap walks over the user's own code for the fact builders.  A translation
// unit that includes <torch/torch.h> holds hundreds of thousands of nodes in
// system headers: matching every call or function there, or asking
// ASTContext::getParents() (which indexes the whole unit on first use), costs
// more than a second.  These checks instead match the translation unit once,
// visit the functions written outside system headers, and keep parent links
// per function body.
#pragma once

#include "clang-frontend/CodeScope.h"

#include "clang/AST/ASTLambda.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

#include "llvm/ADT/DenseMap.h"

namespace ddplint::clangfe {

class LocalParents {
public:
  explicit LocalParents(const clang::FunctionDecl *fd) {
    if (const auto *ctor = llvm::dyn_cast<clang::CXXConstructorDecl>(fd))
      for (const clang::CXXCtorInitializer *init : ctor->inits())
        if (init->isWritten() && init->getInit()) {
          index(init->getInit(), nullptr);
          if (const clang::FieldDecl *field = init->getMember())
            fieldInits_[init->getInit()] = field;
        }
    index(fd->getBody(), nullptr);
  }

  // Null for the body itself and for constructor initialisers.
  const clang::Stmt *parent(const clang::Stmt *s) const { return parents_.lookup(s); }
  // The variable or member whose initialiser `e` is.
  const clang::ValueDecl *initialised(const clang::Stmt *e) const {
    if (const clang::VarDecl *vd = varInits_.lookup(e))
      return vd;
    return fieldInits_.lookup(e);
  }

private:
  void index(const clang::Stmt *s, const clang::Stmt *p) {
    if (!s)
      return;
    // A node shared by two parents (OpaqueValueExpr) keeps the first.
    if (!parents_.try_emplace(s, p).second)
      return;
    if (const auto *ds = llvm::dyn_cast<clang::DeclStmt>(s))
      for (const clang::Decl *d : ds->decls())
        if (const auto *vd = llvm::dyn_cast<clang::VarDecl>(d))
          if (const clang::Expr *init = vd->getInit())
            varInits_[init] = vd;
    for (const clang::Stmt *kid : s->children())
      index(kid, s);
  }

  llvm::DenseMap<const clang::Stmt *, const clang::Stmt *> parents_;
  llvm::DenseMap<const clang::Stmt *, const clang::VarDecl *> varInits_;
  llvm::DenseMap<const clang::Stmt *, const clang::FieldDecl *> fieldInits_;
};

// Instantiations repeat their template's code: judge the template once.
inline bool isInstantiation(const clang::FunctionDecl *fd) {
  return fd->isTemplateInstantiation() || fd->getInstantiatedFromMemberFunction() != nullptr;
}

// Calls `fn` with `s` and every statement below it.
template <class Fn> void forEachStmt(const clang::Stmt *s, Fn &&fn) {
  if (!s)
    return;
  fn(s);
  for (const clang::Stmt *kid : s->children())
    forEachStmt(kid, fn);
}

// Calls `fn` with every function defined outside system headers: template
// patterns, and with `instantiations` also the instantiations of function
// templates (for checks whose finding needs the concrete types, such as a
// process group created through `make_intrusive<PG>`).  Lambda call operators
// are part of the function that writes the lambda; lambdas initialising
// namespace-scope variables are visited as functions of their own.
template <class Fn>
void forEachUserFunction(const clang::DeclContext *dc, const clang::SourceManager &sm, Fn &&fn,
                         bool instantiations = false) {
  for (const clang::Decl *d : dc->decls()) {
    if (d->isImplicit() || !isUserCode(sm, d->getLocation()))
      continue;
    if (const auto *ftd = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) {
      if (instantiations)
        for (const clang::FunctionDecl *spec : ftd->specializations())
          if (spec->doesThisDeclarationHaveABody())
            fn(spec);
      d = ftd->getTemplatedDecl();
    }
    if (const auto *fd = llvm::dyn_cast<clang::FunctionDecl>(d)) {
      if (fd->doesThisDeclarationHaveABody() && !isInstantiation(fd) &&
          !clang::isLambdaCallOperator(fd))
        fn(fd);
      continue;
    }
    if (const auto *vd = llvm::dyn_cast<clang::VarDecl>(d)) {
      if (vd->hasGlobalStorage() && vd->getInit())
        forEachStmt(vd->getInit(), [&](const clang::Stmt *s) {
          if (const auto *le = llvm::dyn_cast<clang::LambdaExpr>(s))
            if (const clang::FunctionDecl *op = le->getCallOperator(); op && op->getBody())
              fn(op);
        });
      continue;
    }
    if (const auto *ctd = llvm::dyn_cast<clang::ClassTemplateDecl>(d))
      d = ctd->getTemplatedDecl();
    if (const auto *spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(d))
      if (!spec->isExplicitSpecialization())
        continue;
    if (const auto *rd = llvm::dyn_cast<clang::CXXRecordDecl>(d)) {
      if (rd->isThisDeclarationADefinition() && !rd->isLambda())
        forEachUserFunction(rd, sm, fn, instantiations);
      continue;
    }
    if (llvm::isa<clang::NamespaceDecl, clang::LinkageSpecDecl>(d))
      forEachUserFunction(llvm::cast<clang::DeclContext>(d), sm, fn, instantiations);
  }
}

} // namespace ddplint::clangfe
