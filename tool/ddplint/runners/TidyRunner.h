// Runs the ddp clang-tidy checks on one translation unit through clang-tidy's
// engine (so NOLINT, NOLINTNEXTLINE, header filtering and fix-its behave as in
// clang-tidy) and turns its diagnostics into ddplint findings.
#pragma once

#include "Config.h"
#include "Finding.h"
#include "PreambleCache.h"

#include <string>

namespace clang::tooling {
class CompilationDatabase;
} // namespace clang::tooling

namespace ddplint::cli {

struct TidyRunOptions {
  // Parse the bodies of functions declared in system headers.  The checks
  // only look at user code, so skipping them is sound and saves a large part
  // of each LibTorch translation unit's parse; kept for A/B comparisons.
  bool parseSystemBodies = false;
  std::string resourceDir; // Clang's builtin headers for this LLVM major
  // Stress testing: analyse every function body, library headers included
  // (implies parsing them).
  bool analyzeLibraryCode = false;
};

// Thread-safe: every call builds its own clang-tidy context and file system.
// Crashes inside Clang or a check are caught and reported as a ToolError.
//
// With `preamble`, the unit is parsed with that precompiled preamble loaded
// and its first bytes skipped.  Should that run fail (a compile error, a
// crash, a PCH that Clang refuses), the unit is parsed again whole and that
// result is reported; `preambleBroken` is then set when the whole parse was
// clean, i.e. the preamble, not the code, was at fault.
void runChecksOnFile(const std::string &absFile, const clang::tooling::CompilationDatabase &db,
                     ConfigResolver &configs, const TidyRunOptions &opts, RunResult &out,
                     const PreambleUse *preamble = nullptr, bool *preambleBroken = nullptr);

// Builds the PCH of `spec` into `outPch` the way the unit is parsed (same
// flags, same skipped bodies); `inputs` gets every file it read.
bool buildPreamblePch(const PreambleSpec &spec, const std::string &outPch,
                      const TidyRunOptions &opts, std::vector<PreambleInput> &inputs,
                      std::string &error);

} // namespace ddplint::cli
