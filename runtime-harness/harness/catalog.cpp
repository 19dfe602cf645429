#include "catalog.hpp"

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

static std::string str(const YAML::Node& n, const char* key) {
  return n[key] && n[key].IsScalar() ? n[key].as<std::string>() : std::string();
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
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  if (!root["rules"] || !root["rules"].IsSequence()) throw std::runtime_error(path + ": no `rules:` list");
  for (const auto& n : root["rules"]) {
    RuleRow r;
    r.id = str(n, "id");
    r.severity = str(n, "severity");
    r.summary = str(n, "summary");
    r.trigger = str(n, "trigger");
    r.rootCause = str(n, "root_cause");
    r.guardrail = str(n, "guardrail");
    r.fix = str(n, "fix");
    if (n["harness"] && n["harness"].IsSequence())
      for (const auto& s : n["harness"]) r.scenarios.push_back(s.as<std::string>());
    if (r.id.empty()) throw std::runtime_error(path + ": a rule without an id");
    c.rules.push_back(std::move(r));
  }
  return c;
}

}  // namespace ddph
