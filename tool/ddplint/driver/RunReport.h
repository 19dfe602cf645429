// The end of every run: findings deduplicated, fingerprinted, baselined,
// fixed, rendered in the asked format, and the exit code.
#pragma once

#include "Args.h"
#include "Baseline.h"
#include "Finding.h"

#include <optional>
#include <string>

namespace ddplint::cli {

// A broken baseline is found before any parsing: the gate must not spend
// minutes and then report everything (or nothing) against a file it cannot read.
bool preloadBaseline(const Args &a, std::optional<Baseline> &out);

// Writes the report (and the baseline, and the fixes) and returns the exit code.
int finishRun(const Args &a, RunResult &result, const std::string &root,
              const std::optional<Baseline> &baseline);

// The text of line `line` of `path`, for the findings of files ddplint does
// not parse (launch files).
std::string lineOf(const std::string &path, unsigned line);

} // namespace ddplint::cli
