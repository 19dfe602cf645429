#include "tidy/CheckSupport.h"

namespace ddplint::tidy {

namespace {
struct ListOption {
  const char *name;
  std::vector<std::string> clangfe::UserApi::*field;
};
const ListOption kListOptions[] = {
    {"RankFunctions", &clangfe::UserApi::rankFunctions},
    {"MainProcessFunctions", &clangfe::UserApi::mainProcessFunctions},
    {"CollectiveFunctions", &clangfe::UserApi::collectiveFunctions},
    {"BarrierFunctions", &clangfe::UserApi::barrierFunctions},
    {"CheckpointWriters", &clangfe::UserApi::checkpointWriters},
    {"DataLoaderFactories", &clangfe::UserApi::dataLoaderFactories},
};
} // namespace

std::string joinList(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &i : items)
    out += (out.empty() ? "" : ";") + i;
  return out;
}

// Only the options that rules/catalog.yaml lists for the rule exist for it.
static bool ruleHasOption(std::string_view ruleId, std::string_view option) {
  const core::RuleInfo *rule = core::findRule(ruleId);
  if (!rule)
    return false;
  for (const auto &o : rule->options)
    if (o.name == option)
      return true;
  return false;
}

clangfe::UserApi readUserApi(clang::tidy::ClangTidyCheck::OptionsView &opts,
                             std::string_view ruleId) {
  clangfe::UserApi user;
  for (const auto &o : kListOptions)
    if (ruleHasOption(ruleId, o.name))
      user.*o.field = core::splitList(opts.get(o.name, "").str());
  return user;
}

void storeUserApi(clang::tidy::ClangTidyCheck::OptionsView &opts,
                  clang::tidy::ClangTidyOptions::OptionMap &map, const clangfe::UserApi &user,
                  std::string_view ruleId) {
  for (const auto &o : kListOptions)
    if (ruleHasOption(ruleId, o.name))
      opts.store(map, o.name, joinList(user.*o.field));
}

} // namespace ddplint::tidy
