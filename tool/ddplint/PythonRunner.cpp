#include "PythonRunner.h"

#include "LaunchFiles.h"

#include "python-frontend/PythonLinter.h"

#include "ddplint/core/Catalog.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace ddplint::cli {
namespace {

std::set<std::string> optionSet(const Config &cfg, const std::string &key) {
  std::set<std::string> out;
  for (const auto &[name, value] : cfg.checkOptions) {
    auto dot = name.rfind('.');
    if (dot == std::string::npos || name.substr(dot + 1) != key)
      continue;
    for (const auto &v : core::splitList(value))
      out.insert(v);
  }
  return out;
}

// One search of the project's launch files per run, shared by all jobs.
LaunchFiles &launchFiles() {
  static LaunchFiles files;
  return files;
}

std::string lineText(const std::string &src, unsigned line) {
  size_t b = 0;
  for (unsigned l = 1; l < line; ++l) {
    b = src.find('\n', b);
    if (b == std::string::npos)
      return "";
    ++b;
  }
  size_t e = src.find('\n', b);
  return src.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

} // namespace

bool isPythonFile(const std::string &path) { return fs::path(path).extension() == ".py"; }

int parseTorchVersionNumber(const std::string &text) {
  int major = 0, minor = 0;
  char dot = 0;
  std::istringstream in(text);
  if (!(in >> major >> dot >> minor) || dot != '.' || major < 1 || minor < 0)
    return 0;
  return major * 100 + minor;
}

void runChecksOnPythonFile(const std::string &absFile, ConfigResolver &configs, RunResult &out) {
  std::ifstream in(absFile, std::ios::binary);
  if (!in) {
    out.errors.push_back(fileError(absFile, "cannot read the file"));
    return;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string src = ss.str();

  std::shared_ptr<const Config> cfg = configs.forFile(absFile, out.errors);
  if (!cfg)
    return;
  pyfe::PyOptions opts;
  for (const auto &[id, setting] : cfg->rules) {
    const core::RuleInfo *r = core::findRule(id);
    if (!setting.enabled || !r)
      continue;
    for (const auto &l : r->languages)
      if (l == "python")
        opts.rules.insert(id);
  }
  if (opts.rules.empty()) {
    out.skipped.emplace_back(absFile, "no enabled check applies to Python");
    return;
  }
  opts.torchVersion = parseTorchVersionNumber(cfg->torchVersion);
  opts.rankFunctions = optionSet(*cfg, "RankFunctions");
  opts.mainProcessFunctions = optionSet(*cfg, "MainProcessFunctions");
  opts.collectiveFunctions = optionSet(*cfg, "CollectiveFunctions");
  opts.barrierFunctions = optionSet(*cfg, "BarrierFunctions");
  opts.checkpointWriters = optionSet(*cfg, "CheckpointWriters");
  auto rb = cfg->checkOptions.find("ddp-rank0-io-barrier.RequireBarrierBefore");
  if (rb != cfg->checkOptions.end())
    opts.requireBarrierBefore = !(rb->second == "false" || rb->second == "0");

  auto dt = cfg->checkOptions.find("ddp-init-timeout.DefaultTimeoutSeconds");
  if (dt != cfg->checkOptions.end())
    opts.defaultTimeoutSeconds = std::atoi(dt->second.c_str());
  // The launch files that start this script give it their environment; the
  // frontend asks only for a program that alone leaves async error handling
  // off, so a run searches a project's launch files only when one needs them.
  std::vector<launch::LaunchedProcess> launches;
  opts.launchEnvironment = [&](std::vector<pyfe::PyOptions::LaunchVariable> &env, bool &open) {
    launch::Options lo;
    if (!launch::parseTorchVersion(cfg->torchVersion, lo))
      lo = launch::Options{};
    const LaunchFiles::Root root = cfg->path.empty() ? LaunchFiles::projectRoot(absFile)
                                                     : LaunchFiles::Root{cfg->dir, false};
    launches = launchFiles().launchesOf(absFile, root, lo);
    for (const auto &p : launches) {
      for (const auto &v : p.env)
        env.push_back({v.name, v.value, v.valueKnown});
      open |= p.mayInherit;
    }
    return !launches.empty();
  };
  pyfe::PyLintResult res = pyfe::lintPython(src, opts);
  if (res.parserFailed) {
    out.errors.push_back(fileError(
        absFile, "the Python grammar does not load into this tree-sitter runtime (ABI mismatch)"));
    return;
  }
  ++out.filesAnalyzed;
  for (const auto &e : res.syntaxErrors) {
    ToolError te;
    te.location = {absFile, e.line, e.column};
    te.message = "Python syntax error; findings in the rest of the file are still reported";
    out.errors.push_back(te);
    break; // one error per file: the first is the one to fix
  }
  for (const auto &d : res.diagnostics) {
    Finding f;
    f.ruleId = d.rule;
    auto it = cfg->rules.find(d.rule);
    f.severity = it != cfg->rules.end() ? it->second.severity : Severity::Warning;
    f.message = d.message;
    f.location = {absFile, d.pos.line, d.pos.column};
    for (const auto &n : d.notes)
      f.notes.push_back({{absFile, n.pos.line, n.pos.column}, n.message});
    for (const auto &e : d.fixes) {
      Edit ed;
      ed.file = absFile;
      ed.offset = e.offset;
      ed.length = e.length;
      ed.replacement = e.replacement;
      ed.line = e.start.line;
      ed.column = e.start.column;
      ed.endLine = e.end.line;
      ed.endColumn = e.end.column;
      f.fixes.push_back(ed);
    }
    if (d.launchesAsked)
      for (const auto &p : launches) { // where else it could be set, and how it is
        std::string how = "launched here without it: set it here or in the program";
        for (const auto &v : p.env)
          if (v.valueKnown && v.value == "0" && d.message.find(v.name) != std::string::npos)
            how = "launched here with " + v.name + "=0";
        f.notes.push_back({{p.file, p.line, p.column}, how});
      }
    f.sourceLine = lineText(src, d.pos.line);
    out.findings.push_back(std::move(f));
  }
}

} // namespace ddplint::cli
