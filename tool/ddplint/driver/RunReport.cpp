#include "RunReport.h"

#include "Fixes.h"
#include "Report.h"

#include <unistd.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <tuple>

namespace fs = std::filesystem;

namespace ddplint::cli {
namespace {

void dedupe(std::vector<Finding> &findings) {
  // A finding in a header is seen by every translation unit that includes it.
  std::set<std::tuple<std::string, std::string, unsigned, unsigned, std::string>> seen;
  std::vector<Finding> out;
  for (auto &f : findings)
    if (seen.insert({f.ruleId, f.location.file, f.location.line, f.location.column, f.message})
            .second)
      out.push_back(std::move(f));
  sortFindings(out);
  findings = std::move(out);
}

// One entry per place and message (ToolError, Note).
template <class T> void dedupeByPlace(std::vector<T> &items) {
  std::set<std::tuple<std::string, unsigned, unsigned, std::string>> seen;
  std::vector<T> out;
  for (auto &i : items)
    if (seen.insert({i.location.file, i.location.line, i.location.column, i.message}).second)
      out.push_back(std::move(i));
  items = std::move(out);
}

// A header that does not compile breaks every translation unit including it.
void dedupeErrors(std::vector<ToolError> &errors) { dedupeByPlace(errors); }

// A function in a header is analysed in every unit that includes it, and each
// path rule of a unit meets the same limit: one note each, in file order.
void dedupeLimits(std::vector<Note> &limits) {
  dedupeByPlace(limits);
  std::stable_sort(limits.begin(), limits.end(), [](const Note &x, const Note &y) {
    return std::tie(x.location.file, x.location.line, x.location.column) <
           std::tie(y.location.file, y.location.line, y.location.column);
  });
}

} // namespace

static bool preloadBaseline(const Args &a, std::optional<Baseline> &out);

bool startRun(const Args &a, RunStart &out) {
  out.root = a.root ? absolute(*a.root) : defaultRoot();
  return preloadBaseline(a, out.baseline);
}

ConfigResolver configsFor(const Args &a) {
  return ConfigResolver(a.configFile ? std::optional<std::string>(absolute(*a.configFile))
                                     : std::nullopt);
}

static bool preloadBaseline(const Args &a, std::optional<Baseline> &out) {
  if (!a.baseline)
    return true;
  Baseline b;
  std::string err;
  if (!loadBaseline(*a.baseline, b, err)) {
    std::cerr << err << "\nddplint: not linting: fix or regenerate the baseline "
                        "(--write-baseline)\n";
    return false;
  }
  out = std::move(b);
  return true;
}

std::string lineOf(const std::string &path, unsigned line) {
  std::ifstream in(path, std::ios::binary);
  std::string s;
  for (unsigned i = 1; std::getline(in, s); ++i)
    if (i == line) {
      if (!s.empty() && s.back() == '\r')
        s.pop_back();
      return s;
    }
  return "";
}

int finishRun(const Args &a, RunResult &result, const std::string &root,
              const std::optional<Baseline> &baseline) {
  dedupe(result.findings);
  dedupeErrors(result.errors);
  dedupeLimits(result.analysisLimits);
  computeFingerprints(result.findings, root);

  if (a.writeBaseline) {
    std::string err;
    if (!writeBaseline(*a.writeBaseline, result.findings, root, err))
      result.errors.push_back(fileError(*a.writeBaseline, err));
    else if (!a.quiet)
      std::cerr << "ddplint: recorded " << result.findings.size() << " finding(s) in "
                << *a.writeBaseline << "\n";
  }
  if (baseline)
    result.suppressedByBaseline = applyBaseline(result.findings, *baseline);
  if (a.fix) {
    FixSummary fx = applyFixes(result.findings);
    for (auto &e : fx.errors)
      result.errors.push_back(std::move(e));
    if (!a.quiet)
      std::cerr << "ddplint: applied " << fx.applied << " fix-it edit(s) in " << fx.files
                << " file(s)\n";
  }

  ReportOptions ro;
  std::error_code ec;
  // --root: every format names files relative to it (as baselines do), so
  // reports from two working folders agree; else relative to the cwd, as a
  // compiler does.
  ro.baseDir = a.root ? root : fs::current_path(ec).string();
  ro.sourceRoot = root;
  ro.color = a.color == "always" ||
             (a.color == "auto" && !a.outputFile && isatty(STDOUT_FILENO) && a.format == "text");
  const std::string report = a.format == "json"    ? renderJson(result, ro)
                             : a.format == "sarif" ? renderSarif(result, ro)
                                                   : renderText(result, ro);
  if (a.outputFile) {
    std::ofstream out(*a.outputFile, std::ios::binary | std::ios::trunc);
    out << report;
    if (!out) {
      std::cerr << "ddplint: error: cannot write " << *a.outputFile << "\n";
      return kExitError;
    }
  } else {
    std::cout << report << std::flush;
  }
  if (!a.quiet) {
    for (const auto &[file, why] : result.skipped)
      std::cerr << "ddplint: skipped " << fs::path(file).lexically_proximate(ro.baseDir).string()
                << ": " << why << "\n";
    std::cerr << "ddplint: " << summaryLine(result) << "\n";
  }

  if (!result.errors.empty())
    return kExitError;
  if (a.writeBaseline)
    return kExitClean; // recording a baseline is not a gate
  Severity threshold;
  if (a.failOn == "never" || !parseSeverity(a.failOn, threshold))
    return kExitClean;
  for (const auto &f : result.findings)
    if (f.severity >= threshold)
      return kExitFindings;
  return kExitClean;
}

} // namespace ddplint::cli
