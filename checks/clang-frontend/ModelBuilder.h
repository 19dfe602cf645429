// Clang AST -> core::Program: every function defined in the main file, plus the
// functions they call that are defined outside system headers, as structured
// statement trees of communication/IO events, calls, branches, loops and exits.
#pragma once

#include "clang-frontend/RankDependence.h"
#include "ddplint/core/Model.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"

#include <map>
#include <memory>

namespace ddplint::clangfe {

class ModelBuilder {
public:
  ModelBuilder(clang::ASTContext &ctx, const ApiMatcher &api);
  ~ModelBuilder();

  // Builds (once) and returns the program for the main file.
  const core::Program &program();
  LocTable &locs() { return locs_; }
  DependenceAnalyzer &deps() { return *deps_; }
  const ApiMatcher &api() const { return api_; }
  // The statement a model node came from (If nodes: the IfStmt), for fix-its.
  const clang::Stmt *stmtOf(const core::Node *n) const;
  // The function whose body holds a model node's statement (no parent map:
  // building one for a unit with the torch headers costs seconds).
  const clang::FunctionDecl *functionOf(const core::Node *n) const;
  // The key of a function in the program.
  static std::string keyOf(const clang::FunctionDecl *fd);

  struct Impl;

private:
  clang::ASTContext &ctx_;
  const ApiMatcher &api_;
  LocTable locs_;
  std::unique_ptr<DependenceAnalyzer> deps_;
  std::unique_ptr<Impl> impl_;
};

} // namespace ddplint::clangfe
