// What the rule decides, shared by the Kubernetes and the shell readers: given
// the environment one process gets, which of the two variables is missing,
// wrong or deprecated.
#pragma once

#include "ddplint/launch/LaunchCheck.h"
#include "ddplint/core/AsyncErrorFacts.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>

namespace ddplint::launch::detail {

struct Setting {
  std::string value;
  bool known = true;  // false: computed at run time ($VAR, valueFrom, ...)
  unsigned line = 0, column = 0; // where the variable's name is written
  bool report = true; // false: its wrong value is already reported elsewhere
};

using Env = std::map<std::string, Setting>;

// The process whose environment is judged.
struct Subject {
  // "container 'trainer' in Job 'bert'" / "the torchrun at line 12"
  std::string name;
  // Its command line (a launch command, a container's command and args).
  std::string command;
  // The same for the middle of a sentence: "in container ..." / "for the torchrun ..."
  std::string context;
  // The sentence for a missing variable starts with name + missing verb:
  // " does not set" / " runs without".
  std::string missingVerb;
  unsigned line = 0, column = 0; // where a missing variable is reported
  // The environment may hold variables the file does not show (envFrom, a
  // sourced file): nothing is reported missing.
  bool mayInherit = false;
  // How to add a variable here: "add env X=1" / "export X=1 before it".
  std::function<std::string(const std::string &name, const std::string &value)> fix;
  // The launcher that starts the ranks (rules/nccl-async-error.yaml's id:
  // "torchrun", "srun", ...; "" for a plain program) and how to name it.
  std::string launcherId, launcherName;
  // A version read from the container image (pytorch/pytorch:1.13.1-...),
  // used when Options has none; 0 = none.
  int imageVersion = 0;
  std::string image;
};

// Collects findings; a setting in effect for several subjects is reported once.
class Sink {
public:
  explicit Sink(std::string file) : file_(std::move(file)) {}
  // `what` tells apart two findings at one place (both variables missing at
  // one launch command); the same `what` at the same place is reported once.
  void add(unsigned line, unsigned column, const std::string &what, std::string message,
           Level level = Level::Hazard);
  void skip(unsigned line, unsigned column, std::string what, std::string reason,
            bool visible = false);
  std::vector<Finding> take();
  std::vector<Skipped> takeSkipped() { return std::move(skipped_); }
  void process(LaunchedProcess p) { processes_.push_back(std::move(p)); }
  std::vector<LaunchedProcess> takeProcesses() { return std::move(processes_); }
  const std::string &file() const { return file_; }

private:
  std::string file_;
  std::set<std::tuple<unsigned, unsigned, std::string>> reported_;
  std::vector<Finding> findings_;
  std::vector<Skipped> skipped_;
  std::vector<LaunchedProcess> processes_;
};

enum class Var { AsyncErrorHandling, FaultHandler };

// `reportMissing` filters the missing findings (the shell reader reports each
// variable missing once per file and level, so a policy note never hides a
// later launch's hazard); wrong and deprecated settings are always reported.
void evaluate(const Env &env, const Subject &subject, const Options &opts, Sink &sink,
              const std::function<bool(Var, Level)> &reportMissing = nullptr);

// The version a subject is judged for, and how to say so in a message:
// "PyTorch 1.13 (--torch-version)", "PyTorch 2.2 or newer (assumed: no
// --torch-version given)".
struct Target {
  int version = 0;
  std::string text;
};
Target targetOf(const Subject &s, const Options &opts);

// A pytorch/pytorch:<version>-... image (or docker.io/pytorch/pytorch:...): its
// PyTorch version as major*100+minor; 0 for anything else.
int imageTorchVersion(const std::string &image);

// The launcher of rules/nccl-async-error.yaml that `text` (a command line, a
// container's command and args) names as a whole word; nullptr when none.
const core::LauncherExport *launcherIn(const std::string &text);

inline constexpr const char *kFaultHandler = "PYTHONFAULTHANDLER";

// `name` appears in `text` as a whole variable name (NCCL_ASYNC_ERROR_HANDLING
// is not mentioned by TORCH_NCCL_ASYNC_ERROR_HANDLING), followed by `after`
// when that is not empty.
bool mentions(const std::string &text, const std::string &name, const std::string &after = "");

// Names that the rule reads, for the "mentioned somewhere we cannot parse" test.
std::vector<std::string> watchedNames(const Options &opts);

} // namespace ddplint::launch::detail
