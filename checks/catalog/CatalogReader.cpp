#include "CatalogReader.h"

namespace ddplint::catalog {

namespace yaml {

std::string where(const std::string &file, const YAML::Node &n) {
  const YAML::Mark m = n.Mark();
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

void fail(const std::string &file, const YAML::Node &n, const std::string &msg) {
  throw CatalogError(where(file, n) + ": error: " + msg);
}

YAML::Node load(const std::string &file) {
  try {
    return YAML::LoadFile(file);
  } catch (const YAML::ParserException &e) {
    throw CatalogError(file + ":" + std::to_string(e.mark.line + 1) + ":" +
                       std::to_string(e.mark.column + 1) + ": error: " + e.msg);
  } catch (const YAML::BadFile &) {
    throw CatalogError(file + ": error: cannot open file");
  }
}

YAML::Node need(const std::string &file, const YAML::Node &parent, const char *key,
                YAML::NodeType::value type) {
  YAML::Node n = parent[key];
  if (!n)
    fail(file, parent, std::string("missing key '") + key + "'");
  if (n.Type() != type)
    fail(file, n, std::string("key '") + key + "' has the wrong type");
  return n;
}

std::string str(const std::string &file, const YAML::Node &parent, const char *key) {
  YAML::Node n = need(file, parent, key, YAML::NodeType::Scalar);
  return n.as<std::string>();
}

std::vector<std::string> strList(const std::string &file, const YAML::Node &parent,
                                 const char *key) {
  std::vector<std::string> out;
  YAML::Node n = parent[key];
  if (!n)
    return out;
  if (!n.IsSequence())
    fail(file, n, std::string("key '") + key + "' must be a list");
  for (const auto &e : n) {
    if (!e.IsScalar())
      fail(file, e, std::string("entries of '") + key + "' must be strings");
    out.push_back(e.as<std::string>());
  }
  return out;
}

int intOf(const std::string &file, const YAML::Node &parent, const char *key) {
  YAML::Node n = need(file, parent, key, YAML::NodeType::Scalar);
  try {
    return n.as<int>();
  } catch (const YAML::Exception &) {
    fail(file, n, std::string("key '") + key + "' must be an integer");
  }
}

} // namespace yaml

std::vector<core::RuleInfo> readRules(const std::string &file) {
  using namespace yaml;
  YAML::Node root = load(file);
  if (!root.IsMap())
    fail(file, root, "the catalog must be a mapping with 'version' and 'rules'");
  if (intOf(file, root, "version") != 1)
    fail(file, root["version"], "unsupported catalog version");
  static const char *const kKeys[] = {"id",        "severity", "runner", "languages",
                                      "summary",   "trigger",  "root_cause", "guardrail",
                                      "fix",       "harness",  "options"};
  std::vector<core::RuleInfo> rules;
  for (const auto &r : need(file, root, "rules", YAML::NodeType::Sequence)) {
    if (!r.IsMap())
      fail(file, r, "a rule is a mapping (id, severity, languages, summary, ...)");
    for (const auto &kv : r) {
      const std::string key = kv.first.as<std::string>();
      bool known = false;
      for (const char *k : kKeys)
        known = known || key == k;
      if (!known)
        fail(file, kv.first, "unknown key '" + key + "' in a rule");
    }
    core::RuleInfo out;
    out.id = str(file, r, "id");
    if (out.id.rfind("ddp-", 0) != 0)
      fail(file, r["id"], "rule ids start with 'ddp-'");
    for (const auto &prev : rules)
      if (prev.id == out.id)
        fail(file, r["id"], "duplicate rule id '" + out.id + "'");
    out.severity = str(file, r, "severity");
    if (out.severity != "error" && out.severity != "warning" && out.severity != "note")
      fail(file, r["severity"], "severity must be error, warning or note");
    out.summary = str(file, r, "summary");
    out.trigger = str(file, r, "trigger");
    out.rootCause = str(file, r, "root_cause");
    out.guardrail = str(file, r, "guardrail");
    out.fix = str(file, r, "fix");
    out.runner = "program";
    if (r["runner"]) {
      out.runner = str(file, r, "runner");
      if (out.runner != "program" && out.runner != "launch")
        fail(file, r["runner"], "runner must be program (decided on a program's model: C, C++, "
                                "Python) or launch (launch files), not '" + out.runner + "'");
    }
    out.languages = strList(file, r, "languages");
    if (out.runner == "program" && out.languages.empty())
      fail(file, r, "a program rule lists its 'languages' (c, c++, python)");
    if (out.runner == "launch" && !out.languages.empty())
      fail(file, r["languages"], "a launch rule reads launch files, not 'languages'");
    for (const auto &l : out.languages)
      if (l != "c" && l != "c++" && l != "python")
        fail(file, r["languages"], "languages are c, c++ or python, not '" + l + "'");
    out.harness = strList(file, r, "harness");
    if (out.harness.empty())
      fail(file, r, "every rule names at least one harness scenario");
    for (const auto &o : need(file, r, "options", YAML::NodeType::Sequence)) {
      core::RuleOption opt{str(file, o, "name"), str(file, o, "default"), str(file, o, "doc")};
      for (const auto &prev : out.options)
        if (prev.name == opt.name)
          fail(file, o, "option '" + opt.name + "' is listed twice");
      out.options.push_back(std::move(opt));
    }
    rules.push_back(std::move(out));
  }
  return rules;
}

} // namespace ddplint::catalog
