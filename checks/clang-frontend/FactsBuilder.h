// Clang AST -> core::Facts (ddplint/core/Facts.h): what the fact-based rules
// decide on.  The builder only observes (which process groups, options,
// environment settings, data loaders and forward() branches the user's code
// has, with their arguments and enclosing loops); the core decides and words
// the findings (one file per rule in checks/core/rules).  Each check asks only for the facts
// its rule needs: the walks are per fact kind.
#pragma once

#include "clang-frontend/ApiMatcher.h"
#include "clang-frontend/RankDependence.h"
#include "ddplint/core/Facts.h"

#include "clang/AST/ASTContext.h"

#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddplint::clangfe {

class FactsBuilder {
public:
  FactsBuilder(clang::ASTContext &ctx, const ApiMatcher &api);
  ~FactsBuilder();

  // Process groups and their options (ddp-init-timeout, ddp-async-error-handling).
  void addProcessGroups(core::Facts &facts);
  // setenv/putenv/getenv calls (ddp-async-error-handling).
  void addEnvironment(core::Facts &facts);
  // The LibTorch version: TORCH_VERSION_MAJOR/MINOR as the preprocessor saw
  // them, else what the headers declare.
  void addVersions(core::Facts &facts, std::optional<int> major, std::optional<int> minor);
  // Data-loader factory calls and calls of the unit's own functions
  // (ddp-dataloader-recreated); `factories` as in DataLoaderFactories.
  void addDataLoaders(core::Facts &facts, const std::vector<std::string> &factories);
  // forward() of torch::nn::Module subclasses and their branches
  // (ddp-forward-shape-branch).
  void addForwards(core::Facts &facts);

  // Positions: one handle per source location (instantiations of a template
  // share their locations, so the core can report a position once).
  core::Loc loc(clang::SourceLocation l);
  LocTable &locs() { return locs_; }
  const clang::ASTContext &context() const { return ctx_; }
  DependenceAnalyzer &deps();

private:
  clang::ASTContext &ctx_;
  const ApiMatcher &api_;
  LocTable locs_;
  llvm::DenseMap<clang::SourceLocation, core::Loc> interned_;
  std::unique_ptr<DependenceAnalyzer> deps_; // built on first use
};

} // namespace ddplint::clangfe
