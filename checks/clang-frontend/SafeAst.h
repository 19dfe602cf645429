// Reading an AST that nobody here wrote.  Templates keep dependent and
// type-less nodes (a constructor initialiser `impl_(nullptr)` in a class
// template is a ParenListExpr with no type), and Clang's error recovery keeps
// RecoveryExpr and invalid declarations.  Every question the analysis asks of
// an expression's type or value goes through these, so such a node yields "not
// known" instead of a null dereference or an assertion.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

#include <cstdint>
#include <optional>

namespace ddplint::clangfe {

// An expression whose type can be asked about.
inline bool typed(const clang::Expr *e) { return e && !e->getType().isNull(); }

// An expression whose value can be evaluated: typed, not dependent, no errors.
inline bool evaluable(const clang::Expr *e) {
  return typed(e) && !e->isValueDependent() && !e->isTypeDependent() &&
         !e->isInstantiationDependent() && !e->containsErrors();
}

// The value of an integer constant expression, or nothing.
inline std::optional<std::int64_t> constInt(const clang::Expr *e, const clang::ASTContext &ctx) {
  if (!evaluable(e) || !e->getType()->isIntegralOrUnscopedEnumerationType())
    return std::nullopt;
  std::optional<llvm::APSInt> v = e->getIntegerConstantExpr(ctx);
  if (!v || v->getSignificantBits() > 64)
    return std::nullopt;
  return v->getExtValue();
}

inline bool isIntegerTyped(const clang::Expr *e) {
  return typed(e) && !e->isTypeDependent() && e->getType()->isIntegerType();
}

// A truth value: bool in C++; in C a comparison or logical operator yields int.
inline bool isTruthTyped(const clang::Expr *e, const clang::ASTContext &ctx) {
  if (!typed(e) || e->isTypeDependent())
    return false;
  if (e->getType()->isBooleanType())
    return true;
  return !ctx.getLangOpts().CPlusPlus && e->getType()->isIntegerType();
}

// The type's spelling, empty for a type-less node.
inline std::string typeText(const clang::Expr *e) {
  return typed(e) ? e->getType().getAsString() : std::string();
}

} // namespace ddplint::clangfe
