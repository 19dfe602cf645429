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

bool parseBool(llvm::StringRef value, bool fallback) {
  std::string v = value.lower();
  if (v == "true" || v == "1" || v == "on" || v == "yes")
    return true;
  if (v == "false" || v == "0" || v == "off" || v == "no")
    return false;
  return fallback;
}

std::string joinList(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &i : items)
    out += (out.empty() ? "" : ";") + i;
  return out;
}

bool ruleAppliesTo(std::string_view ruleId, const clang::LangOptions &lo) {
  const core::RuleInfo *rule = core::findRule(ruleId);
  if (!rule || lo.ObjC)
    return false;
  const char *lang = lo.CPlusPlus ? "c++" : "c";
  for (const auto &l : rule->languages)
    if (l == lang)
      return true;
  return false;
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

namespace ddplint::tidy {

using namespace clang;
using namespace clang::ast_matchers;

ModelBasedCheck::ModelBasedCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context,
                                 std::string_view ruleId)
    : ClangTidyCheck(name, context), ruleId_(ruleId) {
  user_ = readUserApi(Options, ruleId_);
}

void ModelBasedCheck::registerMatchers(MatchFinder *finder) {
  finder->addMatcher(translationUnitDecl().bind("tu"), this);
}

void ModelBasedCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) {
  storeUserApi(Options, opts, user_, ruleId_);
}

void ModelBasedCheck::check(const MatchFinder::MatchResult &result) {
  clangfe::ApiMatcher api(core::builtinApi(), user_);
  clangfe::ModelBuilder model(*result.Context, api);
  core::Analyzer analyzer(model.program());
  run(analyzer, model, *result.Context);
}

void ModelBasedCheck::emit(const core::Finding &f, clangfe::ModelBuilder &model,
                           llvm::ArrayRef<FixItHint> fixes) {
  {
    DiagnosticBuilder d = diag(model.locs().get(f.loc), "%0");
    d << f.message;
    for (const auto &fix : fixes)
      d << fix;
  } // the warning is flushed here, so its notes follow it
  for (const auto &n : f.notes)
    diag(model.locs().get(n.loc), "%0", DiagnosticIDs::Note) << n.message;
}

} // namespace ddplint::tidy

namespace ddplint::tidy {

using namespace clang;
using namespace clang::ast_matchers;

FactBasedCheck::FactBasedCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context,
                               std::string_view ruleId)
    : ClangTidyCheck(name, context), ruleId_(ruleId) {
  user_ = readUserApi(Options, ruleId_);
}

void FactBasedCheck::registerMatchers(MatchFinder *finder) {
  finder->addMatcher(translationUnitDecl().bind("tu"), this);
}

void FactBasedCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) {
  storeUserApi(Options, opts, user_, ruleId_);
}

void FactBasedCheck::check(const MatchFinder::MatchResult &result) {
  if (result.Nodes.getNodeAs<TranslationUnitDecl>("tu"))
    runOn(*result.Context);
}

void FactBasedCheck::runOn(ASTContext &ctx) {
  clangfe::ApiMatcher api(core::builtinApi(), user_);
  clangfe::FactsBuilder facts(ctx, api);
  core::Program program;
  run(program, facts, ctx);
}

void FactBasedCheck::emit(const core::Finding &f, clangfe::FactsBuilder &facts,
                          llvm::ArrayRef<FixItHint> fixes) {
  {
    DiagnosticBuilder d = diag(facts.locs().get(f.loc), "%0");
    d << f.message;
    for (const auto &fix : fixes)
      d << fix;
  } // the warning is flushed here, so its notes follow it
  for (const auto &n : f.notes)
    diag(facts.locs().get(n.loc), "%0", DiagnosticIDs::Note) << n.message;
}

} // namespace ddplint::tidy
