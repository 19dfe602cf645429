#include "PythonRunner.h"

#include "LaunchFiles.h"

#include "python-frontend/PythonLinter.h"

#include "ddplint/core/Catalog.h"
#include "ddplint/core/Rules.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace fs = std::filesystem;

namespace ddplint::cli {
namespace {

// One search of the project's launch files per run, shared by all jobs.
LaunchFiles &launchFiles() {
  static LaunchFiles files;
  return files;
}

// The folders the run lints (setPythonProjectFolders).
std::vector<std::string> &projectFolders() {
  static std::vector<std::string> folders;
  return folders;
}

// Where the projects keep their callers' calls between runs (setPythonCallerCache).
struct CallerCache {
  std::string folder, identity;
};
CallerCache &callerCache() {
  static CallerCache c;
  return c;
}

std::mutex &projectsMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, std::unique_ptr<pyfe::PyProject>> &projects() {
  static std::map<std::string, std::unique_ptr<pyfe::PyProject>> p;
  return p;
}

// One view of the project's modules per run (and per set of user wrappers,
// which the modules are built with), shared by all jobs.
pyfe::PyProject &projectFor(const core::Wrappers &w) {
  const std::string key = w.key();
  std::lock_guard<std::mutex> lock(projectsMutex());
  auto &slot = projects()[key];
  if (!slot) {
    slot = std::make_unique<pyfe::PyProject>(w, projectFolders());
    if (!callerCache().folder.empty())
      slot->keepCallersIn(callerCache().folder, callerCache().identity);
  }
  return *slot;
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

void setPythonProjectFolders(std::vector<std::string> folders) {
  projectFolders() = std::move(folders);
}

void setPythonCallerCache(const std::string &cacheDir, const std::string &toolIdentity) {
  callerCache().folder = cacheDir.empty() ? "" : pyfe::PyProject::callerCacheFolder(cacheDir);
  callerCache().identity = toolIdentity;
}

PythonCacheUse pythonCallerCacheUse() {
  PythonCacheUse u;
  std::lock_guard<std::mutex> lock(projectsMutex());
  for (const auto &[key, p] : projects()) {
    const auto c = p->callerCacheUse();
    u.reused += c.reused;
    u.analysed += c.analysed;
    u.unwritable += c.unwritable;
  }
  u.folder = callerCache().folder;
  return u;
}

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
  // Each rule's options are read once, from the config, for the registry.
  pyfe::PyOptions opts;
  for (const core::RuleSpec &spec : core::ruleRegistry()) {
    if (!spec.definition || !spec.appliesTo("python"))
      continue;
    core::RuleOptions ro = core::RuleOptions::of(spec.id, [&](std::string_view option) {
      auto it = cfg->checkOptions.find(std::string(spec.name) + "." + std::string(option));
      return it == cfg->checkOptions.end() ? std::nullopt
                                           : std::optional<std::string>(it->second);
    });
    opts.wrappers.merge(core::wrappersOf(ro));
    auto setting = cfg->rules.find(std::string(spec.name));
    if (setting != cfg->rules.end() && setting->second.enabled)
      opts.rules.emplace_back(spec.id, std::move(ro));
  }
  if (opts.rules.empty()) {
    out.skipped.emplace_back(absFile, "no enabled check applies to Python");
    return;
  }
  opts.torchVersion = parseTorchVersionNumber(cfg->torchVersion);
  // The launch files that start this script give it their environment; the
  // rules ask only when they could change their decision, so a run searches a
  // project's launch files only when one needs them.
  launch::Options lo;
  if (!launch::parseTorchVersion(cfg->torchVersion, lo))
    lo = launch::Options{};
  const LaunchFiles::Root root = cfg->path.empty() ? LaunchFiles::projectRoot(absFile)
                                                   : LaunchFiles::Root{cfg->dir, false};
  opts.launchEnvironment = launchFiles().environmentOf(absFile, root, lo);

  opts.project = &projectFor(opts.wrappers);
  opts.path = absFile;
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
  for (size_t i = 0; i < res.findings.size(); ++i) {
    const core::Finding &cf = res.findings[i];
    const pyfe::SourcePos pos = res.position(cf.loc);
    Finding f;
    f.ruleId = cf.rule;
    auto it = cfg->rules.find(cf.rule);
    f.severity = cf.asNote                    ? Severity::Note
                 : it != cfg->rules.end() ? it->second.severity
                                          : Severity::Warning;
    f.message = cf.message;
    f.location = {absFile, pos.line, pos.column};
    for (const auto &n : cf.notes) {
      if (!n.external.file.empty()) {
        f.notes.push_back({{n.external.file, n.external.line, n.external.column}, n.message});
        continue;
      }
      const pyfe::SourcePos np = res.position(n.loc);
      f.notes.push_back({{absFile, np.line, np.column}, n.message});
    }
    for (const auto &e : res.fixes[i])
      f.fixes.push_back(
          {absFile, e.offset, e.length, e.replacement, e.start.line, e.start.column, e.end.line,
           e.end.column});
    f.sourceLine = lineText(src, pos.line);
    out.findings.push_back(std::move(f));
  }
  for (const core::AnalysisNotice &n : res.limits) {
    const pyfe::SourcePos pos = res.position(n.loc);
    out.analysisLimits.push_back({{absFile, pos.line, pos.column}, n.message});
  }
}

} // namespace ddplint::cli
