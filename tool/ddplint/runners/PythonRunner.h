// Runs the ddp rules on one Python file through the Python frontend
// (checks/python-frontend) and turns its diagnostics into ddplint findings,
// with the file's .ddplint.yaml applied as for C++ units.
#pragma once

#include "Config.h"
#include "Finding.h"

#include <string>
#include <vector>

namespace ddplint::cli {

bool isPythonFile(const std::string &path);

// Thread-safe.  A syntax error is a ToolError naming file:line:col; the
// findings the rest of the file allows are still reported.
void runChecksOnPythonFile(const std::string &absFile, ConfigResolver &configs, RunResult &out);

// Folders the run was asked to lint: a Python file that no project marker
// (.git, pyproject.toml, ...) places belongs to the outermost one holding it.
// Call before the first runChecksOnPythonFile.
void setPythonProjectFolders(std::vector<std::string> folders);

// Keep each importer's calls into the project's modules under `cacheDir`
// (PyProject::keepCallersIn); empty: nothing kept.  Call before the first
// runChecksOnPythonFile.
void setPythonCallerCache(const std::string &cacheDir, const std::string &toolIdentity);
struct PythonCacheUse {
  unsigned reused = 0, analysed = 0, unwritable = 0;
  std::string folder;
};
PythonCacheUse pythonCallerCacheUse();

// "1.13" / "2.2.1" -> 113 / 202; 0 when not a version.
int parseTorchVersionNumber(const std::string &text);

} // namespace ddplint::cli
