// The C and C++ spelling of the fix-its the rules ask for (core::FixHint):
// one renderer for every rule.
#pragma once

#include "clang-frontend/ApiMatcher.h"
#include "clang-frontend/RankDependence.h"
#include "ddplint/core/Finding.h"

#include "clang/AST/ASTContext.h"
#include "clang/Basic/Diagnostic.h"

#include <vector>

namespace ddplint::clangfe {

class ModelBuilder;

struct FixContext {
  clang::ASTContext &ctx;
  const ApiMatcher &api;
  const LocTable &locs;
  // The model the finding's nodes belong to (barrier fix-its); may be null.
  ModelBuilder *model = nullptr;
};

// The edits of `f`'s fix-it; empty when no safe edit exists (macro text, no
// single process group to put a barrier on, ...).
std::vector<clang::FixItHint> renderFixes(const core::Finding &f, const FixContext &fc);

} // namespace ddplint::clangfe
