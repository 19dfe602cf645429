// The project a Python file belongs to.  A training script calls
// `misc.save_model(...)`, `comm.synchronize()` or `is_main_process()` from
// modules of its own project; the rules must see those bodies as if they were
// in the file.  PyProject resolves a file's imports to the project's modules
// (absolute imports from the source roots, relative imports, `import a.b as
// c`, `from a import b as c`, a package's `__init__` re-exports, classes and
// their methods), builds each module once per run (its model, its function
// summaries: does a call return the rank or a rank predicate), and links into
// a file's program the bodies of the functions it reaches in other modules,
// with their positions, so that the path rules read one program.
//
// Findings the rules then make inside another module's code are that
// module's when it is linted alone (reported there, not here); the others
// exist only through this file's calls (a rank-0 write in a helper that the
// training loop calls between collectives) and are reported at the call in
// this file, with a note at the code in the other module.
//
// Thread-safe: one PyProject serves every file of a run.
#pragma once

#include "PyModelBuilder.h"

#include "ddplint/core/Finding.h"
#include "ddplint/core/Rules.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ddplint::pyfe {

// Positions [first, last] of a linked program belong to `path`.
struct LinkedModule {
  core::Loc first = 0, last = 0;
  std::string path;
  std::string name; // dotted module name
};

// What linking added to a file's program.
struct LinkResult {
  std::vector<LinkedModule> modules;
  std::map<core::Loc, std::string> owner;    // a linked location -> its function's key
  std::map<std::string, core::Loc> entry;    // a linked function -> the file's first call that reaches it
  std::map<std::string, std::string> names;  // a linked function -> its name, for messages
  std::vector<core::AnalysisNotice> limits;  // imports or calls not followed
  // A linked function creates the process group: the file runs distributed
  // even when it imports nothing distributed itself
  // (`utils.init_distributed_mode(args)`).  A helper's collective alone is
  // not enough (detectron2's `comm.synchronize()` returns early in one
  // process, and export scripts and tests call such helpers): see
  // `collectives` and `trains` below.
  bool distributed = false;
  std::set<std::string> initializers; // the linked functions that create it
  // A linked function runs a collective it names (`reduce_dict`'s
  // all_reduce), and a linked function trains (a helper module's
  // `loss.backward()`).  With training in the program, the collective says
  // the program runs distributed (D-FINE's solver reaches torch.distributed
  // only through its dist_utils); without, it may be an export or inference
  // script whose helper's collective waits for nobody in one process.
  bool collectives = false;
  bool trains = false;
  const LinkedModule *moduleOf(core::Loc l) const;
};

// Whether the module at `path` runs distributed through what it linked (see
// LinkResult::distributed and ::collectives).  Not a module in a `tests` or `test` folder: its
// process reaches the project's `main` or `init_distributed` with a world of
// one (fairseq's, nanotron's, llama-recipes' tests); a test that runs ranks
// creates the group in its own worker.
// `trainsHere`: the module's own code calls `.backward(...)`.
bool distributedThroughLinks(const LinkResult &linked, const std::string &path, bool trainsHere);

// How a module's own lint reads its program (lintPython and findingsAlone
// share it, so a caller's report and the module's agree): links it, builds it
// again with its `rank` parameters as the rank where it is distributed only
// through its helpers, decides whether it runs distributed, and reads its
// callers.  `linkNs`, `callersNs`: where the time went.  Returns how many of
// the model's places are the module's own (the linked modules' follow).
class PyProject;
core::Loc settleProgram(PyModel &model, LinkResult &linked, const SyntaxTree &tree, const std::string &path,
                        ModuleContext *ctx, PyProject &project, const core::Wrappers &wrappers,
                        long long *linkNs = nullptr, long long *callersNs = nullptr);

// Whether a program writes a checkpoint anywhere (who calls it then matters).
bool hasCheckpointWrite(const core::Program &p);
bool hasCheckpointWrite(const core::Node &n);
// A program that is not distributed after linking (no import, DDP or process
// group of its own or through what it calls) drops the collectives its
// helpers assumed of an importer that wraps the model in DDP.
void dropAssumedDdp(core::Program &p);

class PyProject {
public:
  // `wrappers`: the user's, as for the file itself (modules are built with them).
  // `folders`: the folders a run lints; a file no project marker places has the
  // outermost one that holds it as its project root.
  explicit PyProject(core::Wrappers wrappers = {}, const std::vector<std::string> &folders = {});
  ~PyProject();
  PyProject(const PyProject &) = delete;
  PyProject &operator=(const PyProject &) = delete;

  // The syntax tree of `path` holding `source`: parsed once per run, whether
  // the file is linted first or imported first (the two share it).
  std::shared_ptr<const SyntaxTree> tree(const std::string &file, std::string source);
  static constexpr size_t kMaxKeptTrees = 4000;

  // How `file` (an absolute path) sees the project: its package and its imports.
  std::unique_ptr<ModuleContext> contextFor(const std::string &file);

  // Adds to `model` (built with contextFor's context) the functions of other
  // modules it calls, and theirs, with their positions appended to the model's.
  LinkResult link(PyModel &model);

  // The rules' findings on a linked module alone (for telling a module's own
  // findings from those this file's calls cause): (rule, the file the code is
  // in, its location in that module's own build).  Those in the module itself,
  // and those in modules it calls that its own lint reports at its calls
  // (a helper's hazard that the training loop's module already reports).
  // (rule, file, placeKey); a rule's divergent decisions are kept under
  // conditionKey(rule), at the condition's place.
  using AloneFinding = std::tuple<std::string, std::string, std::uint64_t>;
  // A place in a file as a key: the module's own build and the build linked
  // into an importer number their locations differently.
  static std::uint64_t placeKey(const SourcePos &p) {
    return (static_cast<std::uint64_t>(p.line) << 32) | p.column;
  }
  static std::string conditionKey(std::string_view rule) { return "condition:" + std::string(rule); }
  // The note a path rule puts at the rank-dependent decision.
  // Module functions that nothing in the project calls or names, and that
  // write a checkpoint at a path their caller hands them (a vendored mmcv
  // `save_checkpoint(model, filename)`): who runs them is their caller's
  // decision, so they are not read as code every rank runs.  After
  // program.externalCalls holds the module's callers.
  static void markUncalledApis(PyModel &model, const SyntaxTree &tree);
  // A module that runs distributed only because some of its functions call a
  // linked initializer (a click CLI whose `infer` command starts the group):
  // its entry functions that reach none, nothing calls and nothing names
  // again (`convert`) run in one process.
  static void markOneProcessEntries(PyModel &model, std::string_view source, const LinkResult &linked);
  static bool isConditionNote(const core::Note &n) {
    return n.message == core::kRankLocalConditionNote || n.message == core::kRankConditionNote;
  }
  std::set<AloneFinding>
  findingsAlone(const std::string &modulePath,
                const std::vector<std::pair<core::RuleId, core::RuleOptions>> &rules);

  // The calls that the project's other modules make into the file at `path`
  // (its Program::externalCalls), read from the project's files whose imports
  // name it.  Only asked for a file that writes checkpoints: that is what
  // the callers' guards decide.
  // `truncated`: set when the project has more files than are indexed.
  std::vector<core::ExternalCall> callersOf(const std::string &path, bool *truncated = nullptr);
  static constexpr size_t kMaxProjectFiles = 5000;

  // Keep what each importer calls in `folder` between runs (one file per
  // importer): a pre-commit run on one helper module then reads its callers'
  // calls instead of building every importer again.  A stored entry names the
  // files it was made from (the importer and every module its build read),
  // with sizes, times and content hashes, and the project's list of files; it
  // is used only while all of them, and `identity` (the binary, the wrappers),
  // are unchanged.  Call before the first lint; empty folder: nothing kept.
  void keepCallersIn(std::string folder, const std::string &identity);
  struct CallerCacheUse {
    unsigned reused = 0, analysed = 0, unwritable = 0;
  };
  CallerCacheUse callerCacheUse() const;

  static constexpr size_t kMaxLinkedFunctions = 400;
  static constexpr size_t kMaxImportDepth = 12;

  // The caller cache's folder under a cache folder, and its size.
  static std::string callerCacheFolder(const std::string &cacheDir);
  static size_t callerCacheEntries(const std::string &cacheDir, std::uint64_t *bytes = nullptr);
  static unsigned clearCallerCache(const std::string &cacheDir, std::string &error);

  struct Module;
  struct Roots;
  class Context;

private:
  std::shared_ptr<const Module> load(const std::string &dotted, const Roots &roots);
  std::shared_ptr<const Module> build(const std::string &path, const std::string &dotted,
                                      const Roots &roots);
  const ExternalFunction *function(const std::string &dotted, const Roots &roots, int depth);
  std::pair<std::shared_ptr<const Module>, std::string> classModule(const std::string &dotted,
                                                                    const Roots &roots, int depth);
  bool isClass(const std::string &dotted, const Roots &roots);
  bool classBufferFree(const std::string &dotted, const Roots &roots);
  bool classDefinesMethods(const std::string &dotted, const Roots &roots);
  bool hfTrainerClass(const std::string &dotted, const Roots &roots, int depth);
  std::shared_ptr<const Module> byName(const std::string &name);
  // The module built again with the specialisation `key` ("fn{rank=-1}") of one
  // of its functions (see Builder::specialize); once per run.
  std::shared_ptr<const Module> specialized(const std::shared_ptr<const Module> &plain,
                                            const std::string &key);
  struct Index;
  const Index &indexOf(const std::string &root);
  // A call an importer makes into another module: the callee's key in that
  // module and the module's file.
  struct CallInto {
    std::string callee;
    core::Reach reach = core::Reach::AllRanks;
    std::string target;
  };
  const std::vector<CallInto> &callsOf(const std::string &importer, const Index &index);
  std::vector<CallInto> computeCallsOf(const std::string &importer);
  bool storedCallsOf(const std::string &importer, const Index &index, std::vector<CallInto> &out);
  void storeCallsOf(const std::string &importer, const Index &index,
                    const std::set<std::string> &reads, const std::vector<CallInto> &calls);
  std::shared_ptr<const Module> loadUnnoted(const std::string &dotted, const Roots &roots);
  // The file a dotted module name resolves to ("" for none), without building it.
  std::string pathOf(const std::string &dotted, const Roots &roots);
  // The attributes the module's signal handlers set (PyModel::signalFlagAttrs).
  std::set<std::string> signalFlagsOf(const std::string &dotted, const Roots &roots);
  std::map<std::string, bool> registersSignal_; // path -> registers a signal handler
  // The module's top-level aliases of torch's functions (libraryFunctionAliases).
  std::map<std::string, std::string> libraryAliasesOf(const std::string &dotted, const Roots &roots);
  std::map<std::string, std::map<std::string, std::string>> libraryAliases_; // path -> aliases

  core::Wrappers wrappers_;
  std::vector<std::string> folders_; // normalised, without a trailing separator
  mutable std::mutex mu_;
  std::map<std::pair<size_t, std::string>, std::string> pathOf_; // (roots id, dotted) -> path ("" none)
  std::map<std::string, size_t> rootsIds_;                         // Roots::key -> Roots::id
  // Per searched folder: its sub-folders that are packages' own projects (a
  // setup.py or pyproject.toml beside a package), installed with `pip
  // install -e ./sub`: OFA's `fairseq/` holds the `fairseq` package.
  std::map<std::string, std::vector<std::string>> installedSubprojects_;
  std::map<std::string, std::shared_ptr<const Module>> modules_;       // path -> module
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const Module>> specialized_; // (path, key)
  std::map<std::string, std::string> nameToPath_;                      // dotted -> path (linked keys)
  std::map<std::string, std::unique_ptr<ExternalFunction>> functions_; // linked key -> function
  std::map<std::string, std::set<AloneFinding>> alone_; // path -> findings
  std::map<std::string, std::unique_ptr<Index>> indexes_;                  // root -> its files
  std::map<std::string, std::vector<CallInto>> callsOf_;                   // importer -> its calls
  std::string cacheFolder_, cacheIdentity_;
  CallerCacheUse cacheUse_;
  std::map<std::string, std::tuple<std::uint64_t, std::int64_t, std::uint64_t>> stamps_; // size, mtime, hash
  std::map<std::string, std::string> rootOf_;                              // file -> project root
  std::map<std::string, std::shared_ptr<const SyntaxTree>> trees_;          // path -> its parse
};

} // namespace ddplint::pyfe
