#include "Config.h"

#include "ddplint/core/Catalog.h"
#include "ddplint/core/Rules.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace ddplint::cli {
namespace {

// Wrapper kinds of .ddplint.yaml and the check option each one feeds.  Every
// rule that has the option in rules/catalog.yaml receives the list, so one
// `barriers:` entry reaches all the checks that reason about barriers.
struct WrapperKey {
  const char *key;
  const char *option;
};
const WrapperKey kWrappers[] = {
    {"rank_sources", "RankFunctions"},
    {"main_process", "MainProcessFunctions"},
    {"barriers", "BarrierFunctions"},
    {"collectives", "CollectiveFunctions"},
    {"checkpoint_writers", "CheckpointWriters"},
    {"data_loader_factories", "DataLoaderFactories"},
};

struct Parser {
  const std::string &file;
  std::vector<ToolError> &errors;

  void error(const YAML::Mark &m, const std::string &msg) {
    ToolError e;
    e.location.file = file;
    e.location.line = m.line >= 0 ? static_cast<unsigned>(m.line + 1) : 0;
    e.location.column = m.column >= 0 ? static_cast<unsigned>(m.column + 1) : 0;
    e.message = msg;
    errors.push_back(std::move(e));
  }

  bool scalar(const YAML::Node &n, const std::string &what) {
    if (n.IsScalar())
      return true;
    error(n.Mark(), what + " must be a string");
    return false;
  }

  std::vector<std::string> list(const YAML::Node &n, const std::string &what) {
    std::vector<std::string> out;
    if (n.IsScalar()) { // `barriers: dist::sync_all` reads as a one-element list
      out.push_back(n.as<std::string>());
      return out;
    }
    if (!n.IsSequence()) {
      error(n.Mark(), what + " must be a list of strings");
      return out;
    }
    for (const auto &e : n)
      if (scalar(e, "each entry of " + what))
        out.push_back(e.as<std::string>());
    return out;
  }
};

std::string knownRules() {
  std::string s;
  for (const auto &r : core::builtinRules())
    s += (s.empty() ? "" : ", ") + r.id;
  return s;
}

} // namespace

bool Config::clangTidyRule(const std::string &id) const {
  const core::RuleSpec *r = core::findRuleSpec(id);
  return r && r->definition && (r->appliesTo("c") || r->appliesTo("c++"));
}

std::string Config::checksGlob() const {
  std::string glob = "-*";
  for (const auto &[id, s] : rules)
    if (s.enabled && clangTidyRule(id))
      glob += "," + id;
  return glob;
}

bool Config::excluded(const std::string &absPath) const {
  if (excludes.empty())
    return false;
  std::string rel = absPath;
  if (!dir.empty()) {
    fs::path r = fs::path(absPath).lexically_relative(dir);
    if (r.empty() || *r.begin() == "..")
      return false; // excludes only cover the config's own tree
    rel = r.generic_string();
  }
  for (const auto &g : excludes)
    if (globMatch(g, rel))
      return true;
  return false;
}

Config defaultConfig() {
  Config c;
  for (const auto &r : core::builtinRules()) {
    RuleSetting s;
    parseSeverity(r.severity, s.severity);
    c.rules[r.id] = s;
  }
  return c;
}

bool parseConfig(const std::string &path, const std::string &text, Config &out,
                 std::vector<ToolError> &errors) {
  const size_t before = errors.size();
  out = defaultConfig();
  out.path = path;
  out.dir = fs::path(path).parent_path().string();
  Parser p{path, errors};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException &e) {
    p.error(e.mark, "malformed YAML: " + e.msg);
    return false;
  }
  if (root.IsNull())
    return true; // an empty file means the defaults
  if (!root.IsMap()) {
    p.error(root.Mark(), "the config must be a mapping (keys: version, checks, options, wrappers, "
                         "exclude, launch)");
    return false;
  }
  try {
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    const YAML::Node v = it->second; // a copy: the iterator hands out a temporary
    if (key == "version") {
      if (!v.IsScalar() || v.as<std::string>() != "1")
        p.error(v.Mark(), "unsupported config version (this ddplint reads version 1)");
    } else if (key == "checks") {
      // rule id (or glob over ids) -> severity | off.  Later entries win, so
      // `ddp-*: off` followed by one id enables just that one.
      if (!v.IsMap()) {
        p.error(v.Mark(), "'checks' must map check names (or globs such as ddp-*) to "
                          "error, warning, note or off");
        continue;
      }
      for (auto c = v.begin(); c != v.end(); ++c) {
        const std::string id = c->first.as<std::string>();
        std::vector<std::string> ids;
        for (const auto &r : core::builtinRules())
          if (globMatch(id, r.id))
            ids.push_back(r.id);
        if (ids.empty()) {
          p.error(c->first.Mark(), "unknown check '" + id + "' (known: " + knownRules() + ")");
          continue;
        }
        if (!p.scalar(c->second, "the setting of '" + id + "'"))
          continue;
        const std::string val = c->second.as<std::string>();
        RuleSetting s;
        if (val == "off" || val == "false" || val == "disabled") {
          s.enabled = false;
        } else if (!parseSeverity(val, s.severity) && val != "on" && val != "true") {
          p.error(c->second.Mark(),
                  "'" + val + "' is not a severity: use error, warning, note or off");
          continue;
        }
        for (const auto &rid : ids) {
          RuleSetting eff = s;
          if (val == "on" || val == "true") // keep the catalog's severity
            eff.severity = out.rules[rid].severity;
          out.rules[rid] = eff;
        }
      }
    } else if (key == "options") {
      if (!v.IsMap()) {
        p.error(v.Mark(), "'options' must map check.Option to a value");
        continue;
      }
      for (auto o = v.begin(); o != v.end(); ++o) {
        const std::string name = o->first.as<std::string>();
        const size_t dot = name.find('.');
        const core::RuleInfo *rule =
            dot == std::string::npos ? nullptr : core::findRule(name.substr(0, dot));
        bool known = false;
        std::string optionsOfRule;
        if (rule)
          for (const auto &ro : rule->options) {
            known |= ro.name == name.substr(dot + 1);
            optionsOfRule += (optionsOfRule.empty() ? "" : ", ") + ro.name;
          }
        if (!known) {
          p.error(o->first.Mark(),
                  "unknown option '" + name + "'" +
                      (rule ? " (" + rule->id + " has: " +
                                  (optionsOfRule.empty() ? "no options" : optionsOfRule) + ")"
                            : " (write it as <check>.<Option>, e.g. "
                              "ddp-init-timeout.DefaultTimeoutSeconds)"));
          continue;
        }
        if (o->second.IsSequence()) { // lists are joined into the check-option format
          std::string joined;
          for (const auto &e : p.list(o->second, "'" + name + "'"))
            joined += (joined.empty() ? "" : ";") + e;
          out.checkOptions[name] = joined;
        } else if (p.scalar(o->second, "the value of '" + name + "'")) {
          out.checkOptions[name] = o->second.as<std::string>();
        }
      }
    } else if (key == "wrappers") {
      if (!v.IsMap()) {
        p.error(v.Mark(), "'wrappers' must be a mapping (rank_sources, main_process, barriers, "
                          "collectives, checkpoint_writers, data_loader_factories)");
        continue;
      }
      for (auto w = v.begin(); w != v.end(); ++w) {
        const std::string wk = w->first.as<std::string>();
        const WrapperKey *kind = nullptr;
        for (const auto &k : kWrappers)
          if (wk == k.key)
            kind = &k;
        if (!kind) {
          std::string keys;
          for (const auto &k : kWrappers) {
            if (!keys.empty())
              keys += ", ";
            keys += k.key;
          }
          std::string msg = "unknown wrapper kind '";
          msg += wk;
          msg += "' (known: ";
          msg += keys;
          msg += ")";
          p.error(w->first.Mark(), msg);
          continue;
        }
        std::string joined;
        for (const auto &e : p.list(w->second, "'wrappers." + wk + "'"))
          joined += (joined.empty() ? "" : ";") + e;
        for (const auto &r : core::builtinRules())
          for (const auto &ro : r.options)
            if (ro.name == kind->option) {
              std::string &slot = out.checkOptions[r.id + "." + ro.name];
              slot += (slot.empty() || joined.empty() ? "" : ";") + joined;
            }
      }
    } else if (key == "exclude") {
      out.excludes = p.list(v, "'exclude'");
    } else if (key == "launch") {
      if (!v.IsMap()) {
        p.error(v.Mark(), "'launch' must be a mapping (torch_version)");
        continue;
      }
      for (auto l = v.begin(); l != v.end(); ++l) {
        const std::string lk = l->first.as<std::string>();
        if (lk != "torch_version") {
          p.error(l->first.Mark(), "unknown key 'launch." + lk + "' (known: torch_version)");
          continue;
        }
        if (p.scalar(l->second, "'launch.torch_version'"))
          out.torchVersion = l->second.as<std::string>();
      }
    } else if (key == "torch_version") {
      // The PyTorch version the program runs on: Python has no version.h
      // (ddp-async-error-handling); the same setting as launch.torch_version.
      if (p.scalar(v, "'torch_version'"))
        out.torchVersion = v.as<std::string>();
    } else if (key == "flags") {
      // Compiler flags for files the compile database does not list (or when
      // there is none), as clangd's CompileFlags.Add; relative paths in them
      // are relative to this file's folder.
      out.flags = p.list(v, "'flags'");
      out.hasFlags = true;
    } else if (key == "cache") {
      // cache: DIR | off    or    cache: {dir: DIR, max_size_mb: N}
      if (v.IsScalar()) {
        const std::string c = v.as<std::string>();
        if (c == "off" || c == "false")
          out.cacheOff = true;
        else
          out.cacheDir = (fs::path(out.dir) / c).lexically_normal().string();
      } else if (v.IsMap()) {
        for (auto c = v.begin(); c != v.end(); ++c) {
          const std::string ck = c->first.as<std::string>();
          if (!p.scalar(c->second, "'cache." + ck + "'"))
            continue;
          const std::string cv = c->second.as<std::string>();
          if (ck == "dir") {
            out.cacheDir = (fs::path(out.dir) / cv).lexically_normal().string();
          } else if (ck == "max_size_mb") {
            char *end = nullptr;
            const long long n = std::strtoll(cv.c_str(), &end, 10);
            if (cv.empty() || *end || n < 1)
              p.error(c->second.Mark(), "'cache.max_size_mb' takes a whole number of MiB >= 1");
            else
              out.cacheMaxMb = static_cast<unsigned long long>(n);
          } else if (ck == "enabled") {
            out.cacheOff = cv == "false" || cv == "off" || cv == "no";
          } else {
            p.error(c->first.Mark(),
                    "unknown key 'cache." + ck + "' (known: dir, max_size_mb, enabled)");
          }
        }
      } else {
        p.error(v.Mark(), "'cache' must be a folder, off, or a mapping (dir, max_size_mb, enabled)");
      }
    } else {
      p.error(it->first.Mark(), "unknown key '" + key +
                                    "' (known: version, checks, options, wrappers, exclude, "
                                    "launch, torch_version, flags, cache)");
    }
  }
  } catch (const YAML::Exception &e) { // e.g. a key that is a list, not a string
    p.error(e.mark, e.msg);
  }
  return errors.size() == before;
}

bool loadConfigFile(const std::string &path, Config &out, std::vector<ToolError> &errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ToolError e;
    e.location.file = path;
    e.message = "cannot read the config file";
    errors.push_back(e);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parseConfig(path, ss.str(), out, errors);
}

ConfigResolver::ConfigResolver(std::optional<std::string> forced)
    : forced_(std::move(forced)), defaults_(std::make_shared<Config>(defaultConfig())) {}

std::shared_ptr<const Config> ConfigResolver::load(const std::string &path,
                                                   std::vector<ToolError> &errors) {
  auto it = byPath_.find(path);
  if (it != byPath_.end())
    return it->second;
  auto c = std::make_shared<Config>();
  std::shared_ptr<const Config> result;
  if (loadConfigFile(path, *c, errors))
    result = c;
  byPath_[path] = result;
  return result;
}

std::shared_ptr<const Config> ConfigResolver::forFile(const std::string &absFile,
                                                      std::vector<ToolError> &errors) {
  std::lock_guard<std::mutex> lock(mu_);
  if (forced_)
    return load(*forced_, errors);
  std::vector<std::string> visited;
  std::shared_ptr<const Config> found = defaults_;
  for (fs::path dir = fs::path(absFile).parent_path();; dir = dir.parent_path()) {
    const std::string d = dir.string();
    auto cached = byDir_.find(d);
    if (cached != byDir_.end()) {
      found = cached->second;
      break;
    }
    visited.push_back(d);
    std::error_code ec;
    fs::path candidate = dir / ".ddplint.yaml";
    if (fs::is_regular_file(candidate, ec)) {
      found = load(candidate.string(), errors);
      break;
    }
    if (dir == dir.root_path() || dir.empty())
      break;
  }
  for (const auto &d : visited)
    byDir_[d] = found;
  return found;
}

namespace {
bool matchFrom(const std::string &p, size_t pi, const std::string &s, size_t si) {
  while (pi < p.size()) {
    if (p.compare(pi, 2, "**") == 0) {
      size_t next = pi + 2;
      if (next < p.size() && p[next] == '/')
        ++next; // `**/` also matches no directory at all
      for (size_t k = si; k <= s.size(); ++k)
        if (matchFrom(p, next, s, k))
          return true;
      return false;
    }
    if (p[pi] == '*') {
      for (size_t k = si; k <= s.size(); ++k) {
        if (matchFrom(p, pi + 1, s, k))
          return true;
        if (k < s.size() && s[k] == '/')
          return false;
      }
      return false;
    }
    if (si >= s.size())
      return false;
    if (p[pi] != '?' && p[pi] != s[si])
      return false;
    if (p[pi] == '?' && s[si] == '/')
      return false;
    ++pi;
    ++si;
  }
  return si == s.size();
}
} // namespace

bool globMatch(const std::string &pattern, const std::string &path) {
  if (matchFrom(pattern, 0, path, 0))
    return true;
  // A directory pattern (`third_party/` or `third_party`) covers what is under it.
  std::string dirPattern = pattern;
  if (!dirPattern.empty() && dirPattern.back() == '/')
    dirPattern.pop_back();
  return matchFrom(dirPattern + "/**", 0, path, 0);
}

} // namespace ddplint::cli
