// The Python frontend's entry: parse a .py file, build the program model, run
// the rules of the registry (ddplint/core/Rules.h) on it, and give back their
// findings with the positions and fix-its of this file.  No Clang here: the
// CLI links this beside the clang-tidy engine.
#pragma once

#include "PyFixRenderer.h"
#include "PyProject.h"
#include "PySyntax.h"

#include "ddplint/core/Finding.h"
#include "ddplint/core/Rules.h"

#include <string>
#include <utility>
#include <vector>

namespace ddplint::pyfe {

struct PyOptions {
  // The rules to run, with their options; empty: every rule that applies to
  // Python, with the catalog's defaults.
  std::vector<std::pair<core::RuleId, core::RuleOptions>> rules;
  // The user's wrappers (the union over the rules: one model serves them all).
  core::Wrappers wrappers;
  // Target PyTorch version, major*100+minor (`torch_version:` in .ddplint.yaml); 0 unknown.
  int torchVersion = 0;
  // The launch files that start the program (the rules ask only when their
  // decision could change); empty: none known.
  core::LaunchEnvironment launchEnvironment;
  // The project the file belongs to and the file's absolute path: calls into
  // the project's other modules are followed.  Null: the file alone.
  PyProject *project = nullptr;
  std::string path;
};

struct PyLintResult {
  // In position order; the ones a `# noqa`/`# NOLINT` comment suppresses are gone.
  std::vector<core::Finding> findings;
  std::vector<std::vector<PyEdit>> fixes; // fixes[i]: the edits of findings[i]'s fix-it
  std::vector<SourcePos> positions;       // core::Loc - 1 -> position in the file
  std::vector<SourcePos> syntaxErrors;    // the findings above are still made
  std::vector<core::AnalysisNotice> limits; // where the path analysis stopped short
  bool parserFailed = false;              // the grammar did not load: nothing was analysed
  unsigned functions = 0;

  SourcePos position(core::Loc l) const {
    return l && l <= positions.size() ? positions[l - 1] : SourcePos{1, 1};
  }
};

PyLintResult lintPython(const std::string &source, const PyOptions &options);

// Whether `rule` is suppressed on `line` (1-based) by `# noqa`, `# noqa: rule`,
// `# NOLINT`, `# NOLINT(rule)` on the line or `# NOLINTNEXTLINE(rule)` above it.
bool suppressed(const std::string &source, unsigned line, const std::string &rule);

} // namespace ddplint::pyfe
