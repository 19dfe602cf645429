#include "Report.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#ifndef DDPLINT_VERSION
#define DDPLINT_VERSION "0.0.0-dev"
#endif

namespace ddplint::cli {

namespace json = llvm::json;

const char *toolVersion() { return DDPLINT_VERSION; }

namespace {

// The escape sequences clang 19 itself emits, so ddplint's output looks the
// same as the clang-tidy output next to it in a CI log.
constexpr const char *kReset = "\033[0m";
constexpr const char *kBold = "\033[1m";
constexpr const char *kErrorColor = "\033[0;1;31m";
constexpr const char *kWarningColor = "\033[0;1;35m";
constexpr const char *kNoteColor = "\033[0;1;36m";
constexpr const char *kCaretColor = "\033[0;1;32m";
constexpr const char *kFixitColor = "\033[0;32m";

const char *severityColor(Severity s) {
  switch (s) {
  case Severity::Error:
    return kErrorColor;
  case Severity::Warning:
    return kWarningColor;
  case Severity::Note:
    return kNoteColor;
  }
  return kNoteColor;
}

std::string normalisedAbsolute(std::string_view path) {
  llvm::SmallString<256> p(path);
  if (p.empty())
    return {};
  // Without a cwd the path stays relative, which displayPath still handles.
  if (!llvm::sys::path::is_absolute(p) && llvm::sys::fs::make_absolute(p))
    p = path;
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  while (p.size() > 1 && p.back() == '/')
    p.pop_back();
  return std::string(p);
}

// `file` relative to `root` (both normalised, absolute), or "" when outside it.
std::optional<std::string> relativeTo(const std::string &file, const std::string &root) {
  if (root.empty() || file.empty())
    return std::nullopt;
  if (root == "/")
    return file.size() > 1 ? std::optional<std::string>(file.substr(1)) : std::nullopt;
  if (file.size() > root.size() && file.compare(0, root.size(), root) == 0 &&
      file[root.size()] == '/')
    return file.substr(root.size() + 1);
  return std::nullopt;
}

std::string locationText(const Location &loc, const std::string &baseDir) {
  std::string s = displayPath(loc.file, baseDir);
  if (loc.line > 0) {
    s += ":" + std::to_string(loc.line);
    if (loc.column > 0)
      s += ":" + std::to_string(loc.column);
  }
  return s;
}

void writeHeader(llvm::raw_ostream &out, const std::string &where, Severity severity,
                 const std::string &message, bool color) {
  if (color)
    out << kBold;
  out << where << ": ";
  if (color)
    out << kReset << severityColor(severity);
  out << severityName(severity) << ": ";
  if (color) {
    out << kReset;
    // Clang prints errors' and warnings' text in bold, notes' in plain.
    if (severity != Severity::Note)
      out << kBold;
  }
  out << message;
  if (color)
    out << kReset;
  out << "\n";
}

unsigned decimalWidth(unsigned n) {
  unsigned w = 1;
  while (n >= 10) {
    n /= 10;
    ++w;
  }
  return w;
}

// A source line as a terminal shows it: tabs expanded to 8 columns, as clang
// does, with the display column of every byte so carets land under the code.
struct DisplayLine {
  std::string text;
  std::vector<unsigned> columnOfByte; // size = bytes + 1
};

DisplayLine displayLine(std::string_view line) {
  DisplayLine d;
  d.columnOfByte.reserve(line.size() + 1);
  unsigned col = 0;
  for (char c : line) {
    d.columnOfByte.push_back(col);
    if (c == '\t') {
      unsigned n = 8 - col % 8;
      d.text.append(n, ' ');
      col += n;
    } else {
      d.text += c;
      // UTF-8 continuation bytes take no column of their own.
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
        ++col;
    }
  }
  d.columnOfByte.push_back(col);
  return d;
}

unsigned displayColumn(const DisplayLine &d, unsigned byteColumn) {
  if (byteColumn == 0)
    return 0;
  size_t i = byteColumn - 1;
  if (i < d.columnOfByte.size())
    return d.columnOfByte[i];
  // Past the end of the line (e.g. a fix-it appended at the newline).
  return d.columnOfByte.back() + static_cast<unsigned>(i - (d.columnOfByte.size() - 1));
}

// A fix-it's text as clang shows code: on lines of its own, never with
// escaped newlines.  Insertions that add a whole line say so.
std::string shownReplacement(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos)
    return "'" + s + "'";
  size_t e = s.find_last_not_of(" \t\r\n");
  std::string core = s.substr(b, e - b + 1);
  const bool ownLine = s.find('\n') != std::string::npos;
  if (core.find('\n') == std::string::npos)
    return "'" + core + "'" + (ownLine ? " on a line of its own" : "");
  // Shown as written, less the indentation every line shares: the inserted
  // `if dist.is_initialized():` and the barrier under it keep their nesting.
  std::vector<std::string> lines;
  size_t from = s.rfind('\n', b);
  from = from == std::string::npos ? 0 : from + 1;
  for (size_t start = from; start <= e;) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos || nl > e)
      nl = e + 1;
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  size_t common = std::string::npos;
  for (const auto &l : lines)
    if (size_t i = l.find_first_not_of(" \t\r"); i != std::string::npos)
      common = std::min(common, i);
  std::string out = "these lines:";
  for (const auto &l : lines)
    out += "\n    " + (common != std::string::npos && l.size() >= common ? l.substr(common) : l);
  return out;
}

bool editOnLine(const Edit &e, const Finding &f) {
  return e.file == f.location.file && e.line == f.location.line &&
         (e.endLine == 0 || e.endLine == e.line) &&
         e.replacement.find('\n') == std::string::npos && !e.replacement.empty() &&
         e.column > 0;
}

std::string fixitNote(const Edit &e) {
  std::string text = "fix-it: ";
  if (e.length == 0)
    return text + "insert " + shownReplacement(e.replacement);
  std::string until = e.endLine ? " up to " + std::to_string(e.endLine) + ":" +
                                      std::to_string(e.endColumn)
                                : " " + std::to_string(e.length) + " bytes";
  if (e.replacement.empty())
    return text + "remove" + until;
  return text + "replace" + until + " with " + shownReplacement(e.replacement);
}

void writeSnippet(llvm::raw_ostream &out, const Finding &f, bool color,
                  std::vector<const Edit *> &otherEdits) {
  std::vector<const Edit *> sameLine;
  for (const Edit &e : f.fixes)
    (editOnLine(e, f) && !f.sourceLine.empty() ? sameLine : otherEdits).push_back(&e);
  if (f.sourceLine.empty() || f.location.line == 0)
    return;

  std::string_view raw = f.sourceLine;
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == '\n'))
    raw.remove_suffix(1);
  DisplayLine d = displayLine(raw);
  const unsigned width = std::max(4u, decimalWidth(f.location.line));
  out.indent(width - decimalWidth(f.location.line) + 1)
      << f.location.line << " | " << d.text << "\n";
  out.indent(width + 2) << "| ";
  if (color)
    out << kCaretColor;
  out.indent(displayColumn(d, f.location.column ? f.location.column : 1)) << "^";
  if (color)
    out << kReset;
  out << "\n";
  for (const Edit *e : sameLine) {
    out.indent(width + 2) << "| ";
    if (color)
      out << kFixitColor;
    out.indent(displayColumn(d, e->column)) << e->replacement;
    if (color)
      out << kReset;
    out << "\n";
  }
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

struct Counts {
  size_t errors = 0, warnings = 0, notes = 0;
};

Counts countSeverities(const std::vector<Finding> &findings) {
  Counts c;
  for (const Finding &f : findings) {
    switch (f.severity) {
    case Severity::Error:
      ++c.errors;
      break;
    case Severity::Warning:
      ++c.warnings;
      break;
    case Severity::Note:
      ++c.notes;
      break;
    }
  }
  return c;
}

json::Value jsonPosition(unsigned n) { return json::Value(static_cast<int64_t>(n)); }

json::Value jsonFile(const std::string &file, const std::string &base) {
  if (file.empty())
    return nullptr;
  return displayPath(file, base);
}

// ---- SARIF ---------------------------------------------------------------

constexpr const char *kSrcRoot = "%SRCROOT%";

// RFC 3986: unreserved characters and '/' stay, everything else is %XX-encoded,
// so paths with spaces, '#' or non-ASCII names stay valid URIs.
std::string percentEncode(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (llvm::isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      static const char *hex = "0123456789ABCDEF";
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

const char *sarifLevel(Severity s) {
  // SARIF's levels happen to be ddplint's severity names.
  return severityName(s);
}

const char *problemSeverity(const std::string &severity) {
  // GitHub's problem.severity: error | warning | recommendation.
  if (severity == "error")
    return "error";
  if (severity == "warning")
    return "warning";
  return "recommendation";
}

std::string sentence(std::string text) {
  // SARIF asks for messages that are complete sentences (validator rule SARIF2001).
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n'))
    text.pop_back();
  if (!text.empty() && text.back() != '.' && text.back() != '!' && text.back() != '?')
    text += '.';
  return text;
}


struct SarifContext {
  std::string root; // normalised absolute source root, or ""

  json::Object artifactLocation(const std::string &file) const {
    std::string abs = normalisedAbsolute(file);
    if (auto rel = relativeTo(abs, root))
      return json::Object{{"uri", percentEncode(*rel)}, {"uriBaseId", kSrcRoot}};
    return json::Object{{"uri", fileUri(abs)}};
  }

  json::Object physicalLocation(const Location &loc, const std::string *sourceLine) const {
    json::Object phys{{"artifactLocation", artifactLocation(loc.file)}};
    if (loc.line > 0) {
      json::Object region{{"startLine", jsonPosition(loc.line)}};
      if (loc.column > 0)
        region["startColumn"] = jsonPosition(loc.column);
      // Without an end, a SARIF region runs to the end of its start line
      // (§3.30.5), so its snippet is the line from the column on, and the
      // whole line is a context only when it is larger than that.
      const unsigned column = std::max(loc.column, 1u);
      if (sourceLine && !sourceLine->empty() && column <= sourceLine->size()) {
        region["snippet"] = json::Object{{"text", sourceLine->substr(column - 1)}};
        if (column > 1)
          phys["contextRegion"] =
              json::Object{{"startLine", jsonPosition(loc.line)},
                           {"snippet", json::Object{{"text", *sourceLine}}}};
      }
      phys["region"] = std::move(region);
    }
    return phys;
  }
};

std::string helpText(const core::RuleInfo &r) {
  std::string s = sentence(r.summary) + "\n\n";
  if (!r.trigger.empty())
    s += "Trigger: " + r.trigger + "\n\n";
  if (!r.rootCause.empty())
    s += "Root cause: " + r.rootCause + "\n\n";
  if (!r.guardrail.empty())
    s += "Guardrail: " + r.guardrail + "\n\n";
  if (!r.fix.empty())
    s += "Fix: " + r.fix + "\n\n";
  if (!r.harness.empty()) {
    s += "Runtime harness scenarios (ddp-harness run <scenario> --variant bad|fixed): " +
         llvm::join(r.harness, ", ") + "\n\n";
  }
  if (!r.options.empty()) {
    s += "Options (.clang-tidy CheckOptions, " + r.id + ".<Name>):\n";
    for (const core::RuleOption &o : r.options)
      s += "  " + o.name + " (default '" + o.defaultValue + "'): " + o.doc + "\n";
  }
  while (!s.empty() && s.back() == '\n')
    s.pop_back();
  return s;
}

std::string helpMarkdown(const core::RuleInfo &r) {
  std::string s = "**" + sentence(r.summary) + "**\n\n";
  if (!r.trigger.empty())
    s += "**Trigger.** " + r.trigger + "\n\n";
  if (!r.rootCause.empty())
    s += "**Root cause.** " + r.rootCause + "\n\n";
  if (!r.guardrail.empty())
    s += "**Guardrail.** " + r.guardrail + "\n\n";
  if (!r.fix.empty())
    s += "**Fix.** " + r.fix + "\n\n";
  if (!r.harness.empty()) {
    std::vector<std::string> quoted;
    quoted.reserve(r.harness.size());
    for (const std::string &h : r.harness)
      quoted.push_back("`" + h + "`");
    s += "**Runtime harness scenarios:** " + llvm::join(quoted, ", ") +
         " (reproduce with `ddp-harness run <scenario> --variant bad`).\n\n";
  }
  if (!r.options.empty()) {
    s += "**Options** (`.clang-tidy` `CheckOptions`, key `" + r.id + ".<Name>`):\n\n";
    s += "| Option | Default | Description |\n|---|---|---|\n";
    for (const core::RuleOption &o : r.options)
      s += "| `" + o.name + "` | " +
           (o.defaultValue.empty() ? std::string("*(empty)*")
                                   : "`" + markdownCell(o.defaultValue) + "`") +
           " | " + markdownCell(o.doc) + " |\n";
  }
  while (!s.empty() && s.back() == '\n')
    s.pop_back();
  return s;
}

json::Object sarifRule(const core::RuleInfo &r, const ReportOptions &options) {
  Severity level = Severity::Warning;
  parseSeverity(r.severity, level);
  json::Object rule{
      {"id", r.id},
      {"name", sarifRuleName(r.id)},
      {"shortDescription", json::Object{{"text", sentence(r.summary)}}},
      {"fullDescription",
       json::Object{{"text", sentence(r.trigger.empty() ? r.summary : r.trigger)}}},
      {"help", json::Object{{"text", helpText(r)}, {"markdown", helpMarkdown(r)}}},
      {"defaultConfiguration", json::Object{{"level", sarifLevel(level)}}},
      {"properties",
       json::Object{{"tags", json::Array{"distributed", "correctness", "ddp"}},
                    {"precision", "high"},
                    {"problem.severity", problemSeverity(r.severity)}}},
  };
  if (!options.docsBaseUri.empty())
    rule["helpUri"] = options.docsBaseUri + r.id + ".md";
  return rule;
}

json::Object sarifFix(const Finding &f, const SarifContext &ctx) {
  // One artifactChange per file, in first-seen order.
  std::vector<std::string> files;
  std::map<std::string, json::Array> replacements;
  for (const Edit &e : f.fixes) {
    std::string file = e.file.empty() ? f.location.file : e.file;
    if (!replacements.count(file))
      files.push_back(file);
    json::Object region;
    if (e.line > 0 && e.column > 0 && e.endLine > 0 && e.endColumn > 0) {
      region = json::Object{{"startLine", jsonPosition(e.line)},
                            {"startColumn", jsonPosition(e.column)},
                            {"endLine", jsonPosition(e.endLine)},
                            {"endColumn", jsonPosition(e.endColumn)}};
    } else {
      region = json::Object{{"charOffset", jsonPosition(e.offset)},
                            {"charLength", jsonPosition(e.length)}};
    }
    json::Object rep{{"deletedRegion", std::move(region)}};
    if (!e.replacement.empty())
      rep["insertedContent"] = json::Object{{"text", e.replacement}};
    replacements[file].push_back(std::move(rep));
  }
  json::Array changes;
  for (const std::string &file : files)
    changes.push_back(json::Object{{"artifactLocation", ctx.artifactLocation(file)},
                                   {"replacements", std::move(replacements[file])}});
  return json::Object{
      {"description", json::Object{{"text", "Apply the " + f.ruleId + " fix-it."}}},
      {"artifactChanges", std::move(changes)}};
}

} // namespace

std::string markdownCell(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string displayPath(std::string_view file, std::string_view baseDir) {
  if (file.empty())
    return {};
  llvm::SmallString<256> p(file);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  if (!llvm::sys::path::is_absolute(p) || baseDir.empty())
    return std::string(p);
  if (auto rel = relativeTo(std::string(p), normalisedAbsolute(baseDir)))
    return *rel;
  return std::string(p);
}

void sortFindings(std::vector<Finding> &findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding &a, const Finding &b) {
    return std::tie(a.location.file, a.location.line, a.location.column, a.ruleId,
                    a.message) < std::tie(b.location.file, b.location.line,
                                          b.location.column, b.ruleId, b.message);
  });
}

void writeText(llvm::raw_ostream &out, const RunResult &result,
               const ReportOptions &options) {
  for (const ToolError &e : result.errors) {
    std::string where = e.location.file.empty()
                            ? std::string("ddplint")
                            : locationText(e.location, options.baseDir);
    writeHeader(out, where, Severity::Error, e.message, options.color);
  }
  for (const Finding &f : result.findings) {
    writeHeader(out, locationText(f.location, options.baseDir), f.severity,
                f.message + " [" + f.ruleId + "]", options.color);
    std::vector<const Edit *> otherEdits;
    writeSnippet(out, f, options.color, otherEdits);
    for (const Note &n : f.notes)
      writeHeader(out, locationText(n.location, options.baseDir), Severity::Note,
                  n.message, options.color);
    for (const Edit *e : otherEdits) {
      Location at{e->file.empty() ? f.location.file : e->file, e->line, e->column};
      writeHeader(out, locationText(at, options.baseDir), Severity::Note, fixitNote(*e),
                  options.color);
    }
  }
  for (const Note &n : result.analysisLimits)
    writeHeader(out, locationText(n.location, options.baseDir), Severity::Note, n.message,
                options.color);
}

std::string summaryLine(const RunResult &result, const ReportOptions &) {
  const size_t n = result.findings.size();
  std::string s = n == 0 ? "no findings" : plural(n, "finding");
  if (n > 0) {
    Counts c = countSeverities(result.findings);
    std::vector<std::string> parts;
    if (c.errors)
      parts.push_back(plural(c.errors, "error"));
    if (c.warnings)
      parts.push_back(plural(c.warnings, "warning"));
    if (c.notes)
      parts.push_back(plural(c.notes, "note"));
    s += " (" + llvm::join(parts, ", ") + ")";
  }
  if (result.suppressedByBaseline)
    s += ", " + std::to_string(result.suppressedByBaseline) + " suppressed by baseline";
  if (!result.errors.empty())
    s += ", " + plural(result.errors.size(), "tool error");
  s += ", " + plural(result.filesAnalyzed, "file") + " analyzed";
  if (!result.skipped.empty())
    s += ", " + std::to_string(result.skipped.size()) + " skipped"; // files, or launch containers
  if (!result.analysisLimits.empty()) {
    std::set<std::pair<std::string, unsigned>> functions; // a function can meet two limits
    for (const Note &n : result.analysisLimits)
      functions.emplace(n.location.file, n.location.line);
    s += ", analysis limited in " + plural(functions.size(), "function");
  }
  return s;
}

// A note, a tool error or an analysis limit: where, and what.
template <class T> json::Value placedMessage(const T &item, const std::string &base) {
  return json::Object{{"file", jsonFile(item.location.file, base)},
                      {"line", jsonPosition(item.location.line)},
                      {"column", jsonPosition(item.location.column)},
                      {"message", item.message}};
}

json::Value toJson(const RunResult &result, const ReportOptions &options) {
  const std::string &base = options.baseDir;
  json::Array findings;
  for (const Finding &f : result.findings) {
    json::Array notes;
    for (const Note &n : f.notes)
      notes.push_back(placedMessage(n, base));
    json::Array fixes;
    for (const Edit &e : f.fixes)
      fixes.push_back(json::Object{{"file", jsonFile(e.file, base)},
                                   {"offset", jsonPosition(e.offset)},
                                   {"length", jsonPosition(e.length)},
                                   {"replacement", e.replacement},
                                   {"line", jsonPosition(e.line)},
                                   {"column", jsonPosition(e.column)},
                                   {"endLine", jsonPosition(e.endLine)},
                                   {"endColumn", jsonPosition(e.endColumn)}});
    findings.push_back(json::Object{{"rule", f.ruleId},
                                    {"severity", severityName(f.severity)},
                                    {"message", f.message},
                                    {"file", jsonFile(f.location.file, base)},
                                    {"line", jsonPosition(f.location.line)},
                                    {"column", jsonPosition(f.location.column)},
                                    {"sourceLine", f.sourceLine},
                                    {"notes", std::move(notes)},
                                    {"fixes", std::move(fixes)},
                                    {"fingerprint", f.fingerprint}});
  }
  json::Array errors;
  for (const ToolError &e : result.errors)
    errors.push_back(placedMessage(e, base));
  json::Array limits;
  for (const Note &n : result.analysisLimits)
    limits.push_back(placedMessage(n, base));
  json::Array skipped;
  for (const auto &[file, why] : result.skipped)
    skipped.push_back(json::Object{{"file", jsonFile(file, base)}, {"reason", why}});
  Counts c = countSeverities(result.findings);
  return json::Object{
      {"version", 2},
      {"tool", json::Object{{"name", "ddplint"}, {"version", options.version}}},
      {"findings", std::move(findings)},
      {"toolErrors", std::move(errors)},
      {"skipped", std::move(skipped)},
      {"analysisLimits", std::move(limits)},
      {"summary",
       json::Object{{"findings", jsonPosition(result.findings.size())},
                    {"errors", jsonPosition(c.errors)},
                    {"warnings", jsonPosition(c.warnings)},
                    {"notes", jsonPosition(c.notes)},
                    {"toolErrors", jsonPosition(result.errors.size())},
                    {"analysisLimits", jsonPosition(result.analysisLimits.size())},
                    {"suppressedByBaseline", jsonPosition(result.suppressedByBaseline)},
                    {"filesAnalyzed", jsonPosition(result.filesAnalyzed)},
                    {"filesSkipped", jsonPosition(result.skipped.size())}}}};
}

void writeJson(llvm::raw_ostream &out, const RunResult &result,
               const ReportOptions &options) {
  out << llvm::formatv("{0:2}", toJson(result, options)) << "\n";
}

std::string sarifRuleName(std::string_view ruleId) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  llvm::StringRef(ruleId.data(), ruleId.size()).split(parts, '-', -1, /*KeepEmpty=*/false);
  std::string name;
  for (size_t i = 0; i < parts.size(); ++i) {
    // The "ddp-" prefix is the module, not part of what the rule is about.
    if (i == 0 && parts[i] == "ddp" && parts.size() > 1)
      continue;
    std::string word = parts[i].str();
    word[0] = llvm::toUpper(word[0]);
    name += word;
  }
  return name;
}

std::string fileUri(std::string_view absolutePath) {
  std::string p(absolutePath);
  if (p.empty() || p[0] != '/')
    p.insert(p.begin(), '/');
  return "file://" + percentEncode(p);
}

json::Value toSarif(const RunResult &result, const std::vector<core::RuleInfo> &rules,
                    const ReportOptions &options) {
  SarifContext ctx;
  ctx.root = normalisedAbsolute(options.sourceRoot.empty() ? options.baseDir
                                                           : options.sourceRoot);

  std::vector<core::RuleInfo> allRules = rules;
  std::map<std::string, size_t> ruleIndex;
  for (size_t i = 0; i < allRules.size(); ++i)
    ruleIndex.emplace(allRules[i].id, i);
  for (const Finding &f : result.findings) {
    if (ruleIndex.count(f.ruleId))
      continue;
    // A rule without a catalog entry (another frontend's, a newer plugin's):
    // GitHub rejects results whose rule has no descriptor or no help.
    core::RuleInfo stub;
    stub.id = f.ruleId;
    stub.severity = severityName(f.severity);
    stub.summary = "Reported by ddplint rule " + f.ruleId;
    stub.trigger = "A finding of " + f.ruleId + ", which has no entry in this ddplint's rule catalog";
    ruleIndex.emplace(stub.id, allRules.size());
    allRules.push_back(std::move(stub));
  }

  json::Array sarifRules;
  for (const core::RuleInfo &r : allRules)
    sarifRules.push_back(sarifRule(r, options));

  json::Array results;
  for (const Finding &f : result.findings) {
    json::Object res{
        {"ruleId", f.ruleId},
        {"ruleIndex", jsonPosition(ruleIndex[f.ruleId])},
        {"level", sarifLevel(f.severity)},
        {"message", json::Object{{"text", sentence(f.message)}}},
        {"locations",
         json::Array{json::Object{
             {"physicalLocation", ctx.physicalLocation(f.location, &f.sourceLine)}}}},
    };
    if (!f.notes.empty()) {
      json::Array related;
      int id = 1;
      for (const Note &n : f.notes)
        related.push_back(
            json::Object{{"id", id++},
                         {"message", json::Object{{"text", sentence(n.message)}}},
                         {"physicalLocation", ctx.physicalLocation(n.location, nullptr)}});
      res["relatedLocations"] = std::move(related);
    }
    if (!f.fixes.empty())
      res["fixes"] = json::Array{sarifFix(f, ctx)};
    if (!f.fingerprint.empty())
      res["partialFingerprints"] = json::Object{{"ddplint/v1", f.fingerprint}};
    results.push_back(std::move(res));
  }

  json::Object invocation{{"executionSuccessful", result.errors.empty()}};
  json::Array notifications;
  for (const ToolError &e : result.errors) {
    json::Object n{{"level", "error"},
                   {"message", json::Object{{"text", sentence(e.message)}}}};
    if (!e.location.file.empty())
      n["locations"] = json::Array{
          json::Object{{"physicalLocation", ctx.physicalLocation(e.location, nullptr)}}};
    notifications.push_back(std::move(n));
  }
  // A limit is not a failure of the run, but a viewer must see where the
  // analysis is partial: SARIF's place for that is a notification.
  for (const Note &l : result.analysisLimits)
    notifications.push_back(json::Object{
        {"level", "note"},
        {"descriptor", json::Object{{"id", "analysis-limit"}}},
        {"message", json::Object{{"text", sentence(l.message)}}},
        {"locations", json::Array{json::Object{
                          {"physicalLocation", ctx.physicalLocation(l.location, nullptr)}}}}});
  if (!notifications.empty())
    invocation["toolExecutionNotifications"] = std::move(notifications);

  json::Object driver{{"name", "ddplint"},
                      {"version", options.version},
                      {"semanticVersion", options.version},
                      {"rules", std::move(sarifRules)}};
  if (!options.informationUri.empty())
    driver["informationUri"] = options.informationUri;

  json::Object run{{"tool", json::Object{{"driver", std::move(driver)}}},
                   {"results", std::move(results)},
                   {"invocations", json::Array{std::move(invocation)}}};
  if (!ctx.root.empty())
    run["originalUriBaseIds"] = json::Object{
        {kSrcRoot, json::Object{{"uri", fileUri(ctx.root == "/" ? "/" : ctx.root + "/")}}}};

  return json::Object{
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs", json::Array{std::move(run)}}};
}

void writeSarif(llvm::raw_ostream &out, const RunResult &result,
                const ReportOptions &options) {
  out << llvm::formatv("{0:2}", toSarif(result, core::builtinRules(), options)) << "\n";
}

} // namespace ddplint::cli

namespace ddplint::cli {

std::string renderText(const RunResult &result, const ReportOptions &options) {
  std::string s;
  llvm::raw_string_ostream os(s);
  writeText(os, result, options);
  os.flush();
  return s;
}

std::string renderJson(const RunResult &result, const ReportOptions &options) {
  std::string s;
  llvm::raw_string_ostream os(s);
  writeJson(os, result, options);
  os.flush();
  return s;
}

std::string renderSarif(const RunResult &result, const ReportOptions &options) {
  std::string s;
  llvm::raw_string_ostream os(s);
  writeSarif(os, result, options);
  os.flush();
  return s;
}

} // namespace ddplint::cli
