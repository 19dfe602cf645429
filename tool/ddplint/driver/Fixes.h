// --fix: applies the findings' fix-its to the files on disk, as clang-tidy's
// --fix does.  Identical edits from several translation units (a header's
// finding seen twice) are applied once; overlapping edits are refused.
#pragma once

#include "Finding.h"

#include <string>
#include <vector>

namespace ddplint::cli {

struct FixSummary {
  unsigned applied = 0;  // edits written
  unsigned files = 0;    // files changed
  std::vector<ToolError> errors; // unwritable files, conflicting edits
};

FixSummary applyFixes(const std::vector<Finding> &findings);

} // namespace ddplint::cli
