// Python syntax tree -> the core's program model.  The rules themselves live in
// checks/core; this file only says what a Python program does: which calls
// are collectives (explicit, and implicit ones such as a DDP model's forward),
// which values depend on the rank or on rank-local data, and where the
// checkpoint and file writes, process groups, data loaders and forward
// methods are.
#pragma once

#include "PySyntax.h"

#include "ddplint/core/Model.h"
#include "ddplint/core/Rules.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ddplint::pyfe {

// A parameter as a caller may bind it (see Specialization in PyBuilder.h).
struct ParamSig {
  std::string name;
  std::optional<std::int64_t> literalDefault; // `rank=-1`, `verbose=False`
  bool tested = false; // a condition in the body reads it
  bool writtenTo = false; // the body writes a file at this path (`open(path, "wb")`)
  // The body writes a file in this folder (`torch.save(state,
  // os.path.join(ckpt_dir, "checkpoint.pth.tar"))`).
  bool writesUnder = false;
  // A test of it decides whether the body raises or exits
  // (`def check_nan_losses(loss): if math.isnan(loss): raise ...`).
  bool guardsExit = false;
  bool keywordOnly = false; // after `*` or `*args`: never bound by position
};

// What a module's importers need to know of one of its functions before they
// read its body: whether a call of it is a rank or a rank predicate.
// `def is_master(args, local=False): return is_local_master(args) if local
// else is_global_master(args)`: the predicate a call gets depends on the
// constant it hands `param` (or leaves at its default).
struct CondByParam {
  std::string param;
  core::Cond ifTrue, ifFalse;
};

struct FunctionSummary {
  std::string key;  // in the module that defines it: "save_model", "Saver.save"
  std::string name; // for messages
  bool returnsRank = false;              // `def get_rank(): return dist.get_rank()`
  std::optional<core::Cond> returnsCond; // `def is_main(): return get_rank() == 0`
  std::optional<CondByParam> returnsCondBy;
  bool mainOnly = false;                 // @rank_zero_only
  bool returnsAgreed = false;            // returns what a collective agreed
  std::vector<int> returnsAgreedAt;      // `return acc, global_acc`: {1}
  bool returnsInitialized = false;       // `def is_dist_avail_and_initialized()`
  bool returnsRankDependent = false;     // `def rankstr(): return f"rank_{get_rank()}"`
  int returnsRankAt = -1;                // `return rank, world_size`: element 0 is the rank
  bool returnsLocalRankAt = false;       // ...the node-local rank (AlgoPerf's `return use_ddp, rank` of LOCAL_RANK)
  int returnsInitializedAt = -1;         // ...and element 0 says the run has ranks ('LOCAL_RANK' in os.environ)
  bool returnsDdp = false;               // `def smart_DDP(model): return DDP(model, ...)`
  std::string returnsInstance;           // `def make_state(): s = TrainState(...); return s`: "TrainState"
  std::string returnsClass;              // `def create_trainer(cfg): return TrainerRQVAE`: "TrainerRQVAE"
  std::string returnsParameter;          // `def step(model, batch, info): ...; return info`: "info"
  std::vector<std::pair<int, std::string>> returnsLengthOf; // `return [f(q) for q in qs]`: {-1, "qs"}
  std::set<std::string> returnLiterals; // `return os.path.join(d, 'snapshot.pkl')`: {"snapshot.pkl"}
  bool writesThroughSplat = false;       // `def save_on_all(*args): torch.save(*args)`
  std::vector<ParamSig> params;          // `self` left out of a method's
  bool method = false;
  bool initsProcessGroup = false;        // `dist.init_process_group(...)` in its body
  // The parameter it hands `init_process_group` as the process's rank
  // (MONAI's `def setup_ddp(rank, world_size): init_process_group(..., rank=rank)`).
  std::string initRankParameter;
  bool launchesRanks = false;            // `mp.spawn(worker, ...)`, here or in a callee
  bool guardsOnMain = false;             // a decorator that runs what it wraps on rank 0 only
  bool barrierOnly = false;              // `def synchronize(): dist.barrier()`: waits, nothing else
  // `def all_reduce(t, op): return dist.all_reduce(t, op)` (jukebox's dist_adapter):
  // the tensor handed first is agreed in place when the call returns.
  bool agreesFirstArgument = false;
  // `@contextmanager`: what it runs before and after its `yield` wraps the
  // `with` body; `yieldsRank`: `with sync_workers() as rank` binds the rank.
  bool contextManager = false;
  bool yieldsRank = false;
};

// A function of another module of the project, as the module being built sees it.
struct ExternalFunction {
  FunctionSummary summary;
  std::string key; // in the linked program: "<module>:<key>", e.g. "util.misc:save_model"
};

// The rest of the project, as far as the builder may ask (null: the file alone).
class ModuleContext {
public:
  virtual ~ModuleContext() = default;
  // The package the module is in ("util" for util/crop.py, "" at the top):
  // relative imports start there.
  virtual std::string package() const = 0;
  // The project function a dotted name (imports applied) names: a module's
  // function (`util.misc.save_model`), a class's method (`pkg.train.Trainer.fit`),
  // through a package's re-exports.  Null: not a function of the project.
  virtual const ExternalFunction *function(const std::string &dotted) = 0;
  // Whether a dotted name is a class of a project module (its methods are then
  // `function(dotted + "." + method)`).
  virtual bool isClass(const std::string &dotted) = 0;
  // The module is built for an importer, which runs distributed where it calls
  // it: a `rank` parameter is the rank even when the module itself never
  // imports torch.distributed.
  virtual bool imported() const { return false; }
  // The file is in a `tests` or `test` folder: its process reaches the
  // project's initializer with a world of one (see distributedThroughLinks).
  virtual bool inTestFolder() const { return false; }
  // A settings attribute (`args.save_logs`) that the project's modules set
  // only from the main-process test.
  virtual bool mainProcessSetting(const std::string & /*attr*/) { return false; }
  // A field that every constructor call of the project hands a main-process
  // test by keyword (`DistEnv(master=(dist.get_rank() == 0))`): `x.master`.
  virtual bool mainProcessField(const std::string & /*attr*/) { return false; }
  // Whether a dotted name is a class of a project module known to hold no
  // buffers (PyModel::bufferFreeClasses): a DDP forward of it broadcasts none.
  virtual bool classBufferFree(const std::string & /*dotted*/) { return false; }
  // The attributes a project module's signal handlers set (PyModel::signalFlagAttrs).
  virtual std::set<std::string> signalFlagsOf(const std::string & /*dottedModule*/) { return {}; }
  // A project module's top-level names bound to torch's functions
  // (libraryFunctionAliases): `link.allreduce(t)` after `import linklink as
  // link` is torch.distributed.all_reduce.
  virtual std::map<std::string, std::string> libraryAliasesOf(const std::string & /*dottedModule*/) {
    return {};
  }
  // The module's own dotted name ("lib.train.trainers.base_trainer"), as its
  // functions' keys in a linked program begin; empty when not known.
  virtual std::string moduleName() const { return {}; }
  // Whether a dotted name is a project class that defines a method of its
  // own besides `__init__` (one its bases' methods may call on `self`).
  virtual bool classDefinesMethods(const std::string & /*dotted*/) { return false; }
  // Whether a dotted name is a project class derived, through the project's
  // modules, from the Hugging Face or TRL Trainer (LMFlow's DPOv2Trainer).
  virtual bool hfTrainerClass(const std::string & /*dotted*/) { return false; }
};

struct PyModel {
  core::Program program; // with program.facts filled (Facts.h)
  std::vector<SourcePos> positions;  // Loc - 1 -> position
  std::vector<unsigned> byteOffsets; // Loc - 1 -> byte offset
  std::map<core::Loc, SyntaxNode> ifNodes; // Loc of an `if` -> its statement (fix-its)
  std::string distAlias;         // how the module spells torch.distributed ("dist")
  // How the barrier fix-it waits: the project's own barrier helper that the
  // module already calls (`comm.synchronize`), else `dist.barrier()` where the
  // module makes the process group on every path (initAlways), else
  // `dist.barrier()` under `if dist.is_initialized():` (a script that also
  // runs as one process has no group to wait in).
  std::string barrierHelper;
  bool initAlways = false;
  // Functions handed to a checkpoint hook registrar (Accelerate's
  // `register_save_state_pre_hook(save_model_hook)`): their ranks are the
  // checkpoint call's, not every rank's (PyProject::markUncalledApis).
  std::set<std::string> checkpointHooks;
  // The module's own code trains: `.backward(...)` (a loss's, an
  // accelerator's), an optimizer's `step()`, a Lightning module's
  // `training_step(...)` (trlx's NeMo trainer).  Built from the text, not
  // stored in a cache.
  bool trainsHere = false;
  // Distributed only through the project's helpers it calls: one that makes
  // the process group (seen while building), or what the linker found (the
  // module is then built again, see buildModel).  Its `rank` parameters were
  // read as the rank; the linter still treats it as distributed through its
  // links (one-process entries).
  bool distributedByLinks = false;
  // Every init_process_group that can run makes a world of one (VMamba's
  // evaluation scripts: `world_size=1, rank=0`): one process, whatever else
  // the module names.
  bool oneRankWorld = false;
  // A call made a place where ranks may leave because its callee raises or
  // exits on what it is handed (Builder::checkThatMayRaise): the callee's
  // key, and for one of this module's functions its bytes.  When the callee's
  // own test already decides a collective there, that report is the bug's
  // and the call's is the same bug again.
  struct RaisingCall {
    std::string callee;
    unsigned begin = 0, end = 0;
  };
  std::map<unsigned, RaisingCall> raisingCalls; // by the call's first byte
  std::string timedeltaSpelling; // "datetime.timedelta", "timedelta"; "" (needs an import)
  // The import the fix-it adds when timedeltaSpelling is empty, and the
  // spelling it then uses; both empty when no import is safe (the module
  // binds both `datetime` and `timedelta` to something else).
  std::string timedeltaImport = "import datetime\n";
  std::string importedTimedelta = "datetime.timedelta";
  unsigned importInsertAt = 0;   // byte offset for a new import line
  bool hasImports = false;
  unsigned functionsAnalysed = 0;
  // For the module's importers: its functions and methods, what its top-level
  // names import (absolute dotted names: a package's re-exports), its classes.
  std::map<std::string, FunctionSummary> summaries;
  std::map<std::string, std::string> imports;
  // `from .dist import *` (absolute module names): where else a name may come from.
  std::vector<std::string> starImports;
  // Class -> its bases as written, import aliases applied ("pkg.base.Base"):
  // an importer finds a method the class inherits from another module.
  std::map<std::string, std::vector<std::string>> classes;
  // Its classes whose modules register no buffer, nor hold a sub-module that
  // may (Wuerstchen's `Prior`: convolutions, LayerNorm, attention).
  std::set<std::string> bufferFreeClasses;
  // Attributes its signal handlers set (`self.interrupted = True` in a
  // SIGTERM handler): each process gets the signal on its own, at its own
  // step, so whoever reads one reads this rank's flag.
  std::set<std::string> signalFlagAttrs;
  // The functions of other modules that this one calls (ExternalFunction::key):
  // the linker adds their bodies to the program.
  std::set<std::string> externalCalls;
  // program.distributed as the module would have it linted on its own (an
  // imported module's program is taken as distributed).
  bool distributedOnItsOwn = true;
};

// `user`: the user's wrappers (the same options as the C++ checks).
// `project`: how the module's imports resolve to the project's other modules.
// `specializations`: functions an importer calls with constants bound
// ("fn{rank=-1}", see Builder::specialize), built besides the plain ones.
// `distributedByLinks`: the linker found that the module runs distributed
// through the helpers it calls (a collective in a training module, a
// project initializer): its `rank` parameters are the rank (OpenPCDet's
// train_utils, called with `rank=cfg.LOCAL_RANK`).
PyModel buildModel(const SyntaxTree &tree, const core::Wrappers &user,
                   ModuleContext *project = nullptr,
                   const std::set<std::string> &specializations = {},
                   bool distributedByLinks = false);

} // namespace ddplint::pyfe
