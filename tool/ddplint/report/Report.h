// The ddplint CLI's output formats for a RunResult: clang-style text, a JSON
// object for scripts, and SARIF 2.1.0 for GitHub code scanning and other SARIF
// viewers.  No Clang types: a finding from any frontend is written the same way.
//
// JSON format (--format=json), version 2 (version 1 called "toolErrors" "errors",
// beside a summary whose "errors" counted error-severity findings).  Keys are written in sorted order;
// paths are relative to ReportOptions::baseDir when under it, else absolute.
//   {
//     "version": 2,
//     "tool": {"name": "ddplint", "version": "<x.y.z>"},
//     "findings": [{
//       "rule": "ddp-...", "severity": "error"|"warning"|"note",
//       "message": "...", "file": "...", "line": N, "column": N,
//       "sourceLine": "...",                      // the flagged line's text
//       "notes": [{"file", "line", "column", "message"}],
//       "fixes": [{"file", "offset", "length", "replacement",
//                  "line", "column", "endLine", "endColumn"}],
//       "fingerprint": "..."                       // see Baseline.h; "" if not computed
//     }],
//     "toolErrors": [{"file": "..."|null, "line": N, "column": N, "message": "..."}],
//     "skipped": [{"file": "...", "reason": "..."}],
//     "analysisLimits": [{"file", "line", "column", "message"}], // where a finding may be missing
//     "summary": {"findings": N, "errors": N, "warnings": N, "notes": N,  // findings by severity
//                 "toolErrors": N, "analysisLimits": N, "suppressedByBaseline": N,
//                 "filesAnalyzed": N, "filesSkipped": N}
//   }
// "line"/"column" are 1-based, columns count bytes; 0 means "not known" (a
// tool error about a whole file or about no file).
#pragma once

#include "Finding.h"

#include "ddplint/core/Catalog.h"

#include "llvm/Support/JSON.h"

#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace ddplint::cli {

// The version every output format reports unless told otherwise: the project
// version at build time (DDPLINT_VERSION).
const char *toolVersion();

struct ReportOptions {
  // Text and JSON print paths relative to this directory when they are under
  // it (the user's working directory: relative paths are what users expect),
  // else absolute.  Empty: absolute paths.
  std::string baseDir;
  // SARIF's %SRCROOT% (the project root): result URIs are relative to it.
  // Empty: baseDir.  Both empty: absolute file:// URIs (valid SARIF, but
  // GitHub cannot map them to the repository).
  std::string sourceRoot;
  bool color = false; // ANSI colours in the text format, as clang does them
  std::string version = toolVersion();
  std::string informationUri; // SARIF tool.driver.informationUri; omitted when empty
  // When set, each SARIF rule gets helpUri = docsBaseUri + "<rule-id>.md"
  // (e.g. the repository's docs/checks/ folder on its forge).
  std::string docsBaseUri;
};

// One Markdown table cell: '|' escaped, newlines folded into spaces.
std::string markdownCell(const std::string &s);

// `file` relative to `baseDir` when it is inside it, else `file` normalised.
std::string displayPath(std::string_view file, std::string_view baseDir);

// Orders findings by file, line, column, rule, message: the order every writer
// expects for stable output (the writers themselves keep the order given).
void sortFindings(std::vector<Finding> &findings);

// Clang style.  Per finding:
//   path:line:col: error: message [ddp-rule]
//      12 |     pg->allreduce(t);
//         |     ^
//         |     <fix-it text when the fix-it is on this line>
//   path:line:col: note: note message
//   path:line:col: note: fix-it: insert|replace ... (fix-its on other lines)
// Tool errors: `path:line:col: error: message`, `path: error: message` (line
// 0), `ddplint: error: message` (no file).  Analysis limits: `path:line:col:
// note: analysis limit: ...`, after the findings.  No summary: see summaryLine.
void writeText(llvm::raw_ostream &out, const RunResult &result,
               const ReportOptions &options);

// "3 findings (1 error, 2 warnings), 1 suppressed by baseline, 1 tool error,
// 2 files analyzed, analysis limited in 1 function" -- for stderr, after the text or next to a JSON/SARIF file.
// No colour and no newline, whatever `options` says.
std::string summaryLine(const RunResult &result, const ReportOptions &options = {});

llvm::json::Value toJson(const RunResult &result, const ReportOptions &options);
void writeJson(llvm::raw_ostream &out, const RunResult &result,
               const ReportOptions &options);

// SARIF 2.1.0, one run.  Every rule of `rules` is listed in tool.driver.rules
// (plus a stub for any rule id a finding has that `rules` lacks), so GitHub
// shows each alert's help.
llvm::json::Value toSarif(const RunResult &result,
                          const std::vector<core::RuleInfo> &rules,
                          const ReportOptions &options);
// toSarif with core::builtinRules().
void writeSarif(llvm::raw_ostream &out, const RunResult &result,
                const ReportOptions &options);

// The writers above into a string (what the CLI writes to stdout or -o FILE).
std::string renderText(const RunResult &result, const ReportOptions &options);
std::string renderJson(const RunResult &result, const ReportOptions &options);
std::string renderSarif(const RunResult &result, const ReportOptions &options);

// "ddp-divergent-collective" -> "DivergentCollective" (SARIF reportingDescriptor.name).
std::string sarifRuleName(std::string_view ruleId);

// An absolute path as a file:// URI, percent-encoded; a trailing '/' is kept.
std::string fileUri(std::string_view absolutePath);

} // namespace ddplint::cli
