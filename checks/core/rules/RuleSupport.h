// What the rule files share (internal to checks/core/rules).
#pragma once

#include "ddplint/core/Finding.h"
#include "ddplint/core/Rules.h"

#include <algorithm>
#include <string>
#include <vector>

namespace ddplint::core::rules {

// Every rule file defines its rule's RuleDefinition under the rule's name
// (`const RuleDefinition DivergentCollective = ...`); declared here so the
// definition has external linkage and the generated registry finds it.
#define DDPLINT_RULE(ID, NAME) extern const RuleDefinition ID;
#include "ddplint/core/RuleList.inc"
#undef DDPLINT_RULE

inline Finding makeFinding(const char *rule, Loc loc, std::string message) {
  Finding f;
  f.rule = rule;
  f.loc = loc;
  f.message = std::move(message);
  return f;
}

inline bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

inline bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

inline void sortByLoc(std::vector<Finding> &fs) {
  std::sort(fs.begin(), fs.end(), [](const Finding &a, const Finding &b) { return a.loc < b.loc; });
}

} // namespace ddplint::core::rules
