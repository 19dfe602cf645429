// The one reader of rules/: rules/catalog.yaml into validated rule entries,
// and the YAML helpers every reader of rules/*.yaml shares.  The build
// (gen_catalog: the generated tables the checks and the CLI use), the runtime
// harness (its verdict rows) and the tests (gen_catalog --json) all read the
// catalog through it, so a schema error reads the same everywhere:
// "rules/catalog.yaml:12:5: error: ...".
#pragma once

#include "ddplint/core/Catalog.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace ddplint::catalog {

// A schema or read error, its message naming file:line:col.
struct CatalogError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// rules/catalog.yaml, validated: ids (ddp-..., unique), severities, runners
// (`runner: program` (the default) or `launch`), languages (c, c++, python;
// none for launch rules), harness scenarios (at least one), options.
std::vector<core::RuleInfo> readRules(const std::string &file);

namespace yaml {
YAML::Node load(const std::string &file);
std::string where(const std::string &file, const YAML::Node &n);
[[noreturn]] void fail(const std::string &file, const YAML::Node &n, const std::string &msg);
YAML::Node need(const std::string &file, const YAML::Node &parent, const char *key,
                YAML::NodeType::value type);
std::string str(const std::string &file, const YAML::Node &parent, const char *key);
std::vector<std::string> strList(const std::string &file, const YAML::Node &parent,
                                 const char *key);
int intOf(const std::string &file, const YAML::Node &parent, const char *key);
} // namespace yaml

} // namespace ddplint::catalog
