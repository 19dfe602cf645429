// Python syntax tree -> the core's program model: imports and aliases, the
// module's functions and classes, the objects it makes (a DDP model, an
// Accelerator), and each function's statements as structured events
// (collectives explicit and implicit, IO, exits), calls, branches and loops.
#include "PyBuilder.h"
#include <sstream>

namespace ddplint::pyfe {
namespace build {

// `mod` is the package `pkg` or one of its modules (`lightning_utilities` is not
// `lightning`).
static bool inPackage(std::string_view mod, std::string_view pkg) {
  return mod == pkg || (startsWith(mod, pkg) && mod.size() > pkg.size() && mod[pkg.size()] == '.');
}

// Frameworks whose import says the program runs on several ranks.
static bool distributedFramework(std::string_view mod) {
  // DeepSpeed's device abstraction (`from deepspeed.accelerator import
  // get_accelerator`) is imported by single-process scripts too.
  if (inPackage(mod, "deepspeed.accelerator"))
    return false;
  for (std::string_view f : {"deepspeed", "horovod", "megatron", "colossalai", "fairscale", "mpi4py",
                             "mmengine.dist", "flashy"})
    if (inPackage(mod, f))
      return true;
  return false;
}

// A call that starts the ranks as child processes and waits for them: the
// caller's own code runs in the launcher's one process.
static bool startsRanks(const std::string &q, const std::string &l) {
  if (l == "spawn" || l == "start_processes")
    return startsWith(q, "torch.multiprocessing.") || startsWith(q, "mp.") ||
           startsWith(q, "torch.distributed.elastic.multiprocessing.");
  return l == "elastic_launch" && startsWith(q, "torch.distributed.launcher");
}

// A test of the rank alone (`dist.get_rank() == 0`, and/or/not of such), no
// opaque atom: asserting it says which ranks go on.
static bool testsOnlyTheRank(const Cond &c) {
  if (c.kind == Cond::Kind::RankCmp || c.kind == Cond::Kind::Const)
    return true;
  if (c.kind == Cond::Kind::Atom || c.kids.empty())
    return false;
  for (const auto &k : c.kids)
    if (!testsOnlyTheRank(k))
      return false;
  return true;
}

// torch.distributed.checkpoint loads and saves without a process group
// (LLaMA-Factory's `scripts/dcp2hf.py` converts a checkpoint in one
// process): importing it alone does not make a program distributed.  Its
// `state_dict` helpers gather a sharded model's state: they do.  DTensor's
// types (`from torch.distributed._tensor import DTensor, Shard`) are read the
// same way by shard mergers (EasyR1's `model_merger.py`); a program that runs
// DTensors on ranks makes its mesh or process group too.
static bool offlineDistributedModule(const std::string &mod) {
  return mod == "torch.distributed._tensor" || mod == "torch.distributed.tensor" ||
         mod == "torch.distributed._tensor.placement_types" ||
         mod == "torch.distributed.tensor.placement_types" ||
         mod == "torch.distributed.checkpoint" ||
         mod == "torch.distributed.checkpoint.format_utils" ||
         mod == "torch.distributed.checkpoint.filesystem";
}

void Builder::collectImports(SyntaxNode root) {
  std::vector<SyntaxNode> stack{root};
  bool firstImportSeen = false;
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    const bool topLevel = is(parentOf(n), "module");
    if (is(n, "import_statement")) {
      if (!firstImportSeen && topLevel) {
        firstImportSeen = true;
        m_.hasImports = true;
        m_.importInsertAt = startByte(n);
      }
      for (SyntaxNode k : namedKids(n)) {
        if (is(k, "dotted_name")) {
          std::string full = str(k);
          alias_[full.substr(0, full.find('.'))] = full.substr(0, full.find('.'));
          if (full == "torch.distributed" || distributedFramework(full))
            usesDist_ = true;
          // `import accelerate` ... `accelerate.Accelerator()` (U-ViT's
          // scripts); the package alone may be there for its big-model helpers.
          if (full == "accelerate") {
            usesDist_ = usesDist_ || callsWritten(root, {"accelerate.Accelerator", "accelerate.PartialState"});
          }
        } else if (is(k, "aliased_import")) {
          std::string full = str(field(k, "name"));
          alias_[str(field(k, "alias"))] = full;
          if ((startsWith(full, "torch.distributed") && !offlineDistributedModule(full)) ||
              distributedFramework(full))
            usesDist_ = true;
        }
      }
    } else if (is(n, "import_from_statement")) {
      std::string mod = absoluteModule(str(field(n, "module_name")));
      if (mod == "__future__")
        continue;
      if (!firstImportSeen && topLevel) {
        firstImportSeen = true;
        m_.hasImports = true;
        m_.importInsertAt = startByte(n);
      }
      // Accelerate's big-model inference helpers (hooks, offloading, device
      // maps) run in one process: a quantiser importing them is not distributed.
      bool bigModel = startsWith(mod, "accelerate.hooks") || startsWith(mod, "accelerate.big_modeling") ||
                      startsWith(mod, "accelerate.utils.modeling");
      // `from accelerate import init_empty_weights` (a conversion script's
      // meta-device construction) names the same helpers at the package.
      if (mod == "accelerate" || mod == "accelerate.utils") {
        static const std::set<std::string> bigModelNames = {
            "init_empty_weights", "init_on_device", "load_checkpoint_and_dispatch", "dispatch_model",
            "infer_auto_device_map", "cpu_offload", "disk_offload", "load_checkpoint_in_model",
            "set_module_tensor_to_device", "get_balanced_memory", "compute_module_sizes"};
        bool onlyBigModel = true, any = false;
        for (SyntaxNode k : namedKids(n))
          if (k != field(n, "module_name")) {
            any = true;
            onlyBigModel = onlyBigModel &&
                           bigModelNames.count(str(is(k, "aliased_import") ? field(k, "name") : k)) > 0;
          }
        bigModel = bigModel || (any && onlyBigModel);
      }
      // `from lightning.fabric import seed_everything` (a test seeding its
      // model), `from accelerate.utils import set_seed` (lerobot's RNG
      // helpers) is not a distributed program; Fabric, Trainer, strategies,
      // the Accelerator are.
      bool seedOnly = true;
      for (SyntaxNode k : namedKids(n))
        if (k != field(n, "module_name")) {
          const std::string name = str(is(k, "aliased_import") ? field(k, "name") : k);
          seedOnly = seedOnly && (name == "seed_everything" || name == "set_seed");
        }
      const bool lightning = (inPackage(mod, "lightning") || inPackage(mod, "pytorch_lightning")) && !seedOnly;
      // gpt-neox's own `megatron` package: `from megatron.tokenizer import
      // build_tokenizer` names a function of the project, whose module says
      // for itself whether it is distributed (when the call is linked), not by
      // the framework's name.
      const bool framework = distributedFramework(mod);
      bool projectOwn = framework && project_ != nullptr;
      for (SyntaxNode k : namedKids(n))
        if (projectOwn && k != field(n, "module_name")) {
          const std::string name = str(is(k, "aliased_import") ? field(k, "name") : k);
          std::string dotted = mod;
          if (!mod.empty() && mod.back() != '.')
            dotted += '.';
          dotted += name;
          projectOwn = projectOwn && (project_->function(dotted) || project_->isClass(dotted));
        }
      // DeepSpeed's checkpoint constants and its logger (an offline
      // ZeRO-to-fp32 converter's imports) run no process group.
      bool dsOffline = inPackage(mod, "deepspeed.checkpoint") || mod == "deepspeed.utils.zero_to_fp32";
      if (mod == "deepspeed.utils") {
        bool any = false, onlyLogger = true;
        for (SyntaxNode k : namedKids(n))
          if (k != field(n, "module_name")) {
            any = true;
            const std::string name = str(is(k, "aliased_import") ? field(k, "name") : k);
            onlyLogger = onlyLogger && (name == "logger" || name == "log_dist");
          }
        dsOffline = any && onlyLogger;
      }
      if ((inPackage(mod, "torch.distributed") && !offlineDistributedModule(mod)) ||
          (inPackage(mod, "accelerate") && !bigModel && !seedOnly) ||
          lightning || (framework && !projectOwn && !dsOffline))
        usesDist_ = true;
      SyntaxNode modNode = field(n, "module_name");
      for (SyntaxNode k : namedKids(n)) {
        if (k == modNode)
          continue;
        const std::string dot = mod.empty() || mod.back() == '.' ? "" : ".";
        if (is(k, "dotted_name"))
          alias_[str(k)] = mod + dot + str(k);
        else if (is(k, "aliased_import"))
          alias_[str(field(k, "alias"))] = mod + dot + str(field(k, "name"));
        else if (is(k, "wildcard_import") && topLevel && !mod.empty() && mod.back() != '.') {
          m_.starImports.push_back(mod);
          // `from transformers.trainer import *` then `class BiTrainer(Trainer)`
          // (FlagEmbedding's retrievers): the library's trainer classes of
          // that module by their bare names, as a named import binds them.
          for (const std::string &q : api().mainProcessOverrideBases)
            if (q.size() > mod.size() + 1 && q.compare(0, mod.size() + 1, mod + ".") == 0 &&
                q.find('.', mod.size() + 1) == std::string::npos)
              alias_.emplace(q.substr(mod.size() + 1), q);
        }
      }
    } else if (is(n, "module") || is(n, "block") || is(n, "if_statement") ||
               is(n, "try_statement") || is(n, "else_clause") || is(n, "except_clause") ||
               is(n, "function_definition") || is(n, "decorated_definition") ||
               is(n, "elif_clause") || is(n, "finally_clause") || is(n, "with_statement") ||
               // wenet's Executor: `import torch.distributed as dist` in a
               // method, inside the loop and the branch that use it.
               is(n, "class_definition") || is(n, "for_statement") || is(n, "while_statement")) {
      auto kids = namedKids(n);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it)
        stack.push_back(*it);
    }
  }
  // `allreduce = dist.all_reduce` at the top of this module, or of a project
  // module it imports (DeCLIP's vendored `linklink`: `link.allreduce(t)`,
  // `from linklink import allreduce`): the name is the function.
  for (auto &[name, target] : libraryFunctionAliases(tree_))
    alias_.emplace(name, target);
  if (project_) {
    std::map<std::string, std::map<std::string, std::string>> asked;
    auto aliasesOf = [&](const std::string &module) -> const std::map<std::string, std::string> & {
      auto [it, fresh] = asked.try_emplace(module);
      if (fresh && !startsWith(module, "torch"))
        it->second = project_->libraryAliasesOf(module);
      return it->second;
    };
    for (auto &[local, full] : alias_) {
      for (const auto &[name, target] : aliasesOf(full)) {
        std::string dotted = full;
        dotted.append(".").append(name);
        moduleAliases_.emplace(std::move(dotted), target);
      }
      if (const auto dot = full.rfind('.'); dot != std::string::npos) {
        const auto &there = aliasesOf(full.substr(0, dot));
        if (auto t = there.find(full.substr(dot + 1)); t != there.end())
          full = t->second;
      }
    }
  }
  // `comm = MPI.COMM_WORLD` (at module level or in a function): the name is
  // the communicator, as an import alias would be.
  bool mpi = false;
  for (const auto &[local, full] : alias_)
    mpi = mpi || startsWith(full, "mpi4py");
  if (mpi) {
    std::vector<SyntaxNode> st{root};
    while (!st.empty()) {
      SyntaxNode n = st.back();
      st.pop_back();
      if (is(n, "assignment") && is(field(n, "left"), "identifier") &&
          is(unparen(field(n, "right")), "attribute") &&
          qualified(unparen(field(n, "right"))) == "mpi4py.MPI.COMM_WORLD")
        alias_.emplace(str(field(n, "left")), "mpi4py.MPI.COMM_WORLD"); // an import keeps its name
      for (SyntaxNode k : namedKids(n))
        st.push_back(k);
    }
  }
  for (const auto &[local, full] : alias_)
    if (full == "torch.distributed" && m_.distAlias.empty())
      m_.distAlias = local;
  // A Horovod program has no torch.distributed process group: its barrier is
  // Horovod's (`hvd.barrier()`), which one process (after the `hvd.init()`
  // every Horovod program makes) passes at once.
  if (m_.distAlias.empty())
    for (const auto &[local, full] : alias_)
      if (full == "horovod.torch" && m_.distAlias.empty()) {
        m_.distAlias = local;
        horovodBarrier_ = true;
      }
  if (m_.distAlias.empty())
    m_.distAlias = alias_.count("torch") ? "torch.distributed" : "";
  for (const auto &[local, full] : alias_) {
    if (full == "datetime.timedelta")
      m_.timedeltaSpelling = local;
    else if (full == "datetime" && m_.timedeltaSpelling.empty())
      m_.timedeltaSpelling = local + ".timedelta";
  }
  // `from datetime import datetime` (PoolFormer's train.py) binds the name
  // to the class: an added `import datetime` would be shadowed by it.
  if (auto d = alias_.find("datetime"); d != alias_.end() && d->second != "datetime") {
    const bool timedeltaTaken = alias_.count("timedelta") != 0;
    m_.timedeltaImport = timedeltaTaken ? "" : "from datetime import timedelta\n";
    m_.importedTimedelta = timedeltaTaken ? "" : "timedelta";
  }
}

// With a project, `from .misc import x` in util/crop.py is `util.misc.x`;
// alone, the spelling stays as written (nothing resolves it anyway).
std::string Builder::absoluteModule(const std::string &mod) const {
  if (!project_ || mod.empty() || mod[0] != '.')
    return mod;
  size_t dots = 0;
  while (dots < mod.size() && mod[dots] == '.')
    ++dots;
  std::vector<std::string> base;
  const std::string pkg = project_->package();
  for (size_t b = 0; !pkg.empty() && b <= pkg.size();) {
    size_t e = pkg.find('.', b);
    if (e == std::string::npos)
      e = pkg.size();
    base.push_back(pkg.substr(b, e - b));
    b = e + 1;
  }
  if (dots - 1 > base.size())
    return mod; // above the top package: leave it unresolved
  base.resize(base.size() - (dots - 1));
  std::string out;
  for (const auto &part : base)
    out += (out.empty() ? "" : ".") + part;
  const std::string rest = mod.substr(dots);
  if (!rest.empty())
    out += (out.empty() ? "" : ".") + rest;
  return out;
}

bool Builder::isNnModule(const std::string &cls, int depth) const {
  auto it = classBases_.find(cls);
  if (it == classBases_.end() || depth > 8)
    return false;
  for (const auto &b : it->second) {
    std::string l = lastPart(b);
    if (l == "Module" || l == "LightningModule" || l == "Sequential" || l == "ModuleList")
      return true;
    if (isNnModule(l, depth + 1))
      return true;
  }
  return false;
}

// Whether one of this module's classes derives, through this module's
// classes, from a base whose last name is one of `bases`.
bool Builder::derivesFrom(const std::string &cls, std::initializer_list<const char *> bases,
                          int depth) const {
  auto it = classBases_.find(cls);
  if (it == classBases_.end() || depth > 8)
    return false;
  for (const auto &b : it->second) {
    const std::string l = lastPart(b);
    for (const char *name : bases)
      if (l == name)
        return true;
    if (derivesFrom(l, bases, depth + 1))
      return true;
  }
  return false;
}

bool Builder::isLightningModule(const std::string &cls) const {
  return derivesFrom(cls, {"LightningModule", "Callback"});
}

// `class Lite(LightningLite): def run(self): self.setup(...); self.barrier()`
// (co-tracker): the subclass is the Fabric, `self` its object.
bool Builder::isFabricClass(const std::string &cls) const {
  return derivesFrom(cls, {"Fabric", "LightningLite"});
}

// `signal.signal(signal.SIGTERM, handler)`: what the handler sets is this
// process's alone (Transformer-XL's `self.interrupted = True`, BERT's
// `global timeout_sent; timeout_sent = True`).  A flag that the code then
// agrees (a property that broadcasts rank 0's `_interrupted`) is read under
// another name, or agreed by the collective that follows.
void Builder::collectSignalFlags(SyntaxNode root) {
  if (tree_.text(root).find("signal") == std::string_view::npos)
    return; // most modules register no handler: no second walk of the tree
  std::multimap<std::string, SyntaxNode> defs;
  std::vector<SyntaxNode> handlers, stack{root};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "function_definition"))
      defs.emplace(str(field(n, "name")), n);
    if (is(n, "call") && qualified(field(n, "function")) == "signal.signal") {
      auto as = args(n);
      if (as.size() >= 2 && as[1].name.empty())
        handlers.push_back(unparen(as[1].value));
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  for (SyntaxNode h : handlers) {
    std::string name = is(h, "identifier") ? str(h) : is(h, "attribute") ? str(field(h, "attribute")) : "";
    if (name.empty())
      continue;
    signalHandlers_.insert(name);
    auto [lo, hi] = defs.equal_range(name);
    for (auto it = lo; it != hi; ++it) {
      std::set<std::string> globals;
      std::vector<SyntaxNode> assigns;
      forEachOwnNode(field(it->second, "body"), [&](SyntaxNode n) {
        if (is(n, "global_statement") || is(n, "nonlocal_statement"))
          for (SyntaxNode k : namedKids(n))
            if (is(k, "identifier"))
              globals.insert(str(k));
        if (is(n, "assignment") || is(n, "augmented_assignment"))
          assigns.push_back(field(n, "left"));
        return true;
      });
      for (SyntaxNode l : assigns) {
        l = unparen(l);
        if (is(l, "identifier") && globals.count(str(l)))
          signalGlobals_.insert(str(l));
        else if (is(l, "attribute"))
          signalAttrs_.insert(str(field(l, "attribute")));
      }
    }
  }
}

bool Builder::signalFlagAttribute(const std::string &attr) {
  if (signalAttrs_.count(attr))
    return true;
  if (!importedSignalAttrs_) {
    importedSignalAttrs_.emplace();
    if (project_)
      for (const auto &[local, full] : alias_) {
        for (const std::string &m : {full, full.substr(0, full.rfind('.'))}) {
          if (m.empty() || startsWith(m, "torch") || m == "signal" || m == "os" || m == "sys")
            continue;
          auto got = project_->signalFlagsOf(m);
          importedSignalAttrs_->insert(got.begin(), got.end());
        }
      }
  }
  return importedSignalAttrs_->count(attr) > 0;
}

void Builder::collectFunctions(SyntaxNode blk, const std::string &prefix, const std::string &cls) {
  for (SyntaxNode s : namedKids(blk)) {
    std::vector<std::string> decos;
    SyntaxNode def = s;
    if (is(s, "decorated_definition")) {
      for (SyntaxNode d : namedKids(s))
        if (is(d, "decorator")) {
          // `@torch.no_grad()`: the decorator the call makes.
          SyntaxNode e = unparen(namedChild(d, 0));
          decos.push_back(qualified(is(e, "call") ? field(e, "function") : e));
        }
      def = field(s, "definition");
    }
    if (is(def, "function_definition")) {
      FnInfo fi;
      fi.name = str(field(def, "name"));
      fi.key = prefix.empty() ? fi.name : prefix + "." + fi.name;
      fi.className = cls;
      fi.def = def;
      fi.decorators = decos;
      fi.nested = cls.empty() && !prefix.empty(); // in a function's body, not a class's
      for (const auto &d : decos) {
        if (lastPart(d) == "contextmanager")
          fi.contextManager = true;
        if (lastPart(d) == "rank_zero_only" || has(api().mainOnlyDecorators, lastPart(d)))
          fi.mainOnly = true;
        else if (const ExternalFunction *ext = project_ ? project_->function(d) : nullptr;
                 ext && ext->summary.guardsOnMain)
          fi.mainOnly = true; // the project's own decorator (LAVIS's @main_process)
      }
      // A closure in a method reads the method's `self` (sd-scripts'
      // `def save_model(...): self.save_weights(...)` inside `train`).
      if (fi.nested && !enclosingMethodClass_.empty())
        closureSelfClass_[fi.key] = enclosingMethodClass_;
      fns_[fi.key] = fi;
      const std::string outerClass = enclosingMethodClass_;
      if (!cls.empty())
        enclosingMethodClass_ = cls;
      collectFunctions(field(def, "body"), fi.key, "");
      enclosingMethodClass_ = outerClass;
    } else if (is(def, "class_definition")) {
      std::string name = str(field(def, "name"));
      std::vector<std::string> bases;
      for (SyntaxNode b : namedKids(field(def, "superclasses")))
        if (is(b, "identifier") || is(b, "attribute"))
          bases.push_back(qualified(b));
      classBases_[name] = bases;
      classDefs_[name] = def;
      std::string key = prefix;
      if (!key.empty())
        key += ".";
      key += name;
      collectFunctions(field(def, "body"), key, name);
    } else if (is(def, "if_statement") || is(def, "try_statement")) {
      // Definitions under `if TYPE_CHECKING:` or `try: ... except ImportError:`.
      for (SyntaxNode k : namedKids(def))
        if (is(k, "block"))
          collectFunctions(k, prefix, cls);
        else
          for (SyntaxNode kk : namedKids(k))
            if (is(kk, "block"))
              collectFunctions(kk, prefix, cls);
    }
  }
}

ObjKind Builder::kindOfCtor(SyntaxNode c) const {
  if (!is(c, "call"))
    return ObjKind::None;
  // `Accuracy(...).to(device)`, `DDP(model).cuda()`
  if (SyntaxNode fn = field(c, "function"); is(fn, "attribute")) {
    std::string m = str(field(fn, "attribute"));
    if (m == "to" || m == "cuda" || m == "cpu")
      return kindOfCtor(unparen(field(fn, "object")));
  }
  const std::string q = qualified(field(c, "function"));
  const std::string l = lastPart(q);
  if (q.empty())
    return ObjKind::None;
  const bool sub = (has(api().ddpClasses, l) || has(api().fsdpClasses, l) ||
                    has(api().acceleratorClasses, l)) &&
                   onSubgroup(text(field(c, "arguments")));
  if (sub)
    return ObjKind::Subgroup;
  if (has(api().ddpClasses, l))
    return ObjKind::Ddp;
  if (has(api().fsdpClasses, l))
    return ObjKind::Fsdp;
  if (has(api().acceleratorClasses, l))
    return ObjKind::Accelerator;
  if (has(api().zeroClasses, l))
    return ObjKind::Zero;
  if (has(api().dataLoaderClasses, l))
    return ObjKind::DataLoader;
  if (startsWith(q, "torchmetrics.") || has(api().metricClasses, l)) {
    // sync_on_compute=False: compute() reduces nothing across processes.
    if (text(field(c, "arguments")).find("sync_on_compute=False") != std::string_view::npos)
      return ObjKind::None;
    return ObjKind::Metric;
  }
  // A project helper that wraps the model (`model = smart_DDP(model)`,
  // `wrap_ddp(model)`).  Asked only of names that say so: every call is asked
  // what it makes, and another module's answer means building that module.
  std::string lower = l;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  if (lower.find("ddp") == std::string::npos && lower.find("parallel") == std::string::npos &&
      lower.find("distributed") == std::string::npos && lower.find("model_to_device") == std::string::npos &&
      lower.find("wrap_model") == std::string::npos && lower.find("warp_model") == std::string::npos)
    return ObjKind::None;
  SyntaxNode fn = field(c, "function");
  if (const std::string key = resolveCallee(fn); !key.empty()) {
    if (returnsDdpModel(fns_.at(key).def))
      return ObjKind::Ddp;
  } else if (const ExternalFunction *ext = externalCallee(fn); ext && ext->summary.returnsDdp) {
    return ObjKind::Ddp;
  }
  return ObjKind::None;
}

// ml-4m's `def save_on_all(*args, **kwargs): torch.save(*args, **kwargs)`:
// a checkpoint writer handed the function's own `*args`, so the path is among
// what each caller hands on.
bool Builder::writesThroughSplat(SyntaxNode def) const {
  if (def.isNull())
    return false;
  std::set<std::string> splats;
  for (SyntaxNode p : namedKids(field(def, "parameters")))
    if (is(p, "list_splat_pattern") && namedChildCount(p) == 1)
      splats.insert(str(namedChild(p, 0)));
  if (splats.empty())
    return false;
  std::vector<SyntaxNode> stack{field(def, "body")};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      continue;
    if (is(n, "call") && has(api().checkpointWriters, qualified(field(n, "function"))))
      for (const auto &a : args(n))
        if (is(a.value, "list_splat") && namedChildCount(a.value) == 1 &&
            splats.count(str(namedChild(a.value, 0))))
          return true;
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

// The class of this module whose new object a factory returns (U-ViT's
// `utils.initialize_train_state(...)`, which builds a `TrainState` and hands
// it back): its callers' variable holds one, and its methods are that class's.
// What the first `from m import X as name` inside `def` (in source order)
// binds `name` to: "m.X", or "".
std::string Builder::firstLocalImport(SyntaxNode def, const std::string &name) const {
  std::string found;
  unsigned at = ~0u;
  std::vector<SyntaxNode> stack{field(def, "body")};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      continue;
    if (is(n, "import_from_statement") && startByte(n) < at) {
      const std::string mod = absoluteModule(str(field(n, "module_name")));
      for (SyntaxNode k : namedKids(n)) {
        if (k == field(n, "module_name"))
          continue;
        const bool aliased = is(k, "aliased_import");
        const std::string bound = aliased ? str(field(k, "alias")) : str(k);
        if (bound == name && !mod.empty() && mod.back() != '.') {
          found = mod + "." + (aliased ? str(field(k, "name")) : str(k));
          at = startByte(n);
        }
      }
      continue;
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return found;
}

std::string Builder::returnedInstance(SyntaxNode def) const { return returnedClassOrInstance(def, false); }

std::string Builder::returnedClass(SyntaxNode def) const { return returnedClassOrInstance(def, true); }

std::string Builder::returnedClassOf(SyntaxNode callee) const {
  if (auto f = fns_.find(resolveCallee(callee)); f != fns_.end())
    return returnedClass(f->second.def);
  const ExternalFunction *ext = externalCallee(callee);
  if (!ext || ext->summary.returnsClass.empty() || ext->key.find(':') == std::string::npos)
    return "";
  // The factory's own module's class, or a class it imported (qualified).
  return ext->summary.returnsClass.find('.') != std::string::npos
             ? ext->summary.returnsClass
             : ext->key.substr(0, ext->key.find(':')) + "." + ext->summary.returnsClass;
}

std::string Builder::returnedClassOrInstance(SyntaxNode def, bool classObject) const {
  if (def.isNull())
    return "";
  // Asked at every `x = f(...)` of the module: each body is read once.
  auto &memo = classObject ? classMemo_ : instanceMemo_;
  if (auto m = memo.find(startByte(def)); m != memo.end())
    return m->second;
  std::string &result = memo[startByte(def)];
  std::map<std::string, std::string> made; // local name -> class
  std::string cls;
  bool other = false;
  std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
    if (other || is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      return;
    // A class of this module by its name; a class of another project module
    // by its qualified name (KAIR's `define_Model`: `from models.model_plain
    // import ModelPlain as M` ... `m = M(opt)`).
    auto classOf = [&](SyntaxNode v) -> std::string {
      v = unparen(v);
      if (!classObject && (!is(v, "call") || !is(field(v, "function"), "identifier")))
        return "";
      if (classObject && !is(v, "identifier"))
        return "";
      SyntaxNode name = classObject ? v : field(v, "function");
      std::string c = str(name);
      if (classDefs_.count(c))
        return c;
      std::string q = qualified(name);
      // Imported in the factory under one name per branch (`if model ==
      // 'plain': from models.model_plain import ModelPlain as M` ...): the
      // first, the default the branches begin with.
      if (std::string first = firstLocalImport(def, c); !first.empty())
        q = first;
      if (project_ && q.find('.') != std::string::npos && project_->isClass(q))
        return q;
      return "";
    };
    if (is(n, "assignment") && is(field(n, "left"), "identifier")) {
      const std::string c = classOf(field(n, "right"));
      auto [it, fresh] = made.emplace(str(field(n, "left")), c);
      if (!fresh && it->second != c)
        it->second.clear(); // assigned twice, two things
    }
    if (is(n, "return_statement")) {
      SyntaxNode v = namedChildCount(n) == 1 ? unparen(namedChild(n, 0)) : SyntaxNode();
      std::string c = v.isNull() ? "" : classOf(v);
      if (c.empty() && is(v, "identifier"))
        if (auto it = made.find(str(v)); it != made.end())
          c = it->second;
      if (c.empty() || (!cls.empty() && cls != c))
        other = true;
      else
        cls = c;
      return;
    }
    for (SyntaxNode k : namedKids(n))
      scan(k);
  };
  scan(field(def, "body"));
  result = other ? "" : cls;
  return result;
}

bool Builder::returnsDdpModel(SyntaxNode def) const {
  if (def.isNull())
    return false;
  bool any = false, other = false;
  auto wraps = [&](SyntaxNode v) {
    const std::string l = is(v, "call") ? lastPart(qualified(field(v, "function"))) : std::string();
    return !l.empty() && has(api().ddpClasses, l) && !onSubgroup(text(field(v, "arguments")));
  };
  // `network = DistributedDataParallel(network, ...)` under the setting that
  // turns distribution on, then `return network` (KAIR's model_to_device).
  std::set<std::string> wrapped;
  std::function<void(SyntaxNode)> assigns = [&](SyntaxNode n) {
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      return;
    if (is(n, "assignment") && is(field(n, "left"), "identifier") && wraps(unparen(field(n, "right"))))
      wrapped.insert(str(field(n, "left")));
    for (SyntaxNode k : namedKids(n))
      assigns(k);
  };
  assigns(field(def, "body"));
  std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      return;
    if (is(n, "return_statement")) {
      SyntaxNode v = namedChildCount(n) == 1 ? unparen(namedChild(n, 0)) : SyntaxNode();
      // The wrapper's own class only: a helper returning a helper's result is not followed.
      if (wraps(v) || (is(v, "identifier") && wrapped.count(str(v))))
        any = true;
      else
        other = true;
    }
    for (SyntaxNode k : namedKids(n))
      scan(k);
  };
  scan(field(def, "body"));
  return any && !other;
}

// `CheckpointSaver(model=..., checkpoint_dir=...)`, also on one arm of a
// conditional (`... if rank == 0 else None`).  A star import (`from
// timm.utils import *`) leaves the class unqualified: its name alone then
// matches, unless the project defines a class so named (its code is read).
bool Builder::makesSaver(SyntaxNode v) const {
  v = unparen(v);
  if (is(v, "conditional_expression") && namedChildCount(v) == 3)
    return makesSaver(namedChild(v, 0)) || makesSaver(namedChild(v, 2));
  if (!is(v, "call"))
    return false;
  const std::string q = qualified(field(v, "function"));
  if (has(api().checkpointSaverClasses, q))
    return true;
  if (q.find('.') != std::string::npos || !resolveCallee(field(v, "function")).empty() ||
      classDefs_.count(q))
    return false;
  for (const auto &c : api().checkpointSaverClasses)
    if (lastPart(c) == q)
      return true;
  return false;
}

// Which spellings hold which objects, over the whole module: the DDP model is
// usually made in one function and called in another, under the same name.
// Whether the module indexes or iterates `spelling` (`model[key]`, `for key in
// model`, `model.items()`): a container of modules, never one wrapped model.
bool Builder::usedAsContainer(SyntaxNode root, const std::string &spelling) {
  if (!containerUsesRead_) {
    containerUsesRead_ = true;
    std::vector<SyntaxNode> st{root};
    while (!st.empty()) {
      SyntaxNode s = st.back();
      st.pop_back();
      if (is(s, "subscript"))
        containerUses_.insert(str(field(s, "value")));
      else if (is(s, "for_statement") || is(s, "for_in_clause"))
        containerUses_.insert(str(unparen(field(s, "right"))));
      else if (is(s, "call") && is(field(s, "function"), "attribute")) {
        const std::string m = str(field(field(s, "function"), "attribute"));
        if (m == "keys" || m == "values" || m == "items")
          containerUses_.insert(str(field(field(s, "function"), "object")));
      }
      for (SyntaxNode k : namedKids(s))
        st.push_back(k);
    }
  }
  return containerUses_.count(spelling) > 0;
}

// The function definition a node is written in (null: the module's top level).
static SyntaxNode enclosingFunction(SyntaxNode n) {
  for (n = parentOf(n); !n.isNull(); n = parentOf(n))
    if (is(n, "function_definition"))
      return n;
  return SyntaxNode();
}

void Builder::collectObjects(SyntaxNode n) {
  // An Accelerator handed on by name (`accelerator = Accelerator(...)`, then
  // `self.accelerator = accelerator`, CogVideo's trainer): the attribute holds
  // it too.  Found first, so `self.accelerator.prepare(...)` below knows it.
  {
    std::vector<std::pair<SyntaxNode, SyntaxNode>> aliases; // (assignment, right)
    std::vector<SyntaxNode> st{n};
    while (!st.empty()) {
      SyntaxNode s = st.back();
      st.pop_back();
      if (is(s, "assignment")) {
        SyntaxNode left = field(s, "left"), right = unparen(field(s, "right"));
        if (is(left, "identifier") || is(left, "attribute")) {
          if (kindOfCtor(right) == ObjKind::Accelerator) {
            objects_[str(left)] = ObjKind::Accelerator;
            noteSelfObject(str(left), s);
          } else if (is(right, "identifier") || is(right, "attribute")) {
            aliases.emplace_back(s, right);
          }
        }
      }
      for (SyntaxNode k : namedKids(s))
        st.push_back(k);
    }
    for (int round = 0; round < 3; ++round) {
      bool grew = false;
      for (const auto &[s, right] : aliases) {
        const std::string l = str(field(s, "left"));
        auto it = objects_.find(str(right));
        if (it == objects_.end() || it->second != ObjKind::Accelerator)
          continue;
        // Another class's `self.accelerator = Accelerator()` may have named
        // the attribute first: this class holds one too.
        auto have = objects_.find(l);
        if (have != objects_.end() && have->second != ObjKind::Accelerator)
          continue;
        grew = grew || have == objects_.end();
        objects_[l] = ObjKind::Accelerator;
        noteSelfObject(l, s);
      }
      if (!grew)
        break;
    }
  }
  std::vector<SyntaxNode> stack{n};
  while (!stack.empty()) {
    SyntaxNode s = stack.back();
    stack.pop_back();
    // `if parallel == True:` whose arm makes the world (cond() reads it).
    if (is(s, "if_statement")) {
      SyntaxNode c = unparen(field(s, "condition"));
      bool makes = false;
      if (is(c, "identifier") || is(c, "attribute") || is(c, "comparison_operator")) {
        std::vector<SyntaxNode> todo{field(s, "consequence")};
        while (!todo.empty() && !makes) {
          SyntaxNode k = todo.back();
          todo.pop_back();
          if (is(k, "function_definition") || is(k, "class_definition"))
            continue;
          if (is(k, "call") && lastPart(qualified(field(k, "function"))) == "init_process_group")
            makes = true;
          for (SyntaxNode kk : namedKids(k))
            todo.push_back(kk);
        }
      }
      if (makes)
        distSwitches_.insert(withoutSpaces(text(c)));
    }
    // `init_process_group(..., rank=config.local_rank)` (CDARTS): the
    // program's global rank is its local rank, one node, so a local rank 0
    // test picks one process of the job.
    if (is(s, "call") && lastPart(qualified(field(s, "function"))) == "init_process_group")
      for (const auto &a : args(s))
        if (a.name == "rank") {
          SyntaxNode v = unparen(a.value);
          const std::string word = is(v, "attribute") ? str(field(v, "attribute"))
                                   : is(v, "identifier") ? str(v)
                                                          : std::string();
          if (!word.empty() && (has(api().localRankAttributes, word) ||
                                has(api().localRankParameters, word)))
            localRankIsGlobal_ = true;
          // DROID-SLAM's `train(gpu, args)`, started by mp.spawn, hands
          // `rank=gpu`: the process index is the job's rank there.
          if (is(v, "identifier"))
            if (SyntaxNode fn = enclosingFunction(s); !fn.isNull())
              worldRankNames_.insert({startByte(fn), word});
          // ffcv-imagenet's `rank=self.gpu`: `if self.gpu == 0:` is rank 0's.
          if (is(v, "attribute") && is(field(v, "object"), "identifier") && str(field(v, "object")) == "self")
            worldRankAttributes_.insert(str(v));
        }
    // The same through a set-up helper (MONAI's generative trainers:
    // `rank = int(os.environ["LOCAL_RANK"])`, then `setup_ddp(rank, world_size)`,
    // which hands its `rank` to init_process_group).
    // Only calls handed a local rank are looked up: resolving another module
    // builds it, and building every import early changes what an import
    // cycle sees (axolotl).
    bool handsLocalRank = false;
    if (is(s, "call") && !localRankIsGlobal_)
      for (const auto &a : args(s))
        handsLocalRank = handsLocalRank || localRankArgument(a.value, s);
    // DROID-SLAM's `train(gpu, args)` calls `setup_ddp(gpu, args)`, which
    // hands its `gpu` to init_process_group's `rank=`: a name of this
    // module's function handed on to a set-up helper of this module.
    std::string firstParam;
    if (is(s, "call"))
      if (SyntaxNode fn = enclosingFunction(s); !fn.isNull()) {
        const auto ps = namedKids(field(fn, "parameters"));
        if (!ps.empty())
          if (SyntaxNode id = parameterName(ps[0]); is(id, "identifier"))
            firstParam = str(id);
      }
    bool handsFirst = false;
    if (!firstParam.empty() && fns_.count(qualified(field(s, "function"))))
      for (const auto &a : args(s))
        handsFirst = handsFirst || (is(unparen(a.value), "identifier") && str(unparen(a.value)) == firstParam);
    if (handsLocalRank || handsFirst) {
      const std::string q = qualified(field(s, "function"));
      std::string param;
      std::vector<ParamSig> params;
      bool method = false;
      if (auto f = fns_.find(q); f != fns_.end() && f->second.className.empty()) {
        param = initRankParameter(f->second.def);
        if (!param.empty())
          params = signature(f->second, method);
      } else if (project_ && q.find('.') != std::string::npos) {
        if (const ExternalFunction *ext = project_->function(q)) {
          param = ext->summary.initRankParameter;
          params = ext->summary.params;
          method = ext->summary.method;
        }
      }
      if (!param.empty()) {
        const auto as = args(s);
        bool splat = false;
        const auto to = boundParameters(as, field(s, "function"), params, method, splat);
        for (size_t k = 0; k < as.size(); ++k) {
          if (to[k] && to[k]->name == param && handsLocalRank && localRankArgument(as[k].value, s))
            localRankIsGlobal_ = true;
          if (to[k] && to[k]->name == param && handsFirst && is(unparen(as[k].value), "identifier") &&
              str(unparen(as[k].value)) == firstParam)
            worldRankNames_.insert({startByte(enclosingFunction(s)), firstParam});
        }
      }
    }
    if (is(s, "assignment")) {
      SyntaxNode left = field(s, "left"), right = unparen(field(s, "right"));
      // `self.netG = self.model_to_device(net)` in a method: a method of the
      // class (or of its base in another module) makes it.
      ObjKind k;
      {
        std::string cls;
        for (SyntaxNode p = parentOf(s); !p.isNull() && cls.empty(); p = parentOf(p))
          if (is(p, "class_definition"))
            cls = str(field(p, "name"));
        const std::string saved = curClass_;
        if (curClass_.empty())
          curClass_ = cls;
        k = kindOfCtor(right);
        curClass_ = saved;
      }
      if (k != ObjKind::None && (is(left, "identifier") || is(left, "attribute"))) {
        objects_[str(left)] = k;
        noteSelfObject(str(left), s);
      }
      if ((is(left, "identifier") || is(left, "attribute")) && makesSaver(right))
        savers_.insert(str(left));

      if ((is(left, "identifier") || is(left, "attribute")) && is(right, "call"))
        noteCheckpointer(left, right);
      if (k == ObjKind::Ddp || k == ObjKind::Fsdp)
        hasDdp_ = true;
      if (k == ObjKind::Ddp && is(right, "call") && (is(left, "identifier") || is(left, "attribute")))
        ddpModules_[str(left)].push_back(right);
      // `self.model = model` after `model = DistributedDataParallel(...)` in
      // the same function (Uni-Perceiver's trainer): the attribute holds that
      // DDP model, made by the same constructions.
      if (k == ObjKind::None && is(right, "identifier") && (is(left, "identifier") || is(left, "attribute")) &&
          str(left) != str(right))
        if (auto from = ddpModules_.find(str(right)); from != ddpModules_.end()) {
          const SyntaxNode here = enclosingFunction(s);
          std::vector<SyntaxNode> ctors;
          for (SyntaxNode c : from->second)
            if (enclosingFunction(c) == here && startByte(c) < startByte(s))
              ctors.push_back(c);
          if (!ctors.empty()) {
            objects_[str(left)] = ObjKind::Ddp;
            noteSelfObject(str(left), s);
            auto &to = ddpModules_[str(left)];
            to.insert(to.end(), ctors.begin(), ctors.end());
          }
        }
      // engine, optimizer, _, _ = deepspeed.initialize(model=model, ...)
      if (is(right, "call") && (qualified(field(right, "function")) == "deepspeed.initialize")) {
        SyntaxNode first = is(left, "pattern_list") || is(left, "tuple_pattern")
                               ? namedChild(left, 0)
                               : left;
        if (is(first, "identifier") || is(first, "attribute")) {
          objects_[str(first)] = ObjKind::DeepSpeedEngine;
          noteSelfObject(str(first), s);
          hasDdp_ = true;
        }
      }
      // model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
      // model, optimizer = self.setup(model, optimizer) in a Fabric subclass
      const std::string setupOf = lastPart(qualified(field(right, "function")));
      if (is(right, "call") && (setupOf == "prepare" || setupOf == "setup")) {
        SyntaxNode recv = field(field(right, "function"), "object");
        const std::string r = recv.isNull() ? std::string() : str(recv);
        // Only a Fabric subclass's own: a `fabric = L.Fabric(devices=1)`
        // object may run in one process (see fabric_one_device.py).
        const bool fabric = r == "self" && isFabricClass(curClass_);
        if (!recv.isNull() && (setupOf == "prepare" || fabric) &&
            (findObject(r) != objects_.end() || r == "accelerator" || fabric)) {
          std::vector<SyntaxNode> targets =
              is(left, "pattern_list") || is(left, "tuple_pattern") ? namedKids(left)
                                                                     : std::vector<SyntaxNode>{left};
          for (SyntaxNode t : targets) {
            std::string name = str(t);
            std::string lower = name;
            std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
            // A dict (a Munch) of modules comes back from prepare unchanged,
            // with nothing wrapped (StyleTTS2's `model[key]`).
            if (lower.find("model") != std::string::npos && usedAsContainer(n, name))
              preparedContainer_ = true;
            else if (lower.find("model") != std::string::npos) {
              preparedModel_ = true;
              objects_[name] = ObjKind::Prepared;
              noteSelfObject(name, s);
              hasDdp_ = true;
            }
          }
        }
      }
    }
    if (is(s, "typed_parameter") || is(s, "typed_default_parameter")) {
      // `def train_one_epoch(model: DistributedDataParallel, ...)`: the
      // annotation says what the caller hands in.
      SyntaxNode id = parameterName(s);
      std::string t(text(field(s, "type")));
      t.erase(std::remove(t.begin(), t.end(), '\''), t.end());
      t.erase(std::remove(t.begin(), t.end(), '"'), t.end());
      const std::string l = lastPart(t);
      if (is(id, "identifier") && (has(api().ddpClasses, l) || has(api().fsdpClasses, l))) {
        objects_[str(id)] = has(api().ddpClasses, l) ? ObjKind::Ddp : ObjKind::Fsdp;
        hasDdp_ = true;
      }
    }
    if (is(s, "assignment")) {
      SyntaxNode left = field(s, "left"), right = unparen(field(s, "right"));
      // `ModelSaver(d) if rank == 0 else NoOp()` (or `else None`): where it
      // is an object at all, it is the one arm's.
      if (is(right, "conditional_expression") && namedChildCount(right) == 3) {
        SyntaxNode a = unparen(namedChild(right, 0)), b = unparen(namedChild(right, 2));
        auto nothing = [&](SyntaxNode v) {
          return is(v, "none") || (is(v, "call") && nullObjectClass(field(v, "function")));
        };
        if (nothing(b) && is(a, "call"))
          right = a;
        else if (nothing(a) && is(b, "call"))
          right = b;
      }
      // `model_saver = NoOp()` on the other ranks: the object's class is the
      // real one's, made on the ranks that do the work.
      // `model = Prior(...).to(device)`: the moved module is the instance.
      while (is(right, "call") && is(field(right, "function"), "attribute") &&
             is(unparen(field(field(right, "function"), "object")), "call")) {
        const std::string m = str(field(field(right, "function"), "attribute"));
        if (!isMoveOrCastMethod(m) && m != "train" && m != "eval" && m != "requires_grad_")
          break;
        right = unparen(field(field(right, "function"), "object"));
      }
      if (is(right, "call") && (is(left, "identifier") || is(left, "attribute")) &&
          !nullObjectClass(field(right, "function"))) {
        const std::string q = qualified(field(right, "function"));
        std::string cls = lastPart(q);
        auto classValue = classValues_.find(str(field(right, "function")));
        if (classValue != classValues_.end()) {
          // `trainer = trainer(model, ...)`: an instance of the class the
          // factory handed back.
          if (classValue->second.find('.') != std::string::npos)
            externInstances_[str(left)] = classValue->second;
          else
            instances_[str(left)] = classValue->second;
        } else if (std::string made = returnedClassOf(field(right, "function")); !made.empty())
          classValues_[str(left)] = made;
        else if (classBases_.count(cls))
          instances_[str(left)] = cls;
        else if (project_ && !q.empty() && q.find('.') != std::string::npos &&
                 project_->isClass(q))
          externInstances_[str(left)] = q;
        else if (auto f = fns_.find(resolveCallee(field(right, "function"))); f != fns_.end()) {
          if (std::string made = returnedInstance(f->second.def); made.find('.') != std::string::npos)
            externInstances_[str(left)] = made;
          else if (!made.empty())
            instances_[str(left)] = made;
        } else if (const ExternalFunction *ext = externalCallee(field(right, "function"));
                   ext && !ext->summary.returnsInstance.empty() && ext->key.find(':') != std::string::npos) {
          // The factory's own module's class, or a class it imported (qualified).
          externInstances_[str(left)] = ext->summary.returnsInstance.find('.') != std::string::npos
                                            ? ext->summary.returnsInstance
                                            : ext->key.substr(0, ext->key.find(':')) + "." +
                                                  ext->summary.returnsInstance;
        }
      }
    }
    if (is(s, "identifier") || is(s, "attribute")) {
      if (endsWith(text(s), "FULL_STATE_DICT"))
        fullStateDict_ = true;
    }
    if (is(s, "call")) {
      // Cheap test on the spelling first: most calls are none of these.
      const std::string_view ft = text(field(s, "function"));
      // A DistributedSampler made here: the module's loaders feed ranks
      // (sam-hq's train/utils/dataloader.py, imported by the DDP trainer).
      if (endsWith(ft, "DistributedSampler"))
        facts().shardsData = true;
      const bool maybe = endsWith(ft, "spawn") || endsWith(ft, "start_processes") ||
                         endsWith(ft, "cuda") || endsWith(ft, "to") || endsWith(ft, "device") ||
                         endsWith(ft, "set_device");
      std::string q = maybe ? qualified(field(s, "function")) : std::string();
      std::string l = maybe ? lastPart(q) : std::string();
      if (maybe && (l == "spawn" || l == "start_processes") && (startsRanks(q, l) || q == "spawn")) {
        auto as = args(s);
        // `mp.spawn(self._worker, ...)`: a method started the same way.
        if (const PyArg *fn = arg(as, "fn", 0)) {
          std::string started(fn->text);
          if (startsWith(started, "self.") || startsWith(started, "cls."))
            started = started.substr(started.find('.') + 1);
          spawned_.insert(started);
        }
      }
      if (!maybe) {
      } else if (l == "cuda" || (l == "to" && text(field(s, "arguments")).find("cuda") !=
                                           std::string_view::npos) ||
          (l == "device" && text(field(s, "arguments")).find("cuda") != std::string_view::npos) ||
          l == "set_device")
        facts().usesCuda = true;
    }
    if (is(s, "string") && text(s).find("nccl") != std::string_view::npos)
      facts().usesCuda = true;
    auto kids = namedKids(s);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      stack.push_back(*it);
  }
}

// ---------------------------------------------------------------------------
// Values

std::string Builder::resolveCallee(SyntaxNode fn) const {
  if (is(fn, "identifier")) {
    std::string n = str(fn);
    // innermost definition first: a nested helper, then a module function
    std::string scope = curFn_;
    while (!scope.empty()) {
      std::string key = scope;
      key += '.';
      key += n;
      // A method's body does not see its class's names (`save_checkpoint(...)`
      // in `Strategy.save_checkpoint` is a module-level or imported one).
      if (fns_.count(key) && !classBases_.count(scope) && !classDefs_.count(scope))
        return key;
      // A parameter of the same name shadows every outer definition
      // (`def run(model, evaluate): evaluate(model)` calls what it is handed).
      if (auto f = fns_.find(scope); f != fns_.end() && !f->second.def.isNull())
        for (SyntaxNode p : namedKids(field(f->second.def, "parameters")))
          if (SyntaxNode id = parameterName(p); is(id, "identifier") && str(id) == n)
            return "";
      auto dot = scope.rfind('.');
      scope = dot == std::string::npos ? "" : scope.substr(0, dot);
    }
    return fns_.count(n) ? n : "";
  }
  if (!is(fn, "attribute"))
    return "";
  const std::string obj = str(field(fn, "object"));
  std::string cls;
  // `cls._save(...)` in a classmethod, `Loader.save(...)`: through the class
  // itself, only a static or class method takes the arguments as written.
  bool throughClass = false;
  if (superCall(field(fn, "object"))) {
    // `super().optimize_parameters(step)`, `super(ModelVRT, self).save(...)`:
    // the base class's method (one of this module's; another module's is
    // externalCallee's).
    const std::string base = superBase();
    if (base.empty() || !classBases_.count(lastPart(base)))
      return "";
    cls = lastPart(base);
  } else if (obj == "self") {
    if (receiverOverride(str(field(fn, "attribute"))))
      return ""; // the receiver's class overrides it in another module: externalCallee's
    // A receiver of this module's own: Python's lookup starts at its class.
    cls = !receiver_.empty() && receiver_.find('.') == std::string::npos && classBases_.count(receiver_)
              ? receiver_
              : curClass_;
    if (auto c = closureSelfClass_.find(curFn_); cls.empty() && c != closureSelfClass_.end())
      cls = c->second;
  } else if (auto it = instances_.find(obj); it != instances_.end())
    cls = it->second;
  else if (obj == "cls" || classDefs_.count(obj)) {
    cls = obj == "cls" ? curClass_ : obj;
    throughClass = true;
  } else if (SyntaxNode made = unparen(field(fn, "object"));
             is(made, "call") && is(field(made, "function"), "identifier") &&
             classDefs_.count(str(field(made, "function")))) {
    cls = str(field(made, "function")); // `DistributedInterface().get_rank()`
  }
  if (cls.empty())
    return "";
  auto takesArgsAsWritten = [&](const FnInfo &fi) {
    if (!throughClass)
      return true;
    for (const auto &d : fi.decorators)
      if (d == "staticmethod" || d == "classmethod")
        return true;
    return false;
  };
  // The method of the class, or of a base class defined in this module.
  std::string m = str(field(fn, "attribute"));
  // `AllGather.apply(x)` runs the autograd Function's forward (and its
  // backward's collectives in the backward pass, not here).
  if (throughClass && m == "apply")
    m = "forward";
  std::string key = methodOf(cls, m, nullptr);
  // `self.run_step()` in a base class whose own `run_step` only raises
  // NotImplementedError (detectron2's and fast-reid's TrainerBase.train):
  // a subclass of this module runs it, so its override is what the call runs.
  if (!key.empty() && obj == "self" && abstractMethod(fns_.at(key)))
    for (const auto &[k, fi] : fns_)
      if (fi.name == m && fi.className != cls && !fi.className.empty() &&
          derivesFrom(fi.className, cls) && !abstractMethod(fi)) {
        key = k;
        break;
      }
  return !key.empty() && takesArgsAsWritten(fns_.at(key)) ? key : "";
}

// A collective or a barrier by its name: torch.distributed's, the catalog's
// functions, and the methods of wrappers (`accelerator.gather`).
bool Builder::synchronisingCall(SyntaxNode fn) const {
  const std::string q = qualified(fn);
  const std::string l = lastPart(q.empty() ? std::string(text(fn)) : q);
  return (startsWith(q, "torch.distributed.") && (has(api().collectives, l) || has(api().barriers, l))) ||
         has(api().collectiveFunctions, q) || has(api().barrierFunctions, q) ||
         (is(fn, "attribute") && (has(api().wrapperCollectives, l) || has(api().wrapperBarriers, l)));
}

bool Builder::bodySynchronises(SyntaxNode def, int depth) {
  std::vector<SyntaxNode> stack{field(def, "body")};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "call")) {
      SyntaxNode fn = field(n, "function");
      if (synchronisingCall(fn))
        return true;
      if (depth > 0)
        if (auto f = fns_.find(resolveCallee(fn)); f != fns_.end() && !f->second.def.isNull() &&
                                                   f->second.def != def &&
                                                   bodySynchronises(f->second.def, depth - 1))
          return true;
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

bool Builder::handsOffCollectiveCallback(SyntaxNode code, int depth) {
  std::vector<SyntaxNode> stack{code};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "call")) {
      SyntaxNode fn = field(n, "function");
      // Handed to a library (a UI, a thread, a server), the function runs when
      // that calls back; handed to the project's own helper, it runs inside
      // that call, on this arm's ranks, and the arm's collectives are real.
      if (resolveCallee(fn).empty() && !externalCallee(fn))
        for (const PyArg &a : args(n)) {
          SyntaxNode v = unparen(a.value);
          if (is(v, "identifier") || is(v, "attribute"))
            if (auto f = fns_.find(resolveCallee(v)); f != fns_.end() && !f->second.def.isNull() &&
                                                      bodySynchronises(f->second.def, 1))
              return true;
        }
      if (depth > 0)
        if (auto f = fns_.find(resolveCallee(fn)); f != fns_.end() && !f->second.def.isNull() &&
                                                   handsOffCollectiveCallback(field(f->second.def, "body"), depth - 1))
          return true;
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

// Whether an expression names this process's own temporary file or folder
// (`f.name`, `os.path.join(tmp_dir, "x.json")` inside their `with`).
bool Builder::namesPrivateFile(SyntaxNode e) const {
  if (privateFiles_.empty())
    return false;
  // `wav_path = os.path.join(tmpdir, "audio.wav")` in the temporary folder
  // (FastVideo's audio mux): a name made from a private one, a few hops back.
  std::vector<std::pair<SyntaxNode, int>> st{{e, 0}};
  while (!st.empty()) {
    auto [n, hops] = st.back();
    st.pop_back();
    if (is(n, "identifier")) {
      if (privateFiles_.count({curFn_, str(n)}))
        return true;
      if (hops < 3)
        if (SyntaxNode v = assignedBefore(n); !v.isNull())
          st.emplace_back(v, hops + 1);
    }
    for (SyntaxNode kid : namedKids(n))
      st.emplace_back(kid, hops);
  }
  return false;
}

// A body's statements that do something: not comments, nor the docstring.
static std::vector<SyntaxNode> realStatements(SyntaxNode body) {
  std::vector<SyntaxNode> real;
  for (SyntaxNode st : namedKids(body))
    if (!is(st, "comment") &&
        !(is(st, "expression_statement") && namedChildCount(st) == 1 && is(namedChild(st, 0), "string")))
      real.push_back(st);
  return real;
}

// A method whose body only raises NotImplementedError: its subclasses provide it.
bool Builder::abstractMethod(const FnInfo &fi) const {
  if (fi.className.empty() || fi.def.isNull())
    return false;
  std::vector<SyntaxNode> real = realStatements(field(fi.def, "body"));
  real.erase(std::remove_if(real.begin(), real.end(),
                            [&](SyntaxNode st) {
                              return is(st, "pass_statement") ||
                                     (is(st, "expression_statement") && namedChildCount(st) == 1 &&
                                      is(namedChild(st, 0), "ellipsis"));
                            }),
             real.end());
  // `@abstractmethod def save(self): pass` (TRELLIS's Trainer): only a
  // subclass's override ever runs.
  const bool declaredAbstract =
      std::any_of(fi.decorators.begin(), fi.decorators.end(),
                  [](const std::string &d) { return d == "abstractmethod" || d == "abc.abstractmethod"; });
  if (declaredAbstract && real.empty())
    return true;
  // What follows the raise never runs (speechbrain's Brain hooks:
  // `raise NotImplementedError` then a `return`).
  if (real.empty() || !is(real[0], "raise_statement") || namedChildCount(real[0]) < 1)
    return false;
  SyntaxNode e = unparen(namedChild(real[0], 0));
  if (is(e, "call"))
    e = field(e, "function");
  return is(e, "identifier") && str(e) == "NotImplementedError";
}

// `class NoOp: def __getattr__(self, name): return self.noop` (ALPRO's,
// UNITER's and ClipBERT's utils.misc): named for doing nothing, and answering
// every method.
bool Builder::nullObjectClass(SyntaxNode ctor) const {
  if (!is(ctor, "identifier") && !is(ctor, "attribute"))
    return false;
  const std::string q = qualified(ctor);
  const std::string cls = lastPart(q.empty() ? std::string(text(ctor)) : q);
  std::string l = cls;
  l.erase(std::remove(l.begin(), l.end(), '_'), l.end());
  std::transform(l.begin(), l.end(), l.begin(), ::tolower);
  static const std::set<std::string> names = {"noop", "noopobject", "nullobject", "dummy",
                                               "dummyobject", "donothing"};
  if (!names.count(l))
    return false;
  if (classBases_.count(cls))
    return fns_.count(cls + ".__getattr__") > 0;
  return project_ && q.find('.') != std::string::npos && project_->isClass(q) &&
         project_->function(q + ".__getattr__") != nullptr;
}

bool Builder::derivesFrom(std::string cls, const std::string &base) const {
  for (int depth = 0; depth < 8 && !cls.empty(); ++depth) {
    auto b = classBases_.find(cls);
    if (b == classBases_.end() || b->second.empty())
      return false;
    if (lastPart(b->second.front()) == base)
      return true;
    cls = lastPart(b->second.front());
  }
  return false;
}

// Method `m` of class `cls` or of the first base up its chain in this module
// (Python's lookup for single inheritance): its key; or "" and, where the
// chain goes on into another module's class, that class (`external`).
bool Builder::superCall(SyntaxNode object) const {
  object = unparen(object);
  return is(object, "call") && is(field(object, "function"), "identifier") &&
         str(field(object, "function")) == "super";
}

// The first base of the class whose method is being read (`super()`'s).
std::string Builder::superBase() const {
  std::string cls = curClass_;
  if (auto c = closureSelfClass_.find(curFn_); cls.empty() && c != closureSelfClass_.end())
    cls = c->second;
  auto b = classBases_.find(cls);
  return b == classBases_.end() || b->second.empty() ? std::string() : b->second.front();
}

std::string Builder::methodOf(std::string cls, const std::string &m, std::string *external) const {
  for (int depth = 0; depth < 8 && !cls.empty(); ++depth) {
    for (const auto &[key, fi] : fns_)
      if (fi.className == cls && fi.name == m)
        return key;
    auto b = classBases_.find(cls);
    if (b == classBases_.end() || b->second.empty())
      break;
    const std::string &base = b->second.front();
    if (!classBases_.count(lastPart(base))) {
      if (external && base.find('.') != std::string::npos)
        *external = base;
      break;
    }
    cls = lastPart(base);
  }
  return "";
}

// True in a run with ranks: `dist.is_initialized()` (initializedTest) or a
// launcher's variable being set (`'LOCAL_RANK' in os.environ`).
bool Builder::distributedRunTest(SyntaxNode e) {
  e = unparen(e);
  if (is(e, "call"))
    return initializedTest(e);
  if (!is(e, "comparison_operator") || namedChildCount(e) != 2 || comparisonOperator(e) != "in")
    return false;
  const std::string where(text(unparen(namedChild(e, 1))));
  bool literal = false;
  const std::string var = unquote(text(unparen(namedChild(e, 0))), literal);
  return literal && (where == "os.environ" || where == "environ") &&
         (has(api().rankEnvVars, var) || has(api().localRankEnvVars, var) || var == "WORLD_SIZE");
}

// The element of a call's tuple that says the run has ranks (see
// FnInfo::returnsInitializedAt), or -1.
int Builder::initializedElementOf(SyntaxNode call) const {
  SyntaxNode fn = field(call, "function");
  if (auto f = fns_.find(resolveCallee(fn)); f != fns_.end())
    return f->second.returnsInitializedAt;
  if (const ExternalFunction *ext = externalCallee(fn))
    return ext->summary.returnsInitializedAt;
  return -1;
}

int Builder::rankElementOf(SyntaxNode call, bool *local) const {
  SyntaxNode fn = field(call, "function");
  if (auto f = fns_.find(resolveCallee(fn)); f != fns_.end()) {
    if (local)
      *local = f->second.returnsLocalRankAt;
    return f->second.returnsRankAt;
  }
  if (const ExternalFunction *ext = externalCallee(fn)) {
    if (local)
      *local = ext->summary.returnsLocalRankAt;
    return ext->summary.returnsRankAt;
  }
  return -1;
}

// Whether a class (this module's, or a dotted one of another) has methods
// of its own its bases may call on `self`: only then is a receiver worth a
// specialisation of the inherited method.
bool Builder::definesMethods(const std::string &cls) const {
  if (cls.find('.') != std::string::npos)
    return project_ && project_->classDefinesMethods(cls);
  for (const auto &[k, fi] : fns_)
    if (fi.className == cls && fi.name != "__init__" && k == cls + "." + fi.name)
      return true;
  return false;
}

// Python's lookup of `self.<method>` from the receiver's class (see
// receiver_), where it ends in another module: SeqTrack's BaseTrainer.train
// calls `self.train_epoch()`, whose stub raises and whose override, in
// LTRTrainer's module, runs the DDP backward.
const ExternalFunction *Builder::receiverOverride(const std::string &method) const {
  if (receiver_.empty() || receiver_.find('.') == std::string::npos || !project_)
    return nullptr;
  const ExternalFunction *f = project_->function(receiver_ + "." + method);
  if (!f)
    return nullptr;
  const size_t colon = f->key.find(':');
  const std::string own = project_->moduleName();
  if (colon == std::string::npos || (!own.empty() && f->key.compare(0, colon, own) == 0 && colon == own.size()))
    return nullptr; // this module's own definition: resolved here, receiver and all
  return f;
}

const ExternalFunction *Builder::externalCallee(SyntaxNode fn) const {
  if (!project_)
    return nullptr;
  if (is(fn, "attribute")) {
    // `self.save_network(...)` in a class whose base comes from another
    // module (BasicSR's models and their BaseModel): the base's method.
    const std::string obj = str(field(fn, "object"));
    if (obj == "self")
      if (const ExternalFunction *o = receiverOverride(str(field(fn, "attribute"))))
        return o;
    std::string cls = obj == "self" ? curClass_ : std::string();
    if (auto it = instances_.find(obj); it != instances_.end())
      cls = it->second;
    std::string base;
    if (superCall(field(fn, "object"))) {
      const std::string b = superBase();
      const std::string m = str(field(fn, "attribute"));
      if (b.empty())
        return nullptr;
      if (!classBases_.count(lastPart(b)))
        return b.find('.') != std::string::npos && project_->isClass(b) ? project_->function(b + "." + m)
                                                                         : nullptr;
      if (methodOf(lastPart(b), m, &base).empty() && !base.empty() && project_->isClass(base))
        return project_->function(base + "." + m);
      return nullptr;
    }
    if (!cls.empty() && methodOf(cls, str(field(fn, "attribute")), &base).empty() &&
        !base.empty() && project_->isClass(base)) {
      base.append(".").append(str(field(fn, "attribute")));
      return project_->function(base);
    }
    // A method of an object made from a class of another module.
    auto inst = externInstances_.find(str(field(fn, "object")));
    if (inst != externInstances_.end())
      return project_->function(inst->second + "." + str(field(fn, "attribute")));
    // ...or made right there: `DistributedInterface().get_rank()` (LLaMA-Factory's
    // singleton, whose constructor hands back the one instance).
    if (SyntaxNode made = unparen(field(fn, "object")); is(made, "call")) {
      SyntaxNode ctor = field(made, "function");
      const std::string c = qualified(ctor);
      if (!c.empty() && (!is(ctor, "identifier") || alias_.count(str(ctor))) && project_->isClass(c))
        return project_->function(c + "." + str(field(fn, "attribute")));
    }
  }
  std::string q = qualified(fn);
  // `is_master()` after `from .dist import *`: the first star-imported module
  // that defines it (a local definition of the name comes first).
  if (is(fn, "identifier") && !alias_.count(str(fn)) && !fns_.count(str(fn)))
    for (const auto &star : m_.starImports)
      if (const ExternalFunction *ext = project_->function(star + "." + str(fn)))
        return ext;
  // Only names that come from an import: a bare local name is not another module's.
  if (q.empty() || (is(fn, "identifier") && !alias_.count(str(fn))))
    return nullptr;
  // `GatherLayer.apply(x)` of an imported autograd Function: its forward.
  if (endsWith(q, ".apply") && project_->isClass(q.substr(0, q.size() - 6)))
    q = q.substr(0, q.size() - 6) + ".forward";
  if (is(fn, "attribute")) {
    SyntaxNode root = fn;
    while (is(root, "attribute"))
      root = field(root, "object");
    if (!is(root, "identifier") || !alias_.count(str(root)))
      return nullptr;
  }
  return project_->function(q);
}

// The kinds of objects an implicit collective's `match` names.
// Layers that hold parameters but no buffers: a model built only from them
// (and from this module's classes built likewise) has nothing to broadcast.
static bool bufferFreeLayer(const std::string &l) {
  static const std::set<std::string> layers = {
      "Linear",    "Bilinear",   "Conv1d",    "Conv2d",      "Conv3d",     "ConvTranspose1d",
      "ConvTranspose2d", "ConvTranspose3d", "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm",
      "RMSNorm",   "Dropout",    "Dropout2d", "ReLU",        "GELU",       "SiLU",
      "Tanh",      "Sigmoid",    "Softmax",   "LogSoftmax",  "LeakyReLU",  "Identity",
      "Flatten",   "MaxPool1d",  "MaxPool2d", "AvgPool2d",   "AdaptiveAvgPool2d", "LSTM",
      "GRU",       "RNN",        "MultiheadAttention", "Parameter", "Sequential", "ModuleList",
      "ModuleDict", "ParameterList"};
  return layers.count(l) > 0;
}

bool Builder::classBufferFree(const std::string &cls, int depth) const {
  if (depth > 8)
    return false;
  auto it = classDefs_.find(cls);
  // Nesting is bounded by the classes (Block inside GPT inside a wrapper);
  // the limit only stops a class that contains itself.
  if (it == classDefs_.end()) {
    // `from modules import Prior` (qualified "modules.Prior"): the module
    // that defines it says.
    if (project_ && cls.find('.') != std::string::npos)
      return project_->classBufferFree(cls);
    return false;
  }
  bool free = true;
  std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
    if (!free)
      return;
    if (is(n, "call") && lastPart(qualified(field(n, "function"))) == "register_buffer") {
      free = false;
      return;
    }
    // self.x = Layer(...): every sub-module must be buffer-free.
    if (is(n, "assignment") && is(field(n, "left"), "attribute") &&
        startsWith(str(field(n, "left")), "self.") && is(unparen(field(n, "right")), "call") &&
        !bufferFree(unparen(field(n, "right")), depth + 1)) {
      free = false;
      return;
    }
    for (SyntaxNode k : namedKids(n))
      scan(k);
  };
  scan(field(it->second, "body"));
  return free;
}

// The modules a layer's argument holds: a call is one module, a literal, a
// comprehension or dict(k=...) holds several.  Other arguments (sizes, flags,
// names) are taken as holding none, as for Linear(n, m).
bool Builder::partsBufferFree(SyntaxNode e, int depth) const {
  e = unparen(e);
  if (is(e, "list_splat") || is(e, "dictionary_splat")) {
    auto kids = namedKids(e);
    return !kids.empty() && partsBufferFree(kids.front(), depth);
  }
  if (is(e, "list") || is(e, "tuple")) {
    for (SyntaxNode k : namedKids(e))
      if (!partsBufferFree(k, depth))
        return false;
    return true;
  }
  if (is(e, "dictionary")) {
    for (SyntaxNode k : namedKids(e))
      if (!is(k, "pair") || !partsBufferFree(field(k, "value"), depth))
        return false;
    return true;
  }
  if (is(e, "list_comprehension") || is(e, "generator_expression"))
    return partsBufferFree(field(e, "body"), depth);
  if (is(e, "dictionary_comprehension")) {
    SyntaxNode body = field(e, "body");
    return is(body, "pair") && partsBufferFree(field(body, "value"), depth);
  }
  if (is(e, "call") && text(field(e, "function")) == "dict") {
    for (const auto &a : args(e))
      if (!partsBufferFree(a.value, depth))
        return false;
    return true;
  }
  return !is(e, "call") || bufferFree(e, depth);
}

bool Builder::bufferFree(SyntaxNode e, int depth) const {
  e = unparen(e);
  if (depth > 12)
    return false;
  if (is(e, "call")) {
    SyntaxNode fn = field(e, "function");
    const std::string l = lastPart(qualified(fn).empty() ? std::string(text(fn)) : qualified(fn));
    if (is(fn, "attribute") && isMoveOrCastMethod(l))
      return bufferFree(field(fn, "object"), depth + 1);
    // `nn.Parameter(torch.zeros(...))`: its argument is a tensor, no module.
    if (l == "Parameter")
      return true;
    if (bufferFreeLayer(l)) {
      // Sequential(Linear(...), BatchNorm1d(...)) and the containers'
      // ModuleDict(dict(wte=Embedding(...))), ModuleList([Block(c) for ...]):
      // each part counts.
      for (const auto &a : args(e))
        if (a.name.empty() && !partsBufferFree(a.value, depth + 1))
          return false;
      return true;
    }
    if (has(api().bufferFreeModules, qualified(fn)))
      return true;
    if (classDefs_.count(l))
      return classBufferFree(l, depth + 1);
    return classBufferFree(qualified(fn), depth + 1);
  }
  if (is(e, "identifier")) {
    if (auto in = instances_.find(str(e)); in != instances_.end())
      return classBufferFree(in->second, depth + 1);
    auto ex = externInstances_.find(str(e));
    return ex != externInstances_.end() && classBufferFree(ex->second, depth + 1);
  }
  return false;
}

bool Builder::ddpBroadcastsBuffers(const std::string &spelling) const {
  if (quietDdp_.count(spelling))
    return false; // a parameter the caller's broadcast_buffers=False model is handed to
  auto it = ddpModules_.find(spelling);
  if (it == ddpModules_.end())
    return true; // unknown: assume the default and buffers
  // The same name may hold several models (one per function): those made in
  // this function if any, else any one that broadcasts makes the call one.
  SyntaxNode here;
  if (auto f = fns_.find(curFn_); f != fns_.end())
    here = f->second.def;
  std::vector<SyntaxNode> ctors;
  for (SyntaxNode ctor : it->second)
    if (!here.isNull() && enclosingFunction(ctor) == here)
      ctors.push_back(ctor);
  if (ctors.empty())
    ctors = it->second;
  for (SyntaxNode ctor : ctors) {
    const std::string_view argText = text(field(ctor, "arguments"));
    if (argText.find("broadcast_buffers=False") != std::string_view::npos)
      continue;
    // apex's DistributedDataParallel (and DeepScale's copy of it) syncs
    // parameters at construction and gradients in backward; its forward runs
    // no collective.
    const std::string q = qualified(field(ctor, "function"));
    if (startsWith(q, "apex.") || startsWith(q, "deepscale."))
      continue;
    auto as = args(ctor);
    if (as.empty() || !as[0].name.empty() || !bufferFree(as[0].value, 0))
      return true;
  }
  return false;
}

void Builder::noteSelfObject(const std::string &spelling, SyntaxNode at) {
  if (!startsWith(spelling, "self."))
    return;
  for (SyntaxNode p = parentOf(at); !p.isNull(); p = parentOf(p))
    if (is(p, "class_definition")) {
      selfObjectClasses_[spelling].insert(str(field(p, "name")));
      return;
    }
}

// A `self.` object is the one set in this class's methods, or in a class it
// derives from or that derives from it; one set outside any class (or in a
// function that is not a method) holds anywhere.
std::map<std::string, ObjKind>::const_iterator
Builder::findObject(const std::string &spelling) const {
  auto it = objects_.find(spelling);
  if (it == objects_.end() || curClass_.empty())
    return it;
  auto cls = selfObjectClasses_.find(spelling);
  if (cls == selfObjectClasses_.end())
    return it;
  auto related = [&](const std::string &a, const std::string &b) {
    for (std::string c = a; !c.empty();) {
      if (c == b)
        return true;
      auto base = classBases_.find(c);
      if (base == classBases_.end() || base->second.empty())
        return false;
      c = lastPart(base->second.front());
    }
    return false;
  };
  for (const auto &c : cls->second)
    if (related(curClass_, c) || related(c, curClass_))
      return it;
  return objects_.end();
}

bool Builder::implicitObject(const std::string &kind, const std::string &spelling) const {
  auto it = findObject(spelling);
  ObjKind k = it == objects_.end() ? ObjKind::None : it->second;
  // `model = accelerator.unwrap_model(model).eval()` earlier in this function:
  // the name holds the bare module now, whose forward runs no collective.
  if (unwrapped_.count(spelling) && (k == ObjKind::Ddp || k == ObjKind::Fsdp || k == ObjKind::Prepared))
    k = ObjKind::None;
  if (kind == "any")
    return true;
  if (kind == "ddp")
    return k == ObjKind::Ddp;
  if (kind == "fsdp")
    return k == ObjKind::Fsdp;
  if (kind == "prepared")
    return k == ObjKind::Prepared;
  if (kind == "metric")
    return k == ObjKind::Metric;
  if (kind == "accelerator") // an Accelerator or Fabric, also by its usual names
    return k == ObjKind::Accelerator || spelling == "accelerator" || spelling == "fabric" ||
           spelling == "self.fabric" || (spelling == "self" && isFabricClass(curClass_));
  // Also by its usual names where the module speaks of DeepSpeed: the
  // Hugging Face Trainer keeps the engine `deepspeed_init` made in
  // `self.deepspeed` (copied into LMFlow's raft_trainer), DeepSpeed's own
  // examples call it `model_engine`.
  if (kind == "deepspeed_engine")
    return k == ObjKind::DeepSpeedEngine ||
           ((spelling == "self.deepspeed" || spelling == "model_engine" || spelling == "self.model_engine" ||
             spelling == "deepspeed_engine" || spelling == "self.deepspeed_engine") &&
            namesSharding());
  if (kind == "lightning_self")
    return spelling == "self" && isLightningModule(curClass_);
  // The trainer a LightningModule or a Callback's hook is handed, or one the
  // script makes (`trainer = pl.Trainer(...)`, read in latent diffusion's
  // `melk` closure too).
  if (kind == "lightning_trainer")
    return ((spelling == "trainer" || spelling == "self.trainer") && isLightningModule(curClass_)) ||
           lightningTrainerNames().count(spelling) > 0;
  // timm's NativeScaler and MAE's copy, held as `loss_scaler` (the training
  // loop's parameter), or a name bound to a NativeScaler* class.
  if (kind == "loss_scaler")
    return lastPart(spelling) == "loss_scaler" || lossScalerNames().count(spelling) > 0;
  if (kind == "fsdp_full_state") // under state_dict_type(..., FULL_STATE_DICT)
    return (k == ObjKind::Fsdp && fullStateDict_) || contains(fullStateScopes_, spelling);
  return false;
}

// The module says it runs under DeepSpeed or FSDP somewhere (an import, a
// `--deepspeed` option, `DistributedType.FSDP`): Accelerate's state then
// lives in shards that every rank writes.
bool Builder::namesSharding() const {
  if (namesSharding_ < 0) {
    namesSharding_ = 0;
    // Code and its strings, not the comments.
    std::vector<SyntaxNode> stack{tree_.root()};
    while (!stack.empty() && namesSharding_ == 0) {
      SyntaxNode n = stack.back();
      stack.pop_back();
      if (is(n, "identifier") || is(n, "string")) {
        std::string t(text(n));
        std::transform(t.begin(), t.end(), t.begin(), ::tolower);
        namesSharding_ = t.find("deepspeed") != std::string::npos || t.find("fsdp") != std::string::npos;
        continue;
      }
      if (is(n, "comment"))
        continue;
      for (SyntaxNode k : namedKids(n))
        stack.push_back(k);
    }
  }
  return namesSharding_ == 1;
}

bool Builder::isProperty(const FnInfo &fi) {
  for (const auto &d : fi.decorators)
    if (d == "property" || d == "functools.cached_property" || d == "cached_property")
      return true;
  return false;
}

bool Builder::noGradDecorated(const FnInfo &fi) {
  // `@torch.no_grad()`, `@torch.inference_mode()`, yolov5's `@smart_inference_mode()`.
  for (const auto &d : fi.decorators)
    if (d.find("no_grad") != std::string::npos || d.find("inference_mode") != std::string::npos)
      return true;
  return false;
}

SyntaxNode Builder::shardingDisjunctOther(SyntaxNode call) const {
  auto sharded = [this](SyntaxNode n) {
    std::string t(text(n));
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return t.find("deepspeed") != std::string::npos || t.find("fsdp") != std::string::npos;
  };
  for (SyntaxNode p = parentOf(call); !p.isNull(); p = parentOf(p)) {
    if (is(p, "function_definition") || is(p, "class_definition") || is(p, "lambda"))
      break;
    if (!is(p, "if_statement") && !is(p, "elif_clause"))
      continue;
    SyntaxNode c = unparen(field(p, "condition"));
    if (!is(c, "boolean_operator") || text(field(c, "operator")) != "or")
      continue;
    SyntaxNode l = unparen(field(c, "left")), r = unparen(field(c, "right"));
    SyntaxNode other = sharded(l) && !sharded(r) ? r : sharded(r) && !sharded(l) ? l : SyntaxNode{};
    if (other.isNull())
      continue;
    // EasyAnimate's final save: `if accelerator.is_main_process:` around
    // `if args.use_deepspeed or accelerator.is_main_process:`.  The outer
    // test already keeps the other ranks out, DeepSpeed or not.
    SyntaxNode from = p;
    for (SyntaxNode q = parentOf(p); !q.isNull(); from = q, q = parentOf(q)) {
      if (is(q, "function_definition") || is(q, "class_definition") || is(q, "lambda"))
        break;
      if (is(q, "if_statement") && field(q, "consequence") == from &&
          text(unparen(field(q, "condition"))) == text(other))
        return {};
    }
    return other;
  }
  return {};
}

// A definition's text that wraps a model in `nn.DataParallel` and names no
// rank, collective, DDP, FSDP, process group or launcher library.
static bool drivesDataParallelOnly(std::string_view t) {
  if (t.find("DataParallel(") == std::string_view::npos)
    return false;
  for (std::string_view w : {"DistributedDataParallel", "DDP", "FSDP", "rank", "dist.", "distributed",
                             "all_reduce", "barrier", "broadcast", "all_gather", "accelerator", "deepspeed"})
    if (t.find(w) != std::string_view::npos)
      return false;
  return true;
}

// A function that wraps its model in `nn.DataParallel` and names nothing
// distributed (CLIP_benchmark's linear probe, run per model and dataset by
// a driver that only shards its run list by RANK): one process drives every
// GPU, so its backward reduces nothing across processes, whatever the
// importer runs.  The same holds of a method of such a class (see run()).
bool Builder::dataParallelOnly(SyntaxNode at) const {
  SyntaxNode def = enclosingFunction(at);
  for (SyntaxNode up = def; !up.isNull(); up = parentOf(up))
    if (is(up, "class_definition") || is(up, "function_definition"))
      def = up; // the outermost definition: a class, or a module function
  if (def.isNull())
    return false;
  auto [it, fresh] = dataParallelOnly_.try_emplace(startByte(def), false);
  if (fresh)
    it->second = drivesDataParallelOnly(text(def));
  return it->second;
}

// The names (`x`, `self.x`) the module binds to a call whose function
// `makes` accepts: the objects it constructs of one kind.
std::set<std::string> Builder::namesBoundToCalls(const std::function<bool(SyntaxNode)> &makes) const {
  std::set<std::string> names;
  std::vector<SyntaxNode> stack{tree_.root()};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "assignment")) {
      SyntaxNode l = field(n, "left"), r = unparen(field(n, "right"));
      if ((is(l, "identifier") || is(l, "attribute")) && is(r, "call") && makes(field(r, "function")))
        names.insert(str(l));
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return names;
}

// A loss scaler (`scaler = NativeScaler()`, `NativeScalerWithGradNormCount()`).
const std::set<std::string> &Builder::lossScalerNames() const {
  if (!lossScalers_)
    lossScalers_ = namesBoundToCalls(
        [&](SyntaxNode f) { return startsWith(lastPart(std::string(text(f))), "NativeScaler"); });
  return *lossScalers_;
}

// A Lightning Trainer.
const std::set<std::string> &Builder::lightningTrainerNames() const {
  if (!lightningTrainers_)
    lightningTrainers_ = namesBoundToCalls([&](SyntaxNode f) {
      const std::string q = qualified(f);
      return lastPart(q) == "Trainer" && (startsWith(q, "lightning.") || startsWith(q, "pytorch_lightning."));
    });
  return *lightningTrainers_;
}

// The module names an API Lightning 2.0 removed, in its code: not in a
// comment (`# parser = Trainer.add_argparse_args(parser)`, left by a port
// to 2.x), nor in a module function that nothing in the module calls
// (LightningDiT's `nondefault_trainer_args`).
bool Builder::lightning1() const {
  if (lightning1_ < 0) {
    lightning1_ = 0;
    const std::string_view src = text(tree_.root());
    bool any = false;
    for (const auto &m : api().lightning1Markers)
      any = any || src.find(m) != std::string_view::npos;
    if (!any)
      return false;
    auto uncalledFunction = [&](SyntaxNode def) {
      const std::string name = str(field(def, "name"));
      size_t uses = 0;
      for (size_t at = src.find(name); at != std::string_view::npos && uses < 2; at = src.find(name, at + 1)) {
        auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        const size_t end = at + name.size();
        if ((at == 0 || !word(src[at - 1])) && (end >= src.size() || !word(src[end])))
          ++uses;
      }
      return uses < 2;
    };
    std::vector<SyntaxNode> stack{tree_.root()};
    while (!stack.empty() && lightning1_ == 0) {
      SyntaxNode n = stack.back();
      stack.pop_back();
      if (is(n, "comment") || (is(n, "expression_statement") && is(namedChild(n, 0), "string")))
        continue; // a comment, a docstring
      if (is(n, "function_definition") && is(parentOf(n), "module") && uncalledFunction(n))
        continue;
      // A hook 1.x called and 2.x never does (`def on_keyboard_interrupt`),
      // defined for either: no call of a removed API.
      if (is(n, "function_definition")) {
        for (SyntaxNode k : namedKids(n))
          if (k != field(n, "name"))
            stack.push_back(k);
        continue;
      }
      // `try: trainer.training_type_plugin.reduce(x)` `except
      // AttributeError:`: a shim for both.
      if (is(n, "try_statement")) {
        bool shim = false;
        for (SyntaxNode c : namedKids(n))
          shim = shim || (is(c, "except_clause") && text(c).find("AttributeError") != std::string_view::npos);
        if (shim) {
          for (SyntaxNode k : namedKids(n))
            if (k != field(n, "body"))
              stack.push_back(k);
          continue;
        }
      }
      if (is(n, "identifier") || is(n, "string") || is(n, "attribute") || is(n, "dotted_name")) {
        const std::string_view t = text(n);
        for (const auto &m : api().lightning1Markers)
          if (t.find(m) != std::string_view::npos)
            lightning1_ = 1;
        continue;
      }
      for (SyntaxNode k : namedKids(n))
        stack.push_back(k);
    }
  }
  return lightning1_ == 1;
}

bool Builder::implicitCollective(SyntaxNode fn, const std::string &recv, const std::string &method,
                                 const std::vector<PyArg> &as, std::string &name,
                                 std::string *standsInFor, bool *barrier) const {
  const bool calledObject = is(fn, "identifier") || is(fn, "attribute");
  for (const core::ImplicitCollective &ic : api().implicitCollectives) {
    std::string object;
    if (ic.callsObject) {
      if (!calledObject || !implicitObject(ic.object, str(fn)))
        continue;
      object = str(fn);
    } else {
      if (recv.empty() || !contains(ic.methods, method) || !implicitObject(ic.object, recv))
        continue;
    }
    if (ic.object == "ddp" && (wrappedLater(ic.callsObject ? str(fn) : recv, fn) || dataParallelOnly(fn)))
      continue;
    bool holds = true;
    lastImplicitAssumed_ = false;
    for (const std::string &cond : ic.requires) {
      if (cond == "program_wraps_ddp") {
        holds = holds && hasDdp_ && !beforeAnyDdp(fn) && !dataParallelOnly(fn);
        lastImplicitAssumed_ = ddpAssumed_;
      } else if (cond == "outside_no_sync")
        holds = holds && noSync_ == 0;
      else if (cond == "module_has_buffers")
        holds = holds && ddpBroadcastsBuffers(ic.callsObject ? str(fn) : recv);
      else if (cond == "no_gradient_argument") {
        // `loss.backward()`, `scaler.scale(loss).backward(create_graph=g)`:
        // retain_graph / create_graph / inputs keep the reduction; a gradient
        // handed in (`out.backward(grad)`, a pipeline stage's) is not a loss's.
        bool gradient = false;
        for (const auto &a : as)
          gradient = gradient || a.name.empty() || a.name == "gradient" || a.name == "grad_tensors";
        holds = holds && !gradient;
      }
      else if (cond == "lightning_2")
        holds = holds && !lightning1();
      else if (cond == "prepares_a_model")
        holds = holds && !(preparedContainer_ && !preparedModel_);
      else if (cond == "module_names_sharding")
        // Under `if distributed_type == DEEPSPEED or is_main_process:` every
        // rank makes the call where it is a collective.
        holds = holds && namesSharding() && shardingDisjunctOther(fn).isNull();
      else if (cond == "sync_dist") {
        // Reduced at the call only for a step-level value: `on_epoch` values
        // are reduced once, at the epoch's end, on every rank (fast3r's
        // `self.log(..., on_step=False, on_epoch=True, sync_dist=True)`).
        // Without `on_step=`, Lightning logs per step in the training hooks
        // and per epoch in validation, test, predict and epoch hooks.
        bool on = false;
        std::string onStep;
        for (const auto &a : as) {
          on = on || (a.name == "sync_dist" && a.text != "False");
          if (a.name == "on_step")
            onStep = std::string(a.text);
        }
        if (onStep.empty()) {
          const std::string hook = lastPart(curFn_);
          const bool epochLevel = startsWith(hook, "validation") || startsWith(hook, "test") ||
                                  startsWith(hook, "predict") || startsWith(hook, "on_validation") ||
                                  startsWith(hook, "on_test") || startsWith(hook, "on_predict") ||
                                  hook.find("epoch") != std::string::npos;
          on = on && !epochLevel;
        } else {
          on = on && onStep != "False";
        }
        holds = holds && on;
      }
    }
    if (!holds)
      continue;
    name = ic.event;
    if (barrier)
      *barrier = ic.barrier;
    for (const auto &[ph, value] : {std::pair<std::string, std::string>{"{object}", object},
                                    {"{receiver}", recv}, {"{method}", method}})
      for (size_t at; (at = name.find(ph)) != std::string::npos;)
        name.replace(at, ph.size(), value);
    // DDP's forward broadcasts the buffers only while require_forward_param_sync
    // is set; a forward without grad clears it, so the next forward skips its
    // broadcast (torch/nn/parallel/distributed.py, forward).  Under no_grad the
    // broadcast is the next training forward's, issued early.
    const bool buffers = std::find(ic.requires.begin(), ic.requires.end(),
                                   "module_has_buffers") != ic.requires.end();
    if (standsInFor && noGrad_ > 0 && ic.object == "ddp" && ic.callsObject && buffers) {
      *standsInFor = name;
      name += " under no_grad";
    }
    return true;
  }
  return false;
}

// Where `spelling` is wrapped in DDP in the function (or top level) around
// `at`: later and not before (`logits = model(x)` on rank 0 before `model =
// DDP(model)` further down: the plain module, no collective yet).  Wraps in
// other functions do not count: this function's name is its own.
void Builder::wrapsAround(const std::string &spelling, SyntaxNode at, bool &before, bool &after) const {
  auto it = ddpModules_.find(spelling);
  if (it == ddpModules_.end())
    return;
  const SyntaxNode here = enclosingFunction(at); // null: the module's top level
  for (SyntaxNode ctor : it->second) {
    const SyntaxNode there = enclosingFunction(ctor);
    if (here.isNull() != there.isNull() || (!here.isNull() && !(there == here)))
      continue;
    (startByte(ctor) < startByte(at) ? before : after) = true;
  }
}

bool Builder::wrappedLater(const std::string &spelling, SyntaxNode at) const {
  bool before = false, after = false;
  wrapsAround(spelling, at, before, after);
  return after && !before;
}

// Whether the module calls one of `spellings` (the callee as written): in
// code, not in a comment or a docstring (LoftQ's run_glue.py keeps its
// Accelerate version as `# accelerator.prepare(...)` lines and runs in one
// process).  Skipped when no spelling is in the text at all.
bool Builder::anyCall(SyntaxNode root, const std::function<bool(SyntaxNode)> &pred) const {
  std::vector<SyntaxNode> stack{root};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "call") && pred(n))
      return true;
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

bool Builder::callsWritten(SyntaxNode root, std::initializer_list<std::string_view> spellings) const {
  const std::string_view src = text(root);
  bool mentioned = false;
  for (std::string_view w : spellings)
    mentioned = mentioned || src.find(w) != std::string_view::npos;
  if (!mentioned)
    return false;
  std::vector<SyntaxNode> stack{root};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "call")) {
      const std::string_view f = text(field(n, "function"));
      for (std::string_view w : spellings)
        if (f == w)
          return true;
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

// A name that the DDP model goes by elsewhere in the module, loaded afresh in
// this function before the call and never wrapped here (Oscar's and the old
// Hugging Face examples' main: `train()` wraps its own `model`, then
// `model = model_class.from_pretrained(checkpoint)` is evaluated on rank 0):
// the helper gets a plain module.
bool Builder::loadedPlain(SyntaxNode arg, SyntaxNode at) const {
  arg = unparen(arg);
  if (!is(arg, "identifier"))
    return false;
  bool before = false, after = false;
  wrapsAround(str(arg), at, before, after);
  if (before || after)
    return false;
  SyntaxNode v = unparen(assignedBefore(arg));
  if (v.isNull() || !is(v, "call"))
    return false;
  const std::string l = lastPart(qualified(field(v, "function")).empty()
                                     ? std::string(text(field(v, "function")))
                                     : qualified(field(v, "function")));
  return l == "from_pretrained" || l == "load_from_checkpoint";
}

// `loss.backward()` before this function's `DDP(...)`, with none before it.
bool Builder::beforeAnyDdp(SyntaxNode at) const {
  bool before = false, after = false;
  for (const auto &[spelling, ctors] : ddpModules_)
    wrapsAround(spelling, at, before, after);
  return after && !before;
}

Builder::CallSite Builder::callSite(SyntaxNode c) const {
  CallSite cs;
  cs.c = c;
  cs.fn = field(c, "function");
  cs.q = qualified(cs.fn);
  cs.l = lastPart(cs.q.empty() ? std::string(text(cs.fn)) : cs.q);
  cs.recv = is(cs.fn, "attribute") ? str(field(cs.fn, "object")) : "";
  cs.as = args(c);
  cs.dist = startsWith(cs.q, "torch.distributed.") &&
            cs.q.find('.', std::string("torch.distributed.").size()) == std::string::npos;
  return cs;
}

void Builder::emit(std::vector<Node> &out, SyntaxNode at, EventKind kind, std::string name) {
  out.push_back(Node::makeEvent(kind, std::move(name), loc(at)));
}

ObjKind Builder::objectKind(const std::string &spelling) const {
  auto it = findObject(spelling);
  return it == objects_.end() ? ObjKind::None : it->second;
}

// What a call does, in the order a call can be several things: it may read or
// set the environment (a fact, and then something else), then it is one of a
// process group's creation, a data loader's, a collective (explicit, a
// wrapper's, or implicit), a file write or an exit, or a call of one of this
// module's functions.
// `os.environ["LOCAL_RANK"]`, `os.environ.get("WORLD_SIZE", 1)`,
// `os.getenv("RANK")`: a read of a variable the launchers set for each process.
bool Builder::readsLauncherEnv(SyntaxNode root) const {
  std::vector<SyntaxNode> stack{root};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "string")) {
      bool literal = false;
      const std::string name = unquote(text(n), literal);
      if (literal && (has(api().rankEnvVars, name) || has(api().localRankEnvVars, name) ||
                      name == "WORLD_SIZE")) {
        SyntaxNode up = parentOf(n);
        // `os.environ["LOCAL_RANK"] = str(i)`: a launcher of its own setting it.
        const SyntaxNode set = parentOf(up);
        if (is(up, "subscript") && is(set, "assignment") && field(set, "left") == up)
          continue;
        // `os.environ.setdefault("LOCAL_RANK", "0")`: a default of its own for
        // a run without a launcher (FastVideo's single-GPU tests), not a read.
        if (is(up, "argument_list") && is(set, "call") && is(field(set, "function"), "attribute") &&
            text(field(field(set, "function"), "attribute")) == "setdefault" && namedChildCount(up) == 2 &&
            namedChild(up, 0) == n)
          continue;
        for (int i = 0; i < 3 && !up.isNull(); ++i, up = parentOf(up)) {
          const std::string_view t = text(up);
          if (t.find("environ") != std::string_view::npos || t.find("getenv") != std::string_view::npos)
            return true;
        }
      }
      continue;
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

void Builder::call(SyntaxNode c, std::vector<Node> &out) {
  const CallSite cs = callSite(c);
  environmentCall(cs);
  if (is(cs.fn, "attribute") && has(api().saveStateHookRegistrars, cs.l))
    for (const auto &a : cs.as)
      if (const std::string key = resolveCallee(a.value); !key.empty()) {
        m_.checkpointHooks.insert(key);
        if (cs.l == "register_save_state_pre_hook" &&
            std::find(saveStateHooks_.begin(), saveStateHooks_.end(), key) == saveStateHooks_.end())
          saveStateHooks_.push_back(key);
      }
  if (has(api().stepCheckpointHookClasses, cs.q))
    noteStepCheckpointHook(cs);
  if (startsRanks(cs.q, cs.l) || has(api().rankLaunchers, cs.q))
    launches_.insert(fnKey());
  fileRead(cs, out);
  if (processGroupCall(cs, out) || dataLoaderCall(cs) || collectiveCall(cs, out) ||
      ioCall(cs, out))
    return;
  helperCall(cs, out);
}

// mpi4py's buffer collectives leave their result in a buffer, not in the
// call's value: `comm.Allreduce(sendbuf, recvbuf, op)` (`MPI.IN_PLACE` as
// the send buffer reduces recvbuf in place), `comm.Allgather(sendbuf,
// recvbuf)`, `comm.Bcast(buf, root)`.  The buffer every member then holds
// alike.
static const PyArg *mpiAgreedBuffer(const std::string &q, const std::vector<PyArg> &as) {
  if (!startsWith(q, "mpi4py."))
    return nullptr;
  const std::string l = lastPart(q);
  const bool bcast = l == "Bcast";
  if (!bcast && l != "Allreduce" && l != "Allgather")
    return nullptr;
  const size_t at = bcast ? 0 : 1;
  const char *name = bcast ? "buf" : "recvbuf";
  for (size_t i = 0; i < as.size(); ++i)
    if (as[i].name == name || (as[i].name.empty() && i == at))
      return &as[i];
  return nullptr;
}

// A collective after which every member holds the same output buffer.
static bool leavesOutputAgreed(const std::string &op) {
  return op == "all_reduce" || op == "broadcast" || op == "broadcast_object_list" ||
         op == "all_gather" || op == "all_gather_object" || op == "all_gather_into_tensor";
}

// The group handed by position (Megatron's `torch.distributed.broadcast(t,
// src, group)`), in torch.distributed's own parameter order, when it is not
// the world's.
// Where torch.distributed's collective `op` takes its group by position.
static std::optional<size_t> groupPosition(const std::string &op) {
  static const std::map<std::string, size_t> at = {
      {"broadcast", 2},  {"all_reduce", 2}, {"all_gather", 2},          {"all_gather_object", 2},
      {"broadcast_object_list", 2}, {"all_to_all", 2}, {"all_gather_into_tensor", 2},
      {"reduce", 3},     {"gather", 3},     {"scatter", 3},             {"reduce_scatter", 3},
      {"reduce_scatter_tensor", 3}, {"barrier", 0}};
  auto it = at.find(op);
  return it == at.end() ? std::nullopt : std::optional<size_t>(it->second);
}

static bool positionalSubgroup(const std::string &op, const std::vector<PyArg> &as) {
  const std::optional<size_t> at = groupPosition(op);
  if (!at || as.size() <= *at)
    return false;
  for (size_t i = 0; i <= *at; ++i)
    if (!as[i].name.empty())
      return false;
  const std::string_view g = as[*at].text;
  return g != "None" && g.find("WORLD") == std::string_view::npos && g.find("world") == std::string_view::npos;
}

// A group that spans the world: `None`, `group.WORLD`, a `new_group` of no
// ranks (every rank's, detectron2's gloo twin of the world), or a function's
// result that is always one of those (detectron2's `_get_global_gloo_group()`,
// copied into the projects built on its comm module).
bool Builder::worldGroupValue(SyntaxNode v, int depth) const {
  v = unparen(v);
  if (v.isNull())
    return false;
  if (is(v, "none") || text(v).find("group.WORLD") != std::string_view::npos)
    return true;
  if (!is(v, "call"))
    return false;
  SyntaxNode fn = field(v, "function");
  if (lastPart(qualified(fn)) == "new_group") {
    for (const PyArg &a : args(v))
      if (a.name.empty() || a.name == "ranks")
        return false;
    return true;
  }
  auto f = depth < 2 ? fns_.find(resolveCallee(fn)) : fns_.end();
  if (f == fns_.end() || f->second.def.isNull())
    return false;
  bool any = false, other = false;
  std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
    if (other || is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      return;
    if (is(n, "return_statement")) {
      any = true;
      other = namedChildCount(n) != 1 || !worldGroupValue(namedChild(n, 0), depth + 1);
      return;
    }
    for (SyntaxNode k : namedKids(n))
      scan(k);
  };
  scan(field(f->second.def, "body"));
  return any && !other;
}

// A collective handed `group=<name>` where the name only ever holds the
// world's group in this function: a parameter that defaults to None, set
// from worldGroupValue's forms (`if group is None: group =
// _get_global_gloo_group()`).  Its members are every rank, so it is compared
// as the world's collective, not left out as a subgroup's.
bool Builder::onWorldGroup(const CallSite &cs) const {
  SyntaxNode g;
  for (const PyArg &a : cs.as)
    if (a.name == "group" || a.name == "process_group")
      g = a.value;
  if (g.isNull()) {
    const std::optional<size_t> at = groupPosition(cs.l);
    if (!at || cs.as.size() <= *at || !cs.as[*at].name.empty())
      return false;
    g = cs.as[*at].value;
  }
  g = unparen(g);
  if (!is(g, "identifier"))
    return worldGroupValue(g, 0);
  auto self = fns_.find(curFn_);
  if (self == fns_.end() || self->second.def.isNull())
    return false;
  const std::string name = str(g);
  SyntaxNode def = self->second.def;
  bool param = false;
  for (SyntaxNode p : namedKids(field(def, "parameters")))
    if (SyntaxNode id = parameterName(p); is(id, "identifier") && str(id) == name) {
      if (!is(p, "default_parameter") && !is(p, "typed_default_parameter"))
        return false;
      if (!is(unparen(field(p, "value")), "none"))
        return false;
      param = true;
    }
  std::vector<SyntaxNode> values;
  if (!plainBindings(def, name, {}, values))
    return false;
  return (param || !values.empty()) &&
         std::all_of(values.begin(), values.end(), [&](SyntaxNode v) { return worldGroupValue(v, 0); });
}

// The values a function's own body binds `name` to with a plain `name =
// ...`; false where it binds or changes it any other way (`+=`, a loop or
// `with` target, tuple unpacking, `del`, or one of `mutators` called on it).
bool Builder::plainBindings(SyntaxNode def, const std::string &name, const std::set<std::string> &mutators,
                            std::vector<SyntaxNode> &values) const {
  // `t` names the variable itself (not an attribute `self.<name>`).
  std::function<bool(SyntaxNode)> mentions = [&](SyntaxNode t) {
    if (is(t, "identifier"))
      return str(t) == name;
    if (is(t, "attribute"))
      return mentions(field(t, "object"));
    for (SyntaxNode k : namedKids(t))
      if (mentions(k))
        return true;
    return false;
  };
  bool other = false;
  std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
    if (other || is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      return;
    if (is(n, "assignment") && is(field(n, "left"), "identifier")) {
      if (str(field(n, "left")) == name)
        values.push_back(field(n, "right"));
    } else if (is(n, "assignment") || is(n, "augmented_assignment") || is(n, "for_statement")) {
      other = is(field(n, "left"), "identifier") ? str(field(n, "left")) == name
                                                 : !is(field(n, "left"), "attribute") &&
                                                       !is(field(n, "left"), "subscript") && mentions(field(n, "left"));
    } else if (is(n, "with_item")) {
      SyntaxNode v = field(n, "value");
      other = is(v, "as_pattern") && mentions(field(v, "alias"));
    } else if (is(n, "delete_statement")) {
      other = mentions(n);
    } else if (is(n, "named_expression")) {
      other = str(field(n, "name")) == name;
    } else if (is(n, "call") && is(field(n, "function"), "attribute") &&
               str(field(field(n, "function"), "object")) == name) {
      other = mutators.count(str(field(field(n, "function"), "attribute"))) > 0;
    }
    for (SyntaxNode k : namedKids(n))
      scan(k);
  };
  scan(field(def, "body"));
  return !other;
}

// A collective's output buffer, the same on its ranks once it returns; for
// `all_reduce(reduced_loss.data)` (GLM) the tensor whose storage it is, too.
void Builder::bindAgreed(SyntaxNode buffer) {
  bind(buffer, Val{Dep::Uniform, RankKind::None, std::nullopt, true});
  if (SyntaxNode b = unparen(buffer); is(b, "attribute") && str(field(b, "attribute")) == "data")
    bind(field(b, "object"), Val{Dep::Uniform, RankKind::None, std::nullopt, true});
}

bool Builder::memoisedCreation(SyntaxNode call) const {
  // In a function whose result is cached (`@functools.lru_cache()`,
  // detectron2's and GroundingDINO's `_get_global_gloo_group`).
  for (SyntaxNode up = parentOf(call); !up.isNull(); up = parentOf(up)) {
    if (is(up, "lambda") || is(up, "class_definition"))
      break;
    if (is(up, "function_definition")) {
      SyntaxNode dec = parentOf(up);
      if (!dec.isNull() && is(dec, "decorated_definition"))
        for (SyntaxNode d : namedKids(dec))
          if (is(d, "decorator")) {
            const std::string_view t = text(d);
            if (t.find("lru_cache") != std::string_view::npos ||
                t.find("functools.cache") != std::string_view::npos || t == "@cache")
              return true;
          }
      break;
    }
  }
  SyntaxNode up = parentOf(call);
  while (!up.isNull() && is(up, "parenthesized_expression"))
    up = parentOf(up);
  if (up.isNull() || !is(up, "assignment") || unparen(field(up, "right")) != call)
    return false;
  const std::string target(text(field(up, "left")));
  SyntaxNode st = parentOf(up);
  if (st.isNull() || !is(st, "expression_statement"))
    return false;
  SyntaxNode blk = parentOf(st), test = parentOf(blk);
  if (blk.isNull() || test.isNull() || !is(test, "if_statement") || field(test, "consequence") != blk)
    return false;
  SyntaxNode c = unparen(field(test, "condition"));
  // `X is None`, `not X`
  if (is(c, "comparison_operator") && namedChildCount(c) == 2 &&
      text(namedChild(c, 0)) == target && is(namedChild(c, 1), "none") &&
      text(c).find(" is ") != std::string_view::npos && text(c).find(" not ") == std::string_view::npos)
    return true;
  if (is(c, "not_operator")) {
    SyntaxNode a = unparen(field(c, "argument"));
    if (text(a) == target)
      return true;
    // `not hasattr(obj, "attr")` with `obj.attr = ...`
    if (is(a, "call") && text(field(a, "function")) == "hasattr") {
      SyntaxNode args = field(a, "arguments");
      if (namedChildCount(args) == 2 && is(namedChild(args, 1), "string")) {
        std::string attr(text(namedChild(args, 1)));
        if (attr.size() >= 2)
          attr = attr.substr(1, attr.size() - 2);
        return target == std::string(text(namedChild(args, 0))) + "." + attr;
      }
    }
  }
  return false;
}

// Where a library checkpointer made here writes: detectron2's on the main
// process, fvcore's on every rank unless its `save_to_disk` is a main-process
// test, a PeriodicCheckpointer where the checkpointer it wraps does.
Builder::CheckpointerWrites Builder::checkpointerWrites(SyntaxNode made) {
  made = unparen(made);
  if (is(made, "identifier") || is(made, "attribute")) {
    const std::string t = str(made);
    return mainCheckpointers_.count(t)        ? CheckpointerWrites::Main
           : everyRankCheckpointers_.count(t) ? CheckpointerWrites::Every
                                              : CheckpointerWrites::None;
  }
  if (!is(made, "call"))
    return CheckpointerWrites::None;
  const std::string q = qualified(field(made, "function"));
  const CallSite cs = callSite(made);
  if (has(api().mainProcessCheckpointerClasses, q))
    return CheckpointerWrites::Main;
  if (has(api().everyRankCheckpointerClasses, q)) {
    const PyArg *disk = arg(cs.as, "save_to_disk", -1);
    if (!disk || disk->text == "True")
      return CheckpointerWrites::Every;
    const Val v = value(disk->value);
    return v.cond && isMainOnly(*v.cond) ? CheckpointerWrites::Main : CheckpointerWrites::None;
  }
  if (has(api().wrappingCheckpointerClasses, q))
    if (const PyArg *inner = arg(cs.as, "checkpointer", 0))
      return checkpointerWrites(inner->value);
  return CheckpointerWrites::None;
}

// `checkpointer = DetectionCheckpointer(...)`: the name holds a checkpointer
// that writes where checkpointerWrites says, for the calls of its methods.
void Builder::noteCheckpointer(SyntaxNode left, SyntaxNode right) {
  const CheckpointerWrites w = checkpointerWrites(right);
  const std::string name = str(left);
  if (w == CheckpointerWrites::Main) {
    mainCheckpointers_.insert(name);
    everyRankCheckpointers_.erase(name);
  } else if (w == CheckpointerWrites::Every) {
    everyRankCheckpointers_.insert(name);
    mainCheckpointers_.erase(name);
  }
}

std::string Builder::mainGuardText(SyntaxNode call) {
  for (SyntaxNode kid = call, up = parentOf(call); !up.isNull(); kid = up, up = parentOf(up)) {
    if (is(up, "function_definition") || is(up, "lambda") || is(up, "class_definition"))
      break;
    SyntaxNode test;
    if (is(up, "conditional_expression") && namedChildCount(up) == 3 && namedChild(up, 0) == kid)
      test = namedChild(up, 1);
    else if (is(up, "if_statement") && field(up, "consequence") == kid)
      test = field(up, "condition");
    if (!test.isNull() && isMainOnly(cond(test)))
      return std::string(text(test));
  }
  return "";
}

// `hooks.PeriodicCheckpointer(self.checkpointer, period)` in a trainer's
// build_hooks: the trainer calls the hook's after_step between iterations,
// and every period it saves on the ranks where its checkpointer writes and
// where it was registered.  Rank 0 alone: its own function, run every step,
// whose one write sits at the hook's making.
void Builder::noteStepCheckpointHook(const CallSite &cs) {
  const std::string guard = mainGuardText(cs.c);
  const PyArg *inner = arg(cs.as, "checkpointer", 0);
  if (guard.empty() && !(inner && checkpointerWrites(inner->value) == CheckpointerWrites::Main))
    return;
  const Loc at = loc(cs.c);
  if (!stepHookSites_.insert(at).second)
    return; // a specialisation builds the call again
  const std::string name(text(cs.fn));
  core::Function f;
  f.key = fnKey() + ".<" + name + " hook at " + std::to_string(at) + ">";
  f.name = name + " hook";
  f.loc = at;
  f.runsEveryStep = true;
  f.libraryHook = true;
  Node write = Node::makeEvent(EventKind::CheckpointWrite, name, at);
  f.body = Node::block({guardedByCall(
      mainProcessCond(false, guard.empty() ? "its checkpointer's own main-process guard" : "registered under " + guard),
      cs.c, at, std::move(write))});
  stepHookFns_.push_back(std::move(f));
}

// Explicit collectives, the user's wrappers, Accelerate's and Lightning's, and
// the implicit collectives of the API catalog.
bool Builder::collectiveCall(const CallSite &cs, std::vector<Node> &out) {
  // A library's collective on a process set of some ranks (Horovod's
  // `process_set=`, `hvd.barrier(odd_set)`) is run by its members only.
  if ((has(api().collectiveFunctions, cs.q) || has(api().barrierFunctions, cs.q)) &&
      (onSubgroup(text(field(cs.c, "arguments"))) ||
       (has(api().barrierFunctions, cs.q) && !cs.as.empty() && cs.as[0].name.empty()))) {
    emit(out, cs.c, has(api().barrierFunctions, cs.q) ? EventKind::GroupBarrier : EventKind::PointToPoint,
         cs.q + " on a subgroup");
    return true;
  }
  if (has(api().collectiveFunctions, cs.q)) {
    emit(out, cs.c, EventKind::Collective, cs.q);
    if (const PyArg *buffer = mpiAgreedBuffer(cs.q, cs.as))
      bindAgreed(buffer->value);
    return true;
  }
  if (has(api().barrierFunctions, cs.q)) {
    emit(out, cs.c, EventKind::Barrier, cs.q);
    return true;
  }
  if (cs.dist && (onSubgroup(text(field(cs.c, "arguments"))) || positionalSubgroup(cs.l, cs.as)) &&
      (has(api().barriers, cs.l) || has(api().collectives, cs.l)) && cs.l != "new_group" &&
      !onWorldGroup(cs)) {
    emit(out, cs.c, has(api().barriers, cs.l) ? EventKind::GroupBarrier : EventKind::PointToPoint,
         cs.l + " on a subgroup");
    // dinov3's `broadcast_object_list(exists, src=0, group=process_group)`:
    // the group's members hold the same value after it, and what they then
    // decide together (a barrier on the same group) they decide alike.
    if (!cs.as.empty() && cs.as[0].name.empty() && leavesOutputAgreed(cs.l))
      bindAgreed(cs.as[0].value);
    return true;
  }
  if (cs.dist) {
    if (has(api().barriers, cs.l)) {
      emit(out, cs.c, EventKind::Barrier, cs.l);
      return true;
    }
    if (has(api().pointToPoint, cs.l)) {
      emit(out, cs.c, EventKind::PointToPoint, cs.l);
      return true;
    }
    // `dist.all_reduce(torch.cuda.FloatTensor(1))` (GNMT's and MLPerf's
    // `barrier()` helpers): a tensor made in place, of literal sizes, that
    // nobody reads after: the call only waits for every rank, a barrier.
    if (cs.l == "all_reduce" && !cs.as.empty() && cs.as[0].name.empty() &&
        placeholderTensor(cs.as[0].value)) {
      emit(out, cs.c, EventKind::Barrier, cs.l);
      return true;
    }
    if (has(api().collectives, cs.l)) {
      emit(out, cs.c, EventKind::Collective, cs.l);
      // The output buffers are agreed once the call returns.
      // The buffer: the first positional argument, or `tensor=` / `object_list=`
      // (`dist.broadcast(tensor=flag, src=0)`).
      const PyArg *outArg = nullptr;
      for (const auto &a : cs.as)
        if (a.name.empty() || a.name == "tensor" || a.name == "tensor_list" ||
            a.name == "object_list" || a.name == "output_tensor_list") {
          outArg = &a;
          break;
        }
      if (outArg && leavesOutputAgreed(cs.l))
        bindAgreed(outArg->value);
      // reduce/gather/scatter leave each rank with its own result.
      else if (outArg && (cs.l == "reduce" || cs.l == "gather" || cs.l == "scatter" || cs.l == "reduce_scatter" ||
                          cs.l == "all_to_all" || cs.l == "all_to_all_single" || cs.l == "gather_object" ||
                          cs.l == "scatter_object_list" || cs.l == "reduce_scatter_tensor"))
        bind(outArg->value, Val{Dep::Local, RankKind::None, std::nullopt, false});
      return true;
    }
  }
  if (has(user_.collectiveFunctions, cs.q) || has(user_.collectiveFunctions, cs.l)) {
    emit(out, cs.c, EventKind::Collective, cs.l);
    return true;
  }
  if (has(user_.barrierFunctions, cs.q) || has(user_.barrierFunctions, cs.l)) {
    emit(out, cs.c, EventKind::Barrier, cs.l);
    return true;
  }

  // Accelerate and Lightning wrappers
  if (!cs.recv.empty() && objectKind(cs.recv) == ObjKind::Subgroup)
    return true; // its collectives run on a group of some ranks (see ObjKind)
  if (!cs.recv.empty() && (objectKind(cs.recv) == ObjKind::Accelerator || cs.recv == "accelerator" ||
                        cs.recv == "self.accelerator" || endsWith(cs.recv, "strategy") ||
                        (cs.recv == "self" && (isLightningModule(curClass_) || isFabricClass(curClass_))) ||
                        cs.recv == "self.fabric" || cs.recv == "fabric")) {
    if (has(api().wrapperBarriers, cs.l)) {
      emit(out, cs.c, EventKind::Barrier, cs.recv + "." + cs.l);
      return true;
    }
    if (has(api().wrapperCollectives, cs.l)) {
      emit(out, cs.c, EventKind::Collective, cs.recv + "." + cs.l);
      return true;
    }
  }

  // Implicit collectives (rules/api.yaml, python.implicit_collectives): the
  // first entry that matches the call wins.
  std::string name, early;
  bool barrier = false;
  if (implicitCollective(cs.fn, cs.recv, cs.l, cs.as, name, &early, &barrier)) {
    emit(out, cs.c, barrier ? EventKind::Barrier : EventKind::Collective, std::move(name));
    out.back().standsInFor = std::move(early);
    out.back().assumedDdp = lastImplicitAssumed_;
    return true;
  }
  if (!cs.recv.empty() && has(api().fsdpCollectiveFunctions, cs.l) &&
      (startsWith(cs.q, "torch.distributed") || cs.recv == "FSDP" || cs.recv == "FullyShardedDataParallel")) {
    emit(out, cs.c, EventKind::Collective, cs.l);
    return true;
  }
  if (has(api().fsdpCollectiveFunctions, cs.l) && startsWith(cs.q, "torch.distributed")) {
    emit(out, cs.c, EventKind::Collective, cs.l);
    return true;
  }
  return false;
}

// Megatron-Bridge's `bridge.save_weights(...)` (verl's and tevatron's Megatron
// engines) saves the sharded model with every rank taking part: no one
// process's file.
static bool megatronBridge(const std::string &recv) {
  std::string last = lastPart(recv);
  std::transform(last.begin(), last.end(), last.begin(), ::tolower);
  return last.find("bridge") != std::string::npos;
}

// A tokenizer's, processor's or config's `save_pretrained`: a few small files.
static bool smallFilesOwner(std::string recv) {
  std::transform(recv.begin(), recv.end(), recv.begin(), ::tolower);
  for (std::string_view w : {"tokenizer", "processor", "config", "feature_extractor"})
    if (recv.find(w) != std::string::npos)
      return true;
  return false;
}

// A log file by its name: `logfile`, `args.log_path`, "train.log", the last
// part of os.path.join(out_dir, "log.txt") or out_dir / "log.txt".  A file
// in a log folder (os.path.join(log_dir, "config.yaml")) is not one.
bool Builder::namesLog(SyntaxNode path, int depth) const {
  path = unparen(path);
  // `filename + ".pkl"`: the record's name with a suffix is that record too.
  if (is(path, "binary_operator") && text(field(path, "operator")) == "+" &&
      is(unparen(field(path, "left")), "identifier") && namesLog(field(path, "left"), depth))
    return true;
  if (is(path, "identifier") && specRecordPaths_.count(str(path)))
    return true;
  while (true) {
    // `"{}/config.yaml".format(out)`: the template names the file.
    if (is(path, "call") && is(field(path, "function"), "attribute") &&
        text(field(field(path, "function"), "attribute")) == "format" &&
        is(unparen(field(field(path, "function"), "object")), "string")) {
      path = unparen(field(field(path, "function"), "object"));
      break;
    }
    if (is(path, "call") && (lastPart(qualified(field(path, "function"))) == "join")) {
      auto kids = namedKids(field(path, "arguments"));
      if (kids.empty())
        return false;
      // UNITER's `join(args.output_dir, 'log', 'model.json')`: a file in the
      // run's log (or settings) folder is a record, unless its name says weights.
      for (size_t i = 0; i + 1 < kids.size(); ++i)
        if (is(unparen(kids[i]), "string") && core::namesRecordFile(text(unparen(kids[i]))) &&
            !core::namesWeightsFile(text(unparen(kids.back()))))
          return true;
      path = unparen(kids.back());
    } else if (is(path, "binary_operator") && text(field(path, "operator")) == "/") {
      path = unparen(field(path, "right"));
    } else {
      break;
    }
  }
  // `path = os.path.join(out, "config.json")`, then `open(path, "w")`: the
  // name's last assignment before the use, in the same function.
  if (is(path, "identifier") && depth == 0) {
    if (SyntaxNode v = assignedBefore(path); !v.isNull())
      return namesLog(v, 1);
    // CvT's `def save_config(cfg, path): ... open(path, 'w')`: a parameter
    // of a function named for a settings record is where that record goes.
    for (SyntaxNode p = parentOf(path); !p.isNull(); p = parentOf(p))
      if (is(p, "function_definition")) {
        bool param = false;
        for (SyntaxNode k : namedKids(field(p, "parameters"))) {
          const bool named = (is(k, "identifier") ? text(k) : text(parameterName(k))) == text(path);
          // efficientvit's `def save_exp_config(cfg, path, name="config.yaml")`:
          // the default names the record.
          if (named && (is(k, "default_parameter") || is(k, "typed_default_parameter")) &&
              is(unparen(field(k, "value")), "string") &&
              core::namesRecordFile(text(unparen(field(k, "value")))))
            return true;
          param = param || named;
        }
        return param && core::namesRecordFile(text(field(p, "name")));
      }
  }
  std::string_view t = text(path);
  if (is(path, "attribute"))
    t = text(field(path, "attribute"));
  return core::namesRecordFile(t) || core::namesEvaluationFile(t);
}

SyntaxNode Builder::assignedBefore(SyntaxNode name) const {
  SyntaxNode scope;
  for (SyntaxNode p = parentOf(name); !p.isNull(); p = parentOf(p))
    if (is(p, "function_definition")) {
      scope = field(p, "body");
      break;
    }
  if (scope.isNull())
    scope = tree_.root();
  const std::string_view wanted = text(name);
  SyntaxNode best;
  std::vector<SyntaxNode> stack{scope};
  while (!stack.empty()) {
    SyntaxNode s = stack.back();
    stack.pop_back();
    if (startByte(s) >= startByte(name))
      continue;
    if (is(s, "function_definition") || is(s, "class_definition") || is(s, "lambda"))
      continue;
    if (is(s, "assignment") && is(field(s, "left"), "identifier") &&
        text(field(s, "left")) == wanted && endByte(s) <= startByte(name) &&
        (best.isNull() || startByte(s) > startByte(best)))
      best = field(s, "right");
    // `start, end = rank * n, (rank + 1) * n`: the element in the same place.
    if (is(s, "assignment") && (is(field(s, "left"), "pattern_list") || is(field(s, "left"), "tuple_pattern")) &&
        (is(field(s, "right"), "expression_list") || is(field(s, "right"), "tuple")) &&
        endByte(s) <= startByte(name) && (best.isNull() || startByte(s) > startByte(best))) {
      const auto names = namedKids(field(s, "left"));
      const auto values = namedKids(field(s, "right"));
      if (names.size() == values.size())
        for (size_t i = 0; i < names.size(); ++i)
          if (is(names[i], "identifier") && text(names[i]) == wanted)
            best = values[i];
    }
    for (SyntaxNode k : namedKids(s))
      stack.push_back(k);
  }
  return best;
}

Builder::OpenKind Builder::openKind(SyntaxNode c, SyntaxNode *pathOut, bool readBack) const {
  if (!is(c, "call"))
    return OpenKind::None;
  SyntaxNode fn = field(c, "function");
  const std::string q = qualified(fn);
  const auto as = args(c);
  std::string m;
  SyntaxNode path;
  if (q == "open" || q == "io.open" || q == "builtins.open") {
    const PyArg *mode = arg(as, "mode", 1);
    if (!mode)
      return OpenKind::None;
    m = std::string(mode->text);
    if (const PyArg *p = arg(as, "file", 0))
      path = p->value;
  } else if (is(fn, "attribute") && str(field(fn, "attribute")) == "open" && q != "os.open") {
    // `(output_dir / "log.txt").open("a")`, `path.open(mode="w")`: pathlib's
    // open.  A mode string, not a member name (`zipfile.open("weights.bin")`).
    auto modeOf = [&](const PyArg *a) {
      bool literal = false;
      std::string v = a ? unquote(a->text, literal) : std::string();
      return literal && !v.empty() && v.size() <= 3 &&
                     v.find_first_not_of("rwaxbt+") == std::string::npos
                 ? v
                 : std::string();
    };
    m = modeOf(arg(as, "mode", 0));
    path = field(fn, "object");
    // iopath's and fvcore's `g_pathmgr.open(path, "wb")`, fsspec's
    // `fs.open(path, "wb")`: a file system object's open takes the path first.
    if (m.empty() && as.size() >= 2 && as[0].name.empty()) {
      m = modeOf(arg(as, "mode", 1));
      path = as[0].value;
    }
    if (m.empty())
      return OpenKind::None;
  } else {
    return OpenKind::None;
  }
  if (m.find_first_of("wax+") == std::string::npos)
    return OpenKind::None;
  if (pathOut)
    *pathOut = path;
  if (m.find('a') != std::string::npos || (!path.isNull() && namesLog(path)))
    return OpenKind::Log;
  if (dumpsSettingsOnly(c))
    return OpenKind::Log;
  // Text for people (Megatron's generated samples, GLM's `results.json`)
  // that nothing here reads back: a record, not a file a rank can read
  // half-written.
  if (readBack && m.find('b') == std::string::npos && !path.isNull() && !readBackAfter(path, c))
    return OpenKind::Log;
  return OpenKind::File;
}

// Whether the function that opens `path` for writing hands that path to
// anything after the write: a read (`json.load(open(cache_file))`), a
// dataset, a helper (FastVideo's file list).  By the path's name, or by the
// file names written in it.
bool Builder::readBackAfter(SyntaxNode path, SyntaxNode openCall) const {
  // Asked several times of one call (the event, the handle's kind).
  auto [memo, fresh] = readBack_.emplace(openCall.index(), false);
  if (fresh)
    memo->second = readBackScan(path, openCall);
  return memo->second;
}

bool Builder::readBackScan(SyntaxNode path, SyntaxNode openCall) const {
  path = unparen(path);
  SyntaxNode scope;
  for (SyntaxNode p = parentOf(openCall); !p.isNull(); p = parentOf(p))
    if (is(p, "function_definition") || is(p, "module")) {
      scope = p;
      break;
    }
  if (scope.isNull())
    return true;
  std::string name;
  std::vector<std::string> files;
  // `open(makedirs(save_path), "w")`: a helper that makes the folder and
  // hands its one argument back; the file is the argument's.
  if (is(path, "call")) {
    const auto wrapped = args(path);
    if (wrapped.size() == 1 && wrapped[0].name.empty() &&
        (is(unparen(wrapped[0].value), "identifier") || is(unparen(wrapped[0].value), "attribute")))
      path = unparen(wrapped[0].value);
  }
  if (is(path, "identifier") || is(path, "attribute"))
    name = str(path);
  std::vector<SyntaxNode> stack{path};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "string_content") && text(n).size() >= 3)
      files.emplace_back(text(n));
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  if (name.empty() && files.empty())
    return true; // nothing to tell a read by
  // A path the caller hands in (`def dump(obj, filename)`): what the file
  // is, and who reads it, is the caller's.
  if (is(path, "identifier") && is(scope, "function_definition"))
    for (SyntaxNode prm : namedKids(field(scope, "parameters")))
      if (SyntaxNode id = parameterName(prm); is(id, "identifier") && str(id) == name)
        return true;
  const unsigned after = endByte(openCall);
  auto mentions = [&](SyntaxNode a) {
    const std::string_view t = text(a);
    if (!name.empty())
      for (size_t at = t.find(name); at != std::string_view::npos; at = t.find(name, at + 1)) {
        auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        const size_t end = at + name.size();
        if ((at == 0 || (!word(t[at - 1]) && t[at - 1] != '.')) && (end >= t.size() || !word(t[end])))
          return true;
      }
    for (const auto &f : files)
      if (t.find(f) != std::string_view::npos)
        return true;
    return false;
  };
  bool read = false;
  std::vector<SyntaxNode> todo{is(scope, "module") ? scope : field(scope, "body")};
  while (!todo.empty() && !read) {
    SyntaxNode n = todo.back();
    todo.pop_back();
    if (endByte(n) <= after)
      continue;
    if (is(n, "call") && startByte(n) >= after) {
      const std::string l = lastPart(qualified(field(n, "function")));
      static const std::set<std::string> reports = {"print", "info", "warning", "warn", "debug",
                                                    "error", "log", "print_rank_0", "format"};
      if (!reports.count(l) && openKind(n, nullptr, false) == OpenKind::None)
        for (SyntaxNode a : namedKids(field(n, "arguments")))
          if (mentions(a)) {
            read = true;
            break;
          }
    }
    for (SyntaxNode k : namedKids(n))
      todo.push_back(k);
  }
  return read;
}

// `with open(dump_path, "w") as f: json.dump(opt, f, indent=2)` (KAIR's
// option.save): the file holds the run's settings, whatever its path is
// called, a record nobody reads back during the run.
bool Builder::dumpsSettingsOnly(SyntaxNode openCall) const {
  SyntaxNode with;
  for (SyntaxNode p = parentOf(openCall); !p.isNull(); p = parentOf(p)) {
    if (is(p, "with_statement")) {
      with = p;
      break;
    }
    if (!is(p, "as_pattern") && !is(p, "with_item") && !is(p, "with_clause"))
      return false;
  }
  if (with.isNull())
    return false;
  std::string handle;
  for (SyntaxNode p = parentOf(openCall); !p.isNull() && p != with; p = parentOf(p))
    if (is(p, "as_pattern"))
      for (SyntaxNode k : namedKids(p))
        if (is(k, "as_pattern_target"))
          handle = std::string(text(k));
  if (handle.empty())
    return false;
  static const std::set<std::string> settings = {"opt", "opts", "args", "config", "cfg", "conf",
                                                 "hparams", "hps", "options", "settings", "params",
                                                 "hyperparameters", "hyperparams"};
  bool any = false, other = false;
  std::vector<SyntaxNode> stack{field(with, "body")};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "identifier") && str(n) == handle) {
      SyntaxNode call = parentOf(parentOf(n));
      const std::string q = is(call, "call") ? qualified(field(call, "function")) : std::string();
      const auto as = is(call, "call") ? args(call) : std::vector<PyArg>{};
      if ((q == "json.dump" || q == "yaml.dump" || q == "yaml.safe_dump") && !as.empty()) {
        std::string what = lastPart(std::string(text(unparen(as[0].value))));
        std::transform(what.begin(), what.end(), what.begin(), ::tolower);
        if (settings.count(what))
          any = true;
        else
          other = true;
      } else {
        other = true;
      }
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return any && !other;
}

// A value made from what names this process alone (`uuid.uuid4()`,
// `os.getpid()`, `tempfile.mkdtemp()`, the host name): a folder so named,
// kept in an attribute, is every process's own (lingua's probe tensors).
bool Builder::namesThisProcess(SyntaxNode e) const {
  std::vector<SyntaxNode> stack{e};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "call") && (has(api().perProcessIds, qualified(field(n, "function"))) ||
                          has(api().perProcessIds, "uuid." + lastPart(qualified(field(n, "function"))))))
      return true;
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

// A path made with a rank by its name (`'{}/{}.pkl'.format(tmp, self.rank)`
// in Megatron's realm index, a module that never imports torch.distributed),
// or with the shard the process was handed: one file per rank, however the
// rank got there.
SyntaxNode Builder::nameValue(SyntaxNode expr, int hops) const {
  expr = unparen(expr);
  for (int h = 0; h < hops && is(expr, "identifier"); ++h) {
    SyntaxNode v = assignedBefore(expr);
    if (v.isNull())
      break;
    expr = unparen(v);
  }
  return expr;
}

bool Builder::pathNamesRank(SyntaxNode path) const {
  std::vector<SyntaxNode> stack{path};
  // `file = out + "_" + str(cfg.shard_id)`, then `open(file, "wb")`: each
  // name in the path through its last assignment, a few hops in all.
  int hops = 0;
  while (!stack.empty()) {
    SyntaxNode n = unparen(stack.back());
    stack.pop_back();
    if (is(n, "identifier") && hops < 3)
      if (SyntaxNode v = nameValue(n, 1); v != n) {
        ++hops;
        stack.push_back(v);
      }
    if (is(n, "identifier") || is(n, "attribute")) {
      const std::string l = is(n, "attribute") ? str(field(n, "attribute")) : str(n);
      if (has(api().rankAttributes, l) || has(api().localRankAttributes, l))
        return true;
      // `cfg.out_file + "_" + str(cfg.shard_id)` (DPR's
      // generate_dense_embeddings, one process per shard): the shard a
      // process was handed names its own file.
      if (l == "shard_id" || l == "shard_idx" || l == "shard_index")
        return true;
    }
    if (is(n, "call") && is(field(n, "function"), "attribute") &&
        has(api().rankFunctions, "torch.distributed." + str(field(field(n, "function"), "attribute"))))
      return true;
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

// The file a path expression names, for matching a read with a write in
// another function: its last literal file name (`model_final.pth` in
// `osp.join(respth, 'model_final.pth')` or `f"{d}/model_final.pth"`; a
// value put into the name is `*`), through
// a local name assigned before; else a setting's attribute as written
// (`args.save_path`).  Empty when neither: a bare local name says nothing
// outside its function.
std::string Builder::fileKey(SyntaxNode p) const {
  p = nameValue(p, 3);
  std::string last;
  std::vector<SyntaxNode> stack{p};
  std::vector<SyntaxNode> strings;
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "string")) {
      strings.push_back(n);
      continue;
    }
    auto kids = namedKids(n);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      stack.push_back(*it);
  }
  for (SyntaxNode n : strings) {
    // The literal's characters outside its interpolations.
    std::string t;
    for (SyntaxNode k : namedKids(n))
      if (is(k, "string_content"))
        t += str(k);
      else if (is(k, "interpolation"))
        t += '*'; // `f"{prompt}_{n}token.pth"` is `*_*token.pth`
    const size_t slash = t.find_last_of('/');
    const std::string name = slash == std::string::npos ? t : t.substr(slash + 1);
    const size_t spelled = name.size() - size_t(std::count(name.begin(), name.end(), '*'));
    if (name.find('.') != std::string::npos && name.find_first_of("{}% ") == std::string::npos &&
        spelled > 4)
      last = name;
  }
  if (!last.empty())
    return last;
  if (is(p, "attribute") && is(field(p, "object"), "identifier")) {
    const std::string o = str(field(p, "object"));
    if (o == "args" || o == "opt" || o == "cfg" || o == "config" || o == "self" || o == "hparams")
      return str(p);
  }
  return "";
}

// A read of a file by name (`torch.load(save_pth)`, `open(path)` to read):
// ddp-rank0-io-barrier pairs it with rank 0's write of the same name.
void Builder::fileRead(const CallSite &cs, std::vector<Node> &out) {
  SyntaxNode path;
  const bool builtinOpen = cs.builtinOpen();
  if (cs.q == "torch.load" || cs.q == "numpy.load" || cs.q == "np.load") {
    if (const PyArg *a = arg(cs.as, "f", 0))
      path = a->value;
  } else if (is(cs.fn, "attribute") && cs.l == "from_pretrained") {
    // The old Hugging Face examples: rank 0 saves with `save_pretrained(
    // args.output_dir)`, then every rank loads `from_pretrained(
    // args.output_dir)` with no barrier between.
    if (const PyArg *a = arg(cs.as, "pretrained_model_name_or_path", 0))
      path = a->value;
  } else if (builtinOpen) {
    const PyArg *mode = arg(cs.as, "mode", 1);
    bool literal = false;
    const std::string m = mode ? unquote(mode->text, literal) : std::string("r");
    if ((mode && !literal) || m.find_first_of("wax+") != std::string::npos)
      return;
    if (const PyArg *a = arg(cs.as, "file", 0))
      path = a->value;
  }
  if (path.isNull())
    return;
  std::string key = fileKey(path);
  if (key.empty())
    return;
  Node n = Node::makeEvent(EventKind::FileRead, builtinOpen ? "open" : cs.q, loc(cs.c));
  n.pathKey = std::move(key);
  out.push_back(std::move(n));
}

// Checkpoint and file writes, and exits.
bool Builder::ioCall(const CallSite &cs, std::vector<Node> &out) {
  if (has(api().checkpointWriters, cs.q) || has(user_.checkpointWriters, cs.q) ||
      has(user_.checkpointWriters, cs.l)) {
    const bool rankArgument = has(api().rankArgumentCheckpointWriters, cs.q);
    const PyArg *p = rankArgument ? arg(cs.as, "filename", 0) : arg(cs.as, "f", 1);
    if (rankArgument && !p)
      p = arg(cs.as, "out_dir", 0);
    if (p && (memoryFiles_.count(std::string(p->text)) ||
              p->text.find("BytesIO(") != std::string_view::npos))
      return true; // serialised into memory, not a file
    // `torch.save(coco_evaluator.coco_eval["bbox"].eval, out / "eval" / name)`:
    // evaluation results kept for people, not a state any rank loads.
    const PyArg *saved = arg(cs.as, "obj", 0);
    Node n = Node::makeEvent(saved && core::namesEvaluationRecord(saved->text) ? EventKind::LogWrite
                                                                              : EventKind::CheckpointWrite,
                             cs.q, loc(cs.c));
    if (p) {
      n.pathDep = std::max(value(p->value).dep, pathNamesRank(p->value) ? Dep::Rank : Dep::Uniform);
      n.pathKey = fileKey(p->value);
    }
    // icefall's `save_checkpoint(filename, model, rank=rank)`: written where
    // the rank handed over is 0, as under `if rank == 0:`.  Without `rank=`
    // every rank passes its default 0 and writes.
    if (const PyArg *r = rankArgument ? arg(cs.as, "rank", -1) : nullptr) {
      const Val v = value(r->value);
      if (v.rank != RankKind::None) {
        const Loc at = n.loc;
        out.push_back(guardedByCall(mainProcessCond(v.rank == RankKind::Local, std::string(r->text) + " == 0"),
                                    cs.c, at, std::move(n)));
        return true;
      }
    }
    out.push_back(std::move(n));
    return true;
  }
  const bool builtinOpen = cs.builtinOpen();
  SyntaxNode written;
  if (const OpenKind k = openKind(cs.c, &written); k != OpenKind::None) {
    // A file of this process's own temporary folder or file (GLIP's COCO
    // evaluation writes its detections to `tempfile.NamedTemporaryFile().name`):
    // no other rank can read it half-written.
    if (!written.isNull() && namesPrivateFile(written))
      return true;
    // `with open(probe, "w"): pass` (fairseq's verify_checkpoint_directory,
    // which then removes the file): a writability probe that writes nothing.
    if (SyntaxNode item = parentOf(cs.c); !item.isNull() && is(item, "with_item"))
      if (SyntaxNode clause = parentOf(item); !clause.isNull() && is(clause, "with_clause"))
        if (SyntaxNode with = parentOf(clause); !with.isNull() && is(with, "with_statement")) {
          const std::vector<SyntaxNode> body = realStatements(field(with, "body"));
          if (body.size() == 1 && is(body[0], "pass_statement"))
            return true;
        }
    const bool pathlib = !builtinOpen && !written.isNull() && written == field(cs.fn, "object");
    Node n = Node::makeEvent(k == OpenKind::Log ? EventKind::LogWrite : EventKind::FileWrite,
                             builtinOpen ? "open" : pathlib ? "Path.open" : cs.recv + ".open",
                             loc(cs.c));
    if (!written.isNull()) {
      n.pathDep = std::max(value(written).dep, pathNamesRank(written) ? Dep::Rank : Dep::Uniform);
      n.pathKey = fileKey(written);
    }
    out.push_back(std::move(n));
    return true;
  }
  if (builtinOpen)
    return true;
  // `checkpointer.save("model_final")`, `periodic_checkpointer.step(it)`:
  // detectron2 writes on the main process only.
  // In a subclass of detectron2's PeriodicCheckpointer (omni3d's
  // `PeriodicCheckpointerOnlyOne.step`), the wrapped `self.checkpointer`.
  auto periodicSubclass = [&] {
    if (cs.recv != "self.checkpointer" || curClass_.empty())
      return false;
    for (const auto &c : api().wrappingCheckpointerClasses)
      if (derivesFrom(curClass_, lastPart(c)))
        return true;
    return false;
  };
  // Lightning 1.x's Trainer.save_checkpoint writes on global rank zero and
  // waits for nobody (CompVis' latent diffusion calls it on rank 0 only).
  // In a hook's `trainer`, or the script's own (`melk`, a closure over it).
  if (is(cs.fn, "attribute") && cs.l == "save_checkpoint" && lightning1() &&
      (implicitObject("lightning_trainer", cs.recv) || cs.recv == "trainer" || cs.recv == "self.trainer") &&
      resolveCallee(cs.fn).empty() &&
      !externalCallee(cs.fn)) {
    const Loc at = loc(cs.c);
    out.push_back(guardedByCall(mainProcessCond(false, "trainer.is_global_zero (in " + cs.recv + ".save_checkpoint)"),
                                cs.c, at,
                                Node::makeEvent(EventKind::CheckpointWrite, cs.recv + ".save_checkpoint", at)));
    return true;
  }
  // fvcore's Checkpointer (or a PeriodicCheckpointer of one) on every rank
  // that calls it: dinov2's linear evaluation saves the same file from each.
  if (is(cs.fn, "attribute") && everyRankCheckpointers_.count(cs.recv) &&
      has(api().mainProcessCheckpointerMethods, cs.l) && resolveCallee(cs.fn).empty() &&
      !externalCallee(cs.fn)) {
    out.push_back(Node::makeEvent(EventKind::CheckpointWrite, cs.recv + "." + cs.l, loc(cs.c)));
    return true;
  }
  if (is(cs.fn, "attribute") && (mainCheckpointers_.count(cs.recv) || periodicSubclass()) &&
      has(api().mainProcessCheckpointerMethods, cs.l) && resolveCallee(cs.fn).empty() &&
      !externalCallee(cs.fn)) {
    const Loc at = loc(cs.c);
    Cond main = Cond::rankCmp(core::CmpOp::EQ, 0);
    main.text = "comm.is_main_process() (in " + cs.recv + "." + cs.l + ")";
    out.push_back(guardedByCall(main, cs.c, at,
                                Node::makeEvent(EventKind::CheckpointWrite, cs.recv + "." + cs.l, at)));
    return true;
  }
  // `saver.save_checkpoint(epoch, metric=m)` of a library's checkpoint saver:
  // a checkpoint in the folder the saver was made with.
  if (is(cs.fn, "attribute") && savers_.count(cs.recv) && has(api().checkpointSaverMethods, cs.l)) {
    out.push_back(Node::makeEvent(EventKind::CheckpointWrite, cs.recv + "." + cs.l, loc(cs.c)));
    return true;
  }
  if (is(cs.fn, "attribute") && has(api().checkpointWriteMethods, cs.l) && !smallFilesOwner(cs.recv) &&
      !megatronBridge(cs.recv)) {
    // trlx's `self.save_pretrained(dir)`: the project's own method of that
    // name, whose body says on which ranks it writes, not the library's.
    if (!resolveCallee(cs.fn).empty() || externalCallee(cs.fn))
      return false;
    const Loc at = loc(cs.c);
    Node n = Node::makeEvent(EventKind::CheckpointWrite, cs.recv + "." + cs.l, at);
    const PyArg *p = arg(cs.as, "save_directory", 0);
    for (const char *kw : {"file", "filepath"})
      p = p ? p : arg(cs.as, kw, -1);
    if (p) {
      n.pathDep = value(p->value).dep;
      n.pathKey = fileKey(p->value);
    }
    if (const PyArg *m = arg(cs.as, "is_main_process", -1)) {
      out.push_back(guardedByCall(cond(m->value), cs.c, at, std::move(n)));
      // `save_function=xm.save` (the Trainer's `_save_tpu`): every ordinal
      // calls it for the weights, and torch_xla's save writes on the master
      // and then meets the others at a rendezvous.
      if (const PyArg *f = arg(cs.as, "save_function", -1))
        if (qualified(unparen(f->value)) == "torch_xla.core.xla_model.save")
          out.push_back(Node::makeEvent(EventKind::Barrier, "xm.save (rendezvous)", at));
      return true;
    }
    out.push_back(std::move(n));
    return true;
  }
  // `accelerator.save_state(dir)`: the main process writes the checkpoint.
  // Under `if sharded or accelerator.is_main_process:` every rank calls it and
  // the main process alone writes: the write is guarded by the rank test.
  if (is(cs.fn, "attribute") && has(api().acceleratorCheckpointMethods, cs.l) &&
      implicitObject("accelerator", cs.recv) && resolveCallee(cs.fn).empty()) {
    const Loc at = loc(cs.c);
    Node n = Node::makeEvent(EventKind::CheckpointWrite, cs.recv + "." + cs.l, at);
    if (SyntaxNode other = shardingDisjunctOther(cs.c); !other.isNull()) {
      Cond c = cond(other);
      stamp(c, at);
      // A barrier goes after the guard's whole `if` (every rank leaves it),
      // never inside it, where under plain DDP only the main process is.
      SyntaxNode st = other;
      while (!parentOf(st).isNull() && !is(st, "if_statement"))
        st = parentOf(st);
      m_.ifNodes[at] = st;
      out.push_back(Node::makeIf(c, Node::block({std::move(n)}), Node::block(), at));
      return true;
    }
    // Called by every rank, accelerate's own test picks the writer, as the
    // library means it to: only a call the code itself keeps to the main
    // process is that process's write.
    bool mainOnly = false;
    for (SyntaxNode q = cs.c, p = parentOf(q); !p.isNull() && !mainOnly; q = p, p = parentOf(p)) {
      if (is(p, "function_definition") || is(p, "class_definition") || is(p, "lambda"))
        break;
      if ((is(p, "if_statement") || is(p, "elif_clause")) && q == field(p, "consequence"))
        mainOnly = core::isMainOnly(cond(field(p, "condition")));
    }
    if (!mainOnly) {
      // Called by every rank, the save hooks registered so far run on every
      // rank inside it (T2I-Adapter's unguarded `torch.save` in
      // `save_model_hook`).  Under the main process's test, the write above
      // stands for them.
      if (cs.l == "save_state")
        for (const std::string &hook : saveStateHooks_)
          if (auto f = fns_.find(hook); f != fns_.end())
            out.push_back(Node::makeCall(hook, f->second.name, at));
      return true;
    }
    out.push_back(std::move(n));
    return true;
  }
  // A plot or a sample grid: for people, read back by no rank.
  if (has(api().imageWriters, cs.q) || (is(cs.fn, "attribute") && has(api().imageWriteMethods, cs.l))) {
    out.push_back(Node::makeEvent(EventKind::LogWrite, cs.q.empty() ? cs.l : cs.q, loc(cs.c)));
    return true;
  }
  // `yaml.safe_dump(cfg)` without a stream returns the text: no file yet.
  if ((cs.q == "yaml.dump" || cs.q == "yaml.safe_dump") && !arg(cs.as, "stream", 1))
    return false;
  if (has(api().fileWriters, cs.q) || (is(cs.fn, "attribute") && has(api().fileWriteMethods, cs.l))) {
    // json.dump(stats, f) into a log's handle adds a line to that log; into
    // a private temporary file's handle, it writes nothing another rank sees.
    bool intoLog = false;
    for (const auto &a : cs.as) {
      if (is(unparen(a.value), "identifier") && namesPrivateFile(a.value))
        return true;
      intoLog = intoLog || (is(unparen(a.value), "identifier") && logFiles_.count(str(unparen(a.value))));
      // `yaml.dump(config, open(filename, "w"))`: into a record opened in place.
      intoLog = intoLog || (is(unparen(a.value), "call") && openKind(unparen(a.value)) == OpenKind::Log);
    }
    if (is(cs.fn, "attribute") && is(field(cs.fn, "object"), "identifier") &&
        namesPrivateFile(field(cs.fn, "object")))
      return true; // `f.write(...)` into a private temporary file
    // numpy's writers take the file first: DeBERTa's `np.savetxt(join(out,
    // f"predict_results_{name}.txt"), predicts)` is an evaluation's record,
    // as the same name opened with open() is.
    if (startsWith(cs.q, "numpy.") || startsWith(cs.q, "np."))
      if (const PyArg *file = arg(cs.as, "file", 0))
        intoLog = intoLog || namesLog(file->value);
    // shutil.copy(args.config, out_dir): a copy of the run's settings file.
    // Also by keyword: `shutil.copy(src=cfg_file, dst=...)` (ml-cvnets).
    if (startsWith(cs.q, "shutil.")) {
      const PyArg *src = arg(cs.as, "src", 0), *dst = arg(cs.as, "dst", 1);
      intoLog = intoLog || (src && namesLog(src->value)) || (dst && namesLog(dst->value));
      // A checkpoint copied (vall-e's and F5-TTS' `shutil.copyfile(ckpt,
      // best)`, speechbrain's pretrained files): as long to write as the
      // checkpoint, and torn when every rank copies onto one path.
      if (!intoLog && cs.q != "shutil.copytree" && dst &&
          ((src && core::namesWeightsFile(src->text)) || core::namesWeightsFile(dst->text))) {
        Node n = Node::makeEvent(EventKind::CheckpointWrite, cs.q, loc(cs.c));
        n.pathDep = std::max(value(dst->value).dep, pathNamesRank(dst->value) ? Dep::Rank : Dep::Uniform);
        out.push_back(std::move(n));
        return true;
      }
    }
    Node n = Node::makeEvent(intoLog ? EventKind::LogWrite : EventKind::FileWrite,
                             cs.q.empty() ? cs.l : cs.q, loc(cs.c));
    out.push_back(std::move(n));
    return true;
  }

  // Exits
  if (has(api().exitFunctions, cs.q)) {
    // sys.exit raises SystemExit; os._exit ends the process: either way this
    // rank is gone and the others wait in their next collective.
    Node n = Node::makeExit(ExitKind::Throw, loc(cs.c));
    n.name = cs.q; // worded "they exit", not "they throw"
    out.push_back(std::move(n));
    return true;
  }
  return false;
}

// DeBERTa's `try: main(args)` / `except: ...; os._exit(-1)` round the whole
// script: the process ends with a failure status, which torchrun, mp.spawn
// and a project's own launcher meet as the crash an uncaught exception is.
bool Builder::crashHandlerExit(const CallSite &cs) const {
  const PyArg *status = arg(cs.as, "status", 0);
  if (!status)
    status = arg(cs.as, "code", 0);
  if (!status)
    return false;
  SyntaxNode v = unparen(status->value);
  std::int64_t code = 0;
  const bool failure =
      is(v, "string") || (is(v, "unary_operator") && text(field(v, "operator")) == "-") ||
      (is(v, "integer") && intLiteral(text(v), code) && code != 0);
  if (!failure)
    return false;
  bool handler = false;
  SyntaxNode tryAt;
  for (SyntaxNode up = parentOf(cs.c); !up.isNull(); up = parentOf(up)) {
    if (is(up, "lambda") || is(up, "class_definition"))
      return false;
    if (is(up, "function_definition"))
      return handler && !tryAt.isNull() && entryWrapper(up, tryAt);
    handler = handler || is(up, "except_clause");
    if (handler && tryAt.isNull() && is(up, "try_statement"))
      tryAt = up;
  }
  return handler;
}

// denoiser's and svoice's `@hydra.main def main(args): try: _main(args)
// except Exception: ...; os._exit(1)`: a function whose whole body is the
// try, called from the script's top level, is the script's outermost frame.
bool Builder::entryWrapper(SyntaxNode def, SyntaxNode tryAt) const {
  const std::vector<SyntaxNode> body = realStatements(field(def, "body"));
  SyntaxNode outer = is(parentOf(def), "decorated_definition") ? parentOf(def) : def;
  if (body.size() != 1 || body[0] != tryAt || !is(parentOf(outer), "module"))
    return false;
  const std::string name = str(field(def, "name"));
  for (SyntaxNode st : namedKids(tree_.root())) {
    if (is(st, "function_definition") || is(st, "class_definition") || is(st, "decorated_definition"))
      continue;
    if (anyCall(st, [&](SyntaxNode c) {
          return is(field(c, "function"), "identifier") && str(field(c, "function")) == name;
        }))
      return true;
  }
  return false;
}

std::optional<std::pair<Cond, bool>> Builder::enclosingRankArm(SyntaxNode call) {
  SyntaxNode prev = call;
  for (SyntaxNode up = parentOf(call); !up.isNull(); prev = up, up = parentOf(up)) {
    if (is(up, "function_definition") || is(up, "class_definition") || is(up, "lambda") ||
        is(up, "module"))
      return std::nullopt;
    if (!is(up, "if_statement"))
      continue;
    const bool thenArm = field(up, "consequence") == prev;
    // Only a plain two-armed test: an `elif` arm holds under the earlier
    // tests' negations too.
    if (!thenArm && !(is(prev, "else_clause") && namedChildCount(up) == 3))
      return std::nullopt;
    Cond c = cond(field(up, "condition"));
    if (c.dependence() != Dep::Rank)
      return std::nullopt;
    return std::make_pair(std::move(c), thenArm);
  }
  return std::nullopt;
}

void Builder::recordArguments(const std::string &callee, const CallSite &cs, bool constructor) {
  auto f = fns_.find(callee);
  if (f == fns_.end() || f->second.def.isNull())
    return;
  std::vector<std::string> params;
  std::set<std::string> noneDefault;
  for (SyntaxNode p : namedKids(field(f->second.def, "parameters"))) {
    SyntaxNode id = parameterName(p);
    params.push_back(is(id, "identifier") ? str(id) : std::string());
    if ((is(p, "default_parameter") || is(p, "typed_default_parameter")) &&
        is(unparen(field(p, "value")), "none"))
      noneDefault.insert(params.back());
  }
  // `self.step(...)`, `obj.method(...)`: the receiver is the first parameter;
  // `Trainer(...)` hands its `__init__` the new object as `self`.
  size_t next = !f->second.className.empty() && (is(cs.fn, "attribute") || constructor) &&
                        !params.empty() && params[0] == "self"
                    ? 1
                    : 0;
  // XMem's `if rank == 0: trainer = Trainer(config, logger=logger)` / `else:
  // trainer = Trainer(config)`: a None-default parameter handed an object on
  // one arm of a rank decision and left None on the other is an object
  // exactly where that arm's test holds (`self.logger is not None` is then
  // rank 0's test).
  std::optional<std::pair<Cond, bool>> arm;
  bool armRead = false;
  auto armFact = [&](bool given) -> std::optional<Val> {
    if (!armRead) {
      arm = enclosingRankArm(cs.c);
      armRead = true;
    }
    if (!arm)
      return std::nullopt;
    Val v;
    v.dep = Dep::Rank;
    v.existsWhen = given == arm->second ? arm->first : Cond::negate(arm->first);
    return v;
  };
  std::set<std::string> handed;
  ++callSites_[callee];
  std::set<std::string> writtenTo;
  bool method = false;
  for (const auto &p : signature(f->second, method))
    if (p.writtenTo)
      writtenTo.insert(p.name);
  for (const auto &a : cs.as) {
    std::string pname;
    if (a.name.empty()) {
      if (is(a.value, "list_splat") || is(a.value, "dictionary_splat") || next >= params.size())
        return; // *args, **kwargs: what reaches which parameter is not known here
      pname = params[next++];
    } else {
      pname = std::string(a.name);
    }
    if (pname.empty())
      continue;
    handed.insert(pname);
    Val v = value(a.value);
    if (noneDefault.count(pname) && v.dep == Dep::Uniform && !v.cond && !v.existsWhen &&
        v.rank == RankKind::None)
      if (auto af = armFact(!v.none))
        v = *af;
    ParamFact &pf = paramFacts_[callee][pname];
    // A name with the rank in it (`f"{out}/rank{args.rank}_feats.npy"`)
    // handed to a parameter the helper writes a file at: every rank writes
    // its own file (the same test as specialize's "rankpath").
    const bool rankPath = v.dep == Dep::Rank && !v.cond && !v.existsWhen && writtenTo.count(pname);
    if (rankPath)
      v = Val{Dep::Rank, RankKind::None, std::nullopt};
    // unimatch's `validate_things(model_without_ddp, ...)`: the bare module
    // handed to a parameter named as the DDP model.
    const std::string argText = str(unparen(a.value));
    if ((objectKind(pname) == ObjKind::Ddp || hasDdp_) &&
        (bareModule(a.value) || unwrapped_.count(argText))) {
      v = Val{};
      v.bareModel = true;
    }
    const bool fact = v.existsWhen || (v.cond && v.cond->dependence() == Dep::Rank) || rankPath || v.bareModel;
    if (!fact) {
      pf.agree = false;
    } else if (pf.sites == 0) {
      pf.v = v;
    } else {
      pf.agree = pf.agree && sameOpt(pf.v.cond, v.cond) && sameOpt(pf.v.existsWhen, v.existsWhen) &&
                 pf.v.dep == v.dep && pf.v.bareModel == v.bareModel;
    }
    ++pf.sites;
  }
  // The None-default parameters this call leaves out: None here.
  for (const std::string &pname : noneDefault) {
    if (handed.count(pname))
      continue;
    ParamFact &pf = paramFacts_[callee][pname];
    const std::optional<Val> v = armFact(false);
    if (!v)
      pf.agree = false;
    else if (pf.sites == 0)
      pf.v = *v;
    else
      pf.agree = pf.agree && sameOpt(pf.v.existsWhen, v->existsWhen) && pf.v.dep == v->dep &&
                 !pf.v.cond;
    ++pf.sites;
  }
}

std::map<std::string, std::map<std::string, Val>> Builder::parameterFacts() const {
  std::map<std::string, std::map<std::string, Val>> out;
  for (const auto &[callee, params] : paramFacts_) {
    auto n = callSites_.find(callee);
    for (const auto &[name, pf] : params)
      if (pf.agree && n != callSites_.end() && pf.sites == n->second)
        out[callee][name] = pf.v;
  }
  return out;
}

// A check that raises or exits on what it is handed (TimeSformer's
// `misc.check_nan_losses(loss)`: `if math.isnan(loss): raise ...`), handed a
// rank's own value: the call is where some ranks leave, as the same test
// written here would be.  The callee's exit is not a path of the caller's (a
// call contributes its collectives, not its exits), so it is made one here.
void Builder::checkThatMayRaise(const CallSite &cs, const std::vector<ParamSig> &params,
                                bool method, std::vector<Node> &out) {
  bool any = false;
  for (const auto &p : params)
    any = any || p.guardsExit;
  if (!any)
    return;
  bool splat = false;
  const auto to = boundParameters(cs.as, cs.fn, params, method, splat);
  for (size_t k = 0; k < cs.as.size() && k < to.size(); ++k) {
    if (!to[k] || !to[k]->guardsExit)
      continue;
    const Val v = value(cs.as[k].value);
    if (v.dep == Dep::Uniform || v.rank != RankKind::None || v.cond || v.existsWhen || v.agreed)
      continue;
    const Loc at = loc(cs.c);
    {
      PyModel::RaisingCall rc;
      if (const std::string key = resolveCallee(cs.fn); !key.empty()) {
        rc.callee = key;
        rc.begin = startByte(fns_.at(key).def);
        rc.end = endByte(fns_.at(key).def);
      } else if (const ExternalFunction *ext = externalCallee(cs.fn)) {
        rc.callee = ext->key;
      }
      m_.raisingCalls[startByte(cs.c)] = std::move(rc);
    }
    Cond c = Cond::atom(str(cs.c), v.dep);
    c.text = str(cs.c) + " raises";
    stamp(c, at);
    out.push_back(
        Node::makeIf(c, Node::block({Node::makeExit(ExitKind::Throw, at)}), Node::block(), at));
    return;
  }
}

// `what` runs where `c` holds, a test the call itself carries (an
// `is_main_process=` argument, a null object elsewhere): a block of its own at
// the call, whose fix-it barrier goes around the statement that holds it.
Node Builder::guardedByCall(Cond c, SyntaxNode call, Loc at, Node what) {
  stamp(c, at);
  SyntaxNode st = call;
  while (!parentOf(st).isNull() && !is(parentOf(st), "block") && !is(parentOf(st), "module"))
    st = parentOf(st);
  m_.ifNodes[at] = st;
  return Node::makeIf(std::move(c), Node::block({std::move(what)}), Node::block(), at);
}

// A call of one of this module's functions: its summary applies here.
void Builder::helperCall(const CallSite &cs, std::vector<Node> &out) {
  // A class of this module made here: what its `__init__` is handed.
  if (is(cs.fn, "identifier") && classDefs_.count(str(cs.fn)))
    if (const std::string init = str(cs.fn) + ".__init__"; fns_.count(init))
      recordArguments(init, cs, true);
  std::string key = resolveCallee(cs.fn);
  // `VQAClassificationDataset(...)`: making a dataset runs its `__init__`
  // here, where datasets build their create-once caches (vilbert's, on every
  // rank).  Only datasets: other classes' constructors (a logger's output
  // files, a trainer's set-up) are read where their methods are called.
  if (key.empty() && is(cs.fn, "identifier") && classDefs_.count(str(cs.fn)) &&
      fns_.count(str(cs.fn) + ".__init__") && derivesFrom(str(cs.fn), {"Dataset", "IterableDataset"}))
    key = str(cs.fn) + ".__init__";
  std::string name, plainKey;
  std::vector<ParamSig> calleeParams;
  bool calleeMethod = false;
  if (!key.empty()) {
    plainKey = key;
    const FnInfo &fi = fns_[key];
    name = fi.name;
    if (is(cs.fn, "attribute") && str(field(cs.fn, "attribute")) == "apply")
      name = str(cs.fn); // `AllReduce.apply`, not its `forward`
    if (fi.name == "__init__" && is(cs.fn, "identifier"))
      name = str(cs.fn); // the class made here, not its `__init__`
    recordArguments(key, cs);
    if (cs.as.empty())
      argumentlessHelpers_.emplace_back(key, str(cs.fn));
    bool method = false;
    calleeParams = signature(fi, method);
    calleeMethod = method;
    std::string spec = specialize(key, calleeParams, method, cs);
    if (spec != key && (specRequests_.count(spec) || specRequests_.size() < kMaxSpecializations)) {
      specRequests_.insert(spec);
      key = spec;
    }
  } else if (const ExternalFunction *ext = externalCallee(cs.fn)) {
    // Another module's function: its body joins the program when linked.
    plainKey = ext->key;
    if (ext->summary.launchesRanks)
      launches_.insert(fnKey());
    calleeParams = ext->summary.params;
    calleeMethod = ext->summary.method;
    key = specialize(ext->key, ext->summary.params, ext->summary.method, cs);
    name = str(cs.fn);
    m_.externalCalls.insert(key);
    if (cs.as.empty()) {
      argumentlessHelpers_.emplace_back(ext->key, str(cs.fn));
      externalBarrierOnly_[ext->key] = ext->summary.barrierOnly;
    }
  }
  if (!key.empty()) {
    Loc at = loc(cs.c);
    Node call = Node::makeCall(key, name, at);
    // A method of an object that is a null object on the other ranks does
    // its work where the object is real.
    if (Val ov = is(cs.fn, "attribute") ? value(field(cs.fn, "object")) : Val();
        ov.nullObject && ov.existsWhen && !ov.cond) {
      Cond c = *ov.existsWhen;
      unstamp(c);
      out.push_back(guardedByCall(std::move(c), cs.c, at, std::move(call)));
    } else {
      out.push_back(std::move(call));
    }
    // sd-scripts' `def sd_saver(f): save_checkpoint(f, unet)` handed to the
    // project's `save_common(..., sd_saver)`: a closure of this function runs
    // when the helper calls it back, on the ranks that make this call.  (A
    // module function handed over is not followed: litgpt's tests hand theirs
    // to the trainer's setup, and following them moved its reports there.)
    for (const auto &a : cs.as) {
      SyntaxNode v = unparen(a.value);
      if (!is(v, "identifier"))
        continue;
      const std::string cb = resolveCallee(v);
      if (auto f = fns_.find(cb); f != fns_.end() && f->second.nested && cb != fnKey() &&
                                  startsWith(cb, curFn_ + ".")) {
        // Whether the helper calls it back is the helper's choice, the same
        // on every rank (HunyuanDiT hands over a checkpoint saver and a
        // `diffusers_saver` that raises, and the helper picks one by a
        // setting): it may run, not must.
        Cond may = Cond::atom("callback@" + std::to_string(startByte(v)), Dep::Uniform);
        may.text = "the helper calls " + str(v) + " back";
        const Loc at = loc(v);
        may.loc = at;
        std::vector<Node> run;
        run.push_back(Node::makeCall(cb, f->second.name, at));
        out.push_back(Node::makeIf(may, Node::block(std::move(run)), Node::block(), at));
      }
    }
    checkThatMayRaise(cs, calleeParams, calleeMethod, out);
    core::HelperCall hc;
    hc.loc = at;
    hc.caller = fnKey();
    hc.callee = plainKey; // the facts are the plain build's
    hc.calleeName = str(cs.fn);
    hc.loops = loopInfos(SyntaxNode{});
    // Called with the loop's element (`make_loaders(fold)`): per input.
    for (const auto &a : cs.as) {
      auto more = loopInfos(a.value);
      for (size_t i = 0; i < more.size() && i < hc.loops.size(); ++i)
        hc.loops[i].datasetDependsOnLoop |= more[i].datasetDependsOnLoop;
    }
    hc.storedInContainer = storedInContainer(cs.c);
    facts().calls.push_back(hc);
  }
  // Functions handed to a call run there: `mp.spawn(main_worker, ...)` and
  // callbacks are not followed (their caller is not this program).
}

void Builder::expr(SyntaxNode e, std::vector<Node> &out) {
  if (e.isNull())
    return;
  const std::string_view k = kindOf(e);
  if (k == "lambda" || k == "function_definition" || k == "class_definition")
    return;
  if (k == "call") {
    // The callee's object and the arguments run first.
    SyntaxNode fn = field(e, "function");
    if (is(fn, "attribute"))
      expr(field(fn, "object"), out);
    else if (!is(fn, "identifier"))
      expr(fn, out);
    for (SyntaxNode a : namedKids(field(e, "arguments")))
      expr(is(a, "keyword_argument") ? field(a, "value") : a, out);
    call(e, out);
    return;
  }
  if (k == "conditional_expression" && namedChildCount(e) == 3) {
    // a if c else b
    std::vector<Node> t, f, pre;
    SyntaxNode a = namedChild(e, 0), c = namedChild(e, 1),
           b = namedChild(e, 2);
    expr(c, out);
    expr(a, t);
    expr(b, f);
    if (!t.empty() || !f.empty()) {
      Loc at = loc(e);
      Cond cc = cond(c);
      stamp(cc, at);
      out.push_back(Node::makeIf(cc, Node::block(std::move(t)), Node::block(std::move(f)), at));
    }
    return;
  }
  if (k == "boolean_operator") {
    // `a and f()`: f runs only when a holds
    expr(field(e, "left"), out);
    std::vector<Node> r;
    expr(field(e, "right"), r);
    if (!r.empty()) {
      Cond c = cond(field(e, "left"));
      if (str(field(e, "operator")) == "or")
        c = Cond::negate(c);
      Loc at = loc(e);
      stamp(c, at);
      out.push_back(Node::makeIf(c, Node::block(std::move(r)), Node::block(), at));
    }
    return;
  }
  if (k == "subscript") {
    const std::string v = qualified(field(e, "value"));
    if (v == "os.environ" || v == "environ")
      envRead(field(e, "subscript"), e);
  }
  for (SyntaxNode c : namedKids(e))
    expr(c, out);
}

void Builder::block(SyntaxNode b, std::vector<Node> &out) {
  for (SyntaxNode s : namedKids(b))
    statement(s, out);
}

Node Builder::ifChain(SyntaxNode c, SyntaxNode then, const std::vector<SyntaxNode> &alts, size_t i, Loc at) {
  Cond cc = cond(c);
  // `if best.is_file(): copyfile(src=best, dst=...)` (vall-e's trainer): the
  // probe asks whether the copy's source is there, not whether another rank
  // made the target already; no create-once cache.
  if (cc.probesFile && copiesProbedSource(c, then))
    cc.probesFile = false;
  stamp(cc, at);
  if (cc.text.empty())
    cc.text = str(c);
  Env before = env_;
  std::vector<Node> t;
  block(then, t);
  Env afterThen = env_;
  env_ = before;
  std::vector<Node> f;
  if (i < alts.size()) {
    SyntaxNode a = alts[i];
    if (is(a, "elif_clause")) {
      Loc l = loc(a);
      Node inner = ifChain(field(a, "condition"), field(a, "consequence"), alts, i + 1, l);
      m_.ifNodes[l] = a;
      f.push_back(std::move(inner));
    } else if (is(a, "else_clause")) {
      block(field(a, "body"), f);
    }
  }
  // `if dist.is_initialized(): dist.barrier()`: in the distributed run the arm
  // always runs, so its barrier is one every rank reaches.
  if (cc.kind == Cond::Kind::Const) {
    if (cc.constValue)
      env_ = afterThen;
    return Node::block(std::move(cc.constValue ? t : f));
  }
  // `if rank == 0: <start a UI whose callback broadcasts> else: worker_loop()`
  // (LLaMA2-Accessory's demos): rank 0's collectives run when the framework
  // calls back, as often as requests come, so the arms' counts are not
  // what the code says; the decision does not divide what is written here.
  if (cc.dependence() == Dep::Rank) {
    bool handsOff = handsOffCollectiveCallback(then, 2);
    for (size_t k = i; k < alts.size() && !handsOff; ++k)
      handsOff = handsOffCollectiveCallback(alts[k], 2);
    if (handsOff) {
      Cond u = Cond::atom(cc.text, Dep::Uniform);
      u.text = cc.text;
      u.loc = cc.loc;
      cc = std::move(u);
    }
  }
  // `if rank != 0: stop = flags[0]` after rank 0 broadcast `flags`: the other
  // ranks take what rank 0 sent, and rank 0 keeps what it sent.
  const bool thenReceives = core::isMainOnly(Cond::negate(cc)), elseReceives = core::isMainOnly(cc);
  std::vector<std::string> received;
  for (const auto &[name, v] : (thenReceives ? afterThen : env_).vars)
    if ((thenReceives || elseReceives) && v.agreed)
      received.push_back(name);
  env_ = joinArms(afterThen, env_, cc);
  for (const auto &name : received) {
    Val agreed;
    agreed.agreed = true;
    env_.vars[name] = agreed;
  }
  // YOLOP's resume: `if rank in [-1, 0]: ... begin_epoch = checkpoint['epoch']`
  // moves the start on rank 0 alone, so `range(begin_epoch + 1, end_epoch +
  // 1)` runs fewer epochs there.  A number read or computed on one arm of a
  // rank test, and not on the other, differs by rank.
  if (cc.dependence() == Dep::Rank && received.empty()) {
    std::set<std::string> inThen, inElse;
    auto numbers = [&](SyntaxNode arm, std::set<std::string> &out) {
      forEachOwnNode(arm, [&](SyntaxNode n) {
        if (is(n, "assignment") && is(field(n, "left"), "identifier")) {
          SyntaxNode r = unparen(field(n, "right"));
          // A value read out of something (`checkpoint['epoch']`,
          // `ckpt.step`), or arithmetic on one: not an object made here.
          if (is(r, "subscript") || is(r, "binary_operator") ||
              (is(r, "attribute") && !is(field(r, "object"), "call")))
            out.insert(str(field(n, "left")));
        }
        return true;
      });
    };
    numbers(then, inThen);
    if (i < alts.size() && is(alts[i], "else_clause"))
      numbers(field(alts[i], "body"), inElse);
    for (const std::set<std::string> *arm : {&inThen, &inElse})
      for (const auto &name : *arm) {
        const std::set<std::string> &other = arm == &inThen ? inElse : inThen;
        auto v = env_.vars.find(name);
        if (other.count(name) || v == env_.vars.end())
          continue;
        Val &j = v->second;
        if (j.dep == Dep::Uniform && !j.cond && !j.existsWhen && !j.agreed && !j.none && !j.batch &&
            j.rank == RankKind::None && !j.known)
          j.dep = Dep::Rank;
      }
  }
  return Node::makeIf(cc, Node::block(std::move(t)), Node::block(std::move(f)), at);
}

// An expression statement: assignments bind values (and set the environment,
// the loop's names, objects kept in memory); other expressions run their calls.
void Builder::expressionStatement(SyntaxNode s, std::vector<Node> &out) {
  for (SyntaxNode e : namedKids(s)) {
    if (is(e, "assignment") || is(e, "augmented_assignment")) {
      SyntaxNode right = field(e, "right"), left = field(e, "left");
      expr(right, out);
      // os.environ["X"] = "1"
      if (is(left, "subscript") &&
          (qualified(field(left, "value")) == "os.environ" || qualified(field(left, "value")) == "environ"))
        envSet(field(left, "subscript"), right, e);
      // A name assigned from the loop variable is the loop's too; so is an
      // object one of whose attributes is (ibot's `args_copy.checkpoint_key =
      // checkpoint_key`, then `eval_linear(args_copy)`: one run per key).
      if (!loops_.empty() && (is(left, "identifier") || is(left, "attribute"))) {
        SyntaxNode root = left;
        while (is(root, "attribute"))
          root = field(root, "object");
        bool fromLoop = false;
        std::function<void(SyntaxNode)> uses = [&](SyntaxNode x) {
          if (is(x, "identifier") && loops_.back().vars.count(str(x)))
            fromLoop = true;
          for (SyntaxNode kk : namedKids(x))
            uses(kk);
        };
        uses(right);
        if (fromLoop && is(root, "identifier") && str(root) != "self")
          loops_.back().vars.insert(str(root));
      }
      if (right.isNull())
        continue;
      Val v = value(right);
      // `pbar = enumerate(train_loader)`, then `pbar = TQDM(pbar, total=nb)`:
      // the name iterates the loader's batches.
      if (is(e, "assignment") && is(left, "identifier")) {
        if (isLoaderIterable(right))
          loaderNames_.insert(str(left));
        else
          loaderNames_.erase(str(left));
        if (SyntaxNode r = unparen(right); is(r, "call") && lastPart(qualified(field(r, "function"))) == "enumerate")
          enumeratedNames_[str(left)] = r;
        else
          enumeratedNames_.erase(str(left));
      }
      if (is(e, "assignment") && (is(left, "identifier") || is(left, "attribute"))) {
        // `accelerator.unwrap_model(model).eval()`, `model.module`: the bare module.
        SyntaxNode r = unparen(right);
        while (is(r, "call") && is(field(r, "function"), "attribute") &&
               (isMoveOrCastMethod(str(field(field(r, "function"), "attribute"))) ||
                str(field(field(r, "function"), "attribute")) == "eval" ||
                str(field(field(r, "function"), "attribute")) == "train"))
          r = unparen(field(field(r, "function"), "object"));
        const bool unwraps = bareModule(r);
        if (unwraps)
          unwrapped_.insert(str(left));
        else if (!oneProcessArm(e))
          unwrapped_.erase(str(left));
      }
      if (is(e, "augmented_assignment")) {
        Val old = value(left);
        // An agreed value scaled by a setting stays agreed (FlagAI's
        // `lm_loss = bmt.sum_loss(loss)`, `lm_loss /= accumulation_steps`).
        const bool stillAgreed = old.agreed && v.dep == Dep::Uniform && !v.cond && !v.existsWhen;
        v = joinVal(old, v);
        if (stillAgreed)
          v.agreed = true;
      }
      // A loss, a batch or logits computed by a call are this rank's own
      // data, even when the call's inputs are not known here.
      // A call on literals only (`best_loss = float("inf")`) is a constant.
      auto literalCall = [&](SyntaxNode r) {
        if (!is(r, "call"))
          return false;
        for (const auto &a : args(r)) {
          SyntaxNode x = unparen(a.value);
          if (is(x, "unary_operator"))
            x = unparen(field(x, "argument"));
          if (!(is(x, "string") || is(x, "integer") || is(x, "float") || is(x, "true") ||
                is(x, "false") || is(x, "none")))
            return false;
        }
        return true;
      };
      // `loss = nn.CrossEntropyLoss()` holds a criterion, not the rank's loss:
      // a class's constructor makes an object, whatever the name.
      auto constructs = [&](SyntaxNode r) {
        if (!is(r, "call"))
          return false;
        const std::string l = lastPart(qualified(field(r, "function")).empty()
                                           ? std::string(text(field(r, "function")))
                                           : qualified(field(r, "function")));
        return !l.empty() && std::isupper(static_cast<unsigned char>(l[0])) &&
               l.find_first_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos;
      };
      // `c_loss, m_loss = model(examples, labels)` (LLaMA-Adapter): a tuple
      // whose names say they are the rank's data.
      auto namesData = [&](SyntaxNode l) {
        if (is(l, "identifier"))
          return perRankDataName(text(l));
        if (!is(l, "pattern_list") && !is(l, "tuple_pattern"))
          return false;
        // Only a model's forward: `loss, acc = evaluate(...)` is often agreed.
        SyntaxNode r = unparen(right);
        if (!is(r, "call") ||
            (!is(field(r, "function"), "identifier") && !is(field(r, "function"), "attribute")))
          return false;
        std::string callee = lastPart(std::string(text(field(r, "function"))));
        std::transform(callee.begin(), callee.end(), callee.begin(), ::tolower);
        if (callee.find("model") == std::string::npos && callee != "net" && callee != "engine")
          return false;
        for (SyntaxNode k : namedKids(l))
          if (is(k, "identifier") && perRankDataName(text(k)))
            return true;
        return false;
      };
      if (namesData(left) && v.dep == Dep::Uniform && !v.agreed && !v.cond &&
          !literalCall(unparen(right)) &&
          !constructs(unparen(right)) &&
          (is(unparen(right), "call") || is(unparen(right), "subscript") ||
           is(unparen(right), "attribute"))) {
        v.dep = Dep::Local;
        // The model's own shape filled with this rank's values (see modelForward).
        v.batch = is(unparen(right), "call") && modelForward(field(unparen(right), "function"));
      }
      // An assignment chain `a = b = x`: the right of the inner is the value.
      while (is(right, "assignment")) {
        bind(field(right, "left"), v);
        right = field(right, "right");
      }
      // `rank, world = dist.get_rank(), dist.get_world_size()`: element by element.
      if ((is(left, "pattern_list") || is(left, "tuple_pattern")) &&
          (is(right, "expression_list") || is(right, "tuple")) &&
          namedChildCount(left) == namedChildCount(right) &&
          !is(e, "augmented_assignment")) {
        for (uint32_t i = 0; i < namedChildCount(left); ++i)
          bind(namedChild(left, i), value(namedChild(right, i)));
      } else {
        bind(left, v);
        // `rank, world_size = get_dist_info()`: the helper says which is the rank.
        if ((is(left, "pattern_list") || is(left, "tuple_pattern")) && is(unparen(right), "call"))
          if (bool local = false; true)
            if (const int at = rankElementOf(unparen(right), &local); at >= 0 && uint32_t(at) < namedChildCount(left))
              bind(namedChild(left, uint32_t(at)),
                   Val{Dep::Rank, local && !localRankIsGlobal_ ? RankKind::Local : RankKind::Global, std::nullopt});
        // `rank_val_acc, global_acc = evaluate(...)`: the element the helper
        // all-reduced is every rank's.
        if ((is(left, "pattern_list") || is(left, "tuple_pattern")) && is(unparen(right), "call")) {
          SyntaxNode fn = field(unparen(right), "function");
          std::vector<int> at;
          if (auto f = fns_.find(resolveCallee(fn)); f != fns_.end())
            at = f->second.returnsAgreedAt;
          else if (const ExternalFunction *ext = externalCallee(fn))
            at = ext->summary.returnsAgreedAt;
          for (int i : at)
            if (uint32_t(i) < namedChildCount(left))
              bind(namedChild(left, uint32_t(i)), Val{Dep::Uniform, RankKind::None, std::nullopt, true});
        }
        // `kl_all, kl_vals, kl_diag = kl_per_group(all_log_q, all_neg_log_p)`:
        // an element the helper makes as long as a uniform-length argument.
        if ((is(left, "pattern_list") || is(left, "tuple_pattern")) && is(unparen(right), "call") &&
            v.dep == Dep::Local && !v.batch)
          for (uint32_t i = 0; i < namedChildCount(left); ++i)
            if (lengthFollowsArguments(unparen(right), int(i))) {
              Val b = v;
              b.batch = true;
              bind(namedChild(left, i), b);
            }
        // `USE_PYTORCH_DDP, RANK, DEVICE, N_GPUS = pytorch_setup()`: the flag
        // that the run has ranks holds in every run where ranks can diverge.
        if ((is(left, "pattern_list") || is(left, "tuple_pattern")) && is(unparen(right), "call"))
          if (const int at = initializedElementOf(unparen(right)); at >= 0 && uint32_t(at) < namedChildCount(left)) {
            Val flag;
            Cond c = Cond::constant(true);
            c.text = str(namedChild(left, uint32_t(at)));
            flag.cond = c;
            bind(namedChild(left, uint32_t(at)), flag);
          }
        // `n, c, h, w = inputs.shape` (or `.size()`): the batch dimension, as
        // `inputs.shape[0]`, is as many samples on every rank.
        if ((is(left, "pattern_list") || is(left, "tuple_pattern")) && namedChildCount(left) >= 1) {
          SyntaxNode r = unparen(right);
          SyntaxNode of;
          if (is(r, "attribute") && str(field(r, "attribute")) == "shape")
            of = field(r, "object");
          else if (is(r, "call") && args(r).empty() && is(field(r, "function"), "attribute") &&
                   str(field(field(r, "function"), "attribute")) == "size")
            of = field(field(r, "function"), "object");
          if (!of.isNull() && value(of).batch)
            bind(namedChild(left, 0), Val{});
        }
      }
      if (is(left, "identifier") && is(unparen(right), "conditional_expression") &&
          isLoaderIterable(unparen(right))) {
        // The same batches whichever arm: a progress bar on rank 0 only.
        objects_[str(left)] = ObjKind::DataLoader;
        bind(left, Val{});
      }
      if (is(left, "identifier") && is(unparen(right), "call")) {
        const std::string l = lastPart(qualified(field(unparen(right), "function")));
        if (l == "BytesIO" || l == "StringIO")
          memoryFiles_.insert(str(left));
        if (openKind(unparen(right)) == OpenKind::Log)
          logFiles_.insert(str(left));
      }
    } else {
      expr(e, out);
    }
  }
}

// `else: raise NotImplementedError(config.mode)` at the end of a chain of
// tests on the configuration: a setting this code does not support, the same
// on every rank.  The path is not one the program runs (U-ViT checks the
// mode on every rank in its step function, then again in a rank-0 block
// that samples images); following it would read a rank-0 block's dead arm as
// rank 0 leaving alone.
bool Builder::unsupportedConfiguration(SyntaxNode raise) {
  SyntaxNode e = namedChildCount(raise) >= 1 ? unparen(namedChild(raise, 0)) : SyntaxNode{};
  if (e.isNull())
    return false;
  if (is(e, "call"))
    e = field(e, "function");
  if (!is(e, "identifier") || (str(e) != "NotImplementedError" && str(e) != "ValueError"))
    return false;
  SyntaxNode arm = parentOf(raise);
  if (!is(arm, "block"))
    return false;
  SyntaxNode clause = parentOf(arm);
  SyntaxNode ifs = is(clause, "if_statement") ? clause : parentOf(clause);
  if (!is(ifs, "if_statement"))
    return false;
  // `else: raise ValueError(f"Unknown model type {model_type}")` (LMFlow's
  // diffuser finetuner): a ValueError only as the last arm of a dispatch on
  // a setting's spelled values, `if model_type == "unet": ... elif ...`.
  if (str(e) == "ValueError") {
    if (!is(clause, "else_clause"))
      return false;
    auto namesValue = [&](SyntaxNode c) {
      c = unparen(c);
      if (!is(c, "comparison_operator") || namedChildCount(c) != 2)
        return false;
      const std::string op = comparisonOperator(c);
      return (op == "==" || op == "in") &&
             (is(unparen(namedChild(c, 1)), "string") || is(unparen(namedChild(c, 0)), "string") ||
              is(unparen(namedChild(c, 1)), "list") || is(unparen(namedChild(c, 1)), "tuple"));
    };
    if (!namesValue(field(ifs, "condition")))
      return false;
    for (SyntaxNode c : namedKids(ifs))
      if (is(c, "elif_clause") && !namesValue(field(c, "condition")))
        return false;
  }
  // Not a rank's own arm.  A test of a tensor's layout may read this rank's
  // tensor (ALPRO's `if logits.shape[1] == 2: ... else: raise
  // NotImplementedError`, a model head the code does not support); one of
  // its values (HunyuanDiT's `torch.all(multipliers == multipliers[0])` of
  // the batch) or of which rank this is picks that rank's way out.
  auto asksTheRank = [&](SyntaxNode c) {
    std::function<bool(const Cond &)> rankPart = [&](const Cond &k) {
      if (k.kind == Cond::Kind::RankCmp || (k.kind == Cond::Kind::Atom && k.dep == Dep::Rank))
        return true;
      return std::any_of(k.kids.begin(), k.kids.end(), rankPart);
    };
    const Val v = value(c);
    const Cond k = cond(c);
    if (v.dep == Dep::Rank || v.rank != RankKind::None || rankPart(k))
      return true;
    if (v.dep == Dep::Uniform && k.dependence() == Dep::Uniform)
      return false;
    const std::string_view t = text(c);
    const bool layout = t.find(".shape") != std::string_view::npos || t.find(".ndim") != std::string_view::npos ||
                        t.find(".dim()") != std::string_view::npos || t.find(".size(") != std::string_view::npos;
    return !layout;
  };
  if (asksTheRank(field(ifs, "condition")))
    return false;
  for (SyntaxNode c : namedKids(ifs))
    if (is(c, "elif_clause") && asksTheRank(field(c, "condition")))
      return false;
  return true;
}

// if/elif/else: a branch on the condition.
void Builder::ifStatement(SyntaxNode s, std::vector<Node> &out) {
  std::vector<SyntaxNode> alts;
  for (uint32_t i = 0; i < namedChildCount(s); ++i) {
    SyntaxNode c = namedChild(s, i);
    if (is(c, "elif_clause") || is(c, "else_clause"))
      alts.push_back(c);
  }
  expr(field(s, "condition"), out);
  noteGuardingDecorator(s);
  Loc at = loc(s);
  m_.ifNodes[at] = s;
  // `if __name__ == "__main__":` is the program's entry, not a decision.
  out.push_back(ifChain(field(s, "condition"), field(s, "consequence"), alts, 0, at));
}

// For a function nested in a module-level function (a decorator's wrapper):
// the decorator's key and the name of its first parameter, the function it
// decorates.
std::optional<std::pair<std::string, std::string>> Builder::decoratorOf(const std::string &wrapperKey) const {
  auto self = fns_.find(wrapperKey);
  const size_t dot = wrapperKey.rfind('.');
  if (self == fns_.end() || !self->second.nested || dot == std::string::npos)
    return std::nullopt;
  auto outer = fns_.find(wrapperKey.substr(0, dot));
  if (outer == fns_.end() || outer->second.nested || !outer->second.className.empty())
    return std::nullopt;
  SyntaxNode first;
  for (SyntaxNode p : namedKids(field(outer->second.def, "parameters"))) {
    first = parameterName(p);
    break;
  }
  if (!is(first, "identifier"))
    return std::nullopt;
  return std::make_pair(outer->first, str(first));
}

// An `if` of the wrapper that calls the decorated function only on the main
// process.
bool Builder::callsOnMainOnly(SyntaxNode ifStatement, const std::string &decorated) {
  std::function<bool(SyntaxNode)> callsIt = [&](SyntaxNode n) {
    if (is(n, "function_definition") || is(n, "lambda"))
      return false;
    if (is(n, "call") && is(field(n, "function"), "identifier") && str(field(n, "function")) == decorated)
      return true;
    for (SyntaxNode k : namedKids(n))
      if (callsIt(k))
        return true;
    return false;
  };
  return callsIt(field(ifStatement, "consequence")) && core::isMainOnly(cond(field(ifStatement, "condition")));
}

// A decorator whose wrapper calls the decorated function on the main process
// only (`def main_process(func): def wrapper(*a, **kw): rank, _ =
// get_dist_info(); if rank == 0: return func(*a, **kw)`): what it decorates,
// in the modules that import it, is rank 0's code.  Read as the wrapper is
// built, with the names its earlier statements bound.
void Builder::noteGuardingDecorator(SyntaxNode s) {
  if (auto d = decoratorOf(curFn_); d && callsOnMainOnly(s, d->second))
    guardsOnMain_.insert(d->first);
}

// This module's own guarding decorators (habitat's `@rank0_only` in the
// module that defines it): read once the module's rank predicates are known,
// before any body is built, so that what they decorate here is rank 0's code
// as it is in the importers.  The wrapper's tests are read without its
// earlier statements (`if rank0_only():`, not `rank = ...; if rank == 0:`).
void Builder::markOwnGuardingDecorators() {
  std::set<std::string> guarding;
  for (const auto &[key, fi] : fns_) {
    auto d = fi.def.isNull() ? std::nullopt : decoratorOf(key);
    if (!d)
      continue;
    curFn_ = key;
    curClass_.clear();
    env_ = Env{};
    forEachOwnNode(field(fi.def, "body"), [&](SyntaxNode n) {
      if (is(n, "if_statement") && callsOnMainOnly(n, d->second))
        guarding.insert(d->first);
      return true;
    });
  }
  if (guarding.empty())
    return;
  for (auto &[key, fi] : fns_)
    for (const auto &dec : fi.decorators)
      if (guarding.count(dec))
        fi.mainOnly = true;
}

// A loop body that ends in `break`, or in a `try` whose body does: every
// pass that gets through its last statement leaves the loop (a retry loop).
static bool endsInBreak(SyntaxNode body) {
  SyntaxNode last;
  for (SyntaxNode k : namedKids(body))
    if (!is(k, "comment"))
      last = k;
  if (last.isNull())
    return false;
  if (is(last, "break_statement"))
    return true;
  return is(last, "try_statement") && endsInBreak(field(last, "body"));
}

// A loop whose only events are DDP forwards under no_grad (MCC's chunked
// queries, MONAI's tiles): the first iteration's forward issues the next
// training forward's buffer broadcast and clears DDP's
// require_forward_param_sync, so the later ones issue none.  For the ranks'
// sequences of collectives the loop is its body run once: how many chunks a
// rank's input makes changes nothing, and an `else:` that runs one plain
// no_grad forward matches it.  Only where nothing else in it would tell
// (no call of the program's functions, no exit, no file).
static bool onlyNoGradForwards(const Node &n, bool &any) {
  if (n.kind == Node::Kind::Call || n.kind == Node::Kind::Exit)
    return false;
  if (n.kind == Node::Kind::Event) {
    if (!endsWith(n.name, " under no_grad"))
      return false;
    any = true;
  }
  for (const auto &k : n.kids)
    if (!onlyNoGradForwards(k, any))
      return false;
  return true;
}

static bool noGradForwardsOnly(const std::vector<Node> &body) {
  bool any = false;
  for (const auto &k : body)
    if (!onlyNoGradForwards(k, any))
      return false;
  return any;
}

// Whether `n` lies in the arm of an `if` that only the one-process run takes
// (unimatch's `if args.distributed: ... model_without_ddp = model.module`
// `else: model_without_ddp = model`): what it binds there is not what the
// distributed run holds.
bool Builder::oneProcessArm(SyntaxNode n) {
  for (SyntaxNode kid = n, up = parentOf(n); !up.isNull(); kid = up, up = parentOf(up)) {
    if (is(up, "function_definition") || is(up, "class_definition"))
      return false;
    if (is(up, "else_clause") && is(parentOf(up), "if_statement")) {
      const Cond c = cond(field(parentOf(up), "condition"));
      if (c.kind == Cond::Kind::Const && c.constValue)
        return true;
    }
  }
  return false;
}

// A data loader made here with a sampler that deals this rank its own
// indices (a value made from the rank) and is no DistributedSampler, which
// pads every rank to the same count.
bool Builder::raggedLoader(SyntaxNode iter) {
  SyntaxNode made = unparen(iter);
  if (is(made, "identifier"))
    made = unparen(assignedBefore(made));
  if (!is(made, "call") || kindOfCtor(made) != ObjKind::DataLoader)
    return false;
  for (const PyArg &a : args(made)) {
    if (a.name != "sampler" && a.name != "batch_sampler")
      continue;
    SyntaxNode sampler = unparen(a.value);
    SyntaxNode from = is(sampler, "identifier") ? unparen(assignedBefore(sampler)) : sampler;
    if (!from.isNull() && text(from).find("Distributed") != std::string_view::npos)
      return false;
    return samplerLengthDep(sampler, 0) == Dep::Rank;
  }
  return false;
}

// What the number of indices a sampler deals depends on: StyleGAN's
// `[(i * num_gpus + rank) % n for i in range((n - 1) // num_gpus + 1)]` holds
// this rank's indices but as many on every rank; `np.arange(rank, n,
// world_size)` and `indices[rank::world_size]` hold a share whose size
// depends on the rank.
Dep Builder::samplerLengthDep(SyntaxNode e, int depth) {
  e = unparen(e);
  if (e.isNull() || depth > 4)
    return Dep::Uniform;
  if (is(e, "identifier")) {
    SyntaxNode a = assignedBefore(e);
    return a.isNull() ? value(e).dep : samplerLengthDep(a, depth + 1);
  }
  if (is(e, "list_comprehension") || is(e, "generator_expression")) {
    Dep d = Dep::Uniform;
    for (SyntaxNode k : namedKids(e)) {
      if (is(k, "if_clause")) // a filter keeps as many as its test lets through
        return value(namedChild(k, 0)).dep == Dep::Uniform ? d : Dep::Rank;
      if (is(k, "for_in_clause"))
        d = core::join(d, samplerLengthDep(field(k, "right"), depth + 1));
    }
    return d;
  }
  if (is(e, "call")) {
    const std::string l = lastPart(qualified(field(e, "function")));
    const auto as = args(e);
    if ((l == "SubsetRandomSampler" || l == "SequentialSampler" || l == "RandomSampler" || l == "Subset" ||
         l == "list" || l == "tuple" || l == "array" || l == "asarray" || l == "tensor") &&
        !as.empty() && as[0].name.empty())
      return samplerLengthDep(as[0].value, depth + 1);
    if (l == "range" || l == "arange") {
      Dep d = Dep::Uniform;
      for (const PyArg &x : as)
        d = core::join(d, value(x.value).dep);
      return d;
    }
  }
  if (is(e, "subscript")) {
    Dep d = Dep::Uniform;
    for (SyntaxNode k : namedKids(e))
      if (k != field(e, "value"))
        d = core::join(d, value(k).dep);
    return core::join(d, samplerLengthDep(field(e, "value"), depth + 1));
  }
  return value(e).dep;
}

// A list or tuple literal with no splat, or a name of this function bound
// once to one and never grown or shrunk: its length is the code's.
bool Builder::fixedLengthSequence(SyntaxNode v) const {
  v = unparen(v);
  auto literal = [&](SyntaxNode l) {
    l = unparen(l);
    if (!is(l, "list") && !is(l, "tuple"))
      return false;
    for (SyntaxNode k : namedKids(l))
      if (is(k, "list_splat") || is(k, "dictionary_splat") || is(k, "parenthesized_list_splat"))
        return false;
    return true;
  };
  if (literal(v))
    return true;
  if (!is(v, "identifier"))
    return false;
  auto self = fns_.find(curFn_);
  if (self == fns_.end() || self->second.def.isNull())
    return false;
  static const std::set<std::string> grow = {"append", "extend", "insert", "pop", "remove", "clear"};
  std::vector<SyntaxNode> values;
  return plainBindings(self->second.def, str(v), grow, values) && values.size() == 1 && literal(values[0]);
}

// A for loop: its trip count and its elements depend on what it iterates.
void Builder::forStatement(SyntaxNode s, std::vector<Node> &out) {
  SyntaxNode left = field(s, "left"), right = field(s, "right");
  expr(right, out);
  // enumerate/tqdm/trange wrap the iterable: their other arguments (desc=,
  // disable=rank != 0) do not change the trip count.
  SyntaxNode iter = unparen(right);
  if (is(iter, "identifier"))
    if (auto en = enumeratedNames_.find(str(iter)); en != enumeratedNames_.end())
      iter = en->second;
  bool enumerated = false;
  while (is(iter, "call")) {
    const std::string w = lastPart(qualified(field(iter, "function")));
    if (w != "enumerate" && w != "tqdm" && w != "trange" && w != "iter")
      break;
    enumerated = enumerated || w == "enumerate";
    const bool isRange = w == "trange";
    auto wa = args(iter);
    if (wa.empty() || !wa[0].name.empty())
      break;
    if (isRange) {
      iter = wa[0].value; // trange(n): range(n)
      break;
    }
    iter = unparen(wa[0].value);
  }
  Val it = value(iter);
  // A batch's samples or micro-batches: as many on every rank (Val::batch).
  bool loader = isLoaderIterable(iter) || it.batch;
  Dep trip = loader ? Dep::Uniform : it.dep;
  // UniCL's validation loader: `DataLoader(ds, sampler=SubsetRandomSampler(
  // np.arange(rank, len(ds), world_size)))` deals each rank its own share,
  // which no sampler pads: ranks may get a batch more or fewer.
  if (loader && raggedLoader(iter))
    trip = Dep::Rank;
  Dep elems = loader ? Dep::Local : it.dep;
  // `for idx, array in enumerate([labels, logits, mask])`, or over a name
  // bound once to such a literal (AlgoPerf's ogbg metrics): as many
  // iterations as elements written, whatever this rank's values in them.
  if (!loader && trip != Dep::Uniform && fixedLengthSequence(iter))
    trip = Dep::Uniform;
  // `for i, aux in enumerate(outputs["aux_outputs"])` (the criteria of DETR's
  // family, ODISE's): a model's result holds one entry per decoder layer, as
  // many on every rank whatever this rank's values in them.
  if (!loader && trip == Dep::Local) {
    SyntaxNode base;
    if (is(iter, "subscript") && is(unparen(field(iter, "subscript")), "string"))
      base = unparen(field(iter, "value"));
    else if (is(iter, "attribute"))
      base = unparen(field(iter, "object"));
    if (!base.isNull() && is(base, "identifier")) {
      std::string o = str(base);
      std::transform(o.begin(), o.end(), o.begin(), ::tolower);
      if (o.find("output") != std::string::npos || o == "out" || o == "outs")
        trip = Dep::Uniform;
    }
  }
  // `zip(phases, all_gen_z, all_gen_c)` (eg3d): parallel sequences, one per
  // entry of the first; a sequence the same on every rank sets the count
  // even where the others hold this rank's values.  (Not a `range(n)`: it
  // only caps what it is zipped with.)
  if (!loader && trip != Dep::Uniform && is(iter, "call") &&
      lastPart(qualified(field(iter, "function"))) == "zip") {
    for (const auto &a : args(iter)) {
      SyntaxNode v = unparen(a.value);
      if (!a.name.empty() || is(v, "list_splat"))
        continue;
      const std::string f = is(v, "call") ? lastPart(qualified(field(v, "function"))) : std::string();
      if (f == "range" || f == "count" || f == "repeat")
        continue;
      const Val av = value(v);
      if (av.dep == Dep::Uniform || av.batch) {
        trip = Dep::Uniform;
        break;
      }
    }
  }
  // `for v in losses.values()`: a dict's keys are the code's (the same loss
  // names on every rank) even when its values are this rank's.
  const std::string dictView =
      is(iter, "call") && is(field(iter, "function"), "attribute") && args(iter).empty()
          ? str(field(field(iter, "function"), "attribute"))
          : std::string();
  if ((dictView == "values" || dictView == "items" || dictView == "keys") && trip == Dep::Local)
    trip = Dep::Uniform;
  // `for key in losses:` over a model's loss dict (FLAVA's): its keys too.
  bool resultKeys = false;
  if (!loader && trip == Dep::Local && is(iter, "identifier")) {
    std::string o = str(iter);
    std::transform(o.begin(), o.end(), o.begin(), ::tolower);
    resultKeys = o == "losses" || o == "loss_dict" || o == "loss_dicts";
    if (resultKeys)
      trip = Dep::Uniform;
  }
  LoopCtx lc;
  lc.text = str(right);
  lc.body = field(s, "body");
  if (SyntaxNode lit = unparen(right); is(lit, "list") || is(lit, "tuple")) {
    size_t elems = 0;
    for (SyntaxNode k : namedKids(lit))
      elems += is(k, "comment") ? 0 : 1;
    lc.once = elems <= 1;
  }
  lc.once = lc.once || endsInBreak(field(s, "body"));
  // `for eval_task, out_dir in zip(eval_task_names, ...)` (the Hugging Face
  // examples' evaluation): one pass per task, each with a loader of its own,
  // not the same loader built again.
  {
    std::string target = str(left);
    std::transform(target.begin(), target.end(), target.begin(), ::tolower);
    lc.once = lc.once || target.find("task") != std::string::npos;
  }
  std::string header = str(left) + " " + lc.text;
  std::transform(header.begin(), header.end(), header.begin(), ::tolower);
  lc.perEpoch = header.find("epoch") != std::string::npos;
  // Every name the target binds: `for i, (train_idx, val_idx) in enumerate(folds)`.
  std::function<void(SyntaxNode)> targets = [&](SyntaxNode v) {
    if (is(v, "identifier"))
      lc.vars.insert(str(v));
    else
      for (SyntaxNode k : namedKids(v))
        targets(k);
  };
  targets(left);
  Loc at = loc(s);
  lc.loc = at;
  loops_.push_back(lc);
  Env before = env_;
  {
    Val element{elems, RankKind::None, std::nullopt};
    element.batch = loader;
    bind(left, element);
  }
  // `for step, batch in enumerate(loader)`: the index is the same on every
  // rank.  Over this rank's share (`enumerate(paths[rank::world])`) too: in
  // any round that every rank runs, every rank counts alike; that the ranks
  // run different numbers of rounds is the loop's trip count, reported as
  // such, not as a test of `i % k == 0` that some ranks pass.
  if (enumerated && (is(left, "pattern_list") || is(left, "tuple_pattern")) &&
      namedChildCount(left) == 2)
    bind(namedChild(left, 0), Val{Dep::Uniform, RankKind::None, std::nullopt, trip == Dep::Uniform});
  // `for k, v in loss_dict.items()`: the keys are the loss names the code
  // wrote, the same on every rank whatever the values hold (1d-tokenizer's
  // `if k in ["d_weight"]: ... else: accelerator.gather(v)`).
  if (!enumerated && trip == Dep::Uniform) {
    if (dictView == "keys" || resultKeys)
      bind(left, Val{Dep::Uniform, RankKind::None, std::nullopt});
    else if (dictView == "items" && (is(left, "pattern_list") || is(left, "tuple_pattern")) &&
             namedChildCount(left) == 2)
      bind(namedChild(left, 0), Val{Dep::Uniform, RankKind::None, std::nullopt});
  }
  // `for batch, it in zip(loader, range(start, end))`: each name takes its own
  // sequence's elements, so the counter stays the same on every rank.
  SyntaxNode elemTarget = enumerated && namedChildCount(left) == 2 ? unparen(namedChild(left, 1)) : left;
  if (is(iter, "call") && lastPart(qualified(field(iter, "function"))) == "zip" &&
      (is(elemTarget, "pattern_list") || is(elemTarget, "tuple_pattern") ||
       is(elemTarget, "list_pattern"))) {
    auto za = args(iter);
    if (za.size() == namedChildCount(elemTarget) &&
        std::all_of(za.begin(), za.end(), [](const PyArg &a) { return a.name.empty(); }))
      for (uint32_t i = 0; i < za.size(); ++i) {
        SyntaxNode seq = unparen(za[i].value);
        bindTargets(namedChild(elemTarget, i), isLoaderIterable(seq) ? Dep::Local : value(seq).dep);
      }
  }
  std::vector<Node> body;
  block(field(s, "body"), body);
  env_ = joinEnv(before, env_);
  loops_.pop_back();
  // `for v in losses.values(): dist.all_reduce(v)`: every value of the dict is
  // agreed after the loop, so the dict is.
  if (dictView == "values" && is(left, "identifier")) {
    const std::string var = str(left);
    bool reduced = false;
    std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
      if (reduced || is(n, "function_definition"))
        return;
      if (is(n, "call")) {
        const std::string l = lastPart(qualified(field(n, "function")));
        auto as = args(n);
        if ((l == "all_reduce" || l == "broadcast") && !as.empty() && as[0].name.empty() &&
            is(unparen(as[0].value), "identifier") && str(unparen(as[0].value)) == var &&
            startsWith(qualified(field(n, "function")), "torch.distributed."))
          reduced = true;
      }
      for (SyntaxNode k : namedKids(n))
        scan(k);
    };
    scan(field(s, "body"));
    if (reduced)
      bind(field(field(iter, "function"), "object"), Val{Dep::Uniform, RankKind::None, std::nullopt, true});
  }
  if (noGradForwardsOnly(body)) {
    for (auto &k : body)
      out.push_back(std::move(k));
  } else {
    Node loop = Node::makeLoop(trip, lc.text, loc(right), Node::block(std::move(body)), at);
    loop.perEpoch = lc.perEpoch;
    out.push_back(std::move(loop));
  }
  if (SyntaxNode e = field(s, "alternative"); !e.isNull())
    block(field(e, "body"), out);
}

// A while loop: the condition, tested again after each iteration, decides the trip count.
void Builder::whileStatement(SyntaxNode s, std::vector<Node> &out) {
  SyntaxNode c = field(s, "condition");
  expr(c, out);
  LoopCtx lc;
  lc.text = str(c);
  lc.body = field(s, "body");
  std::string lower = lc.text;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  lc.perEpoch = lower.find("epoch") != std::string::npos;
  lc.once = endsInBreak(field(s, "body"));
  Loc at = loc(s);
  lc.loc = at;
  loops_.push_back(lc);
  Env before = env_;
  std::vector<Node> body;
  block(field(s, "body"), body);
  // The condition is tested again after each iteration, with the body's values.
  Dep trip = core::join(value(c).dep, before.vars.empty() ? Dep::Uniform : value(c).dep);
  if (is(c, "true"))
    trip = Dep::Uniform;
  env_ = joinEnv(before, env_);
  loops_.pop_back();
  if (noGradForwardsOnly(body)) {
    for (auto &k : body)
      out.push_back(std::move(k));
    return;
  }
  Node loop = Node::makeLoop(trip, lc.text, loc(c), Node::block(std::move(body)), at);
  loop.perEpoch = lc.perEpoch;
  out.push_back(std::move(loop));
}

// A with block: no_sync()/join() turn gradient synchronisation off inside;
// state_dict_type(..., FULL_STATE_DICT) makes state_dict() gather.
void Builder::withStatement(SyntaxNode s, std::vector<Node> &out) {
  const auto privateBefore = privateFiles_;
  int syncOff = 0, gradOff = 0;
  size_t fullScopes = 0;
  std::vector<Node> exitCalls; // context managers' calls, run again on leaving
  for (SyntaxNode clause : namedKids(s)) {
    if (!is(clause, "with_clause"))
      continue;
    for (SyntaxNode item : namedKids(clause)) {
      SyntaxNode v = field(item, "value");
      SyntaxNode target{};
      if (is(v, "as_pattern")) {
        target = field(v, "alias");
        v = namedChild(v, 0);
      }
      if (is(v, "call")) {
        std::string l = lastPart(qualified(field(v, "function")));
        // A switch handed over (speechbrain's `with self.no_sync(not
        // should_step):`, Fabric's `enabled=`) turns it off on some steps
        // only: the step that synchronises is still there, alike on every rank.
        bool switched = false;
        if (l == "no_sync")
          for (const auto &a : args(v)) {
            SyntaxNode x = unparen(a.value);
            switched = switched || a.name == "enabled" || is(x, "false") || is(x, "not_operator") ||
                       is(x, "comparison_operator") || is(x, "boolean_operator");
          }
        if ((l == "no_sync" && !switched) || l == "join")
          ++syncOff; // no_sync: no gradient allreduce; join: uneven inputs are handled
        if (l == "no_grad" || l == "inference_mode" ||
            (l == "set_grad_enabled" && text(v).find("False") != std::string_view::npos))
          ++gradOff;
        if (l == "state_dict_type" && text(v).find("FULL_STATE_DICT") != std::string_view::npos) {
          fullStateDict_ = true;
          auto sa = args(v);
          if (!sa.empty() && sa[0].name.empty()) {
            fullStateScopes_.emplace_back(sa[0].text);
            ++fullScopes;
          }
        }
      }
      // A generator-based context manager of the project: its code before
      // and after the `yield` runs around the body.  The model does not split
      // it at the yield: the call runs at entry and again at exit, so what
      // it synchronises (sync_workers' barrier on exit) closes the body.
      bool cm = false, cmRank = false;
      if (is(v, "call")) {
        SyntaxNode fn = field(v, "function");
        if (auto f = fns_.find(resolveCallee(fn)); f != fns_.end()) {
          cm = f->second.contextManager;
          cmRank = f->second.yieldsRank;
        } else if (const ExternalFunction *ext = externalCallee(fn)) {
          cm = ext->summary.contextManager;
          cmRank = ext->summary.yieldsRank;
        }
      }
      const size_t before = out.size();
      expr(v, out);
      if (cm)
        for (size_t i = before; i < out.size(); ++i)
          if (out[i].kind == Node::Kind::Call)
            exitCalls.push_back(out[i]);
      if (cmRank && !target.isNull() && namedChildCount(target) == 1 && is(namedChild(target, 0), "identifier")) {
        bind(namedChild(target, 0), Val{Dep::Rank, RankKind::Global, std::nullopt});
        continue;
      }
      if (!target.isNull() && namedChildCount(target) > 0) {
        const std::string l = is(v, "call") ? lastPart(qualified(field(v, "function"))) : "";
        SyntaxNode name = namedChild(target, 0);
        if (is(name, "identifier") && openKind(v) == OpenKind::Log)
          logFiles_.insert(str(name));
        // `with open(tmp.name, "w") as g:` of a private temporary file: its handle is private too.
        if (SyntaxNode opened; is(name, "identifier") && openKind(v, &opened) != OpenKind::None &&
                               !opened.isNull() && namesPrivateFile(opened))
          privateFiles_.emplace(curFn_, str(name));
        if ((l == "BytesIO" || l == "StringIO") && is(name, "identifier")) {
          memoryFiles_.insert(str(name)); // `with io.BytesIO() as f: torch.save(x, f)`
          bindTargets(name, value(v).dep);
        } else if (l == "TemporaryDirectory" || l == "NamedTemporaryFile") {
          // A folder or file that only this process has: every rank writes its own.
          bindTargets(name, Dep::Local);
          if (is(name, "identifier"))
            privateFiles_.emplace(curFn_, str(name));
        } else {
          // `with open('{}/{}.pkl'.format(tmp, self.rank), 'wb') as writer`:
          // the handle is this rank's file.
          SyntaxNode opened;
          const bool ranked = openKind(v, &opened) != OpenKind::None && !opened.isNull() &&
                              pathNamesRank(opened);
          bindTargets(name, ranked ? std::max(value(v).dep, Dep::Rank) : value(v).dep);
        }
      }
    }
  }
  noSync_ += syncOff;
  noGrad_ += gradOff;
  // `with accelerator.main_process_first():` (Accelerate's, Transformers'
  // TrainingArguments'): the other processes wait in a barrier before the
  // body, the main process after it, as the context manager is written.
  // Rank 0 fills a create-once cache alone; the others find it.  Barriers
  // whose ranks are not compared (GroupBarrier): the exit's runs on a
  // `return` in the body too, which the model's order does not show.
  std::optional<Cond> mainFirst;
  for (SyntaxNode clause : namedKids(s))
    if (is(clause, "with_clause"))
      for (SyntaxNode item : namedKids(clause)) {
        SyntaxNode v = field(item, "value");
        if (is(v, "as_pattern"))
          v = namedChild(v, 0);
        if (!is(v, "call") || !is(field(v, "function"), "attribute"))
          continue;
        const std::string m = str(field(field(v, "function"), "attribute"));
        if (m == "main_process_first") {
          Cond c = Cond::rankCmp(core::CmpOp::EQ, 0);
          c.text = str(field(field(v, "function"), "object")) + ".is_main_process";
          mainFirst = c;
        } else if (m == "local_main_process_first") {
          Cond c = Cond::atom("local-main", Dep::Rank);
          c.localMain = true;
          c.text = str(field(field(v, "function"), "object")) + ".is_local_main_process";
          mainFirst = c;
        }
      }
  const Loc withAt = loc(s);
  if (mainFirst) {
    stamp(*mainFirst, withAt);
    out.push_back(Node::makeIf(Cond::negate(*mainFirst),
                               Node::block({Node::makeEvent(EventKind::GroupBarrier, "barrier", withAt)}),
                               Node::block(), withAt));
  }
  block(field(s, "body"), out);
  if (mainFirst)
    out.push_back(Node::makeIf(*mainFirst,
                               Node::block({Node::makeEvent(EventKind::GroupBarrier, "barrier", withAt)}),
                               Node::block(), withAt));
  for (auto it = exitCalls.rbegin(); it != exitCalls.rend(); ++it)
    out.push_back(*it);
  privateFiles_ = privateBefore; // the names are private only inside the `with`
  noSync_ -= syncOff;
  noGrad_ -= gradOff;
  fullStateScopes_.resize(fullStateScopes_.size() - fullScopes);
}

// A try body that only draws the next batch of a loader: `batch = next(it)`
// where `it = iter(train_loader)`.
bool Builder::drawsLoaderBatch(SyntaxNode body) {
  // metaseq: `while True: try: ... samples = next(progress_iter) ... except
  // StopIteration: break`, the whole step inside the try.  Only `next` raises
  // StopIteration in a step; a loader's iterator (by what it is, or by its
  // name: `progress_iter`, `train_iter`) ends on every rank together.  Any
  // other iterator may run out on one rank first.
  bool drawsNext = false;
  auto batchIterator = [&](SyntaxNode x) {
    x = unparen(x);
    if (isLoaderIterable(x))
      return true;
    if (!is(x, "identifier") && !is(x, "attribute"))
      return false;
    std::string name = lastPart(str(x));
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    return name.find("iter") != std::string::npos || name.find("progress") != std::string::npos;
  };
  std::function<void(SyntaxNode)> findNext = [&](SyntaxNode n) {
    if (drawsNext || is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      return;
    if (is(n, "call") && str(field(n, "function")) == "next") {
      std::vector<SyntaxNode> a = namedKids(field(n, "arguments"));
      if (!a.empty() && batchIterator(a[0])) {
        drawsNext = true;
        return;
      }
    }
    for (SyntaxNode k : namedKids(n))
      findNext(k);
  };
  findNext(body);
  if (drawsNext)
    return true;
  bool any = false;
  for (SyntaxNode st : namedKids(body)) {
    if (is(st, "comment"))
      continue;
    SyntaxNode e = is(st, "expression_statement") ? namedChild(st, 0) : SyntaxNode{};
    SyntaxNode rhs = !e.isNull() && is(e, "assignment") ? unparen(field(e, "right")) : SyntaxNode{};
    if (rhs.isNull() || !is(rhs, "call") || str(field(rhs, "function")) != "next")
      return false;
    std::vector<SyntaxNode> a = namedKids(field(rhs, "arguments"));
    if (a.empty() || !isLoaderIterable(a[0]))
      return false;
    any = true;
  }
  return any;
}

// `except RuntimeError:` / `except (EOFError, pickle.UnpicklingError):` around
// a load: the file's content is bad, and its bytes are the same for every
// rank.  An OSError (a node's disk, a stale mount) or a bare `except:` may
// strike one rank alone.
bool Builder::contentErrorsOnly(SyntaxNode exceptClause) const {
  SyntaxNode types;
  for (SyntaxNode kk : namedKids(exceptClause))
    if (!is(kk, "block") && !is(kk, "comment")) {
      types = kk;
      break;
    }
  if (types.isNull())
    return false;
  if (is(types, "as_pattern"))
    types = namedChild(types, 0);
  std::vector<SyntaxNode> names{types};
  if (is(types, "tuple")) {
    names.clear();
    for (SyntaxNode k : namedKids(types))
      names.push_back(k);
  }
  for (SyntaxNode n : names) {
    const std::string l = lastPart(std::string(text(n)));
    if (l != "RuntimeError" && l != "EOFError" && l != "UnpicklingError" && l != "BadZipFile" &&
        l != "SafetensorError")
      return false;
  }
  return !names.empty();
}

// A try whose one statement reads one file at a path every rank names alike
// (`ckpt = torch.load(path)`, `... if os.path.exists(path) else None`): a
// truncated or unreadable file is the same bytes for every rank.  A path
// that names the rank (`ckpt_{rank}.pt`) may fail on one rank alone.
bool Builder::loadsOneSharedFile(SyntaxNode body) {
  std::vector<SyntaxNode> st;
  for (SyntaxNode k : namedKids(body))
    if (!is(k, "comment"))
      st.push_back(k);
  if (st.size() != 1 || !is(st[0], "expression_statement") || namedChildCount(st[0]) != 1)
    return false;
  SyntaxNode a = namedChild(st[0], 0);
  if (!is(a, "assignment"))
    return false;
  std::vector<SyntaxNode> calls;
  SyntaxNode r = unparen(field(a, "right"));
  if (is(r, "conditional_expression") && namedChildCount(r) == 3) {
    calls = {unparen(namedChild(r, 0)), unparen(namedChild(r, 2))};
  } else {
    calls = {r};
  }
  bool reads = false;
  for (SyntaxNode c : calls) {
    if (is(c, "none"))
      continue;
    if (!is(c, "call"))
      return false;
    const std::string q = qualified(field(c, "function"));
    const bool reader = q == "torch.load" || q == "numpy.load" || q == "np.load" ||
                        q == "safetensors.torch.load_file" || q == "safetensors.numpy.load_file";
    auto as = args(c);
    if (!reader || as.empty() || !as[0].name.empty())
      return false;
    const Val path = value(as[0].value);
    if (path.dep != Dep::Uniform || path.rank != RankKind::None)
      return false;
    reads = true;
  }
  return reads;
}

bool Builder::initsProcessGroupIn(SyntaxNode body) const {
  return !forEachOwnNode(body, [&](SyntaxNode n) {
    const std::string l = is(n, "call") ? lastPart(qualified(field(n, "function"))) : std::string();
    return l != "init_process_group" && l != "init_distributed";
  });
}

// A handler that cleans up and re-raises hands the exception on: it ends
// this process as it would have, and the launcher (torchrun, mp.spawn) tears
// the other workers down.  Not when it leaves before the raise on some path
// (`if "out of memory" in str(e): continue` then `raise`): that path
// swallows it.
bool Builder::handsExceptionOn(SyntaxNode handlerBody) const {
  std::vector<SyntaxNode> hs = namedKids(handlerBody);
  while (!hs.empty() && is(hs.back(), "comment"))
    hs.pop_back();
  // Ending the script with a failure status from a handler round all of it
  // is re-raising too (crashHandlerExit).
  auto crashExit = [&](SyntaxNode st) {
    if (!is(st, "expression_statement") || namedChildCount(st) != 1 || !is(namedChild(st, 0), "call"))
      return false;
    const CallSite cs = callSite(namedChild(st, 0));
    return has(api().exitFunctions, cs.q) && crashHandlerExit(cs);
  };
  if (hs.empty() || !(is(hs.back(), "raise_statement") || crashExit(hs.back())))
    return false;
  for (std::vector<SyntaxNode> todo(hs.begin(), hs.end()); !todo.empty();) {
    SyntaxNode n = todo.back();
    todo.pop_back();
    // A loop's own break or continue stays in the handler; a nested
    // function's return is not the handler's.
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda") ||
        is(n, "for_statement") || is(n, "while_statement"))
      continue;
    if (is(n, "return_statement") || is(n, "continue_statement") || is(n, "break_statement"))
      return false;
    for (SyntaxNode k : namedKids(n))
      todo.push_back(k);
  }
  return true;
}

// Whether the innermost try whose body holds `raise X(...)` (in this
// function) has a handler that catches it: a bare `except:`, `except
// BaseException`, `except Exception` (not for SystemExit, KeyboardInterrupt
// or GeneratorExit, which are not Exceptions), or X's own class named.  A
// handler that hands the exception on does not count.
bool Builder::caughtByEnclosingTry(SyntaxNode raise) const {
  std::string raised;
  if (SyntaxNode e = namedChildCount(raise) ? unparen(namedChild(raise, 0)) : SyntaxNode(); !e.isNull())
    raised = lastPart(std::string(text(is(e, "call") ? field(e, "function") : e)));
  for (SyntaxNode q = raise, p = parentOf(raise); !p.isNull(); q = p, p = parentOf(p)) {
    if (is(p, "function_definition") || is(p, "lambda") || is(p, "class_definition"))
      return false;
    if (!is(p, "try_statement") || !(field(p, "body") == q))
      continue;
    for (SyntaxNode c : namedKids(p)) {
      if (!is(c, "except_clause"))
        continue;
      // A comment between `except ...:` and the block is the clause's child
      // too: it names no exception.
      SyntaxNode types, body;
      for (SyntaxNode kk : namedKids(c))
        if (!is(kk, "comment"))
          (is(kk, "block") ? body : types) = kk;
      if (handsExceptionOn(body))
        continue;
      if (types.isNull())
        return true;
      // `(ValueError, KeyError) as e`: the names before `as`.
      std::string t(text(types));
      if (size_t as = t.find(" as "); as != std::string::npos)
        t.resize(as);
      for (char &ch : t)
        if (ch == '(' || ch == ')' || ch == ',' || ch == '\n' || ch == '\t')
          ch = ' ';
      std::istringstream words(t);
      for (std::string w; words >> w;) {
        const std::string l = lastPart(w);
        const bool notAnException =
            raised == "SystemExit" || raised == "KeyboardInterrupt" || raised == "GeneratorExit";
        if ((l == "Exception" && !notAnException) || l == "BaseException" ||
            (!raised.empty() && l == raised))
          return true;
      }
    }
    return false; // the innermost try does not catch it
  }
  return false;
}

// try/except: a handler that does not re-raise runs when an exception strikes
// one rank alone.
void Builder::tryStatement(SyntaxNode s, std::vector<Node> &out) {
  const bool outerHandler = inHandler_;
  inHandler_ = false; // a raise in this body is caught here, not propagated
  std::vector<Node> bodyNodes;
  block(field(s, "body"), bodyNodes);
  inHandler_ = outerHandler;
  // A handler that swallows an exception one rank alone may meet runs
  // instead of the rest of the body: the exception can strike before the
  // body's collectives (MeloTTS's `try: train_and_evaluate(...)` `except
  // Exception as e: print(e)` around each epoch; the OOM handler that skips
  // the batch's backward).  Handlers of errors every rank meets alike run
  // after the body, as before.
  struct Swallow {
    Cond ex;
    std::vector<Node> handler;
    Loc at;
  };
  std::vector<Swallow> swallows;
  std::vector<Node> afterBody;
  bool flushed = false;
  auto flush = [&]() {
    if (flushed)
      return;
    flushed = true;
    if (swallows.empty()) {
      for (auto &n : bodyNodes)
        out.push_back(std::move(n));
    } else {
      Node cur = Node::block(std::move(bodyNodes));
      for (auto it = swallows.rbegin(); it != swallows.rend(); ++it) {
        Node elseB = cur.kind == Node::Kind::Block ? std::move(cur) : Node::block({std::move(cur)});
        cur = Node::makeIf(it->ex, Node::block(std::move(it->handler)), std::move(elseB), it->at);
      }
      out.push_back(std::move(cur));
    }
    for (auto &n : afterBody)
      out.push_back(std::move(n));
  };
  for (SyntaxNode c : namedKids(s)) {
    if (is(c, "else_clause") || is(c, "finally_clause"))
      flush();
    if (is(c, "except_clause") || is(c, "except_group_clause")) {
      SyntaxNode body{};
      for (SyntaxNode kk : namedKids(c))
        if (is(kk, "block"))
          body = kk;
      if (handsExceptionOn(body))
        continue;
      std::vector<Node> h;
      Env before = env_;
      inHandler_ = true;
      block(body, h);
      inHandler_ = outerHandler;
      env_ = joinEnv(before, env_);
      // Errors every rank meets alike: a missing module (`except ImportError:`,
      // or any exception of a try that only imports: the ranks run one
      // installation), a key missing from the checkpoint every rank loads
      // (`except KeyError:`), a hook the class does not implement (fast-reid's
      // and detectron2's `except NotImplementedError:` around
      // `build_evaluator`: the same class and config on every rank).
      // SLIP's `try: import deepspeed; parser = deepspeed.add_config_arguments(
      // parser); ds_init = deepspeed.initialize` `except: exit(0)`: a few
      // simple statements that set up what the try imports fail alike too.
      bool alike = true, imports = false;
      size_t simple = 0;
      for (SyntaxNode st : namedKids(field(s, "body"))) {
        const bool imp = is(st, "import_statement") || is(st, "import_from_statement");
        imports = imports || imp;
        if (!imp && !is(st, "comment"))
          ++simple;
        alike = alike && (imp || is(st, "comment") || is(st, "expression_statement"));
      }
      alike = alike && (simple == 0 || (imports && simple <= 4));
      // Wuerstchen's resume: `try: ckpt = torch.load(path) if
      // os.path.exists(path) else None` `except RuntimeError:` (a truncated
      // file: fall back to the `.bak`).  Every rank reads the same bytes of
      // the same path and fails alike.
      alike = alike || (contentErrorsOnly(c) && loadsOneSharedFile(field(s, "body")));
      // `try: dist.init_process_group(...)` `except Exception: distributed =
      // False` (D-FINE's setup): a rank that fails to join leaves no group
      // for the others to wait in; they fail in the rendezvous too.
      alike = alike || initsProcessGroupIn(field(s, "body"));
      // AlgoPerf's `try: dist.barrier()` `except RuntimeError: sys.exit()`:
      // a try that only runs collectives catches their own failure (a peer
      // gone, a timeout), which every rank still in them meets.
      {
        bool onlySync = false, other = false;
        for (SyntaxNode st : namedKids(field(s, "body"))) {
          if (is(st, "comment"))
            continue;
          SyntaxNode e = is(st, "expression_statement") ? unparen(namedChild(st, 0)) : SyntaxNode();
          if (!e.isNull() && is(e, "call") && synchronisingCall(field(e, "function")))
            onlySync = true;
          else
            other = true;
        }
        alike = alike || (onlySync && !other);
      }
      for (SyntaxNode kk : namedKids(c))
        if (!is(kk, "block") && !is(kk, "comment")) {
          const std::string t(text(kk));
          // Ctrl-C reaches every process of the job's foreground group (and
          // torchrun's agent hands SIGINT on to every worker): timm's `try:
          // for epoch in ...` `except KeyboardInterrupt: pass` stops them all.
          bool named = t.find("ImportError") != std::string::npos ||
                       t.find("ModuleNotFoundError") != std::string::npos ||
                       t.find("KeyError") != std::string::npos ||
                       t.find("NotImplementedError") != std::string::npos ||
                       t.find("KeyboardInterrupt") != std::string::npos ||
                       // A command run in a subprocess (axolotl's CLI running
                       // `accelerate launch`): the same command and inputs
                       // fail alike, and a launcher has no peers.
                       t.find("CalledProcessError") != std::string::npos ||
                       // fp16 gradient overflow (fairseq's `except OverflowError`
                       // around the step): the loss scaler tests gradients DDP
                       // has already all-reduced, the same on every rank.
                       t.find("OverflowError") != std::string::npos;
          for (std::string_view other : {"Exception", "OSError", "RuntimeError", "ValueError", "IOError"})
            named = named && t.find(other) == std::string::npos;
          // The end of a data loader's batches (`batch = next(loader_iter)`,
          // `except StopIteration: break`): a DistributedSampler gives every
          // rank as many batches, so every rank runs out at the same step.
          if (t == "StopIteration")
            named = named || drawsLoaderBatch(field(s, "body"));
          alike = alike || named;
          break;
        }
      if (!h.empty() && alike) {
        Cond ex = Cond::atom("alike-error@" + std::to_string(startByte(c)), Dep::Uniform);
        ex.text = "an error every rank meets alike";
        Loc at = loc(c);
        ex.loc = at;
        afterBody.push_back(Node::makeIf(ex, Node::block(std::move(h)), Node::block(), at));
      } else if (!alike) {
        // An exception can strike one rank alone.
        Cond ex = Cond::atom("exception@" + std::to_string(startByte(c)), Dep::Local);
        ex.errorCheck = true;
        ex.text = "an exception is raised";
        Loc at = loc(c);
        ex.loc = at;
        swallows.push_back({ex, std::move(h), at});
        // ai-toolkit's `except RuntimeError: did_oom = True`, then `if did_oom:
        // ... raise` after the try: the flag is whether this rank caught it.
        forEachOwnNode(body, [&](SyntaxNode n) {
          if (is(n, "assignment") && is(field(n, "left"), "identifier")) {
            SyntaxNode r = unparen(field(n, "right"));
            if (is(r, "true") || is(r, "false")) {
              Val flag;
              flag.dep = Dep::Local;
              flag.cond = is(r, "true") ? ex : Cond::negate(ex);
              env_.vars[str(field(n, "left"))] = flag;
            }
          }
          return true;
        });
      }
    } else if (is(c, "else_clause")) {
      block(field(c, "body"), out);
    } else if (is(c, "finally_clause")) {
      for (SyntaxNode kk : namedKids(c))
        if (is(kk, "block"))
          block(kk, out);
    }
  }
  flush();
}

// match: each case is a branch on the subject.
void Builder::matchStatement(SyntaxNode s, std::vector<Node> &out) {
  // Each case is a branch on the subject.
  SyntaxNode subj = field(s, "subject");
  expr(subj, out);
  Dep d = value(subj).dep;
  for (SyntaxNode b : namedKids(field(s, "body"))) {
    if (!is(b, "case_clause"))
      continue;
    std::vector<Node> body;
    for (SyntaxNode kk : namedKids(b))
      if (is(kk, "block"))
        block(kk, body);
    Cond c = atom(b, d);
    Loc at = loc(b);
    stamp(c, at);
    out.push_back(Node::makeIf(c, Node::block(std::move(body)), Node::block(), at));
  }
}

void Builder::statement(SyntaxNode s, std::vector<Node> &out) {
  const std::string_view k = kindOf(s);
  if (k == "expression_statement")
    return expressionStatement(s, out);
  if (k == "if_statement")
    return ifStatement(s, out);
  if (k == "for_statement")
    return forStatement(s, out);
  if (k == "while_statement")
    return whileStatement(s, out);
  if (k == "with_statement")
    return withStatement(s, out);
  if (k == "try_statement")
    return tryStatement(s, out);
  if (k == "return_statement") {
    for (SyntaxNode e : namedKids(s))
      expr(e, out);

    out.push_back(Node::makeExit(ExitKind::Return, loc(s)));
    return;
  }
  if (k == "raise_statement") {
    for (SyntaxNode e : namedKids(s))
      expr(e, out);
    if (unsupportedConfiguration(s))
      return;
    // A raise in a try's body that its own handler catches is that
    // handler's path (the try is built as `if exception: handler else:
    // body`), not an exit (llm-foundry's data prep raises inside `try:` and
    // its `except Exception as e: error = e` keeps the ranks together).
    if (caughtByEnclosingTry(s))
      return;
    // A handler's raise, however deep in its ifs (fairseq's `if raise_oom:
    // raise e`), hands the failure on: uncaught, it ends the process with an
    // error, and torchrun or mp.spawn stop every worker, as a job-wide abort.
    out.push_back(Node::makeExit(inHandler_ ? ExitKind::Terminate : ExitKind::Throw, loc(s)));
    return;
  }
  if (k == "break_statement") {
    out.push_back(Node::makeExit(ExitKind::Break, loc(s)));
    return;
  }
  if (k == "continue_statement") {
    out.push_back(Node::makeExit(ExitKind::Continue, loc(s)));
    return;
  }
  if ((k == "function_definition" || k == "decorated_definition") && !curFn_.empty()) {
    SyntaxNode def = k == "decorated_definition" ? field(s, "definition") : s;
    if (is(def, "function_definition"))
      closures_[curFn_ + "." + str(field(def, "name"))] = env_.vars;
    return;
  }
  if (k == "function_definition" || k == "class_definition" || k == "decorated_definition" ||
      k == "import_statement" || k == "import_from_statement" || k == "comment" ||
      k == "pass_statement" || k == "global_statement" || k == "nonlocal_statement")
    return;
  if (k == "match_statement")
    return matchStatement(s, out);
  if (k == "block") {
    block(s, out);
    return;
  }
  // assert, delete, print(...) as statements, ERROR nodes: their calls still count.
  for (SyntaxNode e : namedKids(s))
    expr(e, out);
  // `assert not opt.evolve` (under `if LOCAL_RANK != -1:`): past it, a run
  // that goes on has the flag off, so `if not opt.evolve:` is decided.
  if (k == "assert_statement" && namedChildCount(s) >= 1) {
    SyntaxNode test = unparen(namedChild(s, 0));
    // `assert dist.get_rank() == 0, "only the first process prepares the
    // data"` (FastChat): an invariant.  A rank that fails it crashes, and the
    // launcher ends the job (as for a raise in an except handler); it never
    // goes on to the collectives after it.
    // Only a test of the rank itself: an assertion on data (`assert mlc < nc`
    // on the rank's labels) would make everything after it look guarded.
    if (Cond c = cond(test); c.dependence() == Dep::Rank && testsOnlyTheRank(c)) {
      out.push_back(Node::makeIf(std::move(c), Node::block(),
                                 Node::block({Node::makeExit(ExitKind::Terminate, loc(s))}),
                                 loc(s)));
      return;
    }
    // `assert not np.isnan(loss)` (msn): a health check of a number, as
    // `if np.isnan(loss): raise` would be; a rank whose own loss fails it
    // leaves the others in their next collective.  Other asserts on data stay
    // invariants (see above).
    // A pytest case's assert is the test's verdict on its own run, not the
    // health check of a training job whose peers wait on.
    const bool pytestCase = alias_.count("pytest") && startsWith(lastPart(curFn_), "test");
    if (testsNonFinite(text(test)) && !pytestCase) {
      // Inside a `try` with a `finally`, the finally's barrier still runs
      // (torchtitan's tests): not modelled, so no exit is made of it.
      bool underFinally = false;
      for (SyntaxNode p = parentOf(s); !p.isNull() && !underFinally; p = parentOf(p)) {
        if (is(p, "function_definition"))
          break;
        if (is(p, "try_statement"))
          for (SyntaxNode k : namedKids(p))
            underFinally = underFinally || is(k, "finally_clause");
      }
      Cond c = cond(test);
      if (c.dependence() != Dep::Uniform && !underFinally) {
        stamp(c, loc(s));
        out.push_back(Node::makeIf(std::move(c), Node::block(),
                                   Node::block({Node::makeExit(ExitKind::Throw, loc(s))}), loc(s)));
        return;
      }
    }
    const bool negated = is(test, "not_operator");
    SyntaxNode flag = negated ? unparen(field(test, "argument")) : test;
    if (is(flag, "identifier") || is(flag, "attribute")) {
      Val v = value(flag);
      if (v.dep == Dep::Uniform && !v.cond && !v.existsWhen) {
        v.known = negated ? 0 : 1;
        env_.vars[str(flag)] = v;
      }
    }
  }
}

// `def train_epoch(self): raise NotImplementedError` in a base class
// (MixFormer's BaseTrainer): what runs is a subclass's override, not a raise;
// the stub says nothing of it.
bool Builder::abstractStub(const FnInfo &fi) const {
  // `@singledispatch def close_envs(obj): raise NotImplementedError` (lerobot):
  // the base only answers types nobody registered; a call runs an overload.
  const bool dispatchBase = std::any_of(fi.decorators.begin(), fi.decorators.end(), [](const std::string &d) {
    return d == "singledispatch" || d == "functools.singledispatch" || d == "singledispatchmethod" ||
           d == "functools.singledispatchmethod";
  });
  if ((fi.className.empty() && !dispatchBase) || fi.def.isNull())
    return false;
  bool raises = false;
  for (SyntaxNode st : namedKids(field(fi.def, "body"))) {
    if (is(st, "comment") || is(st, "pass_statement"))
      continue;
    if (is(st, "expression_statement") && is(namedChild(st, 0), "string"))
      continue; // the docstring
    if (is(st, "raise_statement") && !raises &&
        text(st).find("NotImplementedError") != std::string_view::npos)
      return true; // what follows the raise never runs
    return false;
  }
  return raises;
}

void Builder::buildFunction(const FnInfo &fi) {
  curFn_ = fi.key;
  curClass_ = fi.className;
  loops_.clear();
  unwrapped_.clear();
  enumeratedNames_.clear();
  noSync_ = 0;
  noGrad_ = noGradDecorated(fi) ? 1 : 0;
  env_ = paramEnv(fi);
  std::vector<Node> body;
  // A context manager's `__enter__` and `__exit__` run as one: what a rank
  // skips on entering it may issue on leaving (alpaca_farm's staggered
  // creation: even ranks wait in `__enter__`, odd ones in `__exit__`, every
  // rank twice).  `__enter__` reads both bodies, `__exit__` none.
  const size_t dot = fi.key.rfind('.');
  const std::string sibling = dot == std::string::npos ? std::string() : fi.key.substr(0, dot + 1);
  const bool pairedEnter = !fi.className.empty() && fi.name == "__enter__" &&
                           fns_.count(sibling + "__exit__") > 0;
  const bool pairedExit = !fi.className.empty() && fi.name == "__exit__" &&
                          fns_.count(sibling + "__enter__") > 0;
  if (!fi.def.isNull() && !pairedExit && !abstractStub(fi))
    block(field(fi.def, "body"), body);
  if (pairedEnter) {
    // `return self` ends entering, not the pair.
    while (!body.empty() && body.back().kind == Node::Kind::Exit &&
           body.back().exit == core::ExitKind::Return)
      body.pop_back();
    const FnInfo &leave = fns_.at(sibling + "__exit__");
    if (!leave.def.isNull())
      block(field(leave.def, "body"), body);
  }
  buildFunctionRest(fi, std::move(body));
}

// Parameters: `rank`/`local_rank` in a distributed program, and the first
// parameter of a function started by mp.spawn (the process index).
Env Builder::paramEnv(const FnInfo &fi) {
  Env env;
  if (fi.nested)
    if (auto c = closures_.find(fi.key); c != closures_.end())
      env.vars = c->second;
  if (!fi.def.isNull()) {
    int i = 0;
    for (SyntaxNode p : namedKids(field(fi.def, "parameters"))) {
      SyntaxNode id = parameterName(p);
      if (!is(id, "identifier"))
        continue;
      std::string name = str(id);
      if (name == "self" && i == 0)
        continue;
      Val v;
      const bool layer = !fi.className.empty() && isNnModule(fi.className);
      // A distributed program: one that imports torch.distributed (or a
      // framework), or wraps a model in DDP (`torch.nn.parallel.
      // DistributedDataParallel(...)` with only `import torch`).
      const bool distributed = usesDist_ || hasDdp_;
      if (distributed && !layer && has(api().rankParameters, name))
        v = Val{Dep::Rank, RankKind::Global, {}};
      else if (distributed && !layer && has(api().localRankParameters, name))
        v = Val{Dep::Rank, localRankIsGlobal_ ? RankKind::Global : RankKind::Local, {}};
      else if (i == 0 && spawned_.count(fi.name))
        v = Val{Dep::Rank, name == "rank" || worldRankNames_.count({startByte(fi.def), name}) ? RankKind::Global : RankKind::Local, {}};
      // `def save_state_dict_as_hf(model, path, is_main_process)`: a parameter
      // named for the main-process test is the caller's rank-0 test.
      else if (distributed && !layer && has(api().mainProcessAttributes, name)) {
        Cond c = Cond::rankCmp(core::CmpOp::EQ, 0);
        c.text = name;
        v = Val{Dep::Rank, RankKind::None, c};
      } else if (distributed && !layer && has(api().localMainProcessAttributes, name)) {
        Cond c = Cond::atom("local-main", Dep::Rank);
        c.localMain = true;
        c.text = name;
        v = Val{Dep::Rank, RankKind::None, c};
      }
      // Lightning's `validation_epoch_end(self, outputs)`: one entry per
      // step (or one list per loader), as many on every rank as batches are.
      if (name == "outputs" && !fi.className.empty() && endsWith(fi.name, "_epoch_end") &&
          isLightningModule(fi.className)) {
        v = Val{Dep::Local, RankKind::None, std::nullopt};
        v.batch = true;
      }
      // What every call site of this module hands it (see parameterFacts).
      if (auto sf = seeded_.find(fi.key); sf != seeded_.end() && v.dep == Dep::Uniform)
        if (auto sv = sf->second.find(name); sv != sf->second.end())
          v = sv->second;
      // What this specialisation's callers hand it.
      if (auto b = specBindings_.find(name); b != specBindings_.end()) {
        v = Val{};
        v.known = b->second;
      }
      if (specRankPaths_.count(name))
        v = Val{Dep::Rank, RankKind::None, std::nullopt};
      // pytest's `tmp_path` / `tmpdir` fixtures: a fresh folder for each test
      // in each process (llm-foundry's multi-process tests all_gather rank
      // 0's to share one), so what a test writes there is its process's own.
      if (v.dep == Dep::Uniform && fi.name.compare(0, 4, "test") == 0 &&
          (name == "tmp_path" || name == "tmpdir"))
        v = Val{Dep::Local, RankKind::None, std::nullopt};
      if (v.dep != Dep::Uniform || v.existsWhen || v.cond || v.known)
        env.vars[name] = v;
      ++i;
    }
  }
  return env;
}

void Builder::buildFunctionRest(const FnInfo &fi, std::vector<Node> body) {
  m_.program.functions.push_back(functionNode(fi, std::move(body)));
  ++m_.functionsAnalysed;
  forwardFacts(fi);
}

namespace {
// A function named for logging (DynamiCrafter's `log_local`, `log_images`,
// `log_batch_imgs`): its files (captions, sample grids, videos) are records
// for people, which no rank reads back.  Not one named for a checkpoint.
bool logFunctionName(std::string n) {
  std::transform(n.begin(), n.end(), n.begin(), ::tolower);
  if (n.rfind("log_", 0) != 0 && n.rfind("_log_", 0) != 0)
    return false;
  for (const char *w : {"ckpt", "checkpoint", "weight", "model", "state"})
    if (n.find(w) != std::string::npos)
      return false;
  return true;
}
void writesAsLogs(std::vector<Node> &nodes) {
  for (Node &n : nodes) {
    if (n.kind == Node::Kind::Event && n.event == EventKind::FileWrite)
      n.event = EventKind::LogWrite;
    writesAsLogs(n.kids);
  }
}
} // namespace

core::Function Builder::functionNode(const FnInfo &fi, std::vector<Node> body) {
  if (logFunctionName(fi.name))
    writesAsLogs(body);
  core::Function f;
  f.key = fi.key;
  f.name = fi.className.empty() ? fi.name : fi.className + "." + fi.name;
  f.loc = fi.def.isNull() ? 0 : loc(fi.def);
  if (fi.mainOnly) {
    Cond main = Cond::rankCmp(core::CmpOp::EQ, 0);
    main.text = "@rank_zero_only";
    f.body = Node::block({Node::makeIf(main, Node::block(std::move(body)), Node::block(), f.loc)});
  } else {
    f.body = Node::block(std::move(body));
  }
  return f;
}

// ---------------------------------------------------------------------------
// Specialization

// Which parameter each argument of a call binds (null: none, or not known:
// a positional argument after `*args`); `splat`: `*args` or `**kwargs` was
// passed, so a parameter left out may still be set.
std::vector<const ParamSig *> boundParameters(const std::vector<PyArg> &as, SyntaxNode fn,
                                               const std::vector<ParamSig> &params, bool method,
                                               bool &splat) {
  std::vector<const ParamSig *> out(as.size(), nullptr);
  splat = false;
  bool positionalKnown = true;
  int skip = method && !is(fn, "attribute") ? 1 : 0; // `Class.method(obj, ...)`
  size_t next = 0;
  for (size_t k = 0; k < as.size(); ++k) {
    const PyArg &a = as[k];
    if (is(a.value, "list_splat") || is(a.value, "dictionary_splat")) {
      splat = true;
      positionalKnown = positionalKnown && is(a.value, "dictionary_splat");
      continue;
    }
    if (a.name.empty()) {
      if (skip > 0) {
        --skip;
        continue;
      }
      if (positionalKnown && next < params.size() && !params[next].keywordOnly)
        out[k] = &params[next++];
    } else {
      for (const auto &q : params)
        if (q.name == a.name)
          out[k] = &q;
    }
  }
  return out;
}

// The parameters as written: names, literal defaults, keyword-only.
std::vector<ParamSig> Builder::parameterList(const FnInfo &fi, bool &method) const {
  std::vector<ParamSig> out;
  method = false;
  if (fi.def.isNull())
    return out;
  bool keywordOnly = false;
  int i = 0;
  for (SyntaxNode p : namedKids(field(fi.def, "parameters"))) {
    const std::string_view kind = kindOf(p);
    if (kind.find("splat") != std::string_view::npos || kind.find("separator") != std::string_view::npos) {
      keywordOnly = keywordOnly || kind.find("dictionary") == std::string_view::npos;
      continue;
    }
    SyntaxNode id = parameterName(p);
    if (!is(id, "identifier"))
      continue;
    ParamSig sig;
    sig.name = str(id);
    if (i++ == 0 && sig.name == "self" && !fi.className.empty()) {
      method = true;
      continue;
    }
    if (is(p, "default_parameter") || is(p, "typed_default_parameter")) {
      SyntaxNode v = unparen(field(p, "value"));
      std::int64_t n = 0;
      if (is(v, "true") || is(v, "false"))
        sig.literalDefault = is(v, "true") ? 1 : 0;
      else if (intLiteral(text(v), n))
        sig.literalDefault = n;
      else if (is(v, "unary_operator") && str(field(v, "operator")) == "-" &&
               intLiteral(text(field(v, "argument")), n))
        sig.literalDefault = -n;
    }
    sig.keywordOnly = keywordOnly;
    out.push_back(std::move(sig));
  }
  return out;
}

// The parameter a written path starts from: `os.path.join(ckpt_dir, ...)`,
// `out_dir / "x.pt"`, `f"{out_dir}/x.pt"`, `out_dir + "/x.pt"`, directly or
// through a local name assigned so once in the function.  Empty: none.
std::string Builder::folderParam(SyntaxNode path, SyntaxNode def, const std::set<std::string> &params,
                                 int depth) const {
  path = unparen(path);
  if (path.isNull() || depth > 4)
    return {};
  if (is(path, "identifier")) {
    const std::string name = str(path);
    if (params.count(name))
      return depth > 0 ? name : std::string();
    SyntaxNode rhs;
    int assigned = 0;
    std::function<void(SyntaxNode)> find = [&](SyntaxNode n) {
      if (is(n, "function_definition") && !(n == def))
        return;
      if (is(n, "assignment") && is(field(n, "left"), "identifier") && str(field(n, "left")) == name) {
        ++assigned;
        rhs = field(n, "right");
      }
      for (SyntaxNode k : namedKids(n))
        find(k);
    };
    find(field(def, "body"));
    return assigned == 1 ? folderParam(rhs, def, params, depth + 1) : std::string();
  }
  if (is(path, "call")) {
    const std::string l = lastPart(qualified(field(path, "function")));
    const auto as = args(path);
    if ((l == "join" || l == "Path") && !as.empty() && as[0].name.empty())
      return folderParam(as[0].value, def, params, depth + 1);
    return {};
  }
  if (is(path, "binary_operator"))
    return folderParam(field(path, "left"), def, params, depth + 1);
  if (is(path, "string"))
    for (SyntaxNode k : namedKids(path))
      if (is(k, "interpolation"))
        return folderParam(namedChild(k, 0), def, params, depth + 1);
  return {};
}

std::vector<ParamSig> Builder::signature(const FnInfo &fi, bool &method) {
  if (auto c = sigCache_.find(fi.key); c != sigCache_.end()) {
    method = c->second.first;
    return c->second.second;
  }
  std::vector<ParamSig> out = parameterList(fi, method);
  if (fi.def.isNull())
    return out;
  // Provisional, for recursion: untested.
  sigCache_[fi.key] = {method, out};
  std::set<std::string> params, tested, written, writtenUnder;
  for (const auto &p : out)
    params.insert(p.name);
  const std::string savedFn = curFn_, savedClass = curClass_;
  curFn_ = fi.key;
  curClass_ = fi.className;
  // A call of the project's, with its parameters (null: not one).
  auto projectCallee = [&](SyntaxNode call, bool &calleeMethod) -> std::optional<std::vector<ParamSig>> {
    SyntaxNode fn = field(call, "function");
    const std::string key = resolveCallee(fn);
    if (!key.empty()) {
      if (key == fi.key)
        return std::nullopt;
      return signature(fns_[key], calleeMethod);
    }
    if (const ExternalFunction *ext = externalCallee(fn)) {
      calleeMethod = ext->summary.method;
      return ext->summary.params;
    }
    return std::nullopt;
  };
  // Whether code holds a call that can synchronise or write: a collective, a
  // barrier, a checkpoint or file writer, or one of the project's functions.
  // Memoised: nested ifs ask about the same arms.
  std::map<uint32_t, bool> actsMemo;
  std::function<bool(SyntaxNode)> acts = [&](SyntaxNode n) -> bool {
    if (auto m = actsMemo.find(n.index()); m != actsMemo.end())
      return m->second;
    const bool r = [&] {
      if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
        return false;
      if (is(n, "call")) {
        SyntaxNode fn = field(n, "function");
        const std::string q = qualified(fn), l = lastPart(q);
        if ((startsWith(q, "torch.distributed.") && (has(api().collectives, l) || has(api().barriers, l))) ||
            has(api().collectiveFunctions, q) || has(api().barrierFunctions, q) ||
            has(api().wrapperCollectives, l) || has(api().wrapperBarriers, l) ||
            has(api().checkpointWriters, q) || has(api().fileWriters, q) || !resolveCallee(fn).empty())
          return true;
        // Another module's function: asked last, since asking may build it.
        if (externalCallee(fn))
          return true;
      }
      for (SyntaxNode k : namedKids(n))
        if (acts(k))
          return true;
      return false;
    }();
    actsMemo[n.index()] = r;
    return r;
  };
  std::set<std::string> exitTested;
  // Names bound to a parameter's items (ZoeDepth's `for key, value in
  // losses.items(): if torch.isnan(value): raise ...`, `x = losses["total"]`):
  // a test of one is a test of the parameter.
  // Filled on the first exit test that needs it: most functions have none.
  std::map<std::string, std::string> itemOf;
  bool itemsRead = false;
  auto paramBehind = [&](SyntaxNode e) -> std::string {
    e = unparen(e);
    if (is(e, "call") && text(field(e, "function")) == "enumerate" && !args(e).empty())
      e = unparen(args(e)[0].value);
    if (is(e, "call") && is(field(e, "function"), "attribute")) {
      const std::string m = str(field(field(e, "function"), "attribute"));
      if (m == "items" || m == "values" || m == "keys" || m == "get")
        e = unparen(field(field(e, "function"), "object"));
    } else if (is(e, "subscript")) {
      e = unparen(field(e, "value"));
    }
    return is(e, "identifier") && params.count(str(e)) ? str(e) : std::string();
  };
  auto readItems = [&]() {
    if (itemsRead)
      return;
    itemsRead = true;
    forEachOwnNode(field(fi.def, "body"), [&](SyntaxNode n) {
      SyntaxNode target, from;
      if (is(n, "for_statement"))
        target = field(n, "left"), from = field(n, "right");
      else if (is(n, "assignment"))
        target = field(n, "left"), from = field(n, "right");
      if (target.isNull() || from.isNull())
        return true;
      if (const std::string p = paramBehind(from); !p.empty()) {
        std::vector<SyntaxNode> todo{target};
        while (!todo.empty()) {
          SyntaxNode t = todo.back();
          todo.pop_back();
          if (is(t, "identifier") && !params.count(str(t)))
            itemOf.emplace(str(t), p);
          else if (is(t, "pattern_list") || is(t, "tuple_pattern") || is(t, "tuple"))
            for (SyntaxNode k : namedKids(t))
              todo.push_back(k);
        }
      }
      return true;
    });
  };
  std::function<void(SyntaxNode, std::set<std::string> &)> names = [&](SyntaxNode n,
                                                                      std::set<std::string> &into) {
    if (is(n, "identifier") && params.count(str(n)))
      into.insert(str(n));
    for (SyntaxNode k : namedKids(n))
      names(k, into);
  };
  auto exitNames = [&](SyntaxNode c, std::set<std::string> &into) {
    names(c, into);
    readItems();
    forEachOwnNode(c, [&](SyntaxNode n) {
      if (is(n, "identifier"))
        if (auto it = itemOf.find(str(n)); it != itemOf.end())
          into.insert(it->second);
      return true;
    });
  };
  // Whether an arm raises or exits the process (not in a nested function).
  std::function<bool(SyntaxNode)> exits = [&](SyntaxNode n) -> bool {
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda") ||
        is(n, "try_statement"))
      return false;
    if (is(n, "raise_statement"))
      return true;
    if (is(n, "call") && has(api().exitFunctions, qualified(field(n, "function"))))
      return true;
    for (SyntaxNode k : namedKids(n))
      if (exits(k))
        return true;
    return false;
  };
  std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      return;
    if (is(n, "if_statement") || is(n, "elif_clause") || is(n, "while_statement")) {
      // The statement's arms: everything but the condition.
      SyntaxNode c = field(n, "condition");
      bool armsAct = false, armsExit = false;
      for (SyntaxNode k : namedKids(n))
        if (!(k == c) && !is(k, "elif_clause")) {
          armsAct = armsAct || acts(k);
          armsExit = armsExit || ((is(n, "if_statement") || is(n, "elif_clause")) && exits(k));
        }
      if (armsAct)
        names(c, tested);
      // Only a health check of a number (`math.isnan(loss)`, `not
      // torch.isfinite(x)`): a helper that validates its arguments (types,
      // shapes, a batch's keys) raises alike on every rank for a given
      // program, and reading those as rank-local exits was mostly wrong.
      if (armsExit && testsNonFinite(text(c)))
        exitNames(c, exitTested);
    } else if (is(n, "conditional_expression") && namedChildCount(n) == 3) {
      if (acts(namedChild(n, 0)) || acts(namedChild(n, 2)))
        names(namedChild(n, 1), tested);
    } else if (is(n, "call")) {
      // The path of a file the body writes (`g_pathmgr.open(filename, "wb")`,
      // `torch.save(obj, path)`).
      SyntaxNode path;
      if (openKind(n, &path) == OpenKind::None || path.isNull()) {
        path = SyntaxNode();
        if (has(api().checkpointWriters, qualified(field(n, "function"))))
          if (const auto as = args(n); const PyArg *f = arg(as, "f", 1))
            path = f->value;
      }
      if (!path.isNull() && is(unparen(path), "identifier") && params.count(str(unparen(path))))
        written.insert(str(unparen(path)));
      else if (!path.isNull())
        if (const std::string folder = folderParam(path, fi.def, params); !folder.empty())
          writtenUnder.insert(folder);
      // Handed on to a parameter the callee tests (`zero_first(rank)`).
      bool handsParam = false;
      for (const auto &a : args(n))
        handsParam = handsParam || (is(unparen(a.value), "identifier") && params.count(str(unparen(a.value))));
      bool calleeMethod = false;
      if (auto callee = handsParam ? projectCallee(n, calleeMethod) : std::nullopt) {
        const auto as = args(n);
        bool splat = false;
        const auto to = boundParameters(as, field(n, "function"), *callee, calleeMethod, splat);
        for (size_t k = 0; k < as.size(); ++k) {
          SyntaxNode v = unparen(as[k].value);
          if (to[k] && to[k]->tested && is(v, "identifier") && params.count(str(v)))
            tested.insert(str(v));
          if (to[k] && to[k]->writtenTo && is(v, "identifier") && params.count(str(v)))
            written.insert(str(v));
          // A path made of it (`llm_save(os.path.join(folder, name), obj)`,
          // `f"{out}/{name}"`): a rank's own name makes a rank's own file.
          else if (to[k] && to[k]->writtenTo && pathExpression(v))
            forEachOwnNode(v, [&](SyntaxNode x) {
              if (is(x, "identifier") && params.count(str(x)) && !is(parentOf(x), "attribute"))
                written.insert(str(x));
              return true;
            });
        }
      }
    }
    for (SyntaxNode k : namedKids(n))
      scan(k);
  };
  // Cheap first: a parameter never named in the body decides nothing.
  bool named = false;
  std::function<void(SyntaxNode)> anyParam = [&](SyntaxNode n) {
    if (named)
      return;
    if (is(n, "identifier") && params.count(str(n)))
      named = true;
    for (SyntaxNode k : namedKids(n))
      anyParam(k);
  };
  if (!params.empty())
    anyParam(field(fi.def, "body"));
  if (named)
    scan(field(fi.def, "body"));
  curFn_ = savedFn;
  curClass_ = savedClass;
  for (auto &p : out) {
    p.tested = tested.count(p.name) > 0;
    p.writtenTo = written.count(p.name) > 0;
    p.writesUnder = writtenUnder.count(p.name) > 0;
    p.guardsExit = exitTested.count(p.name) > 0;
  }
  sigCache_[fi.key] = {method, out};
  return out;
}

std::optional<std::int64_t> Builder::constantArgument(SyntaxNode v, bool none) const {
  v = unparen(v);
  std::int64_t n = 0;
  if (none && is(v, "none"))
    return kNoneValue;
  if (is(v, "true") || is(v, "false"))
    return is(v, "true") ? 1 : 0;
  if (intLiteral(text(v), n))
    return n;
  if (is(v, "unary_operator") && str(field(v, "operator")) == "-" && intLiteral(text(field(v, "argument")), n))
    return -n;
  if (is(v, "identifier"))
    if (auto it = env_.vars.find(str(v)); it != env_.vars.end())
      return it->second.known;
  return std::nullopt;
}

// Whether `probe` (`os.path.isfile(p)`, `p.is_file()`) tests the source of a
// shutil copy in `body`.
bool Builder::copiesProbedSource(SyntaxNode probe, SyntaxNode body) const {
  probe = unparen(probe);
  if (!is(probe, "call"))
    return false;
  std::string probed;
  if (const auto as = args(probe); !as.empty() && as[0].name.empty())
    probed = std::string(as[0].text);
  else if (is(field(probe, "function"), "attribute"))
    probed = str(field(field(probe, "function"), "object"));
  if (probed.empty())
    return false;
  bool copies = false;
  forEachOwnNode(body, [&](SyntaxNode n) {
    if (is(n, "call")) {
      const std::string q = qualified(field(n, "function"));
      const std::vector<PyArg> as = args(n); // `arg` points into it
      if (q == "shutil.copy" || q == "shutil.copyfile" || q == "shutil.copy2")
        if (const PyArg *src = arg(as, "src", 0); src && src->text == probed)
          copies = true;
    }
    return !copies;
  });
  return copies;
}

// The parameter `def` hands `init_process_group(..., rank=p)` (its own
// body, not a nested function's), or "".
std::string Builder::initRankParameter(SyntaxNode def) const {
  std::set<std::string> names;
  SyntaxNode ps = field(def, "parameters");
  for (uint32_t i = 0; i < namedChildCount(ps); ++i) {
    SyntaxNode p = namedChild(ps, i);
    SyntaxNode id = is(p, "identifier") ? p : field(p, "name");
    if (id.isNull() && is(p, "typed_parameter") && namedChildCount(p) > 0)
      id = namedChild(p, 0); // `rank: int`
    if (is(id, "identifier"))
      names.insert(str(id));
  }
  std::string handed;
  forEachOwnNode(field(def, "body"), [&](SyntaxNode s) {
    if (is(s, "call") && lastPart(qualified(field(s, "function"))) == "init_process_group")
      for (const auto &a : args(s))
        if (a.name == "rank" && is(unparen(a.value), "identifier") && names.count(str(unparen(a.value))))
          handed = str(unparen(a.value));
    return handed.empty();
  });
  return handed;
}

// An argument that is this node's rank: `int(os.environ["LOCAL_RANK"])`,
// `args.local_rank`, or a name the calling function assigned one of them.
bool Builder::localRankArgument(SyntaxNode arg, SyntaxNode call) {
  arg = unparen(arg);
  if (auto r = rankSourceAsWritten(arg); r && *r == RankKind::Local)
    return true;
  if (!is(arg, "identifier"))
    return false;
  SyntaxNode fn = enclosingFunction(call);
  if (fn.isNull())
    return false;
  const std::string name = str(arg);
  bool local = false, global = false;
  forEachOwnNode(field(fn, "body"), [&](SyntaxNode s) {
    if (is(s, "assignment") && is(field(s, "left"), "identifier") && str(field(s, "left")) == name) {
      auto r = rankSourceAsWritten(field(s, "right"));
      global = r && *r == RankKind::Global;
      local = local || (r && *r == RankKind::Local);
    }
    return !global;
  });
  return local && !global;
}

// `torch.cuda.FloatTensor(1)`, `torch.zeros(1, device=d)`, `torch.ones(1).cuda()`:
// a tensor made in place from literal sizes (a value no one reads back).
bool Builder::placeholderTensor(SyntaxNode e) const {
  e = unparen(e);
  while (is(e, "call") && is(field(e, "function"), "attribute") &&
         (isMoveOrCastMethod(str(field(field(e, "function"), "attribute")))))
    e = unparen(field(field(e, "function"), "object"));
  if (!is(e, "call"))
    return false;
  const std::string q = qualified(field(e, "function"));
  const std::string l = lastPart(q);
  if (!startsWith(q, "torch.") ||
      !(l == "FloatTensor" || l == "IntTensor" || l == "LongTensor" || l == "zeros" || l == "ones" ||
        l == "empty" || l == "tensor" || l == "Tensor"))
    return false;
  for (const auto &a : args(e)) {
    if (!a.name.empty())
      continue; // device=, dtype=
    SyntaxNode v = unparen(a.value);
    std::int64_t n = 0;
    const NodeList items = namedKids(v);
    const bool literalList = (is(v, "list") || is(v, "tuple")) &&
                             std::all_of(items.begin(), items.end(), [&](SyntaxNode k) {
                               std::int64_t m = 0;
                               return intLiteral(text(k), m);
                             });
    if (!intLiteral(text(v), n) && !literalList)
      return false;
  }
  return true;
}

// `model.module`, `accelerator.unwrap_model(model)`, or `model.module if
// isinstance(model, DDP) else model`: the module a wrapper holds.
bool Builder::bareModule(SyntaxNode a) const {
  a = unparen(a);
  if (is(a, "attribute"))
    return str(field(a, "attribute")) == "module";
  if (is(a, "call"))
    return lastPart(qualified(field(a, "function"))) == "unwrap_model";
  if (is(a, "conditional_expression") && namedChildCount(a) == 3)
    return bareModule(namedChild(a, 0)) &&
           lastPart(qualified(field(namedChild(a, 1), "function"))) == "isinstance";
  return false;
}

std::string Builder::specialize(const std::string &key, const std::vector<ParamSig> &params,
                                bool method, const CallSite &cs) {
  // A rank parameter is bound to the "not distributed" -1 only: `rank=0` as
  // a literal is the single-process call (`training_loop(rank=0)` when
  // num_gpus == 1); bound, every rank-0 block in the callee would read as
  // every rank's.
  auto bindable = [&](const ParamSig &p, std::int64_t v) {
    const bool rankName = has(api().rankParameters, p.name) || has(api().localRankParameters, p.name);
    return !rankName || v < 0;
  };
  std::map<std::string, std::string> bound;
  std::set<std::string> given;
  bool splat = false;
  const auto to = boundParameters(cs.as, cs.fn, params, method, splat);
  for (size_t k = 0; k < cs.as.size(); ++k) {
    const ParamSig *p = to[k];
    if (!p)
      continue;
    given.insert(p->name);
    if (p->tested)
      if (auto c = constantArgument(cs.as[k].value, true); c && bindable(*p, *c))
        bound[p->name] = std::to_string(*c);
    // The DDP model handed to another function (`do_train(model, ...)` in
    // another module): its forward and backward there are the collectives
    // they are here.  Handed over before it is wrapped (a warm-up), it is a
    // plain module there, whatever a helper module assumes of its importers.
    const std::string arg = str(unparen(cs.as[k].value));
    // One whose every construction passes broadcast_buffers=False
    // ("ddpquiet") broadcasts nothing in its forward there either.
    // A name the distributed run binds to the wrapper's module and only a
    // one-process arm to the model itself (unimatch's `model_without_ddp`)
    // is the bare module.
    if (objectKind(arg) == ObjKind::Ddp && !unwrapped_.count(arg))
      bound[p->name] = wrappedLater(arg, cs.c)              ? "plain"
                       : loadedPlain(cs.as[k].value, cs.c) ? "bare"
                       : ddpBroadcastsBuffers(arg)         ? "ddp"
                                                           : "ddpquiet";
    // The bare module handed to a parameter that shares the DDP model's name
    // (pyg's `test(model.module if isinstance(model, DDP) else model, ...)`):
    // there it is not the wrapper, whatever the module calls its DDP model.
    // (unimatch's `model_without_ddp`, also bound to the DataParallel's
    // module or the model itself in the one-process arms.)
    else if ((objectKind(p->name) == ObjKind::Ddp || hasDdp_) &&
             (bareModule(cs.as[k].value) || unwrapped_.count(arg)))
      bound[p->name] = "bare";
    // A file name with the rank in it, handed to a helper that writes there
    // (EVA-CLIP's `save_file(feats, f"{d}/rank{args.rank}_x.npy")`): every
    // rank writes its own file.
    if (p->writtenTo) {
      const Val v = value(cs.as[k].value);
      if (v.dep == Dep::Rank && !v.cond && !v.existsWhen)
        bound[p->name] = "rankpath";
      // A settings record's name (`os.path.join(out, "config.yaml")`) handed
      // to a helper that writes there (detectron2's `LazyConfig.save(cfg,
      // path)`): what it writes is that record.
      else if (namesLog(cs.as[k].value))
        bound[p->name] = "recordpath";
    }
  }
  // A parameter left out takes its default, unless a splat may have set it.
  if (!splat)
    for (const auto &p : params)
      if (p.tested && p.literalDefault && !given.count(p.name) && bindable(p, *p.literalDefault))
        bound[p.name] = std::to_string(*p.literalDefault);
  // An inherited method called on an object of a class that may override
  // what it calls on `self` (receiver_): the receiver's class goes along, to
  // the base's method in another module and, within a receiver's build, to
  // this class's own methods.  A method of the receiver's own class needs
  // none.
  if (is(cs.fn, "attribute") && !superCall(field(cs.fn, "object"))) {
    const std::string obj = str(field(cs.fn, "object"));
    // "module:Class.method" names another module's function; a bare key is this module's.
    const size_t colon = key.find(':');
    const bool external = colon != std::string::npos;
    std::string recv;
    if (obj == "self" && !receiver_.empty())
      recv = receiver_;
    else if (obj == "self" && !curClass_.empty() && external && project_ && !project_->moduleName().empty())
      recv = project_->moduleName() + "." + curClass_;
    else if (auto it = externInstances_.find(obj); it != externInstances_.end())
      recv = it->second;
    else if (auto in = instances_.find(obj); in != instances_.end() && !external)
      recv = in->second;
    const std::string local = key.substr(external ? colon + 1 : 0);
    const size_t dot = local.rfind('.');
    const std::string calleeClass = dot == std::string::npos ? std::string() : local.substr(0, dot);
    if (!recv.empty() && !calleeClass.empty() && calleeClass != lastPart(recv) &&
        (!receiver_.empty() || obj == "self" || definesMethods(recv)))
      bound["__self"] = recv;
  }
  // Called under no_grad with a DDP model: its forward there is the
  // no_grad forward it would be inline (a buffer broadcast issued early).
  if (noGrad_ > 0 && std::any_of(bound.begin(), bound.end(), [](const auto &b) { return b.second == "ddp"; }))
    bound["__nograd"] = "1";
  if (bound.empty())
    return key;
  std::string spec = key + "{";
  for (const auto &[name, v] : bound) {
    if (spec.back() != '{')
      spec += ',';
    spec.append(name).append("=").append(v);
  }
  spec += "}";
  return spec;
}

// Who starts the ranks, through this module's own calls too: `main()` calls
// `launch()`, which calls `mp.spawn`.  A specialisation is its function's.
void Builder::markLaunchers() {
  auto plain = [](const std::string &k) { return k.substr(0, k.find('{')); };
  std::set<std::string> direct;
  for (const auto &k : launches_)
    direct.insert(plain(k));
  launches_ = std::move(direct);
  std::function<bool(const Node &)> callsLauncher = [&](const Node &n) {
    if (n.kind == Node::Kind::Call && launches_.count(plain(n.callee)))
      return true;
    for (const auto &k : n.kids)
      if (callsLauncher(k))
        return true;
    return false;
  };
  for (bool more = !launches_.empty(); more;) {
    more = false;
    for (const auto &f : m_.program.functions)
      if (!launches_.count(plain(f.key)) && callsLauncher(f.body)) {
        launches_.insert(plain(f.key));
        more = true;
      }
  }
  for (auto &f : m_.program.functions)
    f.launchesRanks = launches_.count(plain(f.key)) > 0;
  // A class that holds its model in `nn.DataParallel` and names no rank,
  // collective, DDP or process group anywhere in its text (EgoVLP's
  // `BaseTrainer`, beside the module's DDP trainer): its methods run in the
  // one process that drives every GPU, whatever the module's other classes do.
  for (const auto &[cls, def] : classDefs_) {
    if (!drivesDataParallelOnly(text(def)))
      continue;
    for (auto &f : m_.program.functions)
      if (f.key.compare(0, cls.size() + 1, cls + ".") == 0)
        f.launchesRanks = true; // its one process: see core::Function::launchesRanks
  }
  // Lightning's hooks that run between training steps: the next step's
  // gradient all-reduce follows them on every rank.
  static const std::set<std::string> stepHooks = {
      "training_step",           "on_train_batch_start",    "on_train_batch_end",
      "on_train_epoch_start",    "on_train_epoch_end",      "on_before_backward",
      "on_after_backward",       "on_before_optimizer_step", "on_before_zero_grad",
      "on_validation_start",     "on_validation_end",       "on_validation_epoch_start",
      "on_validation_epoch_end"};
  for (auto &f : m_.program.functions) {
    const std::string k = plain(f.key);
    const size_t dot = k.rfind('.');
    if (dot != std::string::npos && stepHooks.count(k.substr(dot + 1)) &&
        isLightningModule(k.substr(0, dot)))
      f.runsEveryStep = true;
    if (dot != std::string::npos && has(api().lightning2RemovedHooks, k.substr(dot + 1)) &&
        isLightningModule(k.substr(0, dot)) && !lightning1())
      f.body = Node::block({}); // Lightning 2 never calls it
    // detectron2's hooks: the trainer calls their before_step and after_step
    // between iterations.
    if (dot != std::string::npos && has(api().stepHookMethods, k.substr(dot + 1)))
      for (const auto &base : api().stepHookBases)
        if (const std::string b = lastPart(base); derivesFrom(k.substr(0, dot), {b.c_str()}))
          f.runsEveryStep = true;
    // A signal handler (CompVis' `melk` on SIGUSR1, which saves a checkpoint
    // on rank 0): it interrupts the run, whose next collectives follow it.
    if (signalHandlers_.count(dot == std::string::npos ? k : k.substr(dot + 1)))
      f.runsEveryStep = true;
  }
}

void Builder::buildSpecializations() {
  if (specRequests_.empty())
    return;
  // A specialisation adds no facts and no call sites: the plain build has them.
  core::Facts facts = m_.program.facts;
  auto paramFacts = paramFacts_;
  auto callSites = callSites_;
  for (Loc l = 1; l <= m_.byteOffsets.size(); ++l)
    locAt_.emplace(m_.byteOffsets[l - 1], l);
  reuseLocs_ = true;
  std::set<std::string> done;
  for (bool more = true; more;) {
    more = false;
    for (const std::string &key : specRequests_) {
      if (!done.insert(key).second)
        continue;
      more = true;
      const size_t brace = key.find('{');
      auto f = brace == std::string::npos ? fns_.end() : fns_.find(key.substr(0, brace));
      if (f == fns_.end() || m_.program.find(key))
        break;
      // "{a=1,b=-1}"
      specBindings_.clear();
      specRankPaths_.clear();
      specRecordPaths_.clear();
      std::set<std::string> ddpParams; // "model=ddp": the caller's DDP model
      bool plainModel = false;         // "net=plain": a model not yet wrapped
      std::set<std::string> bareParams; // "model=bare": the wrapper's module
      std::string_view list(key);
      list = list.substr(brace + 1, list.size() - brace - 2);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        const size_t eq = item.find('=');
        std::int64_t v = 0;
        if (eq != std::string_view::npos && item.substr(0, eq) == "__self")
          receiver_ = std::string(item.substr(eq + 1));
        else if (eq != std::string_view::npos && item.substr(eq + 1) == "ddp")
          ddpParams.insert(std::string(item.substr(0, eq)));
        else if (eq != std::string_view::npos && item.substr(eq + 1) == "ddpquiet") {
          ddpParams.insert(std::string(item.substr(0, eq)));
          quietDdp_.insert(std::string(item.substr(0, eq)));
        }
        else if (eq != std::string_view::npos && item.substr(eq + 1) == "plain")
          plainModel = true;
        else if (eq != std::string_view::npos && item.substr(eq + 1) == "bare")
          bareParams.insert(std::string(item.substr(0, eq)));
        else if (eq != std::string_view::npos && item.substr(eq + 1) == "rankpath")
          specRankPaths_.insert(std::string(item.substr(0, eq)));
        else if (eq != std::string_view::npos && item.substr(eq + 1) == "recordpath")
          specRecordPaths_.insert(std::string(item.substr(0, eq)));
        else if (eq != std::string_view::npos && intLiteral(item.substr(eq + 1), v))
          specBindings_[std::string(item.substr(0, eq))] = v;
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
      // The parameter holds a DDP model, and the program wraps one, while
      // this specialisation is built.
      const auto savedObjects = objects_;
      const bool savedHasDdp = hasDdp_;
      for (const auto &name : ddpParams) {
        objects_[name] = ObjKind::Ddp;
        hasDdp_ = true;
      }
      for (const auto &name : bareParams)
        objects_.erase(name);
      // Its backward is the plain model's: no gradient all-reduce.
      if (plainModel && ddpParams.empty())
        hasDdp_ = false;
      const FnInfo &fi = f->second;
      curFn_ = fi.key;
      curClass_ = fi.className;
      loops_.clear();
      noSync_ = 0;
      unwrapped_.clear();
      enumeratedNames_.clear();
      const bool callerNoGrad = specBindings_.erase("__nograd") > 0;
      noGrad_ = noGradDecorated(fi) || callerNoGrad ? 1 : 0;
      env_ = paramEnv(fi);
      std::vector<Node> body;
      block(field(fi.def, "body"), body);
      core::Function fn = functionNode(fi, std::move(body));
      fn.key = key;
      m_.program.functions.push_back(std::move(fn));
      specBindings_.clear();
      specRankPaths_.clear();
      specRecordPaths_.clear();
      quietDdp_.clear();
      receiver_.clear();
      objects_ = savedObjects;
      hasDdp_ = savedHasDdp;
      break; // building may have asked for more: iterate afresh
    }
  }
  reuseLocs_ = false;
  locAt_.clear();
  m_.program.facts = std::move(facts);
  paramFacts_ = std::move(paramFacts);
  callSites_ = std::move(callSites);
}

// The call a project function only hands its arguments on to
// (spinningup's `def allreduce(*args, **kwargs): return
// MPI.COMM_WORLD.Allreduce(*args, **kwargs)`): that call's qualified name.
std::string Builder::forwardedCall(SyntaxNode fn) const {
  if (!is(fn, "identifier"))
    return {};
  auto f = fns_.find(str(fn));
  if (f == fns_.end() || f->second.def.isNull())
    return {};
  SyntaxNode only;
  for (SyntaxNode st : namedKids(field(f->second.def, "body"))) {
    if (is(st, "expression_statement") && is(namedChild(st, 0), "string"))
      continue; // the docstring
    if (!only.isNull())
      return {};
    only = st;
  }
  SyntaxNode call = is(only, "return_statement") || is(only, "expression_statement") ? namedChild(only, 0)
                                                                                    : SyntaxNode();
  if (!is(call, "call"))
    return {};
  for (SyntaxNode a : namedKids(field(call, "arguments")))
    if (!is(a, "list_splat") && !is(a, "dictionary_splat"))
      return {};
  return qualified(field(call, "function"));
}

// Every `return` hands back the world's size (`return
// MPI.COMM_WORLD.Get_size()`, `return dist.get_world_size()`).
bool Builder::returnsWorldSize(const FnInfo &fi) const {
  if (fi.def.isNull())
    return false;
  bool any = false, other = false;
  std::vector<SyntaxNode> stack{field(fi.def, "body")};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "function_definition") || is(n, "lambda") || is(n, "class_definition"))
      continue;
    if (is(n, "return_statement")) {
      SyntaxNode v = unparen(namedChild(n, 0));
      const std::string q = is(v, "call") ? qualified(field(v, "function")) : std::string();
      if (!q.empty() && (has(api().worldSizeFunctions, q) || lastPart(q) == "get_world_size"))
        any = true;
      else
        other = true;
      continue;
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return any && !other;
}

bool Builder::agreesFirstArgument(const FnInfo &fi, int depth) const {
  if (fi.def.isNull() || depth > 3)
    return false;
  std::string first;
  int i = 0;
  for (SyntaxNode p : namedKids(field(fi.def, "parameters"))) {
    SyntaxNode id = parameterName(p);
    if (!is(id, "identifier"))
      return false;
    if (i++ == 0 && str(id) == "self" && !fi.className.empty())
      continue;
    first = str(id);
    break;
  }
  if (first.empty())
    return false;
  std::vector<SyntaxNode> stack{field(fi.def, "body")};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "function_definition") || is(n, "lambda"))
      continue;
    if (is(n, "call")) {
      const std::string q = qualified(field(n, "function"));
      const std::string l = lastPart(q);
      auto as = args(n);
      if (startsWith(q, "torch.distributed.") && !as.empty() && as[0].name.empty() &&
          (l == "all_reduce" || l == "broadcast") && str(unparen(as[0].value)) == first)
        return true;
      // `def all_reduce(t, op): if is_available(): return _all_reduce(t, op)`
      if (!as.empty() && as[0].name.empty() && str(unparen(as[0].value)) == first &&
          is(field(n, "function"), "identifier"))
        if (auto f = fns_.find(str(field(n, "function"))); f != fns_.end() && &f->second != &fi &&
                                                          agreesFirstArgument(f->second, depth + 1))
          return true;
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

bool Builder::returnsCollectiveOutput(SyntaxNode body, int depth, int element) const {
  if (body.isNull() || depth > 3)
    return false;
  // name -> where the collective that agreed it is: only what is read after
  // it counts (`val = t[0] / t[1]` before `all_reduce(t)` is this rank's).
  std::map<std::string, uint32_t> agreed;
  std::vector<SyntaxNode> returns, assigns;
  std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      return;
    if (is(n, "call")) {
      const std::string q = qualified(field(n, "function"));
      const std::string l = lastPart(q);
      auto as = args(n);
      const PyArg *mpiBuffer = mpiAgreedBuffer(startsWith(q, "mpi4py.") ? q : forwardedCall(field(n, "function")), as);
      if (startsWith(q, "torch.distributed.") && !as.empty() && as[0].name.empty() &&
          (l == "all_reduce" || l == "broadcast" || l == "all_gather" ||
           l == "all_gather_into_tensor" || l == "broadcast_object_list"))
        agreed.emplace(str(unparen(as[0].value)), startByte(n));
      else if (mpiBuffer && is(unparen(mpiBuffer->value), "identifier"))
        agreed.emplace(str(unparen(mpiBuffer->value)), startByte(n));
      // Through the project's own forwarding helper (`dist_adapter.all_reduce(x, op)`).
      else if (!as.empty() && as[0].name.empty() && is(unparen(as[0].value), "identifier")) {
        SyntaxNode fn = field(n, "function");
        bool forwards = false;
        if (auto f = fns_.find(is(fn, "identifier") ? str(fn) : std::string()); f != fns_.end())
          forwards = agreesFirstArgument(f->second);
        else if (const ExternalFunction *ext = externalCallee(fn))
          forwards = ext->summary.agreesFirstArgument;
        if (forwards)
          agreed.emplace(str(unparen(as[0].value)), startByte(n));
      }
    }
    if (is(n, "return_statement"))
      returns.push_back(n);
    if (is(n, "assignment") && is(field(n, "left"), "identifier"))
      assigns.push_back(n);
    for (SyntaxNode k : namedKids(n))
      scan(k);
  };
  scan(body);
  // No collective of its own: it may still return what another helper
  // agreed (spinningup's `def mpi_sum(x): return mpi_op(x, MPI.SUM)`).
  if (returns.empty())
    return false;
  // Only the agreed names, constants and plain arithmetic or indexing.
  auto fromAgreed = [&](SyntaxNode e) {
    bool any = false, other = false;
    std::function<void(SyntaxNode)> walk = [&](SyntaxNode x) {
      // 3detr's `val = all_reduce_sum(tensor); return val / get_world_size()`:
      // what another helper of the project returns agreed, divided by the
      // world's size.
      if (is(x, "call")) {
        SyntaxNode fn = field(x, "function");
        const std::string name = is(fn, "identifier") ? str(fn) : is(fn, "attribute") ? str(field(fn, "attribute")) : "";
        if (((name == "get_world_size" || name == "world_size") && args(x).empty()) ||
            has(api().worldSizeFunctions, qualified(fn)))
          return;
        // spinningup's `num_procs()`: `return MPI.COMM_WORLD.Get_size()`.
        if (args(x).empty() && is(fn, "identifier"))
          if (auto f = fns_.find(str(fn)); f != fns_.end() && returnsWorldSize(f->second))
            return;
        bool helperAgreed = false;
        if (is(fn, "identifier")) {
          if (auto f = fns_.find(str(fn)); f != fns_.end())
            helperAgreed = f->second.returnsAgreed == 1 ||
                           (f->second.returnsAgreed < 0 && returnsCollectiveOutput(field(f->second.def, "body"), depth + 1));
          else if (const ExternalFunction *ext = externalCallee(fn))
            helperAgreed = ext->summary.returnsAgreed;
        }
        if (helperAgreed) {
          any = true;
          return;
        }
      }
      // `buff[0] if scalar else buff`: the value is one of the two arms; the
      // test picks which, not what it holds.
      if (is(x, "conditional_expression") && namedChildCount(x) == 3) {
        walk(namedChild(x, 0));
        walk(namedChild(x, 2));
        return;
      }
      if (is(x, "identifier")) {
        auto a = agreed.find(str(x));
        if (a != agreed.end() && a->second < startByte(x))
          any = true;
        else if (a != agreed.end())
          other = true; // read before its collective
        // `rt.true_divide(num_gpus)`, `rt / world_size`: the world's size is
        // every rank's.
        else if (str(x) != "float" && str(x) != "int" && !has(api().worldSizeAttributes, str(x)))
          other = true;
        return;
      }
      if (is(x, "attribute")) {
        const std::string a = str(field(x, "attribute"));
        // The same value, or a reduction of it that every rank computes alike.
        for (std::string_view m : {"item", "tolist", "cpu", "cuda", "numpy", "detach", "clone",
                                   "float", "double", "mean", "sum", "max", "min", "true_divide",
                                   "div", "div_", "mul", "mul_", "to"})
          if (a == m)
            return walk(field(x, "object"));
        other = true;
        return;
      }
      // `{k: v for k, v in zip(names, values)}`: the agreed values under their
      // names (the dict's keys are the code's, the same on every rank).
      if ((is(x, "dictionary_comprehension") || is(x, "list_comprehension")) && namedChildCount(x) >= 2) {
        std::set<std::string> targets;
        bool fromValues = false;
        for (SyntaxNode k : namedKids(x))
          if (is(k, "for_in_clause")) {
            std::function<void(SyntaxNode)> bindNames = [&](SyntaxNode t) {
              if (is(t, "identifier"))
                targets.insert(str(t));
              for (SyntaxNode kk : namedKids(t))
                bindNames(kk);
            };
            bindNames(field(k, "left"));
            std::function<void(SyntaxNode)> reads = [&](SyntaxNode t) {
              if (is(t, "identifier"))
                if (auto a = agreed.find(str(t)); a != agreed.end() && a->second < startByte(t))
                  fromValues = true;
              for (SyntaxNode kk : namedKids(t))
                reads(kk);
            };
            reads(field(k, "right"));
          }
        bool onlyTargets = true;
        std::function<void(SyntaxNode)> body = [&](SyntaxNode t) {
          if (is(t, "attribute")) // `v.mean()`: the method's name is no variable
            return body(field(t, "object"));
          if (is(t, "identifier") && !targets.count(str(t)))
            onlyTargets = false;
          for (SyntaxNode kk : namedKids(t))
            body(kk);
        };
        body(namedChild(x, 0));
        if (fromValues && onlyTargets)
          any = true;
        else
          other = true;
        return;
      }
      for (SyntaxNode k : namedKids(x))
        walk(k);
    };
    walk(e);
    return any && !other;
  };
  // `if world_size < 2: return input_dict`: the one-process run's early
  // return, not taken where ranks can disagree.  Also the `else:` of the
  // test that there are several (MAE's `all_reduce_mean`: `if world_size >
  // 1: ... return x_reduce.item()` / `else: return x`).
  std::function<bool(SyntaxNode, bool)> singleProcessTest = [&](SyntaxNode c, bool several) {
    c = unparen(c);
    // `if not dist.is_available() or not dist.is_initialized(): return
    // input_dict` (TorchMultimodal's reduce_dict): every way in is the
    // one-process run; the else of `is_available() and is_initialized()` too.
    if (is(c, "boolean_operator") && text(field(c, "operator")) == (several ? "and" : "or"))
      return singleProcessTest(field(c, "left"), several) && singleProcessTest(field(c, "right"), several);
    // `if not is_distributed(): return tensor`, `if not dist.is_initialized()`.
    const bool negated = is(c, "not_operator");
    SyntaxNode a = negated ? unparen(field(c, "argument")) : c;
    if (is(a, "call")) {
      std::string name = lastPart(qualified(field(a, "function")));
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      return negated != several && args(a).empty() &&
             (name.find("initialized") != std::string::npos || name.find("is_dist") != std::string::npos ||
              name == "is_distributed" || name == "is_available");
    }
    if (!is(c, "comparison_operator") || namedChildCount(c) != 2)
      return false;
    std::string side(text(namedChild(c, 0)));
    std::transform(side.begin(), side.end(), side.begin(), ::tolower);
    const std::string op = comparisonOperator(c), lit(text(namedChild(c, 1)));
    const bool world = side.find("world_size") != std::string::npos ||
                       side.find("num_gpus") != std::string::npos;
    if (several)
      return world && ((op == ">" && lit == "1") || (op == ">=" && lit == "2") || (op == "!=" && lit == "1"));
    return world && ((op == "<" && lit == "2") || (op == "==" && lit == "1") || (op == "<=" && lit == "1"));
  };
  auto singleProcessReturn = [&](SyntaxNode r) {
    for (SyntaxNode kid = r, n = parentOf(r); !n.isNull() && !is(n, "function_definition");
         kid = n, n = parentOf(n)) {
      if (!is(n, "if_statement"))
        continue;
      SyntaxNode c = field(n, "condition");
      if (field(n, "consequence") == kid ? singleProcessTest(c, false)
                                        : is(kid, "else_clause") && singleProcessTest(c, true))
        return true;
    }
    return false;
  };
  for (int round = 0; round < 2; ++round)
    for (SyntaxNode a : assigns)
      if (fromAgreed(field(a, "right")))
        agreed.emplace(str(field(a, "left")), startByte(a));
  bool anyAgreed = false;
  for (SyntaxNode r : returns) {
    if (singleProcessReturn(r))
      continue;
    if (namedChildCount(r) != 1)
      return false;
    SyntaxNode v = namedChild(r, 0);
    if (element >= 0) {
      v = unparen(v);
      if ((!is(v, "expression_list") && !is(v, "tuple")) || namedChildCount(v) <= uint32_t(element))
        return false;
      v = namedChild(v, uint32_t(element));
    }
    if (!fromAgreed(v))
      return false;
    anyAgreed = true;
  }
  return anyAgreed;
}

// lit-llama's `L.Fabric(devices=1, ...)`: a script whose every Fabric or
// Trainer is told to use one device, and that touches torch.distributed in no
// other way, runs in one process whatever the framework could do.
bool Builder::oneDeviceFramework(SyntaxNode root) const {
  const std::string_view src = text(root);
  if (src.find("torch.distributed") != std::string_view::npos ||
      src.find("init_process_group") != std::string_view::npos)
    return false;
  int oneDevice = 0;
  bool other = false;
  std::vector<SyntaxNode> stack{root};
  while (!stack.empty() && !other) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "call")) {
      const std::string q = qualified(field(n, "function"));
      const std::string l = lastPart(q.empty() ? std::string(text(field(n, "function"))) : q);
      if (l == "Fabric" || l == "Trainer") {
        const auto as = args(n);
        const PyArg *devices = arg(as, "devices", -1);
        const PyArg *nodes = arg(as, "num_nodes", -1);
        if (devices && devices->text == "1" && (!nodes || nodes->text == "1"))
          ++oneDevice;
        else
          other = true;
      }
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return oneDevice > 0 && !other;
}

// A `device_map=` of Accelerate's automatic placements ("auto", "balanced",
// "balanced_low_0", "sequential"), written in place or held in a name that
// is never given another value.
bool Builder::dispatchesModelOverDevices(SyntaxNode root) const {
  if (text(root).find("device_map") == std::string_view::npos)
    return false;
  static const std::set<std::string> automatic = {"auto", "balanced", "balanced_low_0", "sequential"};
  std::map<std::string, int> bindings; // name -> assignments (-1: some not automatic)
  bool inPlace = false;
  std::vector<std::string> named;
  std::vector<SyntaxNode> stack{root};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "assignment") && is(field(n, "left"), "identifier")) {
      bool literal = false;
      const std::string v = unquote(text(field(n, "right")), literal);
      int &b = bindings[str(field(n, "left"))];
      b = b < 0 || !(literal && automatic.count(v)) ? -1 : b + 1;
    }
    if (is(n, "keyword_argument") && str(field(n, "name")) == "device_map") {
      SyntaxNode v = unparen(field(n, "value"));
      bool literal = false;
      const std::string t = unquote(text(v), literal);
      if (literal && automatic.count(t))
        inPlace = true;
      else if (is(v, "identifier"))
        named.push_back(str(v));
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  if (inPlace)
    return true;
  for (const auto &name : named)
    if (auto b = bindings.find(name); b != bindings.end() && b->second > 0)
      return true;
  return false;
}

// musubi-tuner's generation scripts: `accelerator = Accelerator(mixed_precision=...)`
// only for `with accelerator.autocast():` and its device.  Such an object
// launches nothing and is handed to nobody, so the script runs in one process.
bool Builder::acceleratorForAutocastOnly(SyntaxNode root) const {
  const std::string_view src = text(root);
  if (src.find("torch.distributed") != std::string_view::npos ||
      src.find("init_process_group") != std::string_view::npos)
    return false;
  std::set<std::string> names;
  std::vector<SyntaxNode> stack{root};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "assignment") && is(unparen(field(n, "right")), "call") &&
        has(api().acceleratorClasses, lastPart(qualified(field(unparen(field(n, "right")), "function"))))) {
      if (!is(field(n, "left"), "identifier"))
        return false; // kept on an object: used who knows where
      names.insert(str(field(n, "left")));
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  if (names.empty())
    return false;
  static const std::set<std::string> local = {"autocast", "device", "mixed_precision", "print"};
  // Handed to a function of this module whose parameter has one of the
  // names (musubi-tuner's `prepare_t2v_inputs(args, cfg, accelerator, ...)`):
  // that parameter's uses are this scan's too.
  std::map<std::string, SyntaxNode> defs;
  stack.push_back(root);
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "function_definition"))
      defs[str(field(n, "name"))] = n;
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  auto handedOnToSameName = [&](SyntaxNode id) {
    SyntaxNode argList = parentOf(id);
    SyntaxNode kw;
    if (is(argList, "keyword_argument")) {
      kw = argList;
      argList = parentOf(argList);
    }
    if (!is(argList, "argument_list") || !is(parentOf(argList), "call"))
      return false;
    SyntaxNode fn = field(parentOf(argList), "function");
    auto d = defs.find(is(fn, "identifier") ? str(fn) : std::string());
    if (d == defs.end())
      return false;
    std::vector<std::string> params;
    for (SyntaxNode p : namedKids(field(d->second, "parameters")))
      if (SyntaxNode pid = parameterName(p); is(pid, "identifier"))
        params.push_back(str(pid));
    if (!kw.isNull())
      return names.count(str(field(kw, "name"))) > 0 &&
             std::find(params.begin(), params.end(), str(field(kw, "name"))) != params.end();
    size_t at = 0;
    for (SyntaxNode a : namedKids(argList)) {
      if (a == id)
        break;
      if (is(a, "keyword_argument") || is(a, "list_splat") || is(a, "dictionary_splat"))
        return false;
      ++at;
    }
    return at < params.size() && names.count(params[at]) > 0;
  };
  stack.push_back(root);
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "attribute") && is(field(n, "object"), "identifier") && names.count(str(field(n, "object")))) {
      if (!local.count(str(field(n, "attribute"))))
        return false;
      continue;
    }
    if (is(n, "parameters"))
      continue; // the names a function gives what it is handed
    if (is(n, "identifier") && names.count(str(n)) && handedOnToSameName(n))
      continue;
    if (is(n, "assignment") && is(field(n, "left"), "identifier") && names.count(str(field(n, "left")))) {
      stack.push_back(field(n, "right"));
      continue;
    }
    if (is(n, "identifier") && names.count(str(n)))
      return false; // handed on, returned or stored
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return true;
}

PyModel Builder::run() {
  SyntaxNode root = tree_.root();
  collectImports(root);
  for (const char *step : {".backward(", "optimizer.step(", "training_step("})
    m_.trainsHere = m_.trainsHere || text(root).find(step) != std::string_view::npos;
  if (usesDist_ && (oneDeviceFramework(root) || acceleratorForAutocastOnly(root)))
    usesDist_ = false;
  // musubi-tuner's trainers: `accelerator = prepare_accelerator(args)` from
  // another module, then `accelerator.prepare(...)` here, with no import of
  // accelerate or torch.distributed of their own: a training script.  (A
  // helper module that only waits on an accelerator it is handed, a data
  // backend's, is not made one by that.)
  if (!usesDist_)
    usesDist_ = callsWritten(root, {"accelerator.prepare", "accelerator.backward"});
  const bool distributedImports = usesDist_;
  // A script that reads the launcher's rank variables (`LOCAL_RANK`,
  // `WORLD_SIZE`) is written to run under torchrun as one of its processes,
  // even when a framework (the Hugging Face Trainer) makes the process group:
  // its `rank` parameters are the rank, as in one that imports torch.distributed.
  const bool launcherEnv = readsLauncherEnv(root);
  usesDist_ = usesDist_ || launcherEnv;
  // A script that trains with the Hugging Face Trainer or TRL's
  // (`DPOTrainer(...)`, then `.train()`): the Trainer makes the process group
  // under torchrun, accelerate or deepspeed, and every line around it runs
  // in each process (LMFlow's DPO aligners save the final model on every
  // rank afterwards).
  // Not one whose model is dispatched over the GPUs by Accelerate's big-model
  // loading (`from_pretrained(..., device_map="auto")`, peft's examples):
  // one process holds the model, and the Trainer refuses to run such a model
  // under a distributed launch.
  if (!usesDist_ && text(root).find(".train(") != std::string_view::npos && !dispatchesModelOverDevices(root))
    usesDist_ = anyCall(root, [&](SyntaxNode c) {
      const std::string q = qualified(field(c, "function"));
      if ((startsWith(q, "transformers.") || startsWith(q, "trl.")) && api().mainProcessOverrideBases.count(q))
        return true;
      // A project's subclass (LMFlow's DPOv2Trainer of TRL's DPOTrainer),
      // asked only of names that say Trainer: resolving builds its module.
      return project_ && endsWith(q, "Trainer") && q.find('.') != std::string::npos &&
             project_->hfTrainerClass(q);
    });
  // detectron2's `launch(main, ...)`: the script runs as the job's ranks.
  if (!usesDist_)
    usesDist_ = anyCall(root, [&](SyntaxNode c) { return has(api().rankLaunchers, qualified(field(c, "function"))); });
  if (project_ && project_->imported())
    usesDist_ = true;
  // A module distributed only through its helpers (the linker said so, see
  // buildModel), or a script that makes the process group through a helper
  // of its project (waveglow's train.py calls distributed.py's
  // `init_distributed(rank, ...)`) and imports nothing distributed itself:
  // its `rank` parameters are the rank too.
  if (!usesDist_ && distributedByLinks_)
    usesDist_ = m_.distributedByLinks = true;
  if (!usesDist_ && project_ && !project_->inTestFolder() && anyCall(root, [&](SyntaxNode c) {
        const std::string q = qualified(field(c, "function"));
        const ExternalFunction *f = q.find('.') != std::string::npos ? project_->function(q) : nullptr;
        return f && f->summary.initsProcessGroup;
      }))
    usesDist_ = m_.distributedByLinks = true;
  // A test module that makes no process group, starts no ranks and runs no
  // collective (lerobot's checkpoint-format tests import FSDPModule and
  // torch.distributed.checkpoint's exception types to check a saved
  // layout): pytest runs it in one process, whatever it imports.
  if (usesDist_ && project_ && project_->inTestFolder() && !project_->imported()) {
    static const std::set<std::string> runsRanks = {
        "init_process_group", "spawn", "start_processes", "launch", "init_distributed", "wait_for_everyone",
        "gather_for_metrics", "all_reduce", "all_gather", "all_gather_object", "broadcast", "broadcast_object_list",
        "barrier", "reduce_scatter", "all_to_all", "reduce", "gather", "scatter", "DistributedDataParallel",
        "DDP", "fully_shard", "FSDP", "FullyShardedDataParallel", "Process", "run_distributed", "new_group"};
    if (!anyCall(root, [&](SyntaxNode c) {
          const std::string q = qualified(field(c, "function"));
          return runsRanks.count(lastPart(q.empty() ? std::string(text(field(c, "function"))) : q)) > 0;
        }))
      usesDist_ = false;
  }
  collectFunctions(root, "", "");
  collectSignalFlags(root);
  collectObjects(root);
  // A helper module's `loss.backward()` (a mixed-precision trainer's) runs in
  // its importer's program, which may wrap the model in DDP: read it as the
  // gradient all-reduce it then is.
  const bool ownDdp = hasDdp_; // the module's own, before the importer's is assumed
  if (project_ && project_->imported())
    hasDdp_ = true;
  ddpAssumed_ = hasDdp_ && !ownDdp;
  // Helpers that return what they all-reduced, read from the text before any
  // body is built (a caller may come first): every `return` is made of the
  // collective's output and of names computed from it only.  And helpers
  // that hand back one of their parameters (`return info_dict`).
  for (auto &[key, fi] : fns_) {
    fi.returnsAgreed = returnsCollectiveOutput(field(fi.def, "body")) ? 1 : 0;
    // Element by element, for tuples of up to eight (rgat's `evaluate()`:
    // `return acc, global_acc`).
    if (fi.returnsAgreed == 0 && text(fi.def).find("return ") != std::string_view::npos)
      for (int i = 0; i < 8; ++i)
        if (returnsCollectiveOutput(field(fi.def, "body"), 0, i))
          fi.returnsAgreedAt.push_back(i);
    fi.returnsParameter = returnedParameter(fi);
    fi.returnsLengthOf = lengthOfParameters(fi);
  }
  // A return that builds a name: an f-string, a concatenation, a join or a
  // format (and `str(...)` where the value itself is read).
  auto buildsName = [&](SyntaxNode e, bool orStr) {
    e = unparen(e);
    const std::string fl = is(e, "call") ? lastPart(std::string(text(field(e, "function")))) : "";
    return is(e, "string") || is(e, "concatenated_string") ||
           (is(e, "binary_operator") && str(field(e, "operator")) == "+") || fl == "join" ||
           fl == "format" || (orStr && fl == "str");
  };
  // Helpers that answer "am I the main process?" or "what is my rank?".
  // Three rounds settle chains written in any order (get_dist_info -> get_rank ->
  // is_distributed, read alphabetically).
  for (int round = 0; round < 3; ++round)
    for (auto &[key, fi] : fns_) {
      std::vector<SyntaxNode> real = realStatements(field(fi.def, "body"));
      // `if dist.is_available() and dist.is_initialized(): return dist.get_rank(group=g)`
      // `else: return 0`: in the distributed run, the arm that runs.
      curFn_ = key;
      curClass_ = fi.className;
      env_ = Env{};
      // habitat's `def rank0_only(fn=None)`: `if fn is None: return <rank
      // test>`, else it wraps fn as a decorator.  Called with nothing, as a
      // predicate is, it is its first arm.
      if (real.size() >= 2 && is(real[0], "if_statement") && namedChildCount(real[0]) == 2) {
        SyntaxNode c = unparen(field(real[0], "condition"));
        std::string tested;
        if (is(c, "comparison_operator") && namedChildCount(c) == 2 && comparisonOperator(c) == "is" &&
            is(namedChild(c, 0), "identifier") && is(namedChild(c, 1), "none"))
          tested = str(namedChild(c, 0));
        bool noneDefault = false;
        for (SyntaxNode prm : namedKids(field(fi.def, "parameters")))
          if ((is(prm, "default_parameter") || is(prm, "typed_default_parameter")) &&
              str(field(prm, "name")) == tested && is(field(prm, "value"), "none"))
            noneDefault = true;
        std::vector<SyntaxNode> arm;
        for (SyntaxNode st : namedKids(field(real[0], "consequence")))
          if (!is(st, "comment"))
            arm.push_back(st);
        if (noneDefault && !arm.empty() && is(arm.back(), "return_statement"))
          real = arm;
      }
      // The same without `else`: `if dist.is_initialized(): return
      // int(dist.get_rank())`, then `return 0` (FastVideo's `_rank()`).
      for (size_t i = 0; i + 1 < real.size(); ++i) {
        SyntaxNode ifs = real[i];
        if (!is(ifs, "if_statement") || namedChildCount(ifs) != 2)
          continue;
        std::vector<SyntaxNode> arm;
        for (SyntaxNode st : namedKids(field(ifs, "consequence")))
          if (!is(st, "comment"))
            arm.push_back(st);
        if (arm.empty() || !is(arm.back(), "return_statement"))
          continue;
        Cond c = cond(field(ifs, "condition"));
        if (c.kind != Cond::Kind::Const)
          break;
        if (c.constValue) {
          real.resize(i);
          real.insert(real.end(), arm.begin(), arm.end());
        } else {
          real.erase(real.begin() + static_cast<long>(i));
        }
        break;
      }
      for (int fold = 0; fold < 4 && !real.empty() && is(real.back(), "if_statement"); ++fold) {
        SyntaxNode ifs = real.back();
        SyntaxNode alt;
        bool elif = false;
        for (SyntaxNode k : namedKids(ifs)) {
          elif = elif || is(k, "elif_clause");
          if (is(k, "else_clause"))
            alt = k;
        }
        if (elif || alt.isNull())
          break;
        Cond c = cond(field(ifs, "condition"));
        if (c.kind != Cond::Kind::Const)
          break;
        real.pop_back();
        for (SyntaxNode st : namedKids(c.constValue ? field(ifs, "consequence") : field(alt, "body")))
          if (!is(st, "comment"))
            real.push_back(st);
      }
      // allennlp's `_model_state_path`: `return path + f"_w{self._rank}.th"`
      // when sharded, `return path + ".th"` otherwise.  A name some return
      // makes from the rank may be each rank's own: not one path every rank
      // writes (read from the text: the returns sit in arms of tests).
      if (!fi.def.isNull() && !fi.returnsRankDependent)
        forEachOwnNode(field(fi.def, "body"), [&](SyntaxNode n) {
          if (!is(n, "return_statement") || namedChildCount(n) != 1)
            return true;
          SyntaxNode ur = unparen(namedChild(n, 0));
          if (buildsName(ur, false) && pathNamesRank(ur))
            fi.returnsRankDependent = true;
          return !fi.returnsRankDependent;
        });
      // Predicates are short: a longer body is not read as one (and reading
      // every body twice would double the model's cost).
      if (real.empty() || real.size() > 6 || !is(real.back(), "return_statement") ||
          namedChildCount(real.back()) != 1)
        continue;
      curFn_ = key;
      curClass_ = fi.className;
      env_ = Env{};
      std::vector<Node> ignored;
      for (size_t i = 0; i + 1 < real.size(); ++i)
        statement(real[i], ignored);
      SyntaxNode r = namedChild(real.back(), 0);
      // `if not dist.is_available(): return False` ... `return dist.is_initialized()`
      // (or `return True`): every early exit is a process group that is not up.
      {
        bool guards = true;
        for (size_t i = 0; i + 1 < real.size() && guards; ++i) {
          SyntaxNode s = real[i];
          SyntaxNode c = unparen(field(s, "condition"));
          auto arm = namedKids(field(s, "consequence"));
          guards = is(s, "if_statement") && namedChildCount(s) == 2 && is(c, "not_operator") &&
                   is(unparen(field(c, "argument")), "call") &&
                   initializedTest(unparen(field(c, "argument"))) && arm.size() == 1 &&
                   is(arm[0], "return_statement") && namedChildCount(arm[0]) == 1 &&
                   is(namedChild(arm[0], 0), "false");
        }
        if (guards && (is(unparen(r), "true") ||
                       ((is(unparen(r), "call") || is(unparen(r), "boolean_operator")) &&
                        cond(r).kind == Cond::Kind::Const && cond(r).constValue))) {
          fi.returnsInitialized = true;
          continue;
        }
      }
      if (rankSource(r)) {
        fi.returnsRank = true;
        continue;
      }
      // mmengine's get_dist_info(): `return rank, world_size`.
      if (is(unparen(r), "expression_list") || is(unparen(r), "tuple")) {
        SyntaxNode t = unparen(r);
        // The global rank where the tuple holds one; else the node-local one.
        for (RankKind kind : {RankKind::Global, RankKind::Local})
          for (uint32_t i = 0; i < namedChildCount(t) && fi.returnsRankAt < 0; ++i)
            if (auto rk = rankSource(namedChild(t, i)); rk && *rk == kind) {
              fi.returnsRankAt = int(i);
              fi.returnsLocalRankAt = kind == RankKind::Local;
            }
        if (fi.returnsRankAt >= 0)
          continue;
      }
      // `return is_local_master(args) if local else is_global_master(args)`
      // with `local=False` a literal default: each call picks its arm.
      if (SyntaxNode ce = unparen(r); is(ce, "conditional_expression") && namedChildCount(ce) == 3 &&
                                      is(unparen(namedChild(ce, 1)), "identifier")) {
        const std::string pn = str(unparen(namedChild(ce, 1)));
        bool method = false;
        bool param = false;
        // The parameters as written: what the body tests is not known yet.
        for (const auto &ps : parameterList(fi, method))
          param = param || (ps.name == pn && ps.literalDefault);
        if (param) {
          Cond t = cond(namedChild(ce, 0)), f = cond(namedChild(ce, 2));
          if (t.dependence() == Dep::Rank && f.dependence() == Dep::Rank) {
            fi.returnsCondBy = CondByParam{pn, t, f};
            continue;
          }
        }
      }
      Val v = value(r);
      // A name made from the rank: an f-string, a concatenation, a join or a
      // format (not a predicate: `is_primary(args, local)` keeps its meaning).
      if (buildsName(r, true) && !v.cond && v.dep == Dep::Rank)
        fi.returnsRankDependent = true;
      if (v.cond && v.cond->dependence() == Dep::Rank)
        fi.returnsCond = v.cond;
      else if (!v.cond && (is(unparen(r), "comparison_operator") || is(unparen(r), "boolean_operator"))) {
        Cond c = cond(r);
        if (c.dependence() == Dep::Rank)
          fi.returnsCond = c;
      }
    }
  markOwnGuardingDecorators();
  // A longer set-up helper that returns the rank in a tuple on one of its
  // ways out (ijepa's init_distributed: `return dist.get_world_size(),
  // dist.get_rank()` when the group is up, `return world_size, rank` after
  // setting it up).
  for (auto &[key, fi] : fns_) {
    if (fi.returnsRank || fi.def.isNull())
      continue;
    int at = fi.returnsRankAt;
    const bool known = at >= 0;
    bool conflict = false;
    // The body is not evaluated here (too long for a predicate): a returned
    // name is the rank when every assignment to it in the body reads one
    // (`rank = int(os.environ["RANK"])` ... `return local_rank, rank, world`).
    std::map<std::string, std::vector<SyntaxNode>> assigned;
    std::vector<SyntaxNode> returns, yields;
    std::vector<SyntaxNode> stack{field(fi.def, "body")};
    while (!stack.empty()) {
      SyntaxNode n = stack.back();
      stack.pop_back();
      if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
        continue;
      if (is(n, "return_statement") && namedChildCount(n) == 1) {
        returns.push_back(n);
        continue;
      }
      if (is(n, "yield"))
        yields.push_back(n);
      if (is(n, "assignment") && is(field(n, "left"), "identifier") && !field(n, "right").isNull())
        assigned[str(field(n, "left"))].push_back(field(n, "right"));
      else if (is(n, "augmented_assignment") && is(field(n, "left"), "identifier"))
        assigned[str(field(n, "left"))].emplace_back();
      for (SyntaxNode k : namedKids(n))
        stack.push_back(k);
    }
    // `kind`: which rank every way reads (AlgoPerf's `rank =
    // int(os.environ['LOCAL_RANK']) if use_ddp else 0`: the node-local one).
    auto rankOf = [&](SyntaxNode e, RankKind kind) {
      if (auto rk = rankSource(e); rk && *rk == kind)
        return true;
      if (!is(unparen(e), "identifier"))
        return false;
      auto a = assigned.find(str(unparen(e)));
      if (a == assigned.end())
        return false;
      bool rank = false;
      for (SyntaxNode rhs : a->second) {
        // `rank = 0` before the group is up: the rank of a run of one.
        if (!rhs.isNull() && is(unparen(rhs), "integer") && str(unparen(rhs)) == "0")
          continue;
        if (rhs.isNull() || !(rankSource(rhs) == std::optional<RankKind>(kind)))
          return false;
        rank = true;
      }
      return rank;
    };
    auto globalRank = [&](SyntaxNode e) { return rankOf(e, RankKind::Global); };
    for (SyntaxNode y : yields)
      if (namedChildCount(y) == 1 && globalRank(namedChild(y, 0)))
        fi.yieldsRank = fi.contextManager;
    // The global rank where the tuples hold one; else the node-local one.
    bool local = fi.returnsLocalRankAt;
    for (RankKind kind : {RankKind::Global, RankKind::Local}) {
      if (at >= 0 || conflict || known)
        break;
      for (SyntaxNode n : returns) {
        SyntaxNode t = unparen(namedChild(n, 0));
        if (is(t, "expression_list") || is(t, "tuple"))
          for (uint32_t i = 0; i < namedChildCount(t); ++i)
            if (rankOf(namedChild(t, i), kind)) {
              conflict = conflict || (at >= 0 && at != int(i));
              at = int(i);
              local = kind == RankKind::Local;
            }
      }
    }
    if (at >= 0 && !conflict && !known) {
      fi.returnsRankAt = at;
      fi.returnsLocalRankAt = local;
    }
    // AlgoPerf's `use_pytorch_ddp = 'LOCAL_RANK' in os.environ` ... `return
    // use_pytorch_ddp, rank, ...`: the element that says the run has ranks.
    auto runsDistributed = [&](SyntaxNode e) {
      if (distributedRunTest(e))
        return true;
      if (!is(unparen(e), "identifier"))
        return false;
      auto a = assigned.find(str(unparen(e)));
      return a != assigned.end() && a->second.size() == 1 && !a->second[0].isNull() &&
             distributedRunTest(a->second[0]);
    };
    int dat = -1;
    bool dconflict = false;
    for (SyntaxNode n : returns) {
      SyntaxNode t = unparen(namedChild(n, 0));
      if (is(t, "expression_list") || is(t, "tuple"))
        for (uint32_t i = 0; i < namedChildCount(t); ++i)
          if (runsDistributed(namedChild(t, i))) {
            dconflict = dconflict || (dat >= 0 && dat != int(i));
            dat = int(i);
          }
    }
    if (dat >= 0 && !dconflict && dat != fi.returnsRankAt)
      fi.returnsInitializedAt = dat;
  }
  m_.positions.clear();
  m_.byteOffsets.clear();
  m_.ifNodes.clear();
  stepHookFns_.clear(); // the predicate pass's, at its positions
  stepHookSites_.clear();
  const bool usesCuda = facts().usesCuda, shardsData = facts().shardsData;
  m_.program.facts = core::Facts{};
  facts().usesCuda = usesCuda;
  facts().shardsData = shardsData;
  // The predicate pass read a few statements out of context: their calls are
  // not call sites of the module (see parameterFacts).
  paramFacts_.clear();
  callSites_.clear();
  specRequests_ = importerSpecs_;
  // Attributes and module globals assigned a rank anywhere (`self.rank = dist.get_rank()`,
  // `args.local_rank = int(os.environ["LOCAL_RANK"])`): two rounds settle chains.
  // Each function's assignments are read with its parameters bound
  // (`def __init__(self, gpu_id): self.gpu_id = gpu_id`).
  // A local the function set to the rank before counts too (StableCascade's
  // `process_id = int(os.environ["SLURM_PROCID"])` then `self.is_main_node =
  // process_id == 0`); statements are visited in source order.
  auto attrPass = [&](SyntaxNode body, const Env &params) {
    Env locals = params;
    std::vector<SyntaxNode> stack{body};
    while (!stack.empty()) {
      SyntaxNode n = stack.back();
      stack.pop_back();
      if (is(n, "function_definition") || is(n, "class_definition"))
        continue; // their own pass
      if (is(n, "assignment")) {
        SyntaxNode left = field(n, "left");
        SyntaxNode right = field(n, "right");
        if (is(left, "identifier") && !right.isNull()) {
          env_ = locals;
          Val v = value(right);
          // The rank itself only: a value computed from it (`step =
          // load_checkpoint(model, rank, ...)`) is not a rank flag.
          if (v.dep == Dep::Rank && rankSource(right))
            locals.vars[str(left)] = v;
          else
            locals.vars.erase(str(left));
        }
        if (is(left, "attribute") && !right.isNull()) {
          env_ = locals;
          Val v = value(right);
          // An object that exists on some ranks only (`self.logger = logger`,
          // handed a rank-0-only logger): `self.logger is not None` tests it.
          if (v.dep == Dep::Rank || (v.dep == Dep::Local && namesThisProcess(right)) ||
              (v.existsWhen && !v.cond))
            attrs_[str(left)] = v;
        }
        // sam2's `self.local_rank, self.distributed_rank = get_machine_local_and_dist_rank()`:
        // the helper says which element is the rank.
        if ((is(left, "pattern_list") || is(left, "tuple_pattern")) && is(unparen(right), "call"))
          if (bool local = false; true)
            if (const int at = rankElementOf(unparen(right), &local);
                at >= 0 && uint32_t(at) < namedChildCount(left) && is(namedChild(left, uint32_t(at)), "attribute"))
              attrs_[str(namedChild(left, uint32_t(at)))] =
                  Val{Dep::Rank, local && !localRankIsGlobal_ ? RankKind::Local : RankKind::Global, std::nullopt};
      }
      auto kids = namedKids(n);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it)
        stack.push_back(*it);
    }
  };
  curFn_.clear();
  curClass_.clear();
  attrPass(root, Env{});
  for (const auto &[key, fi] : fns_) {
    curFn_ = key;
    curClass_ = fi.className;
    attrPass(field(fi.def, "body"), paramEnv(fi));
  }
  // Accessors of a rank the constructor stored (LLaMA-Factory's
  // `def get_rank(self): return self._rank`): read once the attributes are
  // known, which the predicate pass above is not.
  for (auto &[key, fi] : fns_) {
    if (fi.className.empty() || fi.returnsRank || fi.returnsCond || fi.def.isNull())
      continue;
    curFn_ = key;
    curClass_ = fi.className;
    env_ = Env{};
    // Every way out returns the rank, or 0 where there is no group:
    // `if not self._is_distributed: return 0` / `elif dim is None: return
    // self._rank` / `else: return self.mesh(dim).get_local_rank()`.
    {
      bool rank = false, other = false;
      std::vector<SyntaxNode> stack{field(fi.def, "body")};
      while (!stack.empty() && !other) {
        SyntaxNode n = stack.back();
        stack.pop_back();
        if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
          continue;
        if (is(n, "return_statement")) {
          SyntaxNode r = namedChildCount(n) == 1 ? unparen(namedChild(n, 0)) : SyntaxNode{};
          if (r.isNull()) {
            other = true;
          } else if (auto rk = rankSource(r); rk && *rk == RankKind::Global) {
            rank = true;
          } else if (!(is(r, "integer") && text(r) == "0") && !rankSource(r)) {
            const std::string l = is(r, "call") ? lastPart(std::string(text(field(r, "function")))) : "";
            other = l != "get_rank" && l != "get_local_rank" && l != "get_global_rank";
          }
          continue;
        }
        for (SyntaxNode k : namedKids(n))
          stack.push_back(k);
      }
      if (rank && !other) {
        fi.returnsRank = true;
        continue;
      }
    }
    const std::vector<SyntaxNode> real = realStatements(field(fi.def, "body"));
    if (real.size() != 1 || !is(real[0], "return_statement") || namedChildCount(real[0]) != 1)
      continue;
    SyntaxNode r = namedChild(real[0], 0);
    if (text(r).find("self.") == std::string_view::npos)
      continue;
    curFn_ = key;
    curClass_ = fi.className;
    env_ = Env{};
    if (auto rk = rankSource(r); rk && *rk == RankKind::Global) {
      fi.returnsRank = true;
    } else if (is(unparen(r), "comparison_operator") || is(unparen(r), "boolean_operator")) {
      Cond c = cond(r);
      if (c.dependence() == Dep::Rank)
        fi.returnsCond = c;
    }
  }
  // Module-level code is the program's entry.
  {
    FnInfo mod;
    mod.key = "<module>";
    mod.name = "<module>";
    curFn_ = "";
    curClass_ = "";
    env_ = Env{};
    std::vector<Node> body;
    block(root, body);
    globals_ = env_.vars;
    core::Function f;
    f.key = "<module>";
    f.name = "<module>";
    f.body = Node::block(std::move(body));
    m_.program.functions.push_back(std::move(f));
  }
  for (const auto &[key, fi] : fns_) {
    // A parameter every call hands the bare module is no DDP model in this
    // function's body, whatever the module's DDP model is called.
    std::map<std::string, ObjKind> hidden;
    if (auto sf = seeded_.find(key); sf != seeded_.end())
      for (const auto &[name, v] : sf->second)
        if (v.bareModel)
          if (auto o = objects_.find(name); o != objects_.end()) {
            hidden.emplace(o->first, o->second);
            objects_.erase(o);
          }
    buildFunction(fi);
    for (const auto &[name, kind] : hidden)
      objects_[name] = kind;
  }
  buildSpecializations();
  for (auto &f : stepHookFns_)
    m_.program.functions.push_back(std::move(f));
  stepHookFns_.clear();
  markLaunchers();
  // A function that only waits: barriers, under any guard, and nothing else.
  std::set<std::string> barrierOnly;
  for (const auto &f : m_.program.functions) {
    bool any = false, other = false;
    std::function<void(const Node &)> visit = [&](const Node &n) {
      if (n.kind == Node::Kind::Event)
        (n.event == EventKind::Barrier ? any : other) = true;
      else if (n.kind == Node::Kind::Call)
        other = true;
      for (const auto &k : n.kids)
        visit(k);
    };
    visit(f.body);
    if (any && !other)
      barrierOnly.insert(f.key);
  }
  for (const auto &[key, spelling] : argumentlessHelpers_) {
    auto ext = externalBarrierOnly_.find(key);
    if (ext != externalBarrierOnly_.end() ? ext->second : barrierOnly.count(key) > 0) {
      m_.barrierHelper = spelling;
      break;
    }
  }
  m_.initAlways = horovodBarrier_ || (initPlain_ && !initGuarded_);
  for (const auto &[key, fi] : fns_) {
    FunctionSummary fs;
    fs.params = signature(fi, fs.method);
    fs.returnsDdp = returnsDdpModel(fi.def);
    fs.returnsInstance = returnedInstance(fi.def);
    fs.returnsClass = returnedClass(fi.def);
    fs.writesThroughSplat = writesThroughSplat(fi.def);
    fs.returnsParameter = fi.returnsParameter;
    fs.returnsLengthOf = fi.returnsLengthOf;
    // A path helper's file names (see probeRacesWrite): only a short body's.
    if (!fi.def.isNull() && namedChildCount(field(fi.def, "body")) <= 3)
      forEachOwnNode(field(fi.def, "body"), [&](SyntaxNode r) {
        if (is(r, "return_statement"))
          for (const std::string &l : pathLiterals(r))
            fs.returnLiterals.insert(l);
        return true;
      });
    fs.key = key;
    fs.name = fi.className.empty() ? fi.name : fi.className + "." + fi.name;
    fs.returnsRank = fi.returnsRank;
    fs.returnsCond = fi.returnsCond;
    fs.returnsCondBy = fi.returnsCondBy;
    fs.mainOnly = fi.mainOnly;
    fs.returnsAgreed = fi.returnsAgreed == 1;
    fs.returnsAgreedAt = fi.returnsAgreedAt;
    fs.returnsInitialized = fi.returnsInitialized;
    fs.returnsRankDependent = fi.returnsRankDependent;
    fs.returnsRankAt = fi.returnsRankAt;
    fs.returnsLocalRankAt = fi.returnsLocalRankAt;
    fs.returnsInitializedAt = fi.returnsInitializedAt;
    fs.initsProcessGroup = initsGroup_.count(key) > 0;
    fs.initRankParameter = initRankParameter(fi.def);
    fs.launchesRanks = launches_.count(key) > 0;
    fs.guardsOnMain = guardsOnMain_.count(key) > 0;
    fs.barrierOnly = barrierOnly.count(key) > 0;
    fs.agreesFirstArgument = agreesFirstArgument(fi);
    fs.contextManager = fi.contextManager;
    fs.yieldsRank = fi.yieldsRank;
    m_.summaries.emplace(key, std::move(fs));
  }
  m_.classes = classBases_;
  // Decided here, for every class, because the syntax tree and this builder
  // are gone when another module's DDP forward asks (the module's model is
  // its summary); the cost did not show on the corpora.
  for (const auto &[name, def] : classDefs_)
    if (classBufferFree(name, 0))
      m_.bufferFreeClasses.insert(name);
  m_.imports = alias_;
  m_.signalFlagAttrs = signalAttrs_;
  m_.program.distributed = usesDist_ || hasDdp_ || !facts().processGroups.empty() || launcherEnv;
  m_.distributedByLinks = m_.distributedByLinks && !hasDdp_ && facts().processGroups.empty();
  m_.oneRankWorld = oneRankInits_ > 0 && manyRankInits_ == 0;
  m_.distributedOnItsOwn =
      distributedImports || ownDdp || !facts().processGroups.empty() || launcherEnv;
  facts().language = core::SourceLanguage::Python;
  facts().versions.torchProduct = "PyTorch";
  return std::move(m_);
}

} // namespace build

PyModel buildModel(const SyntaxTree &tree, const core::Wrappers &user, ModuleContext *project,
                   const std::set<std::string> &specializations, bool distributedByLinks) {
  build::Builder b(tree, user, project);
  b.requestSpecializations(specializations);
  if (distributedByLinks)
    b.assumeDistributedByLinks();
  PyModel m = b.run();
  // A function whose every call in this module hands a parameter the same
  // rank fact is built again with it bound (a second pass only then).
  // Not in a module's imported form: the importer's own calls may hand the
  // parameter something else.
  auto facts = b.parameterFacts();
  if (facts.empty() || (project && project->imported()))
    return m;
  // A fact reaches a helper's helper one pass later (InternEvo's
  // `llm_save(path, ...)` hands the rank's file name on to the storage
  // client's writer): built again while a pass finds new facts, up to
  // kFactPasses deep (a longer chain of helpers keeps its outer facts only).
  constexpr int kFactPasses = 4;
  auto keysOf = [](const std::map<std::string, std::map<std::string, build::Val>> &f) {
    std::set<std::pair<std::string, std::string>> k;
    for (const auto &[callee, params] : f)
      for (const auto &pv : params)
        k.emplace(callee, pv.first);
    return k;
  };
  for (int pass = 1;; ++pass) {
    build::Builder again(tree, user, project);
    again.seedParameters(facts);
    again.requestSpecializations(specializations);
    if (distributedByLinks)
      again.assumeDistributedByLinks();
    PyModel built = again.run();
    auto more = again.parameterFacts();
    if (pass >= kFactPasses || keysOf(more) == keysOf(facts))
      return built;
    facts = std::move(more);
  }
}

} // namespace ddplint::pyfe
