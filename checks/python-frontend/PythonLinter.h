// The Python frontend's entry: parse a .py file, build the program model, run
// the core's rules on it, and give back findings with exact positions and
// fix-its.  No Clang here: the CLI links this beside the clang-tidy engine.
#pragma once

#include "PySyntax.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace ddplint::pyfe {

struct PyEdit {
  unsigned offset = 0, length = 0; // bytes of the file
  std::string replacement;
  SourcePos start, end;
};

struct PyNote {
  SourcePos pos;
  std::string message;
};

struct PyDiagnostic {
  std::string rule;
  SourcePos pos;
  std::string message;
  std::vector<PyNote> notes;
  std::vector<PyEdit> fixes; // one fix-it, possibly several edits
  // ddp-async-error-handling's "off" finding, made after the launch files
  // were asked (PyOptions::launchEnvironment): the caller may point at them.
  bool launchesAsked = false;
};

struct PyOptions {
  // The rules to run (ids); empty: every rule whose catalog languages include python.
  std::set<std::string> rules;
  // Target PyTorch version, major*100+minor (`torch_version:` in .ddplint.yaml); 0 unknown.
  int torchVersion = 0;
  bool requireBarrierBefore = true;
  // The timeout the init-timeout fix-it passes (ddp-init-timeout.DefaultTimeoutSeconds); 0: the catalog's.
  int defaultTimeoutSeconds = 0;
  // The user's wrappers, as in the C++ checks' options.
  std::set<std::string> rankFunctions, mainProcessFunctions, collectiveFunctions,
      barrierFunctions, checkpointWriters;
  // The environment that the program's launch files give it.  Asked at most
  // once, and only when the program alone leaves NCCL async error handling
  // off; false: no launch file starts it.  `open`: a launch may give it
  // variables it does not show (envFrom, an unreadable sourced file).
  struct LaunchVariable {
    std::string name, value;
    bool valueKnown = true;
  };
  std::function<bool(std::vector<LaunchVariable> &env, bool &open)> launchEnvironment;
};

struct PyLintResult {
  std::vector<PyDiagnostic> diagnostics;
  std::vector<SourcePos> syntaxErrors; // the findings above are still made
  bool parserFailed = false;           // the grammar did not load: nothing was analysed
  unsigned functions = 0;
};

PyLintResult lintPython(const std::string &source, const PyOptions &options);

// Whether `rule` is suppressed on `line` (1-based) by `# noqa`, `# noqa: rule`,
// `# NOLINT`, `# NOLINT(rule)` on the line or `# NOLINTNEXTLINE(rule)` above it.
bool suppressed(const std::string &source, unsigned line, const std::string &rule);

} // namespace ddplint::pyfe
