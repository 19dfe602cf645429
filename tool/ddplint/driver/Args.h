// The ddplint command line: its options, parsed and checked.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ddplint::cli {

constexpr int kExitClean = 0, kExitFindings = 1, kExitError = 2;

struct Args {
  bool explain = false, noPolicy = false, torchVersionGiven = false;
  std::string command = "lint"; // lint | rules | check-launch | cache
  std::vector<std::string> paths;
  std::optional<std::string> buildDir, configFile, outputFile, baseline, writeBaseline, root;
  std::optional<std::vector<std::string>> fixedFlags;
  std::string format = "text";
  std::string color = "auto";
  std::string failOn = "warning";
  std::string torchVersion;
  bool fix = false, quiet = false, parseSystemBodies = false, analyzeLibraryCode = false;
  std::optional<std::string> cacheDir;
  bool noCache = false, noPreamble = false, verbose = false;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string toolIdentity; // this binary's version, size and mtime: part of every cache key
};

// Exits with code 2 on a usage error, naming the subcommand's --help.
Args parseArgs(int argc, char **argv);
[[noreturn]] void usageError(const std::string &msg);

// `p` made absolute against the cwd, `..` folded.
std::string absolute(const std::string &p);
// The enclosing git checkout of the cwd, else the cwd: what baselines and
// SARIF name files relative to, unless --root says otherwise.
std::string defaultRoot();

} // namespace ddplint::cli
