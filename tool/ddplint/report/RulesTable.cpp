#include "RulesTable.h"

#include "Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace ddplint::cli {

std::string renderRulesText(const std::vector<core::RuleInfo> &rules) {
  std::string o;
  for (const auto &r : rules) {
    o += r.id + " (" + r.severity + ", " +
         (r.runner == "launch" ? std::string("ddplint check-launch")
                               : "programs: " + llvm::join(r.languages, ", ")) +
         ")\n";
    o += "  summary:    " + r.summary + "\n";
    o += "  trigger:    " + r.trigger + "\n";
    o += "  root cause: " + r.rootCause + "\n";
    o += "  guardrail:  " + r.guardrail + "\n";
    o += "  fix:        " + r.fix + "\n";
    o += "  harness:    " + llvm::join(r.harness, ", ") + "\n";
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
    o += "| `" + r.id + "` | " + r.severity + " | " + markdownCell(r.trigger) + " | " +
         markdownCell(r.rootCause) + " | " + markdownCell(r.guardrail) + " | " + markdownCell(r.fix) + " | " +
         llvm::join(scen, ", ") + " |\n";
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
                                     {"runner", r.runner},
                                     {"languages", llvm::json::Array(r.languages)},
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
