// NCCL async error handling in PyTorch, as data: the variable ProcessGroupNCCL
// reads per version range, its default and what it does, and what each
// launcher exports.  Filled from rules/nccl-async-error.yaml at build time
// (checks/catalog/gen_catalog.cpp); ddp-launch-env and ddp-async-error-handling
// build their messages from it.  Header-only lookups, so neither the plugin nor
// check-launch links anything new.
#pragma once

#include "ddplint/core/Facts.h"

#include <string>
#include <vector>

namespace ddplint::core {

struct AsyncErrorMode {
  int value = 0;
  std::string name;   // "TearDown"
  bool on = false;    // async error handling is on with this value
  std::string effect; // what it does
};

struct AsyncErrorVersionRange {
  int from = 0, until = 0;                // major*100+minor, [from, until); until 0 = open
  std::vector<std::string> reads;         // the names read, first the one to set
  std::vector<std::string> deprecated;    // also read, with a deprecation warning
  int defaultMode = 0;                    // the value when nothing is set
  std::string source;                     // the PR or release code it is taken from
};

struct LauncherExport {
  std::string id;                     // "torchrun"
  std::string name;                   // "torchrun", "accelerate launch"
  std::vector<std::string> commands;  // spellings in scripts and container commands
  int since = 0;                      // first version where the launcher exports it (0: always)
  bool exportsReadName = false;       // exports the name the version reads, = value
  std::string value;
  int keepsExistingSince = 0;         // from this version an existing value wins (0: always)
  std::string source;
};

struct AsyncErrorFacts {
  std::vector<AsyncErrorMode> modes;
  std::vector<AsyncErrorVersionRange> versions;
  std::vector<LauncherExport> launchers;
  int assumedVersion = 0; // when no version is known
};

const AsyncErrorFacts &builtinAsyncErrorFacts();

// "2.2", "1.13".
inline std::string versionString(int v) {
  return std::to_string(v / 100) + "." + std::to_string(v % 100);
}

// The range `version` falls in; the newest for versions after it, the oldest
// before it.
inline const AsyncErrorVersionRange &asyncErrorRange(const AsyncErrorFacts &f, int version) {
  for (const auto &r : f.versions)
    if (version >= r.from && (r.until == 0 || version < r.until))
      return r;
  return version < f.versions.front().from ? f.versions.front() : f.versions.back();
}

inline const AsyncErrorMode *asyncErrorMode(const AsyncErrorFacts &f, const std::string &value) {
  for (const auto &m : f.modes)
    if (std::to_string(m.value) == value)
      return &m;
  return nullptr;
}

inline const LauncherExport *launcherById(const AsyncErrorFacts &f, const std::string &id) {
  for (const auto &l : f.launchers)
    if (l.id == id)
      return &l;
  return nullptr;
}

// The first version whose range reads `name` as its main (non-deprecated) name.
inline int firstVersionReading(const AsyncErrorFacts &f, const std::string &name) {
  for (const auto &r : f.versions)
    if (!r.reads.empty() && r.reads.front() == name)
      return r.from;
  return 0;
}

// The version the async rule judges, and its wording ("LibTorch 2.0 or newer
// (the headers declare c10d::Backend)").  In rules/AsyncErrorHandling.cpp.
int targetTorchVersion(const TargetVersions &v, const AsyncErrorFacts &facts);
std::string targetTorchVersionText(const TargetVersions &v, const AsyncErrorFacts &facts);

} // namespace ddplint::core
