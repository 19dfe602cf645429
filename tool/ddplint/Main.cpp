// ddplint: the command-line front end of the ddp checks, for pre-commit hooks
// and CI gates.
//
//   ddplint [OPTIONS] [PATHS...] [-p BUILD_DIR] [-- COMPILER_FLAGS...]
//   ddplint rules [--format text|markdown|json]
//   ddplint check-launch [OPTIONS] FILES...
//
// Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, config or
// tooling errors (findings that could still be made are reported as well).
#include "Baseline.h"
#include "Config.h"
#include "Finding.h"
#include "Fixes.h"
#include "PreambleCache.h"
#include "Report.h"
#include "RulesTable.h"
#include "PythonRunner.h"
#include "TidyRunner.h"

#include "ddplint/core/Catalog.h"
#include "ddplint/launch/LaunchCheck.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "clang-frontend/CodeScope.h"
#include "llvm/Support/CrashRecoveryContext.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#ifndef DDPLINT_RESOURCE_DIR
#define DDPLINT_RESOURCE_DIR ""
#endif

// The ddp module lives in the check library; this reference keeps the linker
// from dropping it (and with it every check) from the executable.
extern volatile int DdpModuleAnchorSource;
static int const ddpModuleAnchor = DdpModuleAnchorSource;

namespace fs = std::filesystem;
using namespace ddplint::cli;

namespace {

constexpr int kExitClean = 0, kExitFindings = 1, kExitError = 2;

const char *kUsage = R"(usage: ddplint [OPTIONS] [PATHS...] [-- COMPILER_FLAGS...]
       ddplint rules [--format text|markdown|json]
       ddplint check-launch [OPTIONS] FILES...
       ddplint cache stats|clear [--cache-dir DIR]

Lints C and C++ translation units and Python files with the ddp checks.  PATHS
are source files or directories (a directory brings its .py files and, through
the database, its C and C++ units); Python files need no database.  Without
PATHS every file in the compilation database is linted.

Input:
  -p BUILD_DIR            folder with compile_commands.json or compile_flags.txt
                          (default: searched upwards from each file, also in
                          <dir>/build)
  -- FLAGS...             compile every file with these flags instead of a database
  --config FILE           use this config for every file (default: the nearest
                          .ddplint.yaml above each file)
Output:
  --format text|json|sarif   (default text)
  -o, --output FILE       write the report to FILE instead of stdout
  --color auto|always|never  colour the text report (default auto: on a tty)
  --root DIR              name files relative to DIR in every report format and
                          in baselines (default: text and JSON relative to the
                          cwd; SARIF and baselines relative to the enclosing
                          git checkout, else the cwd)
  -q, --quiet             no progress and no summary line
Gate:
  --fail-on error|warning|note|never   lowest severity that makes exit code 1
                          (default warning)
  --baseline FILE         do not report the findings recorded in FILE
  --write-baseline FILE   record the current findings in FILE (exit 0 unless errors)
  --fix                   apply the fix-its to the files
Speed:
  -j, --jobs N            analyse N translation units in parallel (default: the
                          number of cores; each LibTorch unit takes about 400 MiB)
  --cache-dir DIR         keep the precompiled preambles (the leading #includes
                          of the units, parsed once) in DIR (default: cache: of
                          .ddplint.yaml, else $XDG_CACHE_HOME/ddplint, ~/.cache/ddplint)
  --no-cache              keep no preambles between runs (units with the same
                          leading includes still share one within the run)
  --no-preamble           parse every unit whole, sharing nothing
  -v, --verbose           say how many preambles were reused, built or failed,
                          and which input made a rebuilt one stale
Testing:
  --analyze-library-code  analyse every function body, library and system headers
                          included, as if it were user code (the stress corpus)
Other:
  --version, -h/--help

Exit codes: 0 no findings, 1 findings at or above --fail-on, 2 usage, config or
tooling error (a file that does not compile, a missing database, a broken
config); findings that could still be made are reported with exit code 2.
)";

const char *kCheckLaunchUsage = R"(usage: ddplint check-launch [OPTIONS] FILES|FOLDERS...

Checks launch files for NCCL async error handling and PYTHONFAULTHANDLER (rule
ddp-launch-env): Kubernetes manifests (Pod, Job, PyTorchJob, TrainJob,
ClusterTrainingRuntime, RayJob, RayCluster; only containers that run a torch
distributed job), Slurm batch scripts and shell launch scripts.  Folders are
searched for *.yaml, *.yml, *.sh, *.sbatch and *.slurm.

  --torch-version V       the PyTorch the jobs run, MAJOR.MINOR[.PATCH] (e.g. 2.1,
                          1.13.1, 2.2.0+cu121); default: launch.torch_version of
                          .ddplint.yaml, else a pytorch/pytorch image tag, else the
                          newest behaviour (2.2 or newer), which messages state
  --explain, -v, --verbose   list what was not checked and why (YAML that is no
                          manifest, containers that run no torch job, sourced files)
  --no-policy             report only hazards (async error handling off), not the
                          policy notes for variables not set explicitly (also
                          options: {ddp-launch-env.RequireExplicitSetting: false})
  --format text|json|sarif, -o FILE, --color auto|always|never, --root DIR, -q
  --fail-on error|warning|note|never   (default warning: policy notes never fail)
  --baseline FILE, --write-baseline FILE, --config FILE

Levels: warning = a hazard (async error handling is off for this launch);
note = policy (on only by a default or a launcher, or a deprecated name).
JSON output lists what was skipped under "skipped".  Exit codes: 0 clean,
1 findings at or above --fail-on, 2 a broken manifest or script, a missing
file, a bad option or config.
)";

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
};

// The subcommand whose usage the hint names ("" for the lint command).
std::string gUsageCommand;
// This binary's identity (version, size, mtime): part of every cache key.
std::string gToolIdentity;

[[noreturn]] void usageError(const std::string &msg) {
  const std::string help = gUsageCommand.empty() ? "ddplint --help" : "ddplint " + gUsageCommand + " --help";
  std::cerr << "ddplint: error: " << msg << "\nrun '" << help << "' for usage\n";
  std::exit(kExitError);
}

Args parseArgs(int argc, char **argv) {
  Args a;
  int i = 1;
  if (argc > 1 && (std::string(argv[1]) == "rules" || std::string(argv[1]) == "check-launch" ||
                   std::string(argv[1]) == "cache")) {
    a.command = argv[1];
    gUsageCommand = a.command;
    i = 2;
  }
  auto value = [&](const std::string &flag, const std::string &arg) -> std::string {
    const std::string eq = flag + "=";
    if (arg.rfind(eq, 0) == 0)
      return arg.substr(eq.size());
    if (i + 1 >= argc)
      usageError(flag + " needs a value");
    return argv[++i];
  };
  auto is = [](const std::string &arg, const char *flag) {
    const std::string f = flag;
    return arg == f || arg.rfind(f + "=", 0) == 0;
  };
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      a.fixedFlags.emplace(argv + i + 1, argv + argc);
      break;
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << (a.command == "check-launch" ? kCheckLaunchUsage : kUsage);
      std::exit(kExitClean);
    }
    if (arg == "--version") {
      std::cout << "ddplint " << toolVersion() << " (LLVM " << DDPLINT_LLVM_MAJOR << ")\n";
      std::exit(kExitClean);
    }
    if (arg == "-p" || is(arg, "--build-dir") || (arg.size() > 2 && arg.rfind("-p", 0) == 0 &&
                                                  arg[2] != '-')) {
      a.buildDir = arg.size() > 2 && arg[1] == 'p' ? arg.substr(2) : value(arg == "-p" ? "-p" : "--build-dir", arg);
    } else if (is(arg, "--format")) {
      a.format = value("--format", arg);
    } else if (arg == "-o" || is(arg, "--output")) {
      a.outputFile = value(arg == "-o" ? "-o" : "--output", arg);
    } else if (is(arg, "--config")) {
      a.configFile = value("--config", arg);
    } else if (is(arg, "--color")) {
      a.color = value("--color", arg);
    } else if (is(arg, "--fail-on")) {
      a.failOn = value("--fail-on", arg);
    } else if (is(arg, "--baseline")) {
      a.baseline = value("--baseline", arg);
    } else if (is(arg, "--write-baseline")) {
      a.writeBaseline = value("--write-baseline", arg);
    } else if (is(arg, "--root")) {
      a.root = value("--root", arg);
    } else if (is(arg, "--torch-version")) {
      a.torchVersion = value("--torch-version", arg);
      a.torchVersionGiven = true;
    } else if (a.command == "check-launch" &&
               (arg == "--explain" || arg == "-v" || arg == "--verbose")) {
      a.explain = true;
    } else if (a.command == "check-launch" && arg == "--no-policy") {
      a.noPolicy = true;
    } else if (arg == "-j" || is(arg, "--jobs") || (arg.size() > 2 && arg.rfind("-j", 0) == 0)) {
      const std::string v = arg.size() > 2 && arg[1] == 'j' ? arg.substr(2)
                                                            : value(arg == "-j" ? "-j" : "--jobs", arg);
      char *end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 256)
        usageError("--jobs takes a whole number from 1 to 256, not '" + v + "'");
      a.jobs = static_cast<unsigned>(n);
    } else if (arg == "--fix") {
      a.fix = true;
    } else if (arg == "-q" || arg == "--quiet") {
      a.quiet = true;
    } else if (arg == "--parse-system-bodies") {
      a.parseSystemBodies = true;
    } else if (arg == "--analyze-library-code") {
      a.analyzeLibraryCode = true;
    } else if (is(arg, "--cache-dir")) {
      a.cacheDir = value("--cache-dir", arg);
    } else if (arg == "--no-cache") {
      a.noCache = true;
    } else if (arg == "--no-preamble") {
      a.noPreamble = true;
    } else if (a.command != "check-launch" && (arg == "-v" || arg == "--verbose")) {
      a.verbose = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      usageError("unknown option '" + arg + "'");
    } else {
      a.paths.push_back(arg);
    }
  }
  const std::set<std::string> formats =
      a.command == "rules" ? std::set<std::string>{"text", "markdown", "json"}
                           : std::set<std::string>{"text", "json", "sarif"};
  if (!formats.count(a.format))
    usageError("unknown --format '" + a.format + "'");
  if (a.color != "auto" && a.color != "always" && a.color != "never")
    usageError("--color takes auto, always or never");
  Severity ignored;
  if (a.failOn != "never" && !parseSeverity(a.failOn, ignored))
    usageError("--fail-on takes error, warning, note or never");
  if (a.command == "check-launch" && a.paths.empty())
    usageError("check-launch needs at least one launch file");
  if (a.command == "check-launch" && (a.buildDir || a.fixedFlags || a.fix))
    usageError("-p, --fix and -- are for C++ files, not check-launch");
  if (a.baseline && a.writeBaseline)
    usageError("--baseline and --write-baseline do not go together");
  if (a.command == "cache" && (a.paths.size() != 1 || (a.paths[0] != "stats" && a.paths[0] != "clear")))
    usageError("cache takes stats or clear");
  return a;
}

std::string absolute(const std::string &p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  return abs.lexically_normal().string();
}

std::string defaultRoot() {
  std::error_code ec;
  for (fs::path d = fs::current_path(ec); !d.empty(); d = d.parent_path()) {
    if (fs::exists(d / ".git", ec))
      return d.string();
    if (d == d.root_path())
      break;
  }
  return fs::current_path(ec).string();
}

// A file a user points ddplint at by mistake (an object file, an image) gets
// a clear error instead of a page of Clang parse errors.
bool looksBinary(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char buf[8192];
  in.read(buf, sizeof buf);
  return std::find(buf, buf + in.gcount(), '\0') != buf + in.gcount();
}

// What a folder argument expands to without a database: translation units,
// not headers (those are linted through the units that include them).
bool isTranslationUnit(const fs::path &p) {
  static const std::set<std::string> exts = {".cpp", ".cc", ".cxx", ".c++", ".C", ".cu", ".c"};
  return exts.count(p.extension().string()) > 0;
}

// Compilation databases, found once per folder.
class Databases {
public:
  Databases(const Args &a, ConfigResolver &configs) : args_(a), configs_(configs) {}

  // The database for `file` (absolute), or null with an error appended.  A
  // file the database does not list (or with no database at all) gets the
  // `flags:` of its .ddplint.yaml when it has some, as clangd's CompileFlags.
  const clang::tooling::CompilationDatabase *forFile(const std::string &file,
                                                     std::vector<ToolError> &errors) {
    if (args_.fixedFlags)
      return forPlace(file, fs::path(file).parent_path(), errors);
    std::vector<ToolError> ignored;
    std::shared_ptr<const Config> cfg = configs_.forFile(file, ignored);
    if (!cfg || !cfg->hasFlags)
      return forPlace(file, fs::path(file).parent_path(), errors);
    std::vector<ToolError> dbErrors;
    const auto *db = forPlace(file, fs::path(file).parent_path(), dbErrors);
    if (db) {
      bool listed = false;
      for (const auto &c : db->getCompileCommands(file))
        listed |= c.Heuristic.empty(); // not inferred from a neighbour
      if (listed)
        return db;
    } else if (!args_.buildDir) {
      dbErrors.clear(); // no database found: the config's flags stand in
    }
    for (auto &e : dbErrors)
      errors.push_back(std::move(e)); // a broken or missing -p database stays an error
    if (!dbErrors.empty())
      return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    auto &slot = flagDbs_[cfg->path];
    if (!slot)
      slot = std::make_unique<clang::tooling::FixedCompilationDatabase>(cfg->dir, cfg->flags);
    return slot.get();
  }
  // A compile_flags.txt: flags for every file, and no list of files.
  bool givesFlagsOnly(const clang::tooling::CompilationDatabase *db) {
    if (!db)
      return false;
    for (const auto &[dir, d] : dbs_)
      if (d.get() == db)
        return flagFiles_.count(dir) > 0;
    return false;
  }
  // The database for the files under `dir`.
  const clang::tooling::CompilationDatabase *forFolder(const std::string &dir,
                                                       std::vector<ToolError> &errors) {
    return forPlace(dir, dir, errors);
  }

private:
  // `what` is named in the error; the search starts in `from`.
  const clang::tooling::CompilationDatabase *forPlace(const std::string &what,
                                                      const fs::path &from,
                                                      std::vector<ToolError> &errors) {
    std::string dbDir;
    if (args_.fixedFlags) {
      if (!fixed_) {
        std::vector<std::string> flags = *args_.fixedFlags;
        fixed_ = std::make_unique<clang::tooling::FixedCompilationDatabase>(
            fs::current_path().string(), flags);
      }
      return fixed_.get();
    }
    if (args_.buildDir) {
      dbDir = absolute(*args_.buildDir);
    } else {
      dbDir = search(from);
      if (dbDir.empty()) {
        errors.push_back(fileError(
            what, "no compilation database: no compile_commands.json or compile_flags.txt "
                  "beside it or in any folder above it, and no build/compile_commands.json "
                  "there; pass -p BUILD_DIR "
                  "(CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON), compiler flags after --, or "
                  "list them under flags: in .ddplint.yaml"));
        return nullptr;
      }
    }
    return load(dbDir, errors);
  }

public:
  // Every file of the database that `-p` or the cwd leads to.
  std::vector<std::string> allFiles(std::vector<ToolError> &errors) {
    std::string dbDir = args_.buildDir ? absolute(*args_.buildDir) : search(fs::current_path());
    if (dbDir.empty()) {
      errors.push_back(fileError("", "no compilation database: no compile_commands.json or "
                                     "compile_flags.txt in the current folder or any folder "
                                     "above it, and no build/compile_commands.json there; pass "
                                     "-p BUILD_DIR or the files to lint"));
      return {};
    }
    const auto *db = load(dbDir, errors);
    if (!db)
      return {};
    if (flagFiles_.count(dbDir)) {
      errors.push_back(fileError((fs::path(dbDir) / "compile_flags.txt").string(),
                                 "compile_flags.txt gives flags, not files: name the files or "
                                 "folders to lint"));
      return {};
    }
    std::vector<std::string> files;
    for (const auto &f : db->getAllFiles())
      files.push_back(absolute(f));
    return files;
  }

private:
  // The folder of the nearest database above `dir`, as clang tooling finds
  // one: in each folder compile_commands.json, then build/compile_commands.json,
  // then compile_flags.txt (one flag per line, for every file below it).
  std::string search(fs::path dir) {
    std::error_code ec;
    for (; !dir.empty(); dir = dir.parent_path()) {
      if (fs::is_regular_file(dir / "compile_commands.json", ec))
        return dir.string();
      if (fs::is_regular_file(dir / "build" / "compile_commands.json", ec))
        return (dir / "build").string();
      if (fs::is_regular_file(dir / "compile_flags.txt", ec))
        return dir.string();
      if (dir == dir.root_path())
        break;
    }
    return "";
  }

  const clang::tooling::CompilationDatabase *load(const std::string &dir,
                                                  std::vector<ToolError> &errors) {
    auto it = dbs_.find(dir);
    if (it != dbs_.end())
      return it->second.get();
    const std::string path = (fs::path(dir) / "compile_commands.json").string();
    const std::string flagsPath = (fs::path(dir) / "compile_flags.txt").string();
    std::unique_ptr<clang::tooling::CompilationDatabase> db;
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) {
      std::string err;
      db = clang::tooling::JSONCompilationDatabase::loadFromFile(
          path, err, clang::tooling::JSONCommandLineSyntax::AutoDetect);
      if (!db)
        errors.push_back(fileError(path, "cannot read the compilation database: " + err));
      else // headers and new files get the flags of their nearest neighbour, as in clangd
        db = clang::tooling::inferMissingCompileCommands(
            clang::tooling::inferTargetAndDriverMode(std::move(db)));
    } else if (fs::is_regular_file(flagsPath, ec)) {
      std::string err;
      db = clang::tooling::FixedCompilationDatabase::loadFromFile(flagsPath, err);
      if (!db)
        errors.push_back(fileError(flagsPath, "cannot read the compile flags: " + err));
      else
        flagFiles_.insert(dir);
    } else {
      errors.push_back(fileError(path, "no compilation database here (-p " + dir +
                                           "): no compile_commands.json or compile_flags.txt; "
                                           "configure the project with "
                                           "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"));
    }
    return (dbs_[dir] = std::move(db)).get();
  }

  const Args &args_;
  ConfigResolver &configs_;
  std::map<std::string, std::unique_ptr<clang::tooling::CompilationDatabase>> dbs_;
  std::unique_ptr<clang::tooling::CompilationDatabase> fixed_;
  std::set<std::string> flagFiles_; // folders whose database is a compile_flags.txt
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<clang::tooling::CompilationDatabase>> flagDbs_;
};

void dedupe(std::vector<Finding> &findings) {
  // A finding in a header is seen by every translation unit that includes it.
  std::set<std::tuple<std::string, std::string, unsigned, unsigned, std::string>> seen;
  std::vector<Finding> out;
  for (auto &f : findings)
    if (seen.insert({f.ruleId, f.location.file, f.location.line, f.location.column, f.message})
            .second)
      out.push_back(std::move(f));
  sortFindings(out);
  findings = std::move(out);
}

// The progress line on a terminal's stderr, shown only once a run has taken
// more than a second (a warm pre-commit run stays silent): "[done/total] what".
class Progress {
public:
  Progress(bool enabled, size_t total) : enabled_(enabled), total_(total) {
    if (!enabled_)
      return;
    // DDPLINT_PROGRESS_DELAY_MS: the tests' way to see the line on a fast run.
    long delayMs = 1000;
    if (const char *d = std::getenv("DDPLINT_PROGRESS_DELAY_MS"))
      delayMs = std::strtol(d, nullptr, 10);
    ticker_ = std::thread([this, delayMs] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::milliseconds(delayMs), [this] { return finished_; })) {
        shown_ = true;
        draw();
      }
    });
  }
  ~Progress() { finish(); }
  // What a worker is doing now ("preamble for 20 units: torch/torch.h").
  void status(const std::string &what) {
    if (!enabled_)
      return;
    std::lock_guard<std::mutex> lock(mu_);
    current_ = what;
    if (shown_)
      draw();
  }
  void step(const std::string &file) {
    if (!enabled_)
      return;
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    current_ = fs::path(file).filename().string();
    if (shown_)
      draw();
  }
  void finish() {
    if (!enabled_)
      return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_)
        return;
      finished_ = true;
    }
    cv_.notify_all();
    if (ticker_.joinable())
      ticker_.join();
    if (shown_)
      std::cerr << "\r\033[K" << std::flush;
  }

private:
  void draw() {
    std::cerr << "\r\033[K[" << done_ << "/" << total_ << "] " << current_ << std::flush;
  }
  bool enabled_;
  size_t total_, done_ = 0;
  std::string current_ = "starting";
  bool shown_ = false, finished_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread ticker_;
};

// Reads `path` relative to the cwd into sourceLine fields for launch findings.
std::string lineOf(const std::string &path, unsigned line) {
  std::ifstream in(path, std::ios::binary);
  std::string s;
  for (unsigned i = 1; std::getline(in, s); ++i)
    if (i == line) {
      if (!s.empty() && s.back() == '\r')
        s.pop_back();
      return s;
    }
  return "";
}

// A broken baseline is found before any parsing: the gate must not spend
// minutes and then report everything (or nothing) against a file it cannot read.
bool preloadBaseline(const Args &a, std::optional<Baseline> &out) {
  if (!a.baseline)
    return true;
  Baseline b;
  std::string err;
  if (!loadBaseline(*a.baseline, b, err)) {
    std::cerr << err << "\nddplint: not linting: fix or regenerate the baseline "
                        "(--write-baseline)\n";
    return false;
  }
  out = std::move(b);
  return true;
}

void dedupeErrors(std::vector<ToolError> &errors) {
  // A header that does not compile breaks every translation unit including it.
  std::set<std::tuple<std::string, unsigned, unsigned, std::string>> seen;
  std::vector<ToolError> out;
  for (auto &e : errors)
    if (seen.insert({e.location.file, e.location.line, e.location.column, e.message}).second)
      out.push_back(std::move(e));
  errors = std::move(out);
}

int finish(const Args &a, RunResult &result, const std::string &root,
           const std::optional<Baseline> &baseline) {
  dedupe(result.findings);
  dedupeErrors(result.errors);
  computeFingerprints(result.findings, root);

  if (a.writeBaseline) {
    std::string err;
    if (!writeBaseline(*a.writeBaseline, result.findings, root, err))
      result.errors.push_back(fileError(*a.writeBaseline, err));
    else if (!a.quiet)
      std::cerr << "ddplint: recorded " << result.findings.size() << " finding(s) in "
                << *a.writeBaseline << "\n";
  }
  if (baseline)
    result.suppressedByBaseline = applyBaseline(result.findings, *baseline);
  if (a.fix) {
    FixSummary fx = applyFixes(result.findings);
    for (auto &e : fx.errors)
      result.errors.push_back(std::move(e));
    if (!a.quiet)
      std::cerr << "ddplint: applied " << fx.applied << " fix-it edit(s) in " << fx.files
                << " file(s)\n";
  }

  ReportOptions ro;
  std::error_code ec;
  // --root: every format names files relative to it (as baselines do), so
  // reports from two working folders agree; else relative to the cwd, as a
  // compiler does.
  ro.baseDir = a.root ? root : fs::current_path(ec).string();
  ro.sourceRoot = root;
  ro.color = a.color == "always" ||
             (a.color == "auto" && !a.outputFile && isatty(STDOUT_FILENO) && a.format == "text");
  const std::string report = a.format == "json"    ? renderJson(result, ro)
                             : a.format == "sarif" ? renderSarif(result, ro)
                                                   : renderText(result, ro);
  if (a.outputFile) {
    std::ofstream out(*a.outputFile, std::ios::binary | std::ios::trunc);
    out << report;
    if (!out) {
      std::cerr << "ddplint: error: cannot write " << *a.outputFile << "\n";
      return kExitError;
    }
  } else {
    std::cout << report << std::flush;
  }
  if (!a.quiet) {
    for (const auto &[file, why] : result.skipped)
      std::cerr << "ddplint: skipped " << fs::path(file).lexically_proximate(ro.baseDir).string()
                << ": " << why << "\n";
    std::cerr << "ddplint: " << summaryLine(result) << "\n";
  }

  if (!result.errors.empty())
    return kExitError;
  if (a.writeBaseline)
    return kExitClean; // recording a baseline is not a gate
  Severity threshold;
  if (a.failOn == "never" || !parseSeverity(a.failOn, threshold))
    return kExitClean;
  for (const auto &f : result.findings)
    if (f.severity >= threshold)
      return kExitFindings;
  return kExitClean;
}

int runLint(const Args &a) {
  const std::string root = a.root ? absolute(*a.root) : defaultRoot();
  std::optional<Baseline> baseline;
  if (!preloadBaseline(a, baseline))
    return kExitError;
  RunResult result;
  ConfigResolver configs(a.configFile ? std::optional<std::string>(absolute(*a.configFile))
                                      : std::nullopt);
  Databases dbs(a, configs);

  // 1. The files: explicit paths (folders expand to the database's files under
  //    them), else the whole database.
  std::vector<std::string> files;
  std::set<std::string> seen;
  auto add = [&](const std::string &f) {
    if (seen.insert(f).second)
      files.push_back(f);
  };
  if (a.paths.empty()) {
    for (const auto &f : dbs.allFiles(result.errors))
      add(f);
  }
  for (const auto &p : a.paths) {
    const std::string abs = absolute(p);
    std::error_code ec;
    if (!fs::exists(abs, ec)) {
      result.errors.push_back(fileError(abs, "no such file or directory"));
      continue;
    }
    if (fs::is_directory(abs, ec)) {
      bool any = false;
      // Python files need no database: every .py under the folder is linted.
      bool cxxOnDisk = false;
      for (auto it = fs::recursive_directory_iterator(abs, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (it->is_directory(ec) && (name.empty() || name[0] == '.' || name == "__pycache__" ||
                                     name == "node_modules" || name == "site-packages")) {
          it.disable_recursion_pending();
          continue;
        }
        if (!it->is_regular_file(ec))
          continue;
        if (isPythonFile(it->path().string())) {
          add(absolute(it->path().string()));
          any = true;
        } else if (isTranslationUnit(it->path())) {
          cxxOnDisk = true;
        }
      }
      if (!cxxOnDisk) {
        if (!any)
          result.errors.push_back(
              fileError(abs, "no C, C++ or Python files under this folder"));
        continue;
      }
      const clang::tooling::CompilationDatabase *folderDb =
          a.fixedFlags ? nullptr : dbs.forFolder(abs, result.errors);
      if (!a.fixedFlags && !dbs.givesFlagsOnly(folderDb)) {
        if (const auto *db = folderDb)
          for (const auto &f : db->getAllFiles()) {
            const std::string af = absolute(f);
            if (af.rfind(abs + "/", 0) == 0) {
              add(af);
              any = true;
            }
          }
      } else if (a.fixedFlags || folderDb) {
        // Flags without a file list (-- or compile_flags.txt): every unit on disk.
        for (auto it = fs::recursive_directory_iterator(abs, ec);
             it != fs::recursive_directory_iterator(); it.increment(ec))
          if (it->is_regular_file(ec) && isTranslationUnit(it->path())) {
            add(absolute(it->path().string()));
            any = true;
          }
      }
      if (!any)
        result.errors.push_back(fileError(abs, "no C, C++ or Python files under this folder"));
      continue;
    }
    add(abs);
  }

  // 2. Configs first: a broken config is exit code 2 before any parsing.
  std::vector<std::string> todo;
  size_t configErrorsBefore = result.errors.size();
  std::set<std::string> named;
  for (const auto &p : a.paths)
    named.insert(absolute(p));
  for (const auto &f : files) {
    auto cfg = configs.forFile(f, result.errors);
    if (!cfg)
      continue;
    if (cfg->excluded(f)) {
      // Named on the command line (a pre-commit hook passes staged files):
      // say it was skipped rather than count it silently.
      if (named.count(f))
        result.skipped.emplace_back(f, "excluded by " + (cfg->path.empty() ? std::string("the config") : cfg->path));
      continue;
    }
    todo.push_back(f);
  }
  if (result.errors.size() > configErrorsBefore) {
    RunResult onlyErrors;
    onlyErrors.errors = result.errors;
    ReportOptions ro;
    std::error_code ec;
    ro.baseDir = fs::current_path(ec).string();
    std::cerr << renderText(onlyErrors, ro) << "ddplint: not linting: fix the config first\n";
    return kExitError;
  }

  // 3. Files that cannot be C++ sources, and the databases.
  std::vector<std::pair<std::string, const clang::tooling::CompilationDatabase *>> jobs;
  std::vector<std::string> pyJobs; // Python: no database, no preamble
  for (const auto &f : todo) {
    std::error_code ec;
    if (!fs::exists(f, ec)) { // explicit paths were checked above: this one is the database's
      result.errors.push_back(fileError(
          f, "listed in the compilation database but does not exist (a stale database: "
             "re-run the build system's configure step)"));
      continue;
    }
    if (looksBinary(f)) {
      result.errors.push_back(fileError(
          f, std::string("binary file, not a ") + (isPythonFile(f) ? "Python" : "C or C++") +
                 " source; skipped"));
      continue;
    }
    if (isPythonFile(f)) {
      pyJobs.push_back(f);
      continue;
    }
    if (const auto *db = dbs.forFile(f, result.errors))
      jobs.emplace_back(f, db);
  }

  // 4. The translation units, N at a time.  Each worker collects into its own
  //    result; the merge below keeps the report independent of scheduling.
  TidyRunOptions topts;
  topts.parseSystemBodies = a.parseSystemBodies;
  topts.analyzeLibraryCode = a.analyzeLibraryCode;
  ddplint::clangfe::setAnalyzeLibraryCode(a.analyzeLibraryCode);
  topts.resourceDir = DDPLINT_RESOURCE_DIR;
  Progress progress(!a.quiet && isatty(STDERR_FILENO), jobs.size());

  // The shared preambles: units with the same leading #includes and flags
  // parse them once, from the cache when an earlier run left them there.
  std::unique_ptr<PreambleStore> store;
  std::vector<PreambleSpec> specs(jobs.size());
  std::map<std::string, unsigned> unitsPerKey;
  if (!a.noPreamble && !a.analyzeLibraryCode && !jobs.empty()) {
    std::string cacheDir = a.cacheDir ? absolute(*a.cacheDir) : "";
    bool persistent = !a.noCache;
    uint64_t maxMb = 4096;
    std::vector<ToolError> ignored;
    for (const auto &[f, db] : jobs) { // the first config that says something about the cache
      auto cfg = configs.forFile(f, ignored);
      if (!cfg || (cfg->cacheDir.empty() && !cfg->cacheOff && !cfg->cacheMaxMb))
        continue;
      if (cfg->cacheOff)
        persistent = false;
      if (cacheDir.empty())
        cacheDir = cfg->cacheDir;
      if (cfg->cacheMaxMb)
        maxMb = cfg->cacheMaxMb;
      break;
    }
    if (cacheDir.empty())
      cacheDir = defaultCacheDir();
    store = std::make_unique<PreambleStore>(cacheDir, persistent, maxMb << 20);
    std::string storeError;
    if (!store->ready(storeError)) {
      if (!a.quiet)
        std::cerr << "ddplint: warning: " << storeError
                  << "; parsing every unit whole (--cache-dir DIR or --no-cache)\n";
      store.reset();
    } else {
      PreambleKeyContext kctx;
      kctx.resourceDir = topts.resourceDir;
      kctx.toolIdentity = gToolIdentity;
      kctx.skipBodies = !a.parseSystemBodies;
      kctx.cacheDir = store->dir();
      for (size_t i = 0; i < jobs.size(); ++i) {
        specs[i] = planPreamble(jobs[i].first, *jobs[i].second, kctx);
        if (specs[i].usable)
          ++unitsPerKey[specs[i].key];
      }
      // Within one run without a cache, a preamble only pays off when shared.
      if (!persistent)
        for (auto &sp : specs)
          if (sp.usable && unitsPerKey[sp.key] < 2)
            sp.usable = false;
    }
  }
  const PreambleBuilder builder = [&](const PreambleSpec &spec, const std::string &out,
                                      std::vector<PreambleInput> &inputs, std::string &err) {
    progress.status("preamble shared by " + std::to_string(unitsPerKey[spec.key]) + " unit(s)");
    return buildPreamblePch(spec, out, topts, inputs, err);
  };

  std::vector<RunResult> perFile(jobs.size());
  std::atomic<size_t> next{0};
  std::atomic<unsigned> wholeAfterPreamble{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      std::optional<PreambleUse> use;
      if (store && specs[i].usable)
        use = store->get(specs[i], builder);
      bool broken = false;
      runChecksOnFile(jobs[i].first, *jobs[i].second, configs, topts, perFile[i],
                      use ? &*use : nullptr, &broken);
      if (broken) {
        store->invalidate(specs[i].key);
        ++wholeAfterPreamble;
      }
      progress.step(jobs[i].first);
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(a.jobs, static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t)
    threads.emplace_back(worker);
  worker();
  for (auto &t : threads)
    t.join();
  progress.finish();
  if (store) {
    const CacheStats st = store->stats();
    if (a.verbose)
      std::cerr << "ddplint: preambles: " << st.hits << " reused from " << store->dir() << ", "
                << st.built << " built, " << st.rebuilt << " rebuilt (stale or corrupt), "
                << st.failed << " failed (those units parsed whole); " << wholeAfterPreamble
                << " unit(s) parsed whole after failing with one"
                << (store->persistent() ? "" : "; not kept (--no-cache)") << "\n";
    if (a.verbose)
      for (const auto &why : st.rebuiltWhy)
        std::cerr << "ddplint: " << why << "\n";
    store->prune();
  }
  // Python files take milliseconds each: the same workers, after the units.
  std::vector<RunResult> perPyFile(pyJobs.size());
  {
    std::atomic<size_t> nextPy{0};
    auto pyWorker = [&] {
      for (size_t i; (i = nextPy++) < pyJobs.size();)
        runChecksOnPythonFile(pyJobs[i], configs, perPyFile[i]);
    };
    const unsigned pn =
        std::max(1u, std::min<unsigned>(a.jobs, static_cast<unsigned>(pyJobs.size())));
    std::vector<std::thread> pyThreads;
    for (unsigned t = 1; t < pn; ++t)
      pyThreads.emplace_back(pyWorker);
    pyWorker();
    for (auto &t : pyThreads)
      t.join();
  }
  for (auto &r : perPyFile)
    perFile.push_back(std::move(r));
  for (auto &r : perFile) {
    for (auto &f : r.findings)
      result.findings.push_back(std::move(f));
    for (auto &e : r.errors)
      result.errors.push_back(std::move(e));
    result.filesAnalyzed += r.filesAnalyzed;
    for (auto &s : r.skipped)
      result.skipped.push_back(std::move(s));
  }
  if (a.analyzeLibraryCode)
    std::cerr << "ddplint: analysed " << ddplint::clangfe::functionsAnalysed()
              << " function bodies (library code included)\n";
  return finish(a, result, root, baseline);
}

int runCheckLaunch(const Args &a) {
  const std::string root = a.root ? absolute(*a.root) : defaultRoot();
  std::optional<Baseline> baseline;
  if (!preloadBaseline(a, baseline))
    return kExitError;
  RunResult result;
  ConfigResolver configs(a.configFile ? std::optional<std::string>(absolute(*a.configFile))
                                      : std::nullopt);
  ddplint::launch::Options cliVersion;
  if (a.torchVersionGiven && !ddplint::launch::parseTorchVersion(a.torchVersion, cliVersion))
    usageError("--torch-version takes MAJOR.MINOR[.PATCH], e.g. 2.3, not '" + a.torchVersion +
               "'");

  std::vector<std::string> files;
  for (const auto &p : a.paths) {
    const std::string abs = absolute(p);
    std::error_code ec;
    if (fs::is_directory(abs, ec)) {
      for (auto it = fs::recursive_directory_iterator(abs, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string ext = it->path().extension().string();
        if (it->is_regular_file(ec) && (ext == ".yaml" || ext == ".yml" || ext == ".sh" ||
                                        ext == ".sbatch" || ext == ".slurm"))
          files.push_back(absolute(it->path().string()));
      }
      std::sort(files.begin(), files.end());
      continue;
    }
    files.push_back(abs); // a missing file is reported by the checker
  }

  for (const auto &f : files) {
    auto cfg = configs.forFile(f, result.errors);
    if (!cfg || cfg->excluded(f))
      continue;
    auto setting = cfg->rules.find("ddp-launch-env");
    if (setting != cfg->rules.end() && !setting->second.enabled)
      continue;
    ddplint::launch::Options opts = cliVersion;
    if (!a.torchVersionGiven && !cfg->torchVersion.empty()) {
      opts.versionSource = "launch.torch_version of " + fs::path(cfg->path).filename().string();
      if (!ddplint::launch::parseTorchVersion(cfg->torchVersion, opts)) {
        result.errors.push_back(fileError(cfg->path, "launch.torch_version '" + cfg->torchVersion +
                                                         "' is not MAJOR.MINOR[.PATCH]"));
        continue;
      }
    }
    auto policyOption = cfg->checkOptions.find("ddp-launch-env.RequireExplicitSetting");
    opts.requireExplicit = !a.noPolicy && (policyOption == cfg->checkOptions.end() ||
                                           (policyOption->second != "false" &&
                                            policyOption->second != "0" &&
                                            policyOption->second != "off"));
    ddplint::launch::Result r = ddplint::launch::checkLaunchFile(f, opts);
    ++result.filesAnalyzed;
    // What was not checked: always in JSON and with --explain; otherwise only
    // what deserves attention (a Helm template that could not be read).
    for (const auto &sk : r.skipped)
      if (a.explain || a.format == "json" || sk.visible)
        result.skipped.emplace_back(
            absolute(sk.file),
            (sk.line ? std::to_string(sk.line) + ":" + std::to_string(sk.column) + ": " : "") +
                sk.what + ": " + sk.reason);
    for (const auto &lf : r.findings) {
      Finding out;
      out.ruleId = lf.ruleId;
      out.severity = lf.level == ddplint::launch::Level::Policy ? Severity::Note
                     : setting != cfg->rules.end()              ? setting->second.severity
                                                                : Severity::Warning;
      out.message = lf.message;
      out.location = {absolute(lf.file), lf.line, lf.column};
      out.sourceLine = lineOf(out.location.file, lf.line);
      result.findings.push_back(std::move(out));
    }
    for (const auto &le : r.errors) {
      ToolError e;
      e.location = {absolute(le.file), le.line, le.column};
      e.message = le.message;
      result.errors.push_back(std::move(e));
    }
  }
  return finish(a, result, root, baseline);
}

int runCache(const Args &a) {
  std::string dir = a.cacheDir ? absolute(*a.cacheDir) : "";
  if (dir.empty()) { // the cache: key of the config above the cwd
    std::error_code ec;
    ConfigResolver configs(a.configFile ? std::optional<std::string>(absolute(*a.configFile))
                                        : std::nullopt);
    std::vector<ToolError> errors;
    auto cfg = configs.forFile((fs::current_path(ec) / "x.cpp").string(), errors);
    if (cfg && !cfg->cacheDir.empty())
      dir = cfg->cacheDir;
  }
  if (dir.empty())
    dir = defaultCacheDir();
  if (a.paths[0] == "clear") {
    std::string err;
    const unsigned n = clearCache(dir, err);
    std::cout << "ddplint: removed " << n << " file(s) from " << dir << "\n";
    if (!err.empty()) {
      std::cerr << "ddplint: error: " << err << "\n";
      return kExitError;
    }
    return kExitClean;
  }
  const CacheSummary s = summarizeCache(dir);
  std::cout << "cache folder: " << dir << "\n"
            << "preambles:    " << s.entries << "\n"
            << "incomplete:   " << s.incomplete << " (temporaries or entries without manifest)\n"
            << "size:         " << (s.bytes + (1 << 19)) / (1 << 20) << " MiB (" << s.bytes
            << " bytes)\n";
  return kExitClean;
}

int runRules(const Args &a) {
  const auto &rules = ddplint::core::builtinRules();
  if (a.format == "json") {
    std::cout << renderRulesJson(rules);
  } else if (a.format == "markdown") {
    std::cout << renderRulesMarkdown(rules);
  } else {
    std::cout << renderRulesText(rules);
  }
  return kExitClean;
}

} // namespace

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer build only.  Clang's first temporary output file (a preamble,
// built on a worker thread) makes LLVM install its own, heap-allocated signal
// stack on that thread, because ASan's is smaller than LLVM wants.  At thread
// exit ASan would then unmap LLVM's heap block as if it were its own stack: a
// CHECK failure ("unable to unmap") or, worse, a silently unmapped heap page,
// depending on the block's alignment.  Leaving the signal stacks to LLVM
// avoids both; ASAN_OPTIONS from the environment still take precedence.
extern "C" const char *__asan_default_options() {
  return "use_sigaltstack=0:detect_leaks=0";
}
#endif

int main(int argc, char **argv) {
  (void)ddpModuleAnchor;
  llvm::CrashRecoveryContext::Enable();
  Args a = parseArgs(argc, argv);
  gToolIdentity = toolIdentity(argv[0]);
  if (a.command == "rules")
    return runRules(a);
  if (a.command == "cache")
    return runCache(a);
  if (a.command == "check-launch")
    return runCheckLaunch(a);
  return runLint(a);
}
