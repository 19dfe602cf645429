// What the rule decides, shared by the Kubernetes and the shell readers: given
// the environment one process gets, which of the two variables is missing,
// wrong or deprecated.
#pragma once

#include "ddplint/launch/LaunchCheck.h"

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
};

// Collects findings; a setting in effect for several subjects is reported once.
class Sink {
public:
  explicit Sink(std::string file) : file_(std::move(file)) {}
  // `what` tells apart two findings at one place (both variables missing at
  // one launch command); the same `what` at the same place is reported once.
  void add(unsigned line, unsigned column, const std::string &what, std::string message);
  std::vector<Finding> take();
  const std::string &file() const { return file_; }

private:
  std::string file_;
  std::set<std::tuple<unsigned, unsigned, std::string>> reported_;
  std::vector<Finding> findings_;
};

enum class Var { AsyncErrorHandling, FaultHandler };

// `reportMissing` filters the missing findings (the shell reader reports each
// variable missing once per file); wrong and deprecated settings are always
// reported.
void evaluate(const Env &env, const Subject &subject, const Options &opts, Sink &sink,
              const std::function<bool(Var)> &reportMissing = nullptr);

// The two variable names from rules/api.yaml and whether the target reads the
// current one.
struct AsyncNames {
  std::string current, legacy;
  bool targetReadsCurrent = true;
  std::string renamedIn; // "2.2"
  std::string target;    // "PyTorch 1.13", or "" when unknown
};
AsyncNames asyncNames(const Options &opts);
inline constexpr const char *kFaultHandler = "PYTHONFAULTHANDLER";

// `name` appears in `text` as a whole variable name (NCCL_ASYNC_ERROR_HANDLING
// is not mentioned by TORCH_NCCL_ASYNC_ERROR_HANDLING), followed by `after`
// when that is not empty.
bool mentions(const std::string &text, const std::string &name, const std::string &after = "");

// Names that the rule reads, for the "mentioned somewhere we cannot parse" test.
std::vector<std::string> watchedNames(const Options &opts);

} // namespace ddplint::launch::detail
