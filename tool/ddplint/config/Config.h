// .ddplint.yaml: which checks run and how severe they are, the user's wrapper
// functions, path excludes and the launch-file settings.  Found by walking up
// from each linted file; the nearest file wins.  No Clang types.
#pragma once

#include "Finding.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ddplint::cli {

struct RuleSetting {
  bool enabled = true;
  Severity severity = Severity::Warning;
};

struct Config {
  std::string path; // the .ddplint.yaml it came from; empty for the built-in defaults
  std::string dir;  // its directory: excludes are relative to it
  std::map<std::string, RuleSetting> rules;             // every catalog rule
  std::map<std::string, std::string> checkOptions;      // "ddp-x.Option" -> value
  std::vector<std::string> excludes;                    // globs, relative to dir
  std::string torchVersion;                             // launch.torch_version
  std::vector<std::string> flags; // compiler flags for files without a database entry
  bool hasFlags = false;          // `flags:` was given (even empty)
  std::string cacheDir;           // cache: the preamble cache folder (absolute)
  bool cacheOff = false;          // cache: off
  unsigned long long cacheMaxMb = 0; // cache.max_size_mb (0: the default)
  bool clangTidyRule(const std::string &id) const;      // a rule the C++ checks implement

  // The clang-tidy `Checks` glob for the enabled C++ rules ("-*,ddp-a,ddp-b").
  std::string checksGlob() const;
  bool excluded(const std::string &absPath) const;
};

// The defaults: every rule enabled at its catalog severity.
Config defaultConfig();

// Parses `text` as the config file `path`.  Schema errors name path:line:col.
bool parseConfig(const std::string &path, const std::string &text, Config &out,
                 std::vector<ToolError> &errors);
bool loadConfigFile(const std::string &path, Config &out, std::vector<ToolError> &errors);

// Finds and caches the config for each file: --config FILE for all, or the
// nearest .ddplint.yaml above the file.  Thread-safe.
class ConfigResolver {
public:
  explicit ConfigResolver(std::optional<std::string> forced = std::nullopt);
  // Loads (once) the config for `absFile`; on a schema error returns nullptr and
  // appends to `errors` (each broken file is reported once).
  std::shared_ptr<const Config> forFile(const std::string &absFile,
                                        std::vector<ToolError> &errors);

private:
  std::shared_ptr<const Config> load(const std::string &path, std::vector<ToolError> &errors);
  std::optional<std::string> forced_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Config>> byDir_;  // dir -> config (null: broken)
  std::map<std::string, std::shared_ptr<const Config>> byPath_; // file -> config
  std::shared_ptr<const Config> defaults_;
};

// fnmatch-style glob with `**` spanning directories; `*` and `?` stay in one.
bool globMatch(const std::string &pattern, const std::string &path);

} // namespace ddplint::cli
