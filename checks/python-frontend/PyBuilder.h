// The Python model builder's internals, shared by its three parts (not a
// public header: checks/python-frontend/PyModelBuilder.h is).
#pragma once

#include "PyModelBuilder.h"

#include "ddplint/core/Catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ddplint::pyfe::build {

using core::Cond;
using core::Dep;
using core::EventKind;
using core::ExitKind;
using core::Loc;
using core::Node;

using core::testsNonFinite;
inline std::string lastPart(std::string_view dotted) {
  auto i = dotted.rfind('.');
  return std::string(i == std::string_view::npos ? dotted : dotted.substr(i + 1));
}
inline bool contains(const std::vector<std::string> &v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
inline bool has(const std::vector<std::string> &v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
inline bool has(const core::NameSet &v, std::string_view s) { return v.find(s) != v.end(); }

// Names that hold a rank's own data in training code (`loss`, `val_loss`,
// `batch`, `logits`): judged by the last word, so `output_dir` is not one.
inline bool perRankDataName(std::string_view name) {
  auto dot = name.rfind('.');
  if (dot != std::string_view::npos)
    name = name.substr(dot + 1);
  auto us = name.rfind('_');
  std::string_view last = us == std::string_view::npos ? name : name.substr(us + 1);
  static const std::set<std::string, std::less<>> words = {
      "loss", "losses", "logits", "batch", "inputs", "targets", "images", "labels",
      "outputs", "output", "preds", "predictions", "grad", "grads", "norm"};
  if (words.count(last) == 0 || name == "batch_size")
    return false;
  // A flag or a setting named after the data (`gather_with_grad`,
  // `reduce_loss`, `log_every_n_losses`, `use_norm`) is not the data.
  static const std::set<std::string, std::less<>> flagWords = {
      "with", "without", "use", "reduce", "compute", "log", "skip", "no", "enable", "enabled",
      "disable", "sync", "gather", "save", "print", "return", "track", "should", "do", "clip",
      "accumulate", "scale", "set", "get", "num", "max", "min", "freq", "every", "is", "has",
      "apply", "normalize", "report", "keep", "allow", "need", "needs", "update", "freeze"};
  for (std::string_view rest = name; !rest.empty();) {
    const size_t u = rest.find('_');
    if (flagWords.count(rest.substr(0, u)))
      return false;
    if (u == std::string_view::npos)
      break;
    rest.remove_prefix(u + 1);
  }
  return true;
}
// Device handles are rank-specific by design (`cuda:{local_rank}`), but what is
// computed on them is not: a device argument does not make a result rank-dependent.
inline bool deviceName(std::string_view name) {
  auto dot = name.rfind('.');
  if (dot != std::string_view::npos)
    name = name.substr(dot + 1);
  if (!name.empty() && name.front() == '[' && name.back() == ']')
    name = name.substr(1, name.size() - 2); // device_ids=[local_rank]
  return name == "device" || name == "dev" || endsWith(name, "_device") || name == "local_rank" ||
         name == "gpu" || name == "device_id" || name == "device_ids" || name == "rank" ||
         name == "map_location";
}

// Keywords that choose who prints or logs, not what a call computes.
inline bool loggingKeyword(std::string_view name) {
  return name == "verbose" || name == "log_info" || name == "disable" || name == "quiet" ||
         name == "silent" || name == "logging" || name == "log" || name == "show_progress" ||
         name == "print_info" || name == "is_master" || name == "is_main_process" ||
         name == "leave" || name == "dynamic_ncols";
}

// A logger or a summary writer handed to a call (`find_checkpoint(out_dir,
// logger)`): it chooses where messages go, not what the call computes.
inline bool loggerArgument(std::string_view text) {
  auto dot = text.rfind('.');
  if (dot != std::string_view::npos)
    text = text.substr(dot + 1);
  return text == "logger" || text == "log" || text == "writer" || text == "tb_writer" ||
         text == "summary_writer" || endsWith(text, "_logger");
}

// The model, its optimizer or its scheduler handed to a helper
// (`smart_resume(ckpt, optimizer, ...)`, `check_amp(model)`): what the helper
// computes from it is the same on every rank, since DDP keeps replicas equal.
// A model built from a rank-0-only config value (`nc` from a dict the
// rank-0 logger filled) would otherwise make every epoch count rank-local.
inline bool trainingStateArgument(std::string_view text) {
  auto dot = text.rfind('.');
  if (dot != std::string_view::npos)
    text = text.substr(dot + 1);
  return text == "model" || text == "optimizer" || text == "scheduler" || text == "lr_scheduler" ||
         text == "ema" || text == "net" || text == "optim";
}

// The operator of a two-sided comparison as written, words spaced: `<`, `is not`, `not in`.
inline std::string comparisonOperator(SyntaxNode cmp) {
  std::string op;
  for (SyntaxNode c : allKids(cmp))
    if (!isNamed(c))
      op += (op.empty() ? "" : " ") + std::string(cmp.tree()->text(c));
  return op;
}

// The name node of a parameter (`x`, `x=1`, `x: int`, `x: int = 1`).
inline std::string withoutSpaces(std::string_view t) {
  std::string out;
  for (char ch : t)
    if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && ch != '\\')
      out += ch;
  return out;
}

// A keyword or positional argument as written.
struct PyArg {
  std::string_view name; // empty: positional (views into the source)
  SyntaxNode value{};
  std::string_view text;
};

// What a value is, as far as the rules care.
enum class RankKind : std::uint8_t { None, Global, Local };

struct Val {
  Dep dep = Dep::Uniform;
  RankKind rank = RankKind::None; // the value *is* a rank (not just derived from one)
  std::optional<Cond> cond;       // the value is this condition (`is_main = rank == 0`)
  bool agreed = false;            // a collective made it the same on every rank
  bool none = false;              // the value is None
  // An element of a data loader (a batch): its contents are this rank's, its
  // length is not (a DistributedSampler gives every rank as many samples).
  bool batch = false;
  // The value is an object on the ranks where this holds and None elsewhere
  // (`saver = Saver() if rank == 0 else None`): `saver is not None` tests it.
  std::optional<Cond> existsWhen;
  // Whether the value is None is the same on every rank: it was set to None
  // or to an object under decisions every rank takes alike (`grad_norm =
  // None`, then `if accelerator.sync_gradients: grad_norm = clip(...)`), so
  // `grad_norm is not None` is a uniform test whatever the value's contents.
  bool presenceUniform = false;
  // A null object (ALPRO's and UNITER's `NoOp()`, whose `__getattr__` hands
  // back a method that does nothing): with existsWhen, the value is a real
  // object where that holds and a null object elsewhere, so each method call
  // does its work on those ranks only (`model_saver = ModelSaver(d) if rank
  // == 0 else NoOp()`, then `model_saver.save(...)` every epoch).
  bool nullObject = false;
  // A constant the caller handed a parameter (`create_dataloader(..., rank=-1)`):
  // tests of it decide the same way on every rank (see Specialization).
  std::optional<std::int64_t> known;
  // The value is, or on some path may be, the world size (`m = per_node if
  // local else cfg.NUM_GPUS`): `rank % m == 0` is then rank 0's test.
  bool worldSize = false;
  // A literal True or False: a flag that one arm of a rank decision sets and
  // the other leaves as it was (`default_gpu = False`, then `if rank == 0:
  // default_gpu = True`) is that decision (see joinArms).
  std::optional<bool> literal;
  // A parameter fact: every call hands the wrapper's bare module
  // (`validate(model_without_ddp, ...)`) to a parameter whose name is the
  // module's DDP model elsewhere; its forward there is no collective.
  bool bareModel = false;
};

inline bool sameCond(const Cond &a, const Cond &b) {
  if (a.kind != b.kind || a.constValue != b.constValue || a.op != b.op || a.value != b.value ||
      a.mod != b.mod || a.key != b.key || a.dep != b.dep || a.localMain != b.localMain ||
      a.text != b.text || a.kids.size() != b.kids.size())
    return false;
  for (size_t i = 0; i < a.kids.size(); ++i)
    if (!sameCond(a.kids[i], b.kids[i]))
      return false;
  return true;
}

inline bool sameOpt(const std::optional<Cond> &a, const std::optional<Cond> &b) {
  return a.has_value() == b.has_value() && (!a || sameCond(*a, *b));
}

// The job's rank 0 (or each node's first process) as a condition spelled `text`.
inline Cond mainProcessCond(bool perNode, const std::string &text) {
  Cond c = perNode ? Cond::atom("local-main", Dep::Rank) : Cond::rankCmp(core::CmpOp::EQ, 0);
  c.localMain = perNode;
  c.text = text;
  return c;
}

// The value after two ways that meet: what both agree on survives (a flag
// untouched by an `if` keeps its condition), the rest is their strongest
// dependence.
inline Val joinVal(const Val &a, const Val &b) {
  Val v;
  v.dep = core::join(a.dep, b.dep);
  if (sameOpt(a.cond, b.cond))
    v.cond = a.cond;
  if (sameOpt(a.existsWhen, b.existsWhen))
    v.existsWhen = a.existsWhen;
  v.agreed = a.agreed && b.agreed;
  v.none = a.none && b.none;
  v.presenceUniform = a.presenceUniform && b.presenceUniform;
  v.nullObject = a.nullObject && b.nullObject;
  if (a.known == b.known)
    v.known = a.known;
  v.worldSize = a.worldSize || b.worldSize;
  if (a.literal == b.literal)
    v.literal = a.literal;
  // A batch joined with what every rank shares is still a batch (`samples += [next(it)]`).
  v.batch = v.dep == Dep::Local && (a.batch || a.dep != Dep::Local) && (b.batch || b.dep != Dep::Local);
  return v;
}

// Objects whose method calls or calls are collectives.
// Subgroup: a DDP model, Fabric or Accelerator on a process group of some
// ranks only: its collectives are run by the group's members, who are chosen
// by rank (MPMD roles); like the C++ side's split communicators, they are left
// out of the comparison.
// DeepSpeedEngine: the engine deepspeed.initialize returns (first of its tuple).
enum class ObjKind : std::uint8_t { None, Ddp, Fsdp, Prepared, Metric, Accelerator, DataLoader, Zero, Subgroup, DeepSpeedEngine };

// `group=pg` / `process_group=pg` with a group of some ranks (not the world).
inline bool onSubgroup(std::string_view args) {
  for (std::string_view key : {"process_group=", "group=", "process_set="}) {
    size_t at = args.find(key);
    while (at != std::string_view::npos) {
      const bool word = at == 0 || !(std::isalnum(static_cast<unsigned char>(args[at - 1])) ||
                                     args[at - 1] == '_');
      std::string_view v = args.substr(at + key.size());
      if (word && v.substr(0, 4) != "None" && v.find("WORLD") != 0 && v.substr(0, 5) != "dist." &&
          v.find("group.WORLD") == std::string_view::npos)
        return true;
      at = args.find(key, at + 1);
    }
  }
  return false;
}

struct Env {
  std::map<std::string, Val> vars;
};

inline Env joinEnv(const Env &a, const Env &b) {
  Env out = a;
  for (const auto &[k, v] : b.vars) {
    auto it = out.vars.find(k);
    if (it == out.vars.end()) {
      out.vars[k] = v;
      continue;
    }
    Val j = joinVal(it->second, v);
    if (it->second.rank == v.rank)
      j.rank = v.rank;
    it->second = j;
  }
  return out;
}

// The value a name has after `if c: <then> else: <else>`, from the two arms.
// A rank flag set on one arm of a uniform decision (`if ddp: master = rank == 0`
// / `else: master = True`) keeps its rank test: the decision picks the
// distributed or the single-process configuration, and only the first has
// ranks to diverge.  An object made on one arm of a rank decision and None on
// the other exists only on those ranks.
// Which parameter each argument of a call binds (PyModelBuilder.cpp).
std::vector<const ParamSig *> boundParameters(const std::vector<PyArg> &as, SyntaxNode fn,
                                               const std::vector<ParamSig> &params, bool method,
                                               bool &splat);

inline Val joinArms(const Val &t, const Val &f, const Cond &c) {
  const bool rankDecision = c.dependence() != Dep::Uniform;
  auto flag = [](const Val &v) { return v.cond && v.cond->dependence() != Dep::Uniform; };
  auto plain = [](const Val &v) {
    return !v.cond && v.dep == Dep::Uniform && v.rank == RankKind::None && !v.existsWhen;
  };
  // vilbert's `default_gpu = False`, then `if rank == 0: default_gpu =
  // True`: the flag is the decision itself.
  if (rankDecision && t.literal && f.literal && *t.literal != *f.literal && !t.cond && !f.cond) {
    Val j;
    j.cond = *t.literal ? c : Cond::negate(c);
    return j;
  }
  if (!rankDecision && flag(t) && plain(f))
    return t;
  if (!rankDecision && flag(f) && plain(t))
    return f;
  // The rank itself, likewise: `if ddp: rank = int(os.environ["RANK"])` /
  // `else: rank = 0` (MONAI's generative trainers), or `rank = 0` before
  // `if ddp: rank = dist.get_rank()`.  `if rank == 0:` after it is rank 0's
  // test in the run that has ranks.
  if (!rankDecision && t.rank != RankKind::None && plain(f))
    return t;
  if (!rankDecision && f.rank != RankKind::None && plain(t))
    return f;
  // `saver = saver if not args.no_saver else None` of a rank-0-only saver:
  // None everywhere or the saver where it was made, so still rank 0's.
  if (!rankDecision && t.existsWhen && !t.cond && f.none)
    return t;
  if (!rankDecision && f.existsWhen && !f.cond && t.none)
    return f;
  Val j = joinVal(t, f);
  if (t.rank == f.rank)
    j.rank = t.rank;
  if (rankDecision && t.none != f.none) {
    Cond e = t.none ? Cond::negate(c) : c;
    j.existsWhen = e;
    j.nullObject = t.nullObject || f.nullObject;
  } else if (!rankDecision) {
    // Under a decision every rank takes alike, None on one arm and an object
    // not known to exist by rank on the other (or objects on both) is None or
    // not alike on every rank.
    auto presence = [](const Val &v) {
      return v.presenceUniform || v.none || (!v.existsWhen && !v.cond && v.rank == RankKind::None);
    };
    j.presenceUniform = (t.none || f.none || t.presenceUniform || f.presenceUniform) && presence(t) &&
                        presence(f);
  } else if (t.existsWhen && f.existsWhen && t.existsWhen->text == f.existsWhen->text) {
    j.existsWhen = t.existsWhen;
  }
  return j;
}

inline Env joinArms(const Env &t, const Env &f, const Cond &c) {
  Env out = joinEnv(t, f);
  for (auto &[k, v] : out.vars) {
    auto a = t.vars.find(k), b = f.vars.find(k);
    if (a != t.vars.end() && b != f.vars.end())
      v = joinArms(a->second, b->second, c);
  }
  return out;
}

struct FnInfo {
  std::string key, name, className;
  SyntaxNode def{};
  std::vector<std::string> decorators;
  bool mainOnly = false; // @rank_zero_only
  // A function defined in another function's body reads that function's
  // names (ijepa's `def save_checkpoint(epoch): if rank == 0: ...` in main).
  bool nested = false;
  bool isModuleMethod = false;
  std::optional<Cond> returnsCond; // `def is_main(): return rank == 0`
  std::optional<CondByParam> returnsCondBy; // `return a if local else b`
  bool returnsRank = false;
  // Answers whether the process group is up (`return dist.is_available() and
  // dist.is_initialized()`): true in a distributed run.
  bool returnsInitialized = false;
  // Returns a value made from the rank (`f"rank_{get_rank()}"`): a per-rank name.
  bool returnsRankDependent = false;
  // Returns a tuple whose element at this index is the rank (`return rank, world_size`).
  int returnsRankAt = -1;
  bool returnsLocalRankAt = false; // that element is the node-local rank (`return use_ddp, local_rank`)
  int returnsInitializedAt = -1;   // the element that says the run has ranks (`return use_ddp, rank`)
  // Every `return` hands back a value a collective agreed (`dist.all_reduce(t)`
  // ... `return t[0] / t[1]`): the call's result is the same on every rank.
  // -1 not built yet, 0 no, 1 yes.
  int returnsAgreed = -1;
  std::string returnsParameter; // every `return` hands back this parameter, never reassigned
  // `return acc, global_acc` where only global_acc was all-reduced: the
  // elements every rank holds alike.
  std::vector<int> returnsAgreedAt;
  // A returned sequence (or a returned tuple's element, -1 the value itself)
  // as long as these parameters (`[f(q) for q in qs]`): see lengthOfParameters.
  std::vector<std::pair<int, std::string>> returnsLengthOf;
  // `@contextmanager def sync_workers(): rank = get_rank(); yield rank; barrier()`.
  bool contextManager = false;
  bool yieldsRank = false;
};

inline std::string unquote(std::string_view t, bool &literal) {
  literal = t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front();
  if (!literal)
    return std::string(t);
  return std::string(t.substr(1, t.size() - 2));
}

// ---------------------------------------------------------------------------
// The Python API (rules/api.yaml, section python).
inline const core::PythonApi &api() { return core::builtinPythonApi(); }

// Every leaf of a condition is tested where the condition is written: the
// core reports a decision once per position.
inline void stamp(Cond &c, Loc at) {
  if (c.loc == 0)
    c.loc = at;
  for (auto &k : c.kids)
    stamp(k, at);
}

// A condition from another module: its positions are that module's.
inline void unstamp(Cond &c) {
  c.loc = 0;
  for (auto &k : c.kids)
    unstamp(k);
}

inline bool intLiteral(std::string_view t, std::int64_t &out) {
  if (t.empty())
    return false;
  std::string s(t);
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (!end || *end)
    return false;
  out = v;
  return true;
}

// One module's builder.  Its work is split by role, as the Clang frontend's:
// PyRankDependence.cpp (how values and conditions vary across ranks),
// PyModelBuilder.cpp (imports, functions, statements, calls: the program model),
// PyFactsBuilder.cpp (process groups, environment, data loaders, forward()).
class Builder {
public:
  Builder(const SyntaxTree &t, const core::Wrappers &u, ModuleContext *project)
      : tree_(t), user_(u), project_(project) {}

  PyModel run();

  // What every call site of the module hands a function's parameter, where
  // that is a rank fact (`train_one_epoch(..., saver=saver)` with a saver that
  // exists on rank 0 only; `save(..., is_master=args.save_logs)`): callee key
  // -> parameter -> the value.  Read after run(); a second builder seeded
  // with them binds the parameters when it builds the callee.
  std::map<std::string, std::map<std::string, Val>> parameterFacts() const;
  bool mainOnlySetting(SyntaxNode e);
  void seedParameters(std::map<std::string, std::map<std::string, Val>> facts) {
    seeded_ = std::move(facts);
  }
  // Specialised functions an importer calls ("fn{rank=-1}"): built too.
  void requestSpecializations(const std::set<std::string> &keys) {
    importerSpecs_ = keys;
  }
  void assumeDistributedByLinks() { distributedByLinks_ = true; }

private:
  struct ParamFact {
    Val v;
    int sites = 0;
    bool agree = true;
  };
  std::map<std::string, std::map<std::string, ParamFact>> paramFacts_;
  std::map<std::string, int> callSites_;
  std::map<std::string, std::map<std::string, Val>> seeded_;
  const SyntaxTree &tree_;
  const core::Wrappers &user_;
  ModuleContext *project_;
  PyModel m_;
  std::map<std::string, std::string> alias_; // local name -> dotted qualified name
  std::map<std::string, FnInfo> fns_;        // key -> function
  bool madeOnEveryPath(SyntaxNode call, int depth = 0) const;
  std::set<std::string> initsGroup_;         // functions that create the process group
  bool initPlain_ = false, initGuarded_ = false; // a group made on every path / under a condition
  bool horovodBarrier_ = false;                  // the fix-it's barrier is hvd's
  // Project helpers called with no argument, in source order (key, spelling):
  // the barrier fix-it's candidates (PyModel::barrierHelper).
  std::vector<std::pair<std::string, std::string>> argumentlessHelpers_;
  std::map<std::string, bool> externalBarrierOnly_;
  std::set<std::string> guardsOnMain_;       // decorators that call what they wrap on rank 0 only
  std::set<std::string> launches_;           // functions that start the ranks (Function::launchesRanks)
  std::map<std::string, std::vector<std::string>> classBases_;
  std::map<std::string, ObjKind> objects_; // spelling ("model", "self.model") -> kind
  // The classes whose methods set a `self.` object: denoising-diffusion's
  // Trainer prepares `self.model` with Accelerate, while its GaussianDiffusion's
  // `self.model` is the plain Unet.  Read through findObject.
  std::map<std::string, std::set<std::string>> selfObjectClasses_;
  void noteSelfObject(const std::string &spelling, SyntaxNode at);
  std::map<std::string, ObjKind>::const_iterator findObject(const std::string &spelling) const;
  std::map<std::string, Val> attrs_;       // "self.rank", "args.local_rank" -> value
  // A project module's names bound to torch's functions, by the dotted name
  // an importer reads (`linklink.allreduce` -> "torch.distributed.all_reduce").
  std::map<std::string, std::string> moduleAliases_;
  std::map<std::string, Val> globals_;
  std::set<std::string> spawned_; // functions started by mp.spawn: first parameter is the rank
  // A function's names handed as init_process_group's `rank=` (by the
  // function's start byte).
  std::set<std::pair<unsigned, std::string>> worldRankNames_;
  // Attributes handed as init_process_group's `rank=` (ffcv-imagenet's
  // `rank=self.gpu`): the process's rank wherever the module reads them.
  std::set<std::string> worldRankAttributes_;
  // The tests (spaces out) of the `if`s whose then-arm makes the world.
  std::set<std::string> distSwitches_;
  bool askingSwitch_ = false;
  std::set<std::string> loaderNames_; // names assigned a loader's iteration (`pbar = enumerate(loader)`)
  // `data_iter = enumerate(train_loader)`, then `for i, b in data_iter`: the call.
  std::map<std::string, SyntaxNode> enumeratedNames_;
  std::set<std::string> memoryFiles_; // io.BytesIO() objects: torch.save into them is no file
  // Set by a signal handler this module registers (`signal.signal(SIGTERM,
  // handler)`): module globals and attribute names, rank-local wherever read;
  // the attributes of the project modules it imports too (read lazily).
  std::set<std::string> signalGlobals_, signalAttrs_;
  // The names of the functions it registers as handlers: they run in the
  // middle of the run, between (or inside) its steps.
  std::set<std::string> signalHandlers_;
  // Names holding a main-process checkpointer (api.yaml main_process_checkpointer_classes).
  std::set<std::string> mainCheckpointers_;
  // Names holding a checkpointer that writes on every rank that calls it
  // (api.yaml every_rank_checkpointer_classes, or a wrapper of one).
  std::set<std::string> everyRankCheckpointers_;
  void noteCheckpointer(SyntaxNode left, SyntaxNode right);
  // Where a library checkpointer made by (or held in) `made` writes.
  enum class CheckpointerWrites { None, Main, Every };
  CheckpointerWrites checkpointerWrites(SyntaxNode made);
  // The text of a main-process test that a call sits under within its
  // function (`if comm.is_main_process(): ret.append(...)`, `hook if
  // comm.is_main_process() else None`); empty when none.
  std::string mainGuardText(SyntaxNode call);
  // A library's checkpoint hook made here (api.yaml
  // step_checkpoint_hook_classes) that saves on rank 0 alone becomes a
  // function of its own that runs every step (Function::libraryHook), one per
  // location (noteStepCheckpointHook).
  std::vector<core::Function> stepHookFns_;
  std::set<Loc> stepHookSites_;
  // Names this function rebinds to a wrapper's bare module (`model =
  // accelerator.unwrap_model(model)`): their forward is no DDP forward.
  // Functions registered with register_save_state_pre_hook, in order (run
  // inside each later `accelerator.save_state(...)`).
  std::vector<std::string> saveStateHooks_;
  std::set<std::string> unwrapped_;
  std::optional<std::set<std::string>> importedSignalAttrs_;
  void collectSignalFlags(SyntaxNode root);
  bool signalFlagAttribute(const std::string &attr);
  std::set<std::string> logFiles_;    // handles open() gave for a log: json.dump(x, f) logs
  std::set<std::string> savers_;      // spellings of a library's checkpoint saver (timm's)
  // Per function (keyed by its first byte): the names and attribute chains
  // that its file writes take as arguments (see probeRacesWrite).
  // Per function (by its start byte): the writes of its body with the names
  // of what they write, and where its collectives and barriers are.
  struct FunctionWrites {
    struct Write {
      SyntaxNode call;
      std::set<std::string> names;
    };
    std::vector<Write> writes;
    std::vector<SyntaxNode> syncs;
  };
  std::map<std::uint32_t, FunctionWrites> writtenNames_;
  // Names bound to this process's own temporary folder or file, by function.
  std::set<std::pair<std::string, std::string>> privateFiles_;
  // returnedInstance's and returnedClass's answers, by the definition's start byte.
  mutable std::map<std::uint32_t, std::string> instanceMemo_, classMemo_;
  // A nested function's enclosing names, as they are where it is defined.
  std::map<std::string, std::map<std::string, Val>> closures_;
  bool probeRacesWrite(SyntaxNode probeCall);
  bool namesSharding() const;
  bool usedAsContainer(SyntaxNode root, const std::string &spelling);
  std::set<std::string> containerUses_;
  bool containerUsesRead_ = false;
  // What `accelerator.prepare(...)` made of the names that say "model": a
  // wrapped model, or a dict of modules handed back as it was.
  bool preparedModel_ = false, preparedContainer_ = false;
  // The other side of the enclosing `if sharded or <rank test>:` (accelerate's
  // documented save_state guard), or null.
  SyntaxNode shardingDisjunctOther(SyntaxNode call) const;
  mutable int namesSharding_ = -1;
  // Collectives written in a function's body, or in the project functions it
  // calls (to `depth` levels).
  bool bodySynchronises(SyntaxNode def, int depth);
  bool synchronisingCall(SyntaxNode fn) const;
  // Code that hands a function running collectives to something else to call
  // (`button.click(fn=generate)`, `serve(handle)`), here or in a helper it calls.
  bool handsOffCollectiveCallback(SyntaxNode code, int depth);
  std::map<std::string, std::string> instances_; // variable -> class of this module
  std::map<std::string, std::string> closureSelfClass_; // a closure in a method -> the method's class
  std::string enclosingMethodClass_;                    // while collecting: the method being read
  std::map<std::string, SyntaxNode> classDefs_;   // class of this module -> its definition
  std::map<std::string, std::vector<SyntaxNode>> ddpModules_; // DDP variable -> its constructions
  std::set<std::string> quietDdp_; // parameters bound to a caller's DDP model that broadcasts no buffers
  // Does the DDP model held by `spelling` broadcast buffers in its forward:
  // broadcast_buffers not False and a module not known to be buffer-free.
  bool ddpBroadcastsBuffers(const std::string &spelling) const;
  void wrapsAround(const std::string &spelling, SyntaxNode at, bool &before, bool &after) const;
  bool wrappedLater(const std::string &spelling, SyntaxNode at) const;
  bool loadedPlain(SyntaxNode arg, SyntaxNode at) const;
  std::string fileKey(SyntaxNode path) const;
  // Whether some call under `root` satisfies `pred` (walks the whole tree).
  bool anyCall(SyntaxNode root, const std::function<bool(SyntaxNode)> &pred) const;
  bool callsWritten(SyntaxNode root, std::initializer_list<std::string_view> spellings) const;
  bool beforeAnyDdp(SyntaxNode at) const;
  bool bufferFree(SyntaxNode e, int depth) const;
  bool partsBufferFree(SyntaxNode e, int depth) const;
  bool classBufferFree(const std::string &cls, int depth) const;
  bool returnsCollectiveOutput(SyntaxNode body, int depth = 0, int element = -1) const;
  bool agreesFirstArgument(const FnInfo &fi, int depth = 0) const;
  std::string forwardedCall(SyntaxNode fn) const;
  bool returnsWorldSize(const FnInfo &fi) const;
  void markOwnGuardingDecorators();
  std::vector<std::string> fullStateScopes_; // models under state_dict_type(.., FULL_STATE_DICT)
  bool fullStateDict_ = false;
  bool hasDdp_ = false;
  bool distributedByLinks_ = false; // see buildModel
  // init_process_group calls that can run: with world_size=1, and others.
  int oneRankInits_ = 0, manyRankInits_ = 0;
  // A module built for an importer assumes the importer wraps the model in
  // DDP (hasDdp_ without a DDP of its own): the implicit collectives that
  // assumption makes are marked, for an importer that turns out not to.
  bool ddpAssumed_ = false;
  mutable bool lastImplicitAssumed_ = false;
  bool usesDist_ = false;
  // The module starts its process group with the local rank as the rank.
  bool localRankIsGlobal_ = false;
  // Walk state
  std::string curClass_, curFn_;
  Env env_;
  int noSync_ = 0;
  int noGrad_ = 0; // inside `with torch.no_grad():` or a @torch.no_grad() function
  struct LoopCtx {
    Loc loc = 0;
    bool perEpoch = false;
    std::set<std::string> vars; // the loop's variables, and names assigned from them in it
    SyntaxNode body;            // the loop's body (refilledInLoop)
    std::string text;
    // Over a written list of one element (`for criteria in ['best-f1']`), or a
    // retry loop whose body ends in `break` (VMamba's halve-the-batch-on-OOM
    // `while bs > 0: try: ...; break`): one pass that gets through.
    bool once = false;
  };
  std::vector<LoopCtx> loops_;

  std::string_view text(SyntaxNode n) const { return tree_.text(n); }
  std::string str(SyntaxNode n) const { return std::string(text(n)); }

  Loc loc(SyntaxNode n) {
    if (reuseLocs_)
      if (auto it = locAt_.find(startByte(n)); it != locAt_.end())
        return it->second;
    m_.positions.push_back(startOf(n));
    m_.byteOffsets.push_back(startByte(n));
    return static_cast<Loc>(m_.positions.size());
  }
  std::vector<unsigned> lineStarts_;
  // A position at any byte (fix anchors sit between tokens).
  Loc locByte(unsigned byte) {
    if (reuseLocs_)
      if (auto it = locAt_.find(byte); it != locAt_.end())
        return it->second;
    if (lineStarts_.empty()) {
      lineStarts_.push_back(0);
      const std::string &src = tree_.source();
      for (unsigned i = 0; i < src.size(); ++i)
        if (src[i] == '\n')
          lineStarts_.push_back(i + 1);
    }
    auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), byte);
    unsigned line = static_cast<unsigned>(it - lineStarts_.begin());
    m_.positions.push_back({line, byte - lineStarts_[line - 1] + 1});
    m_.byteOffsets.push_back(byte);
    return static_cast<Loc>(m_.positions.size());
  }
  core::Facts &facts() { return m_.program.facts; }
  std::string fnKey() const { return curFn_.empty() ? "<module>" : curFn_; }
  std::vector<core::LoopInfo> loopInfos(SyntaxNode datasetArg) const;
  bool storedInContainer(SyntaxNode call) const;
  bool dataParallelOnly(SyntaxNode at) const;
  mutable std::map<unsigned, bool> dataParallelOnly_; // by the outermost definition's start byte
  bool refilledInLoop(const std::string &container, SyntaxNode body, unsigned before) const;

  // --- names --------------------------------------------------------------
  // The dotted name of an identifier or attribute chain with the import aliases
  // applied: `dist.all_reduce` -> "torch.distributed.all_reduce".
  std::string qualified(SyntaxNode n) const {
    if (is(n, "identifier")) {
      std::string s = str(n);
      auto it = alias_.find(s);
      return it == alias_.end() ? s : it->second;
    }
    if (is(n, "attribute")) {
      std::string obj = qualified(field(n, "object"));
      if (obj.empty())
        return "";
      std::string q = obj + "." + str(field(n, "attribute"));
      if (!moduleAliases_.empty())
        if (auto m = moduleAliases_.find(q); m != moduleAliases_.end())
          return m->second;
      return q;
    }
    return "";
  }

  static SyntaxNode unparen(SyntaxNode n) {
    while (is(n, "parenthesized_expression") && namedChildCount(n) == 1)
      n = namedChild(n, 0);
    return n;
  }

  std::vector<PyArg> args(SyntaxNode call) const {
    std::vector<PyArg> out;
    SyntaxNode al = field(call, "arguments");
    // `any(len(t) < 1 for t in targets)`: a generator is the one argument.
    if (is(al, "generator_expression")) {
      PyArg pa;
      pa.value = al;
      pa.text = text(al);
      out.push_back(pa);
      return out;
    }
    if (!is(al, "argument_list"))
      return out;
    for (SyntaxNode a : namedKids(al)) {
      if (is(a, "comment"))
        continue;
      PyArg pa;
      if (is(a, "keyword_argument")) {
        pa.name = text(field(a, "name"));
        pa.value = field(a, "value");
      } else {
        pa.value = a;
      }
      pa.text = text(pa.value);
      out.push_back(pa);
    }
    return out;
  }

  static const PyArg *arg(const std::vector<PyArg> &as, const char *name, int pos) {
    for (const auto &a : as)
      if (a.name == name)
        return &a;
    int i = 0;
    for (const auto &a : as) {
      if (!a.name.empty() || is(a.value, "list_splat") || is(a.value, "dictionary_splat"))
        break;
      if (i++ == pos)
        return &a;
    }
    return nullptr;
  }

  // --- pre-passes -----------------------------------------------------------
  void collectImports(SyntaxNode root);
  void collectFunctions(SyntaxNode blk, const std::string &prefix, const std::string &cls);
  void collectObjects(SyntaxNode n);
  ObjKind kindOfCtor(SyntaxNode call) const;
  // Every return hands back a new DDP model (`def smart_DDP(model): return DDP(model, ...)`).
  bool returnsDdpModel(SyntaxNode def) const;
  std::string returnedInstance(SyntaxNode def) const;
  // Every return hands back one class itself, not an instance (rq-vae's
  // `def create_trainer(config): return TrainerRQVAE`): its name, dotted
  // where it is another module's.
  std::string returnedClass(SyntaxNode def) const;
  std::string returnedClassOrInstance(SyntaxNode def, bool classObject) const;
  // The class a call of `callee` hands back, if a factory of this module or another's.
  std::string returnedClassOf(SyntaxNode callee) const;
  bool isNnModule(const std::string &cls, int depth = 0) const;
  bool derivesFrom(const std::string &cls, std::initializer_list<const char *> bases,
                   int depth = 0) const;
  bool isLightningModule(const std::string &cls) const;
  bool isFabricClass(const std::string &cls) const;

  // --- values (PyRankDependence.cpp) ----------------------------------------
  Val value(SyntaxNode e);
  bool flagParameter(const std::string &name) const;
  Val callValue(SyntaxNode call);
  std::optional<RankKind> rankSource(SyntaxNode e);
  std::optional<RankKind> rankSourceAsWritten(SyntaxNode e);
  std::string folderParam(SyntaxNode path, SyntaxNode def, const std::set<std::string> &params,
                          int depth = 0) const;
  Cond cond(SyntaxNode e);
  // A call that asks whether the process group is up: true in the run the rules read.
  bool initializedTest(SyntaxNode call);
  // `dist.get_world_size()`, `args.world_size`, `opts.num_gpus`.
  bool worldSizeValue(SyntaxNode x);
  bool totalSizeValue(SyntaxNode x);
  Cond atom(SyntaxNode e, Dep d);
  // A parameter of the function being built that its body never assigns.
  bool unassignedParameter(SyntaxNode e);
  std::map<std::string, std::set<std::string>> assignedIn_; // function key -> names its body binds
  void bind(SyntaxNode target, const Val &v);
  void bindTargets(SyntaxNode target, Dep d);
  bool isLoaderIterable(SyntaxNode it) const;
  bool drawsLoaderBatch(SyntaxNode tryBody);
  bool loadsOneSharedFile(SyntaxNode tryBody);
  bool caughtByEnclosingTry(SyntaxNode raise) const;
  bool handsExceptionOn(SyntaxNode handlerBody) const;
  bool initsProcessGroupIn(SyntaxNode body) const;
  bool contentErrorsOnly(SyntaxNode exceptClause) const;

  // --- statements (PyModelBuilder.cpp) -------------------------------------
  void block(SyntaxNode b, std::vector<Node> &out);
  void statement(SyntaxNode s, std::vector<Node> &out);
  void expressionStatement(SyntaxNode s, std::vector<Node> &out);
  void ifStatement(SyntaxNode s, std::vector<Node> &out);
  void forStatement(SyntaxNode s, std::vector<Node> &out);
  void whileStatement(SyntaxNode s, std::vector<Node> &out);
  void withStatement(SyntaxNode s, std::vector<Node> &out);
  void tryStatement(SyntaxNode s, std::vector<Node> &out);
  void matchStatement(SyntaxNode s, std::vector<Node> &out);
  void expr(SyntaxNode e, std::vector<Node> &out); // events of the calls in e, in order
  // --- calls ------------------------------------------------------------------
  // A call as the builder reads it: the callee's qualified and last name, its
  // receiver's spelling, its arguments.
  struct CallSite {
    SyntaxNode c, fn;
    std::string q, l, recv;
    std::vector<PyArg> as;
    bool dist = false; // a function of torch.distributed itself
    bool builtinOpen() const { return q == "open" || q == "io.open" || q == "builtins.open"; }
  };
  void recordArguments(const std::string &callee, const CallSite &cs, bool constructor = false);
  // An exit with a failure status in a handler round the script's top level.
  bool crashHandlerExit(const CallSite &cs) const;
  bool entryWrapper(SyntaxNode def, SyntaxNode tryAt) const;
  // The rank decision one arm of which holds a call directly (`if rank == 0:
  // Trainer(logger=l)` / `else: Trainer()`), and whether it is the then-arm.
  std::optional<std::pair<Cond, bool>> enclosingRankArm(SyntaxNode call);
  CallSite callSite(SyntaxNode c) const;
  void call(SyntaxNode c, std::vector<Node> &out);
  void noteStepCheckpointHook(const CallSite &cs);
  bool collectiveCall(const CallSite &cs, std::vector<Node> &out);
  bool worldGroupValue(SyntaxNode v, int depth) const;
  bool fixedLengthSequence(SyntaxNode v) const;
  bool plainBindings(SyntaxNode def, const std::string &name, const std::set<std::string> &mutators,
                     std::vector<SyntaxNode> &values) const;
  bool raggedLoader(SyntaxNode iter);
  bool oneProcessArm(SyntaxNode n);
  Dep samplerLengthDep(SyntaxNode e, int depth);
  bool modelForward(SyntaxNode fn) const;
  bool onWorldGroup(const CallSite &cs) const;
  bool ioCall(const CallSite &cs, std::vector<Node> &out);
  void fileRead(const CallSite &cs, std::vector<Node> &out);
  // What an open() call writes: None (reads), a log, or another file.
  enum class OpenKind { None, Log, File };
  // `path`, when given, receives the expression that names the file.
  // `readBack`: ask whether the writing function reads a text file back
  // (readBackAfter); off inside that question, which asks of later calls.
  OpenKind openKind(SyntaxNode call, SyntaxNode *path = nullptr, bool readBack = true) const;
  bool namesLog(SyntaxNode path, int depth = 0) const;
  // The value of the last `name = ...` before `name`, in its function.
  SyntaxNode assignedBefore(SyntaxNode name) const;
  // What a local name stands for: its last assignment's value, followed
  // through up to `hops` names (`file = out + "_" + str(shard)`, then
  // `f = file`); the expression itself when it is not a name.
  SyntaxNode nameValue(SyntaxNode expr, int hops) const;
  bool oneDeviceFramework(SyntaxNode root) const;
  bool acceleratorForAutocastOnly(SyntaxNode root) const;
  bool writesThroughSplat(SyntaxNode def) const;
  bool namesThisProcess(SyntaxNode e) const;
  bool makesSaver(SyntaxNode v) const;
  void helperCall(const CallSite &cs, std::vector<Node> &out);
  void checkThatMayRaise(const CallSite &cs, const std::vector<ParamSig> &params, bool method,
                         std::vector<Node> &out);
  void emit(std::vector<Node> &out, SyntaxNode at, EventKind kind, std::string name);
  ObjKind objectKind(const std::string &spelling) const;
  // --- facts (PyFactsBuilder.cpp) ------------------------------------------
  void environmentCall(const CallSite &cs);
  bool processGroupCall(const CallSite &cs, std::vector<Node> &out);
  const core::PyProcessGroupInit *processGroupInit(const CallSite &cs) const;
  bool dataLoaderCall(const CallSite &cs);
  std::map<std::string, SyntaxNode> splattedOptions(SyntaxNode splat, SyntaxNode call) const;
  // The first of the catalog's implicit collectives that the call matches; its event's name.
  // `standsInFor`: set for a DDP forward under no_grad (Node::standsInFor).
  bool implicitCollective(SyntaxNode fn, const std::string &recv, const std::string &method,
                          const std::vector<PyArg> &as, std::string &name,
                          std::string *standsInFor = nullptr, bool *barrier = nullptr) const;
  static bool noGradDecorated(const FnInfo &fi);
  static bool isProperty(const FnInfo &fi);
  bool implicitObject(const std::string &kind, const std::string &spelling) const;
  // Whether this module is Lightning 1.x code (api.yaml lightning_1_markers).
  bool lightning1() const;
  mutable int lightning1_ = -1;
  const std::set<std::string> &lightningTrainerNames() const;
  const std::set<std::string> &lossScalerNames() const;
  std::set<std::string> namesBoundToCalls(const std::function<bool(SyntaxNode)> &makes) const;
  bool dispatchesModelOverDevices(SyntaxNode root) const;
  mutable std::optional<std::set<std::string>> lossScalers_;
  mutable std::optional<std::set<std::string>> lightningTrainers_;
  Node ifChain(SyntaxNode cond, SyntaxNode then, const std::vector<SyntaxNode> &alts, size_t i, Loc at);
  void buildFunction(const FnInfo &fi);
  std::string resolveCallee(SyntaxNode fn) const;
  Node guardedByCall(Cond c, SyntaxNode call, Loc at, Node what);
  // The constructor makes a null object (see Val::nullObject).
  bool nullObjectClass(SyntaxNode ctor) const;
  bool unsupportedConfiguration(SyntaxNode raise);
  bool abstractMethod(const FnInfo &fi) const;
  bool pathProbe(SyntaxNode c) const;
  bool namesPrivateFile(SyntaxNode e) const;
  bool derivesFrom(std::string cls, const std::string &base) const;
  // A callee in another module of the project (null: none, or no project).
  const ExternalFunction *externalCallee(SyntaxNode fn) const;
  // Which element of the tuple a call returns is the rank (`rank, world =
  // get_dist_info()`), this module's helper or another's; -1 when none.
  int rankElementOf(SyntaxNode call, bool *local = nullptr) const;
  int initializedElementOf(SyntaxNode call) const;
  bool distributedRunTest(SyntaxNode e);
  bool superCall(SyntaxNode object) const;
  std::string superBase() const;
  std::string firstLocalImport(SyntaxNode def, const std::string &name) const;
  bool dumpsSettingsOnly(SyntaxNode openCall) const;
  bool readBackAfter(SyntaxNode path, SyntaxNode openCall) const;
  bool readBackScan(SyntaxNode path, SyntaxNode openCall) const;
  mutable std::map<uint32_t, bool> readBack_; // an open call's node -> readBackAfter
  bool abstractStub(const FnInfo &fi) const;
  bool pathNamesRank(SyntaxNode path) const;
  void bindAgreed(SyntaxNode buffer);
  std::optional<Dep> decisionReturnDep(const FnInfo &fi);
  std::string methodOf(std::string cls, const std::string &m, std::string *external) const;
  std::string absoluteModule(const std::string &mod) const; // ".misc" -> "util.misc"
  std::map<std::string, std::string> externInstances_; // variable -> dotted class of another module
  // Variables bound to a class itself (`trainer = create_trainer(config)`),
  // so that calling them makes an instance (`trainer = trainer(model, ...)`).
  std::map<std::string, std::string> classValues_;
  void forwardFacts(const FnInfo &fi);
  Env paramEnv(const FnInfo &fi);
  void buildFunctionRest(const FnInfo &fi, std::vector<Node> body);
  core::Function functionNode(const FnInfo &fi, std::vector<Node> body);

  // --- specialization (PyModelBuilder.cpp) ---------------------------------
  // A call that hands a parameter the body tests a constant
  // (`create_dataloader(path, rank=-1)`, or leaves it at a literal default)
  // runs the callee with that constant: `if local_rank not in [-1, 0]:
  // dist.barrier()` then decides alike on every rank.  Read without the
  // caller's value, the callee's summary (a barrier on every rank) would make
  // rank 0's call look like a divergence.  The call names the callee's
  // specialisation, "fn{rank=-1}", built after the module's functions with the
  // parameter bound, at the same positions as the plain build (its findings
  // are the plain build's, not new ones).  Another module's function is
  // specialised when the project links it (PyProject::link).
  static constexpr size_t kMaxSpecializations = 32;
  std::vector<ParamSig> signature(const FnInfo &fi, bool &method);
  std::vector<ParamSig> parameterList(const FnInfo &fi, bool &method) const;
  std::string returnedParameter(const FnInfo &fi) const;
  std::vector<std::pair<int, std::string>> lengthOfParameters(const FnInfo &fi) const;
  bool lengthFollowsArguments(SyntaxNode call, int element);
  bool copiesProbedSource(SyntaxNode probe, SyntaxNode body) const;
  std::string initRankParameter(SyntaxNode def) const;
  bool localRankArgument(SyntaxNode arg, SyntaxNode call);
  bool placeholderTensor(SyntaxNode e) const;
  // `if not hasattr(get_global_group, "_global_group"): get_global_group.
  // _global_group = dist.new_group()` (fairseq), `if _GROUP is None: _GROUP =
  // new_group(...)`: a group made once per process, at its first use.
  bool memoisedCreation(SyntaxNode call) const;
  bool bareModule(SyntaxNode a) const;
  std::string specialize(const std::string &key, const std::vector<ParamSig> &params, bool method,
                         const CallSite &cs);
  // `none`: `None` is a constant too (kNoneValue), for a caller's argument
  // tested in the callee (`evaluate(..., output_folder=None)`, then `if
  // output_folder:`); a default of None is not bound.
  static constexpr std::int64_t kNoneValue = INT64_MIN;
  std::optional<std::int64_t> constantArgument(SyntaxNode v, bool none = false) const;
  std::optional<bool> knownTest(SyntaxNode lhs, SyntaxNode rhs, const std::string &op) const;
  void buildSpecializations();
  void markLaunchers();
  bool readsLauncherEnv(SyntaxNode root) const;
  void noteGuardingDecorator(SyntaxNode s);
  std::optional<std::pair<std::string, std::string>> decoratorOf(const std::string &wrapperKey) const;
  bool callsOnMainOnly(SyntaxNode ifStatement, const std::string &decorated);
  std::set<std::string> specRequests_;
  std::set<std::string> importerSpecs_;
  std::map<std::string, std::pair<bool, std::vector<ParamSig>>> sigCache_; // key -> (method, params)
  std::map<std::string, std::int64_t> specBindings_; // while a specialisation is built
  // While a specialisation for a receiver is built ("{__self=pkg.ltr.LTRTrainer}"):
  // the dotted class of the object whose inherited method this is, so that
  // `self.train_epoch()` runs that class's override in another module.
  std::string receiver_;
  const ExternalFunction *receiverOverride(const std::string &method) const;
  bool definesMethods(const std::string &cls) const;
  std::set<std::string> specRankPaths_; // its parameters bound to a per-rank file name
  std::set<std::string> specRecordPaths_; // its parameters bound to a settings record's name
  bool reuseLocs_ = false;
  // Inside an except handler (and not in a try nested in it): a `raise` there
  // propagates the failure, the rule's own fix (see tryStatement).
  bool inHandler_ = false;
  std::map<unsigned, Loc> locAt_; // byte -> the plain build's position there
  Loc argsEnd(SyntaxNode call);
  void envSet(SyntaxNode name, SyntaxNode value, SyntaxNode at);
  void envSetNamed(const std::string &name, SyntaxNode value, SyntaxNode at);
  void envRead(SyntaxNode name, SyntaxNode at);
  void envName(core::EnvSetting &e, SyntaxNode name);
  void envValue(core::EnvSetting &e, SyntaxNode value);
};

} // namespace ddplint::pyfe::build
