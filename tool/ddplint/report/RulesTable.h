// `ddplint rules`: the catalog as the decision table of incidents (trigger,
// root cause, guardrail, fix, harness scenario), from the compiled rules/.
#pragma once

#include "ddplint/core/Catalog.h"

#include <string>
#include <vector>

namespace ddplint::cli {

std::string renderRulesText(const std::vector<core::RuleInfo> &rules);
std::string renderRulesMarkdown(const std::vector<core::RuleInfo> &rules);
std::string renderRulesJson(const std::vector<core::RuleInfo> &rules);

} // namespace ddplint::cli
