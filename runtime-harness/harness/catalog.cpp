#include "catalog.hpp"

#include "CatalogReader.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#ifndef DDP_HARNESS_CATALOG
#define DDP_HARNESS_CATALOG ""
#endif

namespace ddph {

const RuleRow* Catalog::forScenario(const std::string& scenario) const {
  for (const auto& r : rules)
    for (const auto& s : r.scenarios)
      if (s == scenario) return &r;
  return nullptr;
}

Catalog loadCatalog(const std::string& explicitPath) {
  std::vector<std::string> tried;
  std::string path;
  const char* env = std::getenv("DDPLINT_CATALOG");
  std::vector<std::string> candidates;
  if (!explicitPath.empty()) candidates.push_back(explicitPath);  // when given, the only one
  else {
    if (env && *env) candidates.push_back(env);
    candidates.push_back(DDP_HARNESS_CATALOG);
  }
  for (const auto& c : candidates) {
    if (c.empty()) continue;
    tried.push_back(c);
    if (std::ifstream(c).good()) { path = c; break; }
  }
  if (path.empty()) {
    std::string t;
    for (auto& p : tried) t += "\n  " + p;
    throw std::runtime_error("cannot find rules/catalog.yaml; tried:" + (t.empty() ? std::string(" (nothing)") : t) +
                             "\npass --catalog PATH or set DDPLINT_CATALOG");
  }
  Catalog c;
  c.path = path;
  // The same validation as the build's: a broken catalog is an error naming
  // file:line:col, never a verdict quoting half a row.
  std::vector<ddplint::core::RuleInfo> rules;
  try {
    rules = ddplint::catalog::readRules(path);
  } catch (const ddplint::catalog::CatalogError& e) {
    throw std::runtime_error(e.what());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": error: " + e.what());
  }
  for (const auto& info : rules) {
    RuleRow r;
    r.id = info.id;
    r.severity = info.severity;
    r.summary = info.summary;
    r.trigger = info.trigger;
    r.rootCause = info.rootCause;
    r.guardrail = info.guardrail;
    r.fix = info.fix;
    r.scenarios = info.harness;
    c.rules.push_back(std::move(r));
  }
  return c;
}

}  // namespace ddph
