// Clang AST -> core::Program: every function defined in the main file, plus the
// functions they call that are defined outside system headers, as structured
// statement trees of communication/IO events, calls, branches, loops and exits.
#pragma once

#include "clang-frontend/RankDependence.h"
#include "clang-frontend/UnitSummary.h"
#include "ddplint/core/Model.h"
#include "ddplint/core/Rules.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"

#include <map>
#include <memory>

namespace ddplint::clangfe {

// What linking other units' summaries added to a unit's program.
struct LinkedCode {
  size_t ownFunctions = 0; // program.functions[0, ownFunctions) are the unit's own
  bool ownDistributed = false; // Program::distributed before linking
  struct Range {
    core::Loc first = 0, last = 0; // the positions of one linked function
    std::string key;               // its key in the program
    std::string name;              // for messages
    std::string unit;              // the file that defines it
  };
  std::vector<Range> ranges;
  std::map<std::string, core::Loc> entry;    // a linked function -> the unit's first call that reaches it
  std::vector<core::AnalysisNotice> notices; // stale summaries, calls not followed
  const Range *rangeOf(core::Loc l) const;
};

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
  // The functions of other units the program links (after program()).
  const LinkedCode &linked();
  // This unit's own functions as other units link them (after program()).
  UnitSummary summary();
  static constexpr size_t kMaxLinkedFunctions = 400;

  struct Impl;

private:
  clang::ASTContext &ctx_;
  const ApiMatcher &api_;
  LocTable locs_;
  std::unique_ptr<DependenceAnalyzer> deps_;
  std::unique_ptr<Impl> impl_;
};

} // namespace ddplint::clangfe
