// The launch-file rule ddp-launch-env: reads Kubernetes manifests, Slurm batch
// scripts and shell launch scripts and reports ranks started without NCCL async
// error handling or Python's faulthandler.  No Clang: `ddplint check-launch`
// links this library and ddplint-core only.
//
// Precision over recall: a variable that may come from somewhere the file does
// not show (a container's envFrom, a sourced file, a value computed at run
// time) is never reported as missing or wrong.
#pragma once

#include <string>
#include <vector>

namespace ddplint::launch {

// Every finding of this library belongs to this catalog rule.
inline constexpr const char *kRuleId = "ddp-launch-env";

enum class FileKind { KubernetesManifest, SlurmScript, ShellScript, Unknown };

// "kubernetes", "slurm", "shell", "unknown": for messages and reports.
const char *fileKindName(FileKind kind);

struct Options {
  // The PyTorch the launched job runs.  0.0 = unknown: a pytorch/pytorch image
  // tag tells it for a container, else rules/nccl-async-error.yaml's
  // assumed_version (the newest range) is assumed, and messages say so.
  int torchMajor = 0, torchMinor = 0;
  // Where the version came from, for messages: "--torch-version", ".ddplint.yaml".
  std::string versionSource = "--torch-version";
  // The policy level: a note when the variable is not set explicitly although
  // async error handling is on by default or by the launcher.  The check
  // option ddp-launch-env.RequireExplicitSetting (default true) turns it off.
  bool requireExplicit = true;
};

// "2.3", "1.13.1", "2.2.0+cu121", "2.4.0a0", "v2.1" -> major and minor.  False
// (and `out` untouched) for anything else, including "2", "" and "0.0".
bool parseTorchVersion(const std::string &text, Options &out);

// Hazard: async error handling is actually off for this launch (a warning).
// Policy: it is on only by a default or a launcher, not set explicitly, or a
// deprecated or ineffective spelling (a note).
enum class Level { Hazard, Policy };

struct Finding {
  std::string file;
  unsigned line = 0, column = 0; // 1-based
  std::string message;
  std::string ruleId = kRuleId;
  Level level = Level::Hazard;
};

// Something in a file that was deliberately not checked, and why: a YAML file
// that is no Kubernetes manifest, a container that runs no torch distributed
// job, a sourced file that cannot be found.  Shown by --explain and in JSON.
struct Skipped {
  std::string file;
  unsigned line = 0, column = 0; // 0: the whole file
  std::string what;   // "container 'etcd' in Pod 'etcd'", "the file"
  std::string reason; // "no torch distributed workload: ..."
  bool visible = false; // also worth a note in the text report (an unresolved source)
};

// A file that could not be checked, completely or in part (a malformed YAML
// document, a binary file, an unknown file type).  line/column are 0 when the
// error concerns the whole file.
struct Error {
  std::string file;
  unsigned line = 0, column = 0;
  std::string message;
};

// A process that a launch file starts (a container, a launch command) and the
// environment it gets, as far as the file shows: what a program's own checks
// need to know about how it is launched (ddp-async-error-handling on Python).
struct LaunchedProcess {
  std::string file;
  unsigned line = 0, column = 0; // the container's name or the launch command
  std::string command;           // its command line or the container's command and args
  struct Variable {
    std::string name, value;
    bool valueKnown = true; // false: computed at run time ($VAR, valueFrom)
  };
  std::vector<Variable> env;
  // The environment may hold variables the file does not show (envFrom, a
  // sourced file that could not be read): nothing is known to be unset.
  bool mayInherit = false;
};

struct Result {
  FileKind kind = FileKind::Unknown;
  std::vector<LaunchedProcess> processes; // the processes judged, in file order
  std::vector<Finding> findings; // sorted by line, then column
  std::vector<Error> errors;
  std::vector<Skipped> skipped;
};

// The kind of launch file, by content first and the file name's extension as
// a hint.  Does not parse; Unknown for binary text.
FileKind detectFileKind(const std::string &file, const std::string &text);

// `file` is used for the kind's extension hint and in findings and errors.
Result checkLaunchText(const std::string &file, const std::string &text, const Options &opts);

// Reads the file; a missing, unreadable or binary file gives an Error.
Result checkLaunchFile(const std::string &file, const Options &opts);

} // namespace ddplint::launch
