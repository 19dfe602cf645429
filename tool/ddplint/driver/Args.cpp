#include "Args.h"

#include "Finding.h"
#include "Report.h" // toolVersion()

#include <filesystem>
#include <iostream>
#include <set>

namespace fs = std::filesystem;

namespace ddplint::cli {
namespace {

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

// The subcommand whose usage the hint names ("" for the lint command).
std::string gUsageCommand;

} // namespace

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

} // namespace ddplint::cli
