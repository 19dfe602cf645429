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
#include "clang-frontend/UnitSummary.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
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

// Where the run keeps what it reuses (preambles, summaries): --cache-dir,
// else the first config that says something about the cache, else the default.
struct CacheSettings {
  std::string dir;
  bool persistent = true;
  uint64_t maxMb = 4096;
};

CacheSettings cacheSettings(const Args &a, const Inputs &in, ConfigResolver &configs) {
  CacheSettings c;
  c.dir = a.cacheDir ? absolute(*a.cacheDir) : "";
  c.persistent = !a.noCache;
  std::vector<ToolError> ignored;
  std::vector<std::string> files;
  files.reserve(in.units.size() + in.python.size());
  for (const auto &[f, db] : in.units)
    files.push_back(f);
  files.insert(files.end(), in.python.begin(), in.python.end());
  for (const auto &f : files) {
    auto cfg = configs.forFile(f, ignored);
    if (!cfg || (cfg->cacheDir.empty() && !cfg->cacheOff && !cfg->cacheMaxMb))
      continue;
    if (cfg->cacheOff)
      c.persistent = false;
    if (c.dir.empty())
      c.dir = cfg->cacheDir;
    if (cfg->cacheMaxMb)
      c.maxMb = cfg->cacheMaxMb;
    break;
  }
  if (c.dir.empty())
    c.dir = defaultCacheDir();
  return c;
}

Preambles planPreambles(const Args &a, const Inputs &in, ConfigResolver &configs,
                        const TidyRunOptions &topts) {
  const auto &jobs = in.units;
  Preambles p;
  p.specs.resize(jobs.size());
  auto &store = p.store;
  auto &specs = p.specs;
  auto &unitsPerKey = p.unitsPerKey;
  if (!a.noPreamble && !a.analyzeLibraryCode && !jobs.empty()) {
    const CacheSettings cs = cacheSettings(a, in, configs);
    const bool persistent = cs.persistent;
    store = std::make_unique<PreambleStore>(cs.dir, persistent, cs.maxMb << 20);
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

// Summaries across units (checks/clang-frontend/UnitSummary.h): the stored
// summaries of every unit of the run's databases are read before any unit is
// linted; each unit linted hands over its own; a unit that called functions
// whose summary it lacked (none yet, or stale) is linted again once this run
// has made them, so a cold run and a warm one report the same.
class RunSummaries {
public:
  RunSummaries(const Args &a, const Inputs &in, ConfigResolver &configs) : verbose_(a.verbose) {
    if (a.analyzeLibraryCode || in.units.empty())
      return;
    const CacheSettings cs = cacheSettings(a, in, configs);
    if (cs.persistent)
      store_.emplace(clangfe::summaryFolder(cs.dir));
    std::set<const clang::tooling::CompilationDatabase *> dbs;
    std::set<std::string> seen;
    for (const auto &[file, db] : in.units) {
      if (seen.insert(file).second)
        units_.push_back(file);
      if (db && dbs.insert(db).second)
        for (const std::string &f : db->getAllFiles())
          if (seen.insert(f).second)
            units_.push_back(f);
    }
    auto index = store_ ? clangfe::SummaryIndex::load(*store_, units_)
                        : std::make_shared<const clangfe::SummaryIndex>();
    for (const auto &u : index->units()) {
      stored_[u->summary.unit] = u->summary;
      stale_ += u->stale;
    }
    read_ = index->size();
    clangfe::setRunSummaries(index);
    clangfe::setSummarySink([this](clangfe::UnitSummary s) {
      std::lock_guard<std::mutex> lock(mu_);
      // A unit's path checks may build its model under several sets of
      // wrappers; the one with the most wrappers stands for the unit.
      auto it = made_.find(s.unit);
      if (it == made_.end() || it->second.configKey.size() < s.configKey.size())
        made_[s.unit] = std::move(s);
    });
    active_ = true;
  }
  ~RunSummaries() {
    if (active_) {
      clangfe::setSummarySink(nullptr);
      clangfe::setRunSummaries(nullptr);
    }
  }
  bool active() const { return active_; }

  // After the first pass: stores what was made, and says which units to lint
  // again (their indexes in `units`) with the index this run now has.
  std::vector<size_t> afterFirstPass(const Inputs &in) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!active_)
      return {};
    std::string err;
    for (const auto &[unit, s] : made_) {
      if (store_ && !store_->save(s, &err) && !warned_) {
        warned_ = true;
        std::cerr << "ddplint: warning: summaries are not kept: " << err << "\n";
      }
      stored_[unit] = s;
    }
    auto index = std::make_shared<clangfe::SummaryIndex>();
    for (const auto &[unit, s] : stored_)
      index->add(s);
    std::set<std::string> nowExported;
    for (const auto &[unit, s] : made_) {
      for (const auto &e : s.exports)
        nowExported.insert(e.symbol);
      for (const auto &g : s.rankGlobals)
        nowExported.insert(clangfe::kRankGlobalPrefix + g);
    }
    std::vector<size_t> again;
    for (size_t i = 0; i < in.units.size(); ++i) {
      auto it = made_.find(in.units[i].first);
      if (it == made_.end())
        continue;
      for (const std::string &sym : it->second.unresolved)
        if (nowExported.count(sym)) {
          again.push_back(i);
          break;
        }
    }
    clangfe::setRunSummaries(index);
    relinted_ = again.size();
    return again;
  }

  void report() const {
    if (active_ && verbose_)
      std::cerr << "ddplint: summaries: " << read_ << " of " << units_.size()
                << " database unit(s) read (" << stale_ << " stale), " << made_.size()
                << " made, " << relinted_ << " unit(s) linted again with summaries made in this run"
                << (store_ ? "" : "; not kept (--no-cache)") << "\n";
  }

private:
  bool verbose_ = false;
  bool active_ = false;
  bool warned_ = false;
  std::optional<clangfe::SummaryStore> store_;
  std::vector<std::string> units_;
  std::map<std::string, clangfe::UnitSummary> stored_, made_;
  size_t read_ = 0, stale_ = 0, relinted_ = 0;
  std::mutex mu_;
};

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
  RunSummaries summaries(a, in, configs);
  auto lintOne = [&](size_t i) {
    std::optional<PreambleUse> use;
    if (store && pre.specs[i].usable)
      use = store->get(pre.specs[i], builder);
    bool broken = false;
    perFile[i] = RunResult();
    runChecksOnFile(jobs[i].first, *jobs[i].second, configs, topts, perFile[i],
                    use ? &*use : nullptr, &broken);
    if (broken) {
      store->invalidate(pre.specs[i].key);
      ++wholeAfterPreamble;
    }
  };
  forEachOnThreads(jobs.size(), a.jobs, [&](size_t i) {
    lintOne(i);
    progress.step(jobs[i].first);
  });
  const std::vector<size_t> again = summaries.afterFirstPass(in);
  forEachOnThreads(again.size(), a.jobs, [&](size_t k) { lintOne(again[k]); });
  progress.finish();
  summaries.report();
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
  // A folder named on the command line (or --root) is the project of the
  // Python files under it that no project marker places: its modules import
  // each other from there (`sys.path.append(<the project>)` scripts).
  std::vector<std::string> folders;
  std::error_code ec;
  for (const auto &p : a.paths)
    if (std::filesystem::is_directory(p, ec))
      folders.push_back(absolute(p));
  if (a.root && std::filesystem::is_directory(*a.root, ec))
    folders.push_back(absolute(*a.root));
  setPythonProjectFolders(std::move(folders));
  if (!in.python.empty()) {
    // What each importer calls is kept between runs: a pre-commit run on one
    // helper reads its callers' calls instead of building them again.
    const CacheSettings cs = cacheSettings(a, in, configs);
    setPythonCallerCache(cs.persistent ? cs.dir : "", a.toolIdentity);
  }
  forEachOnThreads(in.python.size(), a.jobs,
                   [&](size_t i) { runChecksOnPythonFile(in.python[i], configs, perFile[i]); });
  const PythonCacheUse use = pythonCallerCacheUse();
  if (a.verbose && (use.reused || use.analysed))
    std::cerr << "ddplint: python callers: " << use.reused << " importer(s) reused from "
              << use.folder << ", " << use.analysed << " analysed"
              << (use.unwritable ? " (" + std::to_string(use.unwritable) + " not written)" : "")
              << "\n";
  return perFile;
}

} // namespace

// One bug, one report across the run: a hazard in a helper module that
// several scripts reach (FlagAI's sixteen example scripts each calling
// `BaseModel.from_pretrain`) is reported at the first script's call; the
// other calls become notes of it.  A one-file run (pre-commit) still reports
// it at that file's call.
static void oneReportPerHelperHazard(std::vector<Finding> &findings) {
  static const std::string kAbout = "the code it is about";
  // The first by place, whatever order the files were found in.
  std::stable_sort(findings.begin(), findings.end(), [](const Finding &x, const Finding &y) {
    return std::tie(x.location.file, x.location.line, x.location.column) <
           std::tie(y.location.file, y.location.line, y.location.column);
  });
  using Key = std::tuple<std::string, std::string, unsigned, unsigned, std::string>;
  auto keyOf = [&](const Finding &f) -> std::optional<Key> {
    // A rank-0 write's missing barrier belongs after each call (D-FINE's
    // engine and solver each call save_on_master before their own
    // collectives): each caller's report is its own fix.
    if (f.ruleId == "ddp-rank0-io-barrier")
      return std::nullopt;
    for (const auto &n : f.notes)
      if (n.message.rfind(kAbout, 0) == 0 && n.location.file != f.location.file)
        return Key{f.ruleId, n.location.file, n.location.line, n.location.column, f.message};
    return std::nullopt;
  };
  // Each hazard's first file keeps its reports (two calls in one script are
  // two fixes); the later files' become notes of its first report.
  std::map<Key, size_t> first; // -> index in `kept`
  std::vector<Finding> kept;
  kept.reserve(findings.size());
  for (auto &f : findings) {
    const std::optional<Key> key = keyOf(f);
    if (!key) {
      kept.push_back(std::move(f));
      continue;
    }
    auto it = first.find(*key);
    if (it == first.end()) {
      first.emplace(*key, kept.size());
      kept.push_back(std::move(f));
    } else if (kept[it->second].location.file == f.location.file) {
      kept.push_back(std::move(f));
    } else {
      kept[it->second].notes.push_back({f.location, "also reached from this call"});
    }
  }
  findings = std::move(kept);
}

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
  oneReportPerHelperHazard(result.findings);
  if (a.analyzeLibraryCode)
    std::cerr << "ddplint: analysed " << ddplint::clangfe::functionsAnalysed()
              << " function bodies (library code included)\n";
  return finishRun(a, result, start.root, start.baseline);
}

} // namespace ddplint::cli
