#include "ddplint/core/Catalog.h"

namespace ddplint::core {

const RuleInfo *findRule(std::string_view id) {
  for (const auto &r : builtinRules())
    if (r.id == id)
      return &r;
  return nullptr;
}

std::vector<std::string> splitList(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    size_t b = cur.find_first_not_of(" \t\n");
    size_t e = cur.find_last_not_of(" \t\n");
    if (b != std::string::npos)
      out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : text) {
    if (c == ';' || c == ',')
      flush();
    else
      cur += c;
  }
  flush();
  return out;
}

} // namespace ddplint::core
