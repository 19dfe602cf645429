// The end of every run: findings deduplicated, fingerprinted, baselined,
// fixed, rendered in the asked format, and the exit code.
#pragma once

#include "Args.h"
#include "Baseline.h"
#include "Config.h"
#include "Finding.h"

#include <optional>
#include <string>

namespace ddplint::cli {

// What every run that reports starts from: the folder paths in reports and
// baselines are relative to, and the baseline.  A broken baseline is found
// before any parsing (the gate must not spend minutes and then report
// everything, or nothing, against a file it cannot read): then false, and it
// is reported.
struct RunStart {
  std::string root;
  std::optional<Baseline> baseline;
};
bool startRun(const Args &a, RunStart &out);
// The configs of the run: --config for every file, else the nearest .ddplint.yaml.
ConfigResolver configsFor(const Args &a);

// Writes the report (and the baseline, and the fixes) and returns the exit code.
int finishRun(const Args &a, RunResult &result, const std::string &root,
              const std::optional<Baseline> &baseline);

// The text of line `line` of `path`, for the findings of files ddplint does
// not parse (launch files).
std::string lineOf(const std::string &path, unsigned line);

} // namespace ddplint::cli
