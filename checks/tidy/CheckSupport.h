// What every ddp check shares: the user's wrapper options and the API matcher.
#pragma once

#include "clang-frontend/ApiMatcher.h"

#include "clang-tidy/ClangTidyCheck.h"

namespace ddplint::tidy {

// Reads the wrapper options (RankFunctions, MainProcessFunctions, ...) that the
// catalog lists for this check; the others stay empty.
clangfe::UserApi readUserApi(clang::tidy::ClangTidyCheck::OptionsView &opts,
                             std::string_view ruleId);
void storeUserApi(clang::tidy::ClangTidyCheck::OptionsView &opts,
                  clang::tidy::ClangTidyOptions::OptionMap &map, const clangfe::UserApi &user,
                  std::string_view ruleId);

// Joins a list back into the option format.
std::string joinList(const std::vector<std::string> &items);

} // namespace ddplint::tidy
