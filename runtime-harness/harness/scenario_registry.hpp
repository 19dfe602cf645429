// Scenario table.  Light on purpose: the supervisor includes it without
// any torch header; only the rank side (scenarios/, rank_main.cpp) sees
// RankCtx's definition.
#pragma once

#include <string>
#include <vector>

namespace ddph {

struct RankCtx;

struct ScenarioDef {
  std::string id;       // must appear in a `harness:` list of rules/catalog.yaml
  std::string title;
  std::string badStory, fixedStory;  // one line each, for `list` and the README
  int minWorld = 2;
  // Bad variant creates its group without a timeout (the c10d default).
  bool badUsesDefaultTimeout = false;
  // Process-group timeout this scenario needs, 0: the harness default.  A
  // scenario about c10d's own timeout sets it short on purpose.
  double pgTimeoutS = 0;
  void (*run)(RankCtx&) = nullptr;
};

std::vector<ScenarioDef>& registry();
const ScenarioDef* findScenario(const std::string& id);

struct ScenarioRegistrar {
  explicit ScenarioRegistrar(ScenarioDef d) { registry().push_back(std::move(d)); }
};

}  // namespace ddph
