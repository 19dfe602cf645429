// What the ddplint CLI reports, independent of where it came from: the clang-tidy
// engine (C and C++ units), the Python linter (.py files; core::Finding turned
// into this one in runners/PythonRunner) or check-launch (launch files).  No
// Clang types, so the writers and baselines share these.
#pragma once

#include <string>
#include <vector>

namespace ddplint::cli {

enum class Severity { Note = 0, Warning = 1, Error = 2 };

const char *severityName(Severity s); // "note" | "warning" | "error"
// "note"/"warning"/"error" -> Severity; false when the text is none of them.
bool parseSeverity(const std::string &text, Severity &out);

// 1-based line and column; column counts bytes, as Clang does.
struct Location {
  std::string file; // absolute, normalised path
  unsigned line = 0;
  unsigned column = 0;
};

// One replacement of a fix-it: bytes [offset, offset+length) of `file` become
// `replacement`.  Line/column give the same range for SARIF and JSON readers.
struct Edit {
  std::string file;
  unsigned offset = 0;
  unsigned length = 0;
  std::string replacement;
  unsigned line = 0, column = 0, endLine = 0, endColumn = 0;
};

struct Note {
  Location location;
  std::string message;
};

struct Finding {
  std::string ruleId; // ddp-...
  Severity severity = Severity::Warning;
  std::string message;
  Location location;
  std::vector<Note> notes;
  std::vector<Edit> fixes; // one fix-it, possibly several edits
  // The text of the flagged source line (without the newline): fingerprints
  // hash it so that a baseline survives unrelated line shifts.
  std::string sourceLine;
  std::string fingerprint; // filled by computeFingerprints (Baseline.h)
};

// A problem that is not a finding: a compile error in a translation unit, a
// file that does not exist, a broken config.  Any of these makes exit code 2.
struct ToolError {
  Location location; // file may be empty (e.g. a usage error); line 0 = whole file
  std::string message;
};

// An error about a whole file (line 0), or about no file when `file` is empty.
ToolError fileError(const std::string &file, std::string message);

struct RunResult {
  std::vector<Finding> findings;
  std::vector<ToolError> errors;
  unsigned filesAnalyzed = 0;
  unsigned suppressedByBaseline = 0;
  // Files not analysed, with why: excluded by a config although named on the
  // command line, or a language no enabled check applies to.  Never counted
  // as "analyzed, no findings".
  std::vector<std::pair<std::string, std::string>> skipped;
  // Functions whose analysis stopped at a limit (paths, call depth): a
  // finding there may be missing.  One per function and kind of limit, at the
  // function, with what was left out.
  std::vector<Note> analysisLimits;
};

} // namespace ddplint::cli
