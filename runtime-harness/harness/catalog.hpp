// rules/catalog.yaml is the single source of truth for rule ids and the
// decision-table rows that verdicts quote; nothing of it is copied here.
#pragma once

#include <string>
#include <vector>

namespace ddph {

struct RuleRow {
  std::string id, severity, summary, trigger, rootCause, guardrail, fix;
  std::vector<std::string> scenarios;  // the `harness:` list
};

struct Catalog {
  std::string path;
  std::vector<RuleRow> rules;
  const RuleRow* forScenario(const std::string& scenario) const;
};

// Search order: `explicitPath`, $DDPLINT_CATALOG, the path configured at
// build time.  Throws with the list of places tried.
Catalog loadCatalog(const std::string& explicitPath);

}  // namespace ddph
