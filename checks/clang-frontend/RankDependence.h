// How a Clang expression may differ across ranks (core::Dep), and a branch
// condition as the core's core::Cond.  Values are traced through locals,
// members, helper functions' returns and their parameters across the
// translation unit; only code outside system headers is indexed.
#pragma once

#include "clang-frontend/ApiMatcher.h"
#include "clang-frontend/UnitSummary.h"
#include "ddplint/core/Finding.h"
#include "ddplint/core/Model.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ddplint::clangfe {

// Maps the core's opaque Loc handles back to Clang source locations.
class LocTable {
public:
  core::Loc add(clang::SourceLocation l);
  // A position in another translation unit's file (a linked summary's code):
  // get() has no SourceLocation for it.
  core::Loc addExternal(core::ExternalPlace p);
  clang::SourceLocation get(core::Loc l) const;
  const core::ExternalPlace *external(core::Loc l) const;

private:
  std::vector<clang::SourceLocation> locs_;
  std::map<core::Loc, core::ExternalPlace> external_;
};

class DependenceAnalyzer {
public:
  DependenceAnalyzer(clang::ASTContext &ctx, const ApiMatcher &api, LocTable &locs);
  ~DependenceAnalyzer();

  core::Dep depOf(const clang::Expr *e);
  // The process rank itself (possibly through locals, members and helpers).
  bool isRank(const clang::Expr *e);
  core::Cond condOf(const clang::Expr *e);
  // Force a declaration's dependence, e.g. forward()'s input as Local.
  void seed(const clang::ValueDecl *d, core::Dep dep);
  // What another unit's summary says a function without a body here returns
  // (the rank, a rank predicate), or null.
  using ExternalReturns = std::function<const ExportedFunction *(const clang::FunctionDecl *)>;
  void setExternalReturns(ExternalReturns lookup);
  // Whether another unit's summary says a global this unit only declares
  // holds the rank (miniAMR's `my_pe`, set by MPI_Comm_rank in main.c).
  using ExternalRankGlobal = std::function<bool(const clang::VarDecl *)>;
  void setExternalRankGlobal(ExternalRankGlobal lookup);
  // The unit's globals that hold the rank: written by a rank source (or
  // handed to a communicator's creation as the rank), nothing else.
  std::vector<const clang::VarDecl *> rankGlobals();
  // The user's code shows that it runs distributed: a communicator or process
  // group, a rank or world-size source, a collective, point-to-point, or one of
  // the user's wrappers.
  bool distributed() const;
  // A collective on a communicator that holds a subset of the ranks (from
  // MPI_Comm_split, MPI_Comm_create, MPI_Cart_sub, ncclCommSplit): only its
  // members call it, so a rank condition around it is membership, not divergence.
  bool onSubCommunicator(const clang::CallExpr *c);
  // The communicator holder a call runs on, when one is handed to it
  // (`ftNcclAllGather(..., tensor_para_, stream)`, `ncclAllReduce(...,
  // tensor_para_.nccl_comm_, s)`): its name, else "" (core::Node::group).
  std::string commGroupOf(const clang::CallExpr *c);
  // A collective on MPI_COMM_SELF: each rank alone (`MPI_File_open` of a
  // private file), nothing another rank waits for.
  // So is a collective of a file handle that the function `within` opened on
  // MPI_COMM_SELF (and on no other communicator).
  bool onSelfCommunicator(const clang::CallExpr *c, const clang::FunctionDecl *within = nullptr);
  // MPI_COMM_WORLD, as the user spelled it or as Open MPI's object behind it.
  bool isWorldCommunicator(const clang::Expr *e) const;
  // The source text of an expression, for messages and atom keys.
  std::string text(const clang::Expr *e) const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace ddplint::clangfe
