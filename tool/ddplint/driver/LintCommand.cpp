// The lint run: the units (N at a time, sharing precompiled preambles that a
// cache keeps between runs) and the Python files, each into its own result,
// merged in input order so that the report does not depend on scheduling.
#include "Commands.h"

#include "Inputs.h"
#include "PreambleCache.h"
#include "Progress.h"
#include "PythonRunner.h"
#include "RunReport.h"
#include "TidyRunner.h"

#include "clang-frontend/CodeScope.h"

#include <unistd.h>

#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#ifndef DDPLINT_RESOURCE_DIR
#define DDPLINT_RESOURCE_DIR ""
#endif

namespace ddplint::cli {
namespace {

// Runs `work(i)` for i in [0, n) on `jobs` threads (this one included).
template <typename Work> void forEachOnThreads(size_t n, unsigned jobs, const Work &work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < n;)
      work(i);
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(n)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (auto &t : pool)
    t.join();
}

// The shared preambles of a run: the store (the cache folder, or a private
// one with --no-cache) and each unit's plan.  No store with --no-preamble,
// with --analyze-library-code, or when the folder cannot be written.
struct Preambles {
  std::unique_ptr<PreambleStore> store;
  std::vector<PreambleSpec> specs;          // one per unit
  std::map<std::string, unsigned> unitsPerKey;
};

Preambles planPreambles(const Args &a, const Inputs &in, ConfigResolver &configs,
                        const TidyRunOptions &topts) {
  const auto &jobs = in.units;
  Preambles p;
  p.specs.resize(jobs.size());
  auto &store = p.store;
  auto &specs = p.specs;
  auto &unitsPerKey = p.unitsPerKey;
  if (!a.noPreamble && !a.analyzeLibraryCode && !jobs.empty()) {
    std::string cacheDir = a.cacheDir ? absolute(*a.cacheDir) : "";
    bool persistent = !a.noCache;
    uint64_t maxMb = 4096;
    std::vector<ToolError> ignored;
    for (const auto &[f, db] : jobs) { // the first config that says something about the cache
      auto cfg = configs.forFile(f, ignored);
      if (!cfg || (cfg->cacheDir.empty() && !cfg->cacheOff && !cfg->cacheMaxMb))
        continue;
      if (cfg->cacheOff)
        persistent = false;
      if (cacheDir.empty())
        cacheDir = cfg->cacheDir;
      if (cfg->cacheMaxMb)
        maxMb = cfg->cacheMaxMb;
      break;
    }
    if (cacheDir.empty())
      cacheDir = defaultCacheDir();
    store = std::make_unique<PreambleStore>(cacheDir, persistent, maxMb << 20);
    std::string storeError;
    if (!store->ready(storeError)) {
      if (!a.quiet)
        std::cerr << "ddplint: warning: " << storeError
                  << "; parsing every unit whole (--cache-dir DIR or --no-cache)\n";
      store.reset();
    } else {
      PreambleKeyContext kctx;
      kctx.resourceDir = topts.resourceDir;
      kctx.toolIdentity = a.toolIdentity;
      kctx.skipBodies = !a.parseSystemBodies;
      kctx.cacheDir = store->dir();
      for (size_t i = 0; i < jobs.size(); ++i) {
        specs[i] = planPreamble(jobs[i].first, *jobs[i].second, kctx);
        if (specs[i].usable)
          ++unitsPerKey[specs[i].key];
      }
      // Within one run without a cache, a preamble only pays off when shared.
      if (!persistent)
        for (auto &sp : specs)
          if (sp.usable && unitsPerKey[sp.key] < 2)
            sp.usable = false;
    }
  }
  return p;
}

// The C and C++ units, N at a time, each with its preamble when it has one.
std::vector<RunResult> lintUnits(const Args &a, const Inputs &in, ConfigResolver &configs) {
  const auto &jobs = in.units;
  TidyRunOptions topts;
  topts.parseSystemBodies = a.parseSystemBodies;
  topts.analyzeLibraryCode = a.analyzeLibraryCode;
  ddplint::clangfe::setAnalyzeLibraryCode(a.analyzeLibraryCode);
  topts.resourceDir = DDPLINT_RESOURCE_DIR;
  Progress progress(!a.quiet && isatty(STDERR_FILENO), jobs.size());
  // Units with the same leading #includes and flags parse them once, from
  // the cache when an earlier run left them there.
  Preambles pre = planPreambles(a, in, configs, topts);
  auto &store = pre.store;
  const PreambleBuilder builder = [&](const PreambleSpec &spec, const std::string &out,
                                      std::vector<PreambleInput> &inputs, std::string &err) {
    progress.status("preamble shared by " + std::to_string(pre.unitsPerKey[spec.key]) +
                    " unit(s)");
    return buildPreamblePch(spec, out, topts, inputs, err);
  };
  std::vector<RunResult> perFile(jobs.size());
  std::atomic<unsigned> wholeAfterPreamble{0};
  forEachOnThreads(jobs.size(), a.jobs, [&](size_t i) {
    std::optional<PreambleUse> use;
    if (store && pre.specs[i].usable)
      use = store->get(pre.specs[i], builder);
    bool broken = false;
    runChecksOnFile(jobs[i].first, *jobs[i].second, configs, topts, perFile[i],
                    use ? &*use : nullptr, &broken);
    if (broken) {
      store->invalidate(pre.specs[i].key);
      ++wholeAfterPreamble;
    }
    progress.step(jobs[i].first);
  });
  progress.finish();
  if (store) {
    const CacheStats st = store->stats();
    if (a.verbose)
      std::cerr << "ddplint: preambles: " << st.hits << " reused from " << store->dir() << ", "
                << st.built << " built, " << st.rebuilt << " rebuilt (stale or corrupt), "
                << st.failed << " failed (those units parsed whole); " << wholeAfterPreamble
                << " unit(s) parsed whole after failing with one"
                << (store->persistent() ? "" : "; not kept (--no-cache)") << "\n";
    if (a.verbose)
      for (const auto &why : st.rebuiltWhy)
        std::cerr << "ddplint: " << why << "\n";
    store->prune();
  }
  return perFile;
}

// Python files take milliseconds each: the same number of workers, after the units.
std::vector<RunResult> lintPythonFiles(const Args &a, const Inputs &in, ConfigResolver &configs) {
  std::vector<RunResult> perFile(in.python.size());
  forEachOnThreads(in.python.size(), a.jobs,
                   [&](size_t i) { runChecksOnPythonFile(in.python[i], configs, perFile[i]); });
  return perFile;
}

} // namespace

int runLint(const Args &a) {
  RunStart start;
  if (!startRun(a, start))
    return kExitError;
  RunResult result;
  ConfigResolver configs = configsFor(a);
  Databases dbs(a, configs);
  const std::vector<std::string> files = discoverFiles(a, dbs, result);
  Inputs in;
  if (!sortInputs(a, files, configs, dbs, result, in))
    return kExitError;
  std::vector<RunResult> perFile = lintUnits(a, in, configs);
  for (auto &r : lintPythonFiles(a, in, configs))
    perFile.push_back(std::move(r));
  for (auto &r : perFile) {
    for (auto &f : r.findings)
      result.findings.push_back(std::move(f));
    for (auto &e : r.errors)
      result.errors.push_back(std::move(e));
    result.filesAnalyzed += r.filesAnalyzed;
    for (auto &s : r.skipped)
      result.skipped.push_back(std::move(s));
    for (auto &l : r.analysisLimits)
      result.analysisLimits.push_back(std::move(l));
  }
  if (a.analyzeLibraryCode)
    std::cerr << "ddplint: analysed " << ddplint::clangfe::functionsAnalysed()
              << " function bodies (library code included)\n";
  return finishRun(a, result, start.root, start.baseline);
}

} // namespace ddplint::cli
