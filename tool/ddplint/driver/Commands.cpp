// The subcommands that do not parse programs: check-launch (launch files),
// cache (the preamble cache), rules (the catalog as a table).
#include "Commands.h"

#include "clang-frontend/UnitSummary.h"
#include "python-frontend/PyProject.h"

#include "Config.h"
#include "PreambleCache.h"
#include "RulesTable.h"
#include "RunReport.h"

#include "ddplint/core/Catalog.h"
#include "ddplint/launch/LaunchCheck.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace ddplint::cli {

int runCheckLaunch(const Args &a) {
  RunStart start;
  if (!startRun(a, start))
    return kExitError;
  RunResult result;
  ConfigResolver configs = configsFor(a);
  ddplint::launch::Options cliVersion;
  if (a.torchVersionGiven && !ddplint::launch::parseTorchVersion(a.torchVersion, cliVersion))
    usageError("--torch-version takes MAJOR.MINOR[.PATCH], e.g. 2.3, not '" + a.torchVersion +
               "'");

  std::vector<std::string> files;
  for (const auto &p : a.paths) {
    const std::string abs = absolute(p);
    std::error_code ec;
    if (fs::is_directory(abs, ec)) {
      for (auto it = fs::recursive_directory_iterator(abs, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string ext = it->path().extension().string();
        if (it->is_regular_file(ec) && (ext == ".yaml" || ext == ".yml" || ext == ".sh" ||
                                        ext == ".sbatch" || ext == ".slurm"))
          files.push_back(absolute(it->path().string()));
      }
      std::sort(files.begin(), files.end());
      continue;
    }
    files.push_back(abs); // a missing file is reported by the checker
  }

  for (const auto &f : files) {
    auto cfg = configs.forFile(f, result.errors);
    if (!cfg || cfg->excluded(f))
      continue;
    auto setting = cfg->rules.find(ddplint::launch::kRuleId);
    if (setting != cfg->rules.end() && !setting->second.enabled)
      continue;
    ddplint::launch::Options opts = cliVersion;
    if (!a.torchVersionGiven && !cfg->torchVersion.empty()) {
      opts.versionSource = "launch.torch_version of " + fs::path(cfg->path).filename().string();
      if (!ddplint::launch::parseTorchVersion(cfg->torchVersion, opts)) {
        result.errors.push_back(fileError(cfg->path, "launch.torch_version '" + cfg->torchVersion +
                                                         "' is not MAJOR.MINOR[.PATCH]"));
        continue;
      }
    }
    auto policyOption = cfg->checkOptions.find("ddp-launch-env.RequireExplicitSetting");
    opts.requireExplicit = !a.noPolicy && (policyOption == cfg->checkOptions.end() ||
                                           (policyOption->second != "false" &&
                                            policyOption->second != "0" &&
                                            policyOption->second != "off"));
    ddplint::launch::Result r = ddplint::launch::checkLaunchFile(f, opts);
    ++result.filesAnalyzed;
    // What was not checked: always in JSON and with --explain; otherwise only
    // what deserves attention (a Helm template that could not be read).
    for (const auto &sk : r.skipped)
      if (a.explain || a.format == "json" || sk.visible)
        result.skipped.emplace_back(
            absolute(sk.file),
            (sk.line ? std::to_string(sk.line) + ":" + std::to_string(sk.column) + ": " : "") +
                sk.what + ": " + sk.reason);
    for (const auto &lf : r.findings) {
      Finding out;
      out.ruleId = lf.ruleId;
      out.severity = lf.level == ddplint::launch::Level::Policy ? Severity::Note
                     : setting != cfg->rules.end()              ? setting->second.severity
                                                                : Severity::Warning;
      out.message = lf.message;
      out.location = {absolute(lf.file), lf.line, lf.column};
      out.sourceLine = lineOf(out.location.file, lf.line);
      result.findings.push_back(std::move(out));
    }
    for (const auto &le : r.errors) {
      ToolError e;
      e.location = {absolute(le.file), le.line, le.column};
      e.message = le.message;
      result.errors.push_back(std::move(e));
    }
  }
  return finishRun(a, result, start.root, start.baseline);
}

int runCache(const Args &a) {
  std::string dir = a.cacheDir ? absolute(*a.cacheDir) : "";
  if (dir.empty()) { // the cache: key of the config above the cwd
    std::error_code ec;
    ConfigResolver configs = configsFor(a);
    std::vector<ToolError> errors;
    auto cfg = configs.forFile((fs::current_path(ec) / "x.cpp").string(), errors);
    if (cfg && !cfg->cacheDir.empty())
      dir = cfg->cacheDir;
  }
  if (dir.empty())
    dir = defaultCacheDir();
  const clangfe::SummaryStore summaries(clangfe::summaryFolder(dir));
  if (a.paths[0] == "clear") {
    std::string err;
    unsigned n = summaries.clear(err);
    n += clearCache(dir, err);
    n += pyfe::PyProject::clearCallerCache(dir, err);
    std::cout << "ddplint: removed " << n << " file(s) from " << dir << "\n";
    if (!err.empty()) {
      std::cerr << "ddplint: error: " << err << "\n";
      return kExitError;
    }
    return kExitClean;
  }
  const CacheSummary s = summarizeCache(dir);
  std::uint64_t summaryBytes = 0;
  const size_t nSummaries = summaries.count(&summaryBytes);
  std::uint64_t pythonBytes = 0;
  const size_t nPython = pyfe::PyProject::callerCacheEntries(dir, &pythonBytes);
  std::cout << "cache folder: " << dir << "\n"
            << "preambles:    " << s.entries << "\n"
            << "summaries:    " << nSummaries << " (one per translation unit, "
            << (summaryBytes + 1023) / 1024 << " KiB)\n"
            << "python:       " << nPython << " (one per importing module, "
            << (pythonBytes + 1023) / 1024 << " KiB)\n"
            << "incomplete:   " << s.incomplete << " (temporaries or entries without manifest)\n"
            << "size:         " << (s.bytes + (1 << 19)) / (1 << 20) << " MiB (" << s.bytes
            << " bytes)\n";
  return kExitClean;
}

int runRules(const Args &a) {
  const auto &rules = ddplint::core::builtinRules();
  if (a.format == "json") {
    std::cout << renderRulesJson(rules);
  } else if (a.format == "markdown") {
    std::cout << renderRulesMarkdown(rules);
  } else {
    std::cout << renderRulesText(rules);
  }
  return kExitClean;
}

} // namespace ddplint::cli
