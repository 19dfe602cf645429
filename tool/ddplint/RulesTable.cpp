#include "RulesTable.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace ddplint::cli {
namespace {

std::string join(const std::vector<std::string> &v, const char *sep) {
  std::string s;
  for (const auto &e : v)
    s += (s.empty() ? "" : sep) + e;
  return s;
}

// Table cells hold one line: newlines and pipes would break the row.
std::string cell(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += ' ';
    else if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

std::string frontendOf(const core::RuleInfo &r) {
  return r.frontend.empty() ? "clang-tidy" : r.frontend;
}

} // namespace

std::string renderRulesText(const std::vector<core::RuleInfo> &rules) {
  std::string o;
  for (const auto &r : rules) {
    o += r.id + " (" + r.severity + ", " +
         (frontendOf(r) == "launch" ? std::string("ddplint check-launch")
                                    : std::string("C++ checks")) +
         ")\n";
    o += "  summary:    " + r.summary + "\n";
    o += "  trigger:    " + r.trigger + "\n";
    o += "  root cause: " + r.rootCause + "\n";
    o += "  guardrail:  " + r.guardrail + "\n";
    o += "  fix:        " + r.fix + "\n";
    o += "  harness:    " + join(r.harness, ", ") + "\n";
    if (!r.options.empty()) {
      o += "  options:\n";
      for (const auto &opt : r.options)
        o += "    " + opt.name + " (default '" + opt.defaultValue + "'): " + opt.doc + "\n";
    }
    o += "\n";
  }
  return o;
}

std::string renderRulesMarkdown(const std::vector<core::RuleInfo> &rules) {
  std::string o = "| rule | severity | trigger | root cause | guardrail | fix | harness scenario |\n"
                  "|---|---|---|---|---|---|---|\n";
  for (const auto &r : rules) {
    std::vector<std::string> scen;
    scen.reserve(r.harness.size());
    for (const auto &s : r.harness)
      scen.push_back("`" + s + "`");
    o += "| `" + r.id + "` | " + r.severity + " | " + cell(r.trigger) + " | " +
         cell(r.rootCause) + " | " + cell(r.guardrail) + " | " + cell(r.fix) + " | " +
         join(scen, ", ") + " |\n";
  }
  return o;
}

std::string renderRulesJson(const std::vector<core::RuleInfo> &rules) {
  llvm::json::Array arr;
  for (const auto &r : rules) {
    llvm::json::Array harness, options;
    for (const auto &s : r.harness)
      harness.push_back(s);
    for (const auto &opt : r.options)
      options.push_back(
          llvm::json::Object{{"name", opt.name}, {"default", opt.defaultValue}, {"doc", opt.doc}});
    arr.push_back(llvm::json::Object{{"id", r.id},
                                     {"severity", r.severity},
                                     {"frontend", frontendOf(r)},
                                     {"summary", r.summary},
                                     {"trigger", r.trigger},
                                     {"root_cause", r.rootCause},
                                     {"guardrail", r.guardrail},
                                     {"fix", r.fix},
                                     {"harness", std::move(harness)},
                                     {"options", std::move(options)}});
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{{"version", 1},
                                                                    {"rules", std::move(arr)}}));
  os << "\n";
  return s;
}

} // namespace ddplint::cli
