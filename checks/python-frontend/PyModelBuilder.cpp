#include "PyModelBuilder.h"

#include "ddplint/core/Catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <optional>

namespace ddplint::pyfe {
namespace {

using core::Cond;
using core::Dep;
using core::EventKind;
using core::ExitKind;
using core::Loc;
using core::Node;

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
std::string lastPart(std::string_view dotted) {
  auto i = dotted.rfind('.');
  return std::string(i == std::string_view::npos ? dotted : dotted.substr(i + 1));
}
bool contains(const std::vector<std::string> &v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
bool has(const std::vector<std::string> &v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
bool has(const core::NameSet &v, std::string_view s) { return v.find(s) != v.end(); }

// Names that hold a rank's own data in training code (`loss`, `val_loss`,
// `batch`, `logits`): judged by the last word, so `output_dir` is not one.
bool perRankDataName(std::string_view name) {
  auto dot = name.rfind('.');
  if (dot != std::string_view::npos)
    name = name.substr(dot + 1);
  auto us = name.rfind('_');
  std::string_view last = us == std::string_view::npos ? name : name.substr(us + 1);
  static const std::set<std::string, std::less<>> words = {
      "loss", "losses", "logits", "batch", "inputs", "targets", "images", "labels",
      "outputs", "output", "preds", "predictions", "grad", "grads", "norm"};
  return words.count(last) > 0 && name != "batch_size";
}
// Device handles are rank-specific by design (`cuda:{local_rank}`), but what is
// computed on them is not: a device argument does not make a result rank-dependent.
bool deviceName(std::string_view name) {
  auto dot = name.rfind('.');
  if (dot != std::string_view::npos)
    name = name.substr(dot + 1);
  if (!name.empty() && name.front() == '[' && name.back() == ']')
    name = name.substr(1, name.size() - 2); // device_ids=[local_rank]
  return name == "device" || name == "dev" || endsWith(name, "_device") || name == "local_rank" ||
         name == "gpu" || name == "device_id" || name == "device_ids" || name == "rank" ||
         name == "map_location";
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
};

Val joinVal(const Val &a, const Val &b) {
  Val v;
  v.dep = core::join(a.dep, b.dep);
  return v;
}

// Objects whose method calls or calls are collectives.
// Subgroup: a DDP model, Fabric or Accelerator on a process group of some
// ranks only: its collectives are run by the group's members, who are chosen
// by rank (MPMD roles); like the C++ side's split communicators, they are left
// out of the comparison.
enum class ObjKind : std::uint8_t { None, Ddp, Fsdp, Prepared, Metric, Accelerator, DataLoader, Zero, Subgroup };

// `group=pg` / `process_group=pg` with a group of some ranks (not the world).
bool onSubgroup(std::string_view args) {
  for (std::string_view key : {"process_group=", "group="}) {
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

Env joinEnv(const Env &a, const Env &b) {
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

struct FnInfo {
  std::string key, name, className;
  SyntaxNode def{};
  std::vector<std::string> decorators;
  bool mainOnly = false; // @rank_zero_only
  bool isModuleMethod = false;
  std::optional<Cond> returnsCond; // `def is_main(): return rank == 0`
  bool returnsRank = false;
};

std::string unquote(std::string_view t, bool &literal) {
  literal = t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front();
  if (!literal)
    return std::string(t);
  return std::string(t.substr(1, t.size() - 2));
}

class Builder {
public:
  Builder(const SyntaxTree &t, const core::Wrappers &u) : tree_(t), user_(u) {}

  PyModel run();

private:
  const SyntaxTree &tree_;
  const core::Wrappers &user_;
  PyModel m_;
  std::map<std::string, std::string> alias_; // local name -> dotted qualified name
  std::map<std::string, FnInfo> fns_;        // key -> function
  std::map<std::string, std::vector<std::string>> classBases_;
  std::map<std::string, ObjKind> objects_; // spelling ("model", "self.model") -> kind
  std::map<std::string, Val> attrs_;       // "self.rank", "args.local_rank" -> value
  std::map<std::string, Val> globals_;
  std::set<std::string> spawned_; // functions started by mp.spawn: first parameter is the rank
  std::set<std::string> memoryFiles_; // io.BytesIO() objects: torch.save into them is no file
  std::map<std::string, std::string> instances_; // variable -> class of this module
  std::vector<std::string> fullStateScopes_; // models under state_dict_type(.., FULL_STATE_DICT)
  bool fullStateDict_ = false;
  bool hasDdp_ = false;
  bool usesDist_ = false;
  // Walk state
  std::string curClass_, curFn_;
  Env env_;
  int noSync_ = 0;
  struct LoopCtx {
    Loc loc = 0;
    bool perEpoch = false;
    std::set<std::string> vars; // the loop's variables, and names assigned from them in it
    std::string text;
  };
  std::vector<LoopCtx> loops_;

  std::string_view text(SyntaxNode n) const { return tree_.text(n); }
  std::string str(SyntaxNode n) const { return std::string(text(n)); }

  Loc loc(SyntaxNode n) {
    m_.positions.push_back(startOf(n));
    m_.byteOffsets.push_back(startByte(n));
    return static_cast<Loc>(m_.positions.size());
  }
  std::vector<unsigned> lineStarts_;
  // A position at any byte (fix anchors sit between tokens).
  Loc locByte(unsigned byte) {
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
      return obj + "." + str(field(n, "attribute"));
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
  bool isNnModule(const std::string &cls, int depth = 0) const;
  bool isLightningModule(const std::string &cls, int depth = 0) const;

  // --- values -------------------------------------------------------------
  Val value(SyntaxNode e);
  Val callValue(SyntaxNode call);
  std::optional<RankKind> rankSource(SyntaxNode e);
  Cond cond(SyntaxNode e);
  Cond atom(SyntaxNode e, Dep d);
  void bind(SyntaxNode target, const Val &v);
  void bindTargets(SyntaxNode target, Dep d);
  bool isLoaderIterable(SyntaxNode it) const;

  // --- statements ---------------------------------------------------------
  void block(SyntaxNode b, std::vector<Node> &out);
  void statement(SyntaxNode s, std::vector<Node> &out);
  void expr(SyntaxNode e, std::vector<Node> &out); // events of the calls in e, in order
  void call(SyntaxNode c, std::vector<Node> &out);
  Node ifChain(SyntaxNode cond, SyntaxNode then, const std::vector<SyntaxNode> &alts, size_t i, Loc at);
  void buildFunction(const FnInfo &fi);
  std::string resolveCallee(SyntaxNode fn) const;
  void forwardFacts(const FnInfo &fi);
  Env paramEnv(const FnInfo &fi);
  void buildFunctionRest(const FnInfo &fi, std::vector<Node> body);
  Loc argsEnd(SyntaxNode call);
  void envSet(SyntaxNode name, SyntaxNode value, SyntaxNode at);
  void envSetNamed(const std::string &name, SyntaxNode value, SyntaxNode at);
  void envRead(SyntaxNode name, SyntaxNode at);
  void envName(core::EnvSetting &e, SyntaxNode name);
  void envValue(core::EnvSetting &e, SyntaxNode value);
};

void Builder::envRead(SyntaxNode name, SyntaxNode at) {
  core::EnvSetting e;
  envName(e, name);
  if (!e.nameKnown)
    return; // a computed name read: nothing to say about it
  e.loc = loc(at);
  facts().env.push_back(e);
}

// The end of a call's argument list, where `, name=value` can be inserted
// (0: the list is not a plain argument list).
Loc Builder::argsEnd(SyntaxNode c) {
  SyntaxNode al = field(c, "arguments");
  if (!is(al, "argument_list") || hasError(al))
    return 0;
  // After the last argument (a trailing comma stays where it is).
  const uint32_t n = namedChildCount(al);
  for (uint32_t i = n; i-- > 0;) {
    SyntaxNode last = namedChild(al, i);
    if (is(last, "comment"))
      continue;
    return locByte(endByte(last));
  }
  return locByte(startByte(al) + 1);
}


// The variable's name as written: a literal can be reported and renamed in place.
void Builder::envName(core::EnvSetting &e, SyntaxNode name) {
  bool lit = false;
  e.name = unquote(text(name), lit);
  e.nameKnown = lit;
  if (lit && is(name, "string") && namedChildCount(name) <= 3) {
    e.nameLoc = loc(name);
    e.renameFixable = true;
  }
}

void Builder::envValue(core::EnvSetting &e, SyntaxNode value) {
  bool lit = false;
  e.value = unquote(text(value), lit);
  e.valueKnown = lit || is(value, "integer");
}

void Builder::envSet(SyntaxNode name, SyntaxNode value, SyntaxNode at) {
  core::EnvSetting e;
  e.loc = loc(at);
  e.isSet = true;
  envName(e, name);
  envValue(e, value);
  facts().env.push_back(e);
}

void Builder::envSetNamed(const std::string &name, SyntaxNode value, SyntaxNode at) {
  core::EnvSetting e;
  e.loc = loc(at);
  e.isSet = true;
  e.name = name;
  envValue(e, value);
  facts().env.push_back(e);
}

std::vector<core::LoopInfo> Builder::loopInfos(SyntaxNode datasetArg) const {
  std::vector<core::LoopInfo> out;
  for (auto it = loops_.rbegin(); it != loops_.rend(); ++it) {
    core::LoopInfo li;
    li.loc = it->loc;
    li.perEpoch = it->perEpoch;
    if (!datasetArg.isNull()) {
      std::function<void(SyntaxNode)> uses = [&](SyntaxNode x) {
        if (is(x, "identifier") && it->vars.count(str(x)))
          li.datasetDependsOnLoop = true;
        for (SyntaxNode k : namedKids(x))
          uses(k);
      };
      uses(datasetArg);
    }
    out.push_back(li);
  }
  return out;
}

// `loaders.append(DataLoader(..))`, `loaders[name] = DataLoader(..)`, a list
// or dict of loaders: one loader per element, kept beyond the iteration.
bool Builder::storedInContainer(SyntaxNode c) const {
  SyntaxNode p = parentOf(c);
  while (is(p, "parenthesized_expression"))
    p = parentOf(p);
  if (is(p, "argument_list")) {
    SyntaxNode call = parentOf(p);
    std::string l = lastPart(std::string(text(field(call, "function"))));
    return l == "append" || l == "extend" || l == "insert" || l == "add";
  }
  if (is(p, "list") || is(p, "pair") || is(p, "list_comprehension") ||
      is(p, "dictionary_comprehension") || is(p, "tuple") || is(p, "set"))
    return true;
  if (is(p, "assignment"))
    return is(field(p, "left"), "subscript");
  return false;
}

// ---------------------------------------------------------------------------
// Catalog of the Python API (rules/python-api.yaml).
const core::PythonApi &api() { return core::builtinPythonApi(); }

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
          if (full == "torch.distributed")
            usesDist_ = true;
        } else if (is(k, "aliased_import")) {
          std::string full = str(field(k, "name"));
          alias_[str(field(k, "alias"))] = full;
          if (startsWith(full, "torch.distributed"))
            usesDist_ = true;
        }
      }
    } else if (is(n, "import_from_statement")) {
      std::string mod = str(field(n, "module_name"));
      if (mod == "__future__")
        continue;
      if (!firstImportSeen && topLevel) {
        firstImportSeen = true;
        m_.hasImports = true;
        m_.importInsertAt = startByte(n);
      }
      if (startsWith(mod, "torch.distributed") || startsWith(mod, "accelerate") ||
          startsWith(mod, "lightning") || startsWith(mod, "pytorch_lightning"))
        usesDist_ = true;
      SyntaxNode modNode = field(n, "module_name");
      for (SyntaxNode k : namedKids(n)) {
        if (k == modNode)
          continue;
        if (is(k, "dotted_name"))
          alias_[str(k)] = mod + "." + str(k);
        else if (is(k, "aliased_import"))
          alias_[str(field(k, "alias"))] = mod + "." + str(field(k, "name"));
      }
    } else if (is(n, "module") || is(n, "block") || is(n, "if_statement") ||
               is(n, "try_statement") || is(n, "else_clause") || is(n, "except_clause") ||
               is(n, "function_definition") || is(n, "decorated_definition") ||
               is(n, "elif_clause") || is(n, "finally_clause") || is(n, "with_statement")) {
      auto kids = namedKids(n);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it)
        stack.push_back(*it);
    }
  }
  for (const auto &[local, full] : alias_)
    if (full == "torch.distributed" && m_.distAlias.empty())
      m_.distAlias = local;
  if (m_.distAlias.empty())
    m_.distAlias = alias_.count("torch") ? "torch.distributed" : "";
  for (const auto &[local, full] : alias_) {
    if (full == "datetime.timedelta")
      m_.timedeltaSpelling = local;
    else if (full == "datetime" && m_.timedeltaSpelling.empty())
      m_.timedeltaSpelling = local + ".timedelta";
  }
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

bool Builder::isLightningModule(const std::string &cls, int depth) const {
  auto it = classBases_.find(cls);
  if (it == classBases_.end() || depth > 8)
    return false;
  for (const auto &b : it->second) {
    std::string l = lastPart(b);
    if (l == "LightningModule" || l == "Callback" || isLightningModule(l, depth + 1))
      return true;
  }
  return false;
}

void Builder::collectFunctions(SyntaxNode blk, const std::string &prefix, const std::string &cls) {
  for (SyntaxNode s : namedKids(blk)) {
    std::vector<std::string> decos;
    SyntaxNode def = s;
    if (is(s, "decorated_definition")) {
      for (SyntaxNode d : namedKids(s))
        if (is(d, "decorator"))
          decos.push_back(qualified(unparen(namedChild(d, 0))));
      def = field(s, "definition");
    }
    if (is(def, "function_definition")) {
      FnInfo fi;
      fi.name = str(field(def, "name"));
      fi.key = prefix.empty() ? fi.name : prefix + "." + fi.name;
      fi.className = cls;
      fi.def = def;
      fi.decorators = decos;
      for (const auto &d : decos)
        if (lastPart(d) == "rank_zero_only" || has(api().mainOnlyDecorators, lastPart(d)))
          fi.mainOnly = true;
      fns_[fi.key] = fi;
      collectFunctions(field(def, "body"), fi.key, "");
    } else if (is(def, "class_definition")) {
      std::string name = str(field(def, "name"));
      std::vector<std::string> bases;
      for (SyntaxNode b : namedKids(field(def, "superclasses")))
        if (is(b, "identifier") || is(b, "attribute"))
          bases.push_back(qualified(b));
      classBases_[name] = bases;
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
  return ObjKind::None;
}

// Which spellings hold which objects, over the whole module: the DDP model is
// usually made in one function and called in another, under the same name.
void Builder::collectObjects(SyntaxNode n) {
  std::vector<SyntaxNode> stack{n};
  while (!stack.empty()) {
    SyntaxNode s = stack.back();
    stack.pop_back();
    if (is(s, "assignment")) {
      SyntaxNode left = field(s, "left"), right = unparen(field(s, "right"));
      ObjKind k = kindOfCtor(right);
      if (k != ObjKind::None && (is(left, "identifier") || is(left, "attribute")))
        objects_[str(left)] = k;
      if (k == ObjKind::Ddp || k == ObjKind::Fsdp)
        hasDdp_ = true;
      // model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
      if (is(right, "call") && lastPart(qualified(field(right, "function"))) == "prepare") {
        SyntaxNode recv = field(field(right, "function"), "object");
        if (!recv.isNull() && (objects_.count(str(recv)) || str(recv) == "accelerator")) {
          std::vector<SyntaxNode> targets =
              is(left, "pattern_list") || is(left, "tuple_pattern") ? namedKids(left)
                                                                     : std::vector<SyntaxNode>{left};
          for (SyntaxNode t : targets) {
            std::string name = str(t);
            std::string lower = name;
            std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
            if (lower.find("model") != std::string::npos) {
              objects_[name] = ObjKind::Prepared;
              hasDdp_ = true;
            }
          }
        }
      }
    }
    if (is(s, "assignment")) {
      SyntaxNode left = field(s, "left"), right = unparen(field(s, "right"));
      if (is(right, "call") && (is(left, "identifier") || is(left, "attribute"))) {
        std::string cls = lastPart(qualified(field(right, "function")));
        if (classBases_.count(cls))
          instances_[str(left)] = cls;
      }
    }
    if (is(s, "identifier") || is(s, "attribute")) {
      if (endsWith(text(s), "FULL_STATE_DICT"))
        fullStateDict_ = true;
    }
    if (is(s, "call")) {
      // Cheap test on the spelling first: most calls are none of these.
      const std::string_view ft = text(field(s, "function"));
      const bool maybe = endsWith(ft, "spawn") || endsWith(ft, "start_processes") ||
                         endsWith(ft, "cuda") || endsWith(ft, "to") || endsWith(ft, "device") ||
                         endsWith(ft, "set_device");
      std::string q = maybe ? qualified(field(s, "function")) : std::string();
      std::string l = maybe ? lastPart(q) : std::string();
      if (maybe && (l == "spawn" || l == "start_processes") && (startsWith(q, "torch.multiprocessing") ||
                                                       startsWith(q, "mp.") || q == "spawn")) {
        auto as = args(s);
        if (const PyArg *fn = arg(as, "fn", 0))
          spawned_.insert(std::string(fn->text));
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

std::optional<RankKind> Builder::rankSource(SyntaxNode e) {
  e = unparen(e);
  // int(x), str(x): the rank converted
  if (is(e, "call")) {
    std::string q = qualified(field(e, "function"));
    std::string l = lastPart(q);
    auto as = args(e);
    if ((q == "int" || q == "str") && !as.empty() && as[0].name.empty())
      return rankSource(as[0].value);
    // os.environ.get("RANK"), os.getenv("LOCAL_RANK", 0)
    if ((q == "os.environ.get" || q == "os.getenv" || q == "environ.get") && !as.empty()) {
      bool literal = false;
      const std::string var = unquote(as[0].text, literal);
      if (has(api().rankEnvVars, var))
        return RankKind::Global;
      if (has(api().localRankEnvVars, var))
        return RankKind::Local;
      return std::nullopt;
    }
    if (has(api().rankFunctions, q) || has(user_.rankFunctions, q) ||
        has(user_.rankFunctions, l))
      return RankKind::Global;
    if (has(api().localRankFunctions, q))
      return RankKind::Local;
    if (startsWith(q, "torch.distributed.") && (l == "get_rank" || l == "get_global_rank"))
      return RankKind::Global;
    if (startsWith(q, "torch.distributed.") && (l == "get_local_rank" || l == "get_node_local_rank"))
      return RankKind::Local;
    auto f = fns_.find(resolveCallee(field(e, "function")));
    if (f != fns_.end() && f->second.returnsRank)
      return RankKind::Global;
    return std::nullopt;
  }
  if (is(e, "subscript")) {
    std::string v = qualified(field(e, "value"));
    if (v == "os.environ" || v == "environ") {
      bool literal = false;
      const std::string var = unquote(text(field(e, "subscript")), literal);
      if (has(api().rankEnvVars, var))
        return RankKind::Global;
      if (has(api().localRankEnvVars, var))
        return RankKind::Local;
    }
    return std::nullopt;
  }
  if (is(e, "attribute") || is(e, "identifier")) {
    std::string t = str(e);
    auto a = attrs_.find(t);
    if (is(e, "attribute") && a != attrs_.end() && a->second.rank != RankKind::None)
      return a->second.rank;
    if (is(e, "identifier")) {
      auto v = env_.vars.find(t);
      if (v != env_.vars.end())
        return v->second.rank == RankKind::None ? std::nullopt
                                                : std::optional<RankKind>(v->second.rank);
      auto g = globals_.find(t);
      if (g != globals_.end() && g->second.rank != RankKind::None)
        return g->second.rank;
      return std::nullopt;
    }
    std::string attr = lastPart(t);
    // `self.rank` of a layer (LoRA's rank, a tensor rank) is a hyper-parameter;
    // a LightningModule's self.global_rank is the process rank.
    if (str(field(e, "object")) == "self" && isNnModule(curClass_) && !isLightningModule(curClass_))
      return std::nullopt;
    if (has(api().rankAttributes, attr))
      return RankKind::Global;
    if (has(api().localRankAttributes, attr))
      return RankKind::Local;
  }
  return std::nullopt;
}

Val Builder::value(SyntaxNode e) {
  e = unparen(e);
  Val v;
  if (e.isNull())
    return v;
  if (auto r = rankSource(e)) {
    v.dep = Dep::Rank;
    v.rank = *r;
    return v;
  }
  const std::string_view k = kindOf(e);
  if (k == "identifier") {
    auto it = env_.vars.find(str(e));
    if (it != env_.vars.end())
      return it->second; // a bound value: its origin says how it varies, not its name
    auto g = globals_.find(str(e));
    if (g != globals_.end())
      return g->second;
    if (perRankDataName(str(e)))
      v.dep = Dep::Local;
    return v;
  }
  if (k == "attribute") {
    std::string t = str(e);
    auto ev = env_.vars.find(t);
    if (ev != env_.vars.end())
      return ev->second;
    auto a = attrs_.find(t);
    if (a != attrs_.end())
      return a->second;
    std::string attr = lastPart(t);
    if (has(api().worldSizeAttributes, attr))
      return v; // the same on every rank
    if (has(api().mainProcessAttributes, attr)) {
      v.dep = Dep::Rank;
      v.cond = Cond::rankCmp(core::CmpOp::EQ, 0);
      v.cond->text = t;
      return v;
    }
    if (has(api().localMainProcessAttributes, attr)) {
      v.dep = Dep::Rank;
      Cond c = Cond::atom("local-main", Dep::Rank);
      c.localMain = true;
      c.text = t;
      v.cond = c;
      return v;
    }
    return Val{value(field(e, "object")).dep, RankKind::None, std::nullopt};
  }
  if (k == "call")
    return callValue(e);
  if (k == "subscript") {
    Val b = value(field(e, "value"));
    Val out;
    out.dep = b.dep;
    for (SyntaxNode s : namedKids(e))
      if (s != field(e, "value"))
        out.dep = core::join(out.dep, value(s).dep);
    return out;
  }
  if (k == "integer" || k == "float" || k == "true" || k == "false" || k == "none")
    return v;
  if (k == "comparison_operator" || k == "boolean_operator" || k == "not_operator") {
    Val out;
    out.cond = cond(e);
    out.dep = out.cond->dependence();
    return out;
  }
  if (k == "lambda")
    return v;
  // Anything else: the strongest dependence of its parts.
  Val out;
  for (SyntaxNode c : namedKids(e))
    out.dep = core::join(out.dep, value(c).dep);
  return out;
}

Val Builder::callValue(SyntaxNode c) {
  SyntaxNode fn = field(c, "function");
  const std::string q = qualified(fn);
  const std::string l = lastPart(q.empty() ? std::string(text(fn)) : q);
  Val v;
  if (has(api().worldSizeFunctions, q) || (startsWith(q, "torch.distributed.") &&
                                           (l == "get_world_size" || l == "is_initialized" ||
                                            l == "is_available" || l == "get_backend")))
    return v;
  if (has(api().localFunctions, q) || has(api().localFunctions, l) ||
      has(api().localMethods, l)) {
    v.dep = Dep::Local;
    return v;
  }
  if (has(api().fileProbes, q)) {
    v.dep = Dep::Local;
    return v;
  }
  // A collective's result is the same on every rank.
  if (startsWith(q, "torch.distributed.") || (is(fn, "attribute") && has(api().agreeingMethods, l)))
    return v;
  if (is(fn, "attribute")) {
    const std::string recv = str(field(fn, "object"));
    auto o = objects_.find(recv);
    if (o != objects_.end() && o->second == ObjKind::Metric && l == "compute")
      return Val{Dep::Uniform, RankKind::None, std::nullopt, true};
    // Moving or converting a value keeps its dependence: `x.to(local_rank)`.
    if (l == "to" || l == "cuda" || l == "cpu" || l == "float" || l == "half" || l == "detach" ||
        l == "clone" || l == "contiguous" || l == "bfloat16" || l == "double")
      return value(field(fn, "object"));
  }
  if (q == "torch.device")
    return v;
  // A DistributedSampler pads every rank to the same number of samples, and a
  // loader over it has the same length everywhere.
  if (kindOfCtor(c) == ObjKind::DataLoader || endsWith(q, "DistributedSampler"))
    return v;
  // User helpers: a predicate on the rank keeps its condition.
  auto f = fns_.find(resolveCallee(fn));
  const std::optional<Cond> helperCond =
      f != fns_.end() ? f->second.returnsCond : std::optional<Cond>();
  if (helperCond) {
    v.dep = helperCond->dependence();
    v.cond = helperCond;
    return v;
  }
  if (is(fn, "attribute") && (has(api().mainProcessAttributes, l) ||
                              has(api().localMainProcessAttributes, l))) {
    // trainer.is_world_process_zero(), state.is_local_main_process()
    Cond mc = has(api().mainProcessAttributes, l) ? Cond::rankCmp(core::CmpOp::EQ, 0)
                                                  : Cond::atom("local-main", Dep::Rank);
    mc.localMain = !has(api().mainProcessAttributes, l);
    mc.text = str(c);
    v.cond = mc;
    v.dep = Dep::Rank;
    return v;
  }
  if (has(api().localMainProcessFunctions, q)) {
    Cond lm = Cond::atom("local-main", Dep::Rank);
    lm.localMain = true;
    lm.text = str(c);
    v.cond = lm;
    v.dep = Dep::Rank;
    return v;
  }
  if (has(api().mainProcessFunctions, q) || has(user_.mainProcessFunctions, q) ||
      has(user_.mainProcessFunctions, l)) {
    v.cond = Cond::rankCmp(core::CmpOp::EQ, 0);
    v.cond->text = str(c);
    v.dep = Dep::Rank;
    return v;
  }
  // Otherwise the strongest dependence of the receiver and the arguments.
  if (is(fn, "attribute"))
    v.dep = value(field(fn, "object")).dep;
  for (const auto &a : args(c))
    if (!deviceName(a.name) && !deviceName(a.text))
      v.dep = core::join(v.dep, value(a.value).dep);
  return v;
}

Cond Builder::atom(SyntaxNode e, Dep d) {
  // The same spelling in another function is another value (`flag` there may
  // be agreed, here not); within a function it is one decision.
  Cond c = Cond::atom(fnKey() + ":" + str(e), d);
  c.text = str(e);
  c.loc = 0;
  return c;
}

// Every leaf of a condition is tested where the condition is written: the
// core reports a decision once per position.
void stamp(Cond &c, Loc at) {
  if (c.loc == 0)
    c.loc = at;
  for (auto &k : c.kids)
    stamp(k, at);
}

bool intLiteral(std::string_view t, std::int64_t &out) {
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

Cond Builder::cond(SyntaxNode e) {
  e = unparen(e);
  const std::string_view k = kindOf(e);
  if (k == "not_operator")
    return Cond::negate(cond(field(e, "argument")));
  if (k == "boolean_operator") {
    Cond a = cond(field(e, "left")), b = cond(field(e, "right"));
    std::string op = str(field(e, "operator"));
    Cond out = op == "and" ? Cond::both(a, b) : Cond::either(a, b);
    out.text = str(e);
    return out;
  }
  if (k == "true" || k == "false")
    return Cond::constant(k == "true");
  if (k == "comparison_operator" && namedChildCount(e) == 2) {
    SyntaxNode lhs = namedChild(e, 0), rhs = namedChild(e, 1);
    std::string op;
    for (SyntaxNode c : allKids(e)) {
      if (!isNamed(c))
        op += (op.empty() ? "" : " ") + str(c);
    }
    // rank-valued side and a literal or literal list
    auto evalSide = [&](SyntaxNode side, std::int64_t &mod, std::optional<RankKind> &rk) {
      side = unparen(side);
      mod = 0;
      if (is(side, "binary_operator") && str(field(side, "operator")) == "%") {
        std::int64_t m = 0;
        rk = rankSource(field(side, "left"));
        if (rk && intLiteral(text(field(side, "right")), m))
          mod = m;
        else if (rk && value(field(side, "right")).dep == Dep::Uniform) {
          mod = -1; // rank % n with n known only at run time: one rank per group of n
        } else
          rk.reset();
        return;
      }
      rk = rankSource(side);
    };
    std::int64_t modL = 0, modR = 0, lit = 0;
    std::optional<RankKind> rkL, rkR;
    evalSide(lhs, modL, rkL);
    evalSide(rhs, modR, rkR);
    SyntaxNode other = rhs;
    std::int64_t mod = modL;
    std::optional<RankKind> rk = rkL;
    bool flipped = false;
    if (!rkL && rkR) {
      other = lhs;
      mod = modR;
      rk = rkR;
      flipped = true;
    }
    if (rk) {
      std::vector<std::int64_t> lits;
      SyntaxNode o = unparen(other);
      auto litOf = [&](SyntaxNode x, std::int64_t &out) {
        x = unparen(x);
        if (is(x, "unary_operator") && str(field(x, "operator")) == "-" &&
            intLiteral(text(field(x, "argument")), out)) {
          out = -out;
          return true;
        }
        return intLiteral(text(x), out);
      };
      if ((op == "in" || op == "not in") && (is(o, "list") || is(o, "tuple") || is(o, "set"))) {
        for (SyntaxNode x : namedKids(o)) {
          if (!litOf(x, lit)) {
            lits.clear();
            break;
          }
          lits.push_back(lit);
        }
      } else if (litOf(o, lit)) {
        lits.push_back(lit);
      }
      // A rank is never negative: `local_rank == -1` (not distributed) is
      // false in every distributed run, `!= -1` true.
      const bool eqLike = op == "==" || op == "in" || op == "is";
      const bool neLike = op == "!=" || op == "not in" || op == "is not";
      if (!lits.empty() && (eqLike || neLike)) {
        std::vector<std::int64_t> kept;
        for (auto x : lits)
          if (x >= 0 || mod != 0)
            kept.push_back(x);
        if (kept.empty()) {
          Cond k = Cond::constant(neLike);
          k.text = str(e);
          return k;
        }
        lits = kept;
      }
      if (!lits.empty()) {
        core::CmpOp cop = core::CmpOp::EQ;
        bool known = true;
        if (op == "==" || op == "in" || op == "is")
          cop = core::CmpOp::EQ;
        else if (op == "!=" || op == "not in" || op == "is not")
          cop = core::CmpOp::NE;
        else if (op == "<")
          cop = flipped ? core::CmpOp::GT : core::CmpOp::LT;
        else if (op == "<=")
          cop = flipped ? core::CmpOp::GE : core::CmpOp::LE;
        else if (op == ">")
          cop = flipped ? core::CmpOp::LT : core::CmpOp::GT;
        else if (op == ">=")
          cop = flipped ? core::CmpOp::LE : core::CmpOp::GE;
        else
          known = false;
        if (known && (*rk == RankKind::Local || mod == -1)) {
          // The node-local rank: is the test true on local rank 0 only?
          // `in`/`==`: some literal matches; `not in`/`!=`: none does.
          const bool every = op == "not in" || op == "!=" || op == "is not";
          auto test = [&](std::int64_t r) {
            bool any = false, all = true;
            for (auto x : lits) {
              const bool one = core::compare(cop, r, x);
              any = any || one;
              all = all && one;
            }
            return every ? all : any;
          };
          const bool zero = test(0), others = test(1) || test(2);
          Cond c = Cond::atom("local-main", Dep::Rank);
          c.localMain = true;
          c.text = str(e);
          if (zero && !others)
            return c;
          if (!zero && others) {
            Cond n = Cond::negate(c);
            n.text = str(e);
            return n;
          }
          return atom(e, Dep::Rank);
        }
        if (known) {
          Cond out;
          bool first = true;
          for (auto x : lits) {
            Cond one = Cond::rankCmp(cop, x, mod > 0 ? mod : 0);
            one.text = str(e);
            if (first)
              out = one;
            else
              out = (op == "not in") ? Cond::both(out, one) : Cond::either(out, one);
            first = false;
          }
          out.text = str(e);
          return out;
        }
      }
      return atom(e, Dep::Rank);
    }
  }
  if (k == "comparison_operator" || k == "boolean_operator" || k == "not_operator") {
    // Not a rank test: an opaque decision on whatever its operands depend on.
    Dep d = Dep::Uniform;
    for (SyntaxNode c : namedKids(e))
      d = core::join(d, value(c).dep);
    return atom(e, d);
  }
  // A name bound to a condition: `is_main = rank == 0`, `accelerator.is_main_process`.
  Val v = value(e);
  if (v.cond) {
    Cond c = *v.cond;
    if (c.text.empty())
      c.text = str(e);
    return c;
  }
  if (v.rank != RankKind::None) {
    // `if rank:` is `rank != 0`
    if (v.rank == RankKind::Global) {
      Cond c = Cond::rankCmp(core::CmpOp::NE, 0);
      c.text = str(e);
      return c;
    }
    Cond c = Cond::atom("local-main", Dep::Rank);
    c.localMain = true;
    Cond n = Cond::negate(c);
    n.text = str(e);
    return n;
  }
  Cond c = atom(e, v.dep);
  // `os.path.exists(path)`: a create-once cache
  if (is(e, "call") && has(api().fileProbes, qualified(field(e, "function"))))
    c.probesFile = true;
  return c;
}

void Builder::bind(SyntaxNode target, const Val &v) {
  target = unparen(target);
  if (is(target, "identifier")) {
    env_.vars[str(target)] = v;
  } else if (is(target, "attribute")) {
    env_.vars[str(target)] = v;
  } else if (is(target, "pattern_list") || is(target, "tuple_pattern") ||
             is(target, "list_pattern") || is(target, "tuple") || is(target, "list")) {
    for (SyntaxNode t : namedKids(target))
      bind(t, Val{v.dep, RankKind::None, std::nullopt});
  }
}

void Builder::bindTargets(SyntaxNode target, Dep d) { bind(target, Val{d, RankKind::None, {}}); }

bool Builder::isLoaderIterable(SyntaxNode it) const {
  it = unparen(it);
  // `tqdm(loader) if rank == 0 else loader`: either way the same batches.
  if (is(it, "conditional_expression") && namedChildCount(it) == 3)
    return isLoaderIterable(namedChild(it, 0)) || isLoaderIterable(namedChild(it, 2));
  if (is(it, "call")) {
    std::string l = lastPart(qualified(field(it, "function")));
    if (l == "enumerate" || l == "tqdm" || l == "zip" || l == "iter") {
      for (SyntaxNode a : namedKids(field(it, "arguments")))
        if (isLoaderIterable(a))
          return true;
      return false;
    }
    return kindOfCtor(it) == ObjKind::DataLoader;
  }
  std::string t(text(it));
  auto o = objects_.find(t);
  if (o != objects_.end() && o->second == ObjKind::DataLoader)
    return true;
  std::string lower = t;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  return lower.find("loader") != std::string::npos || lower.find("batches") != std::string::npos ||
         lower.find("dataset") != std::string::npos || lower.find("iterator") != std::string::npos;
}

// ---------------------------------------------------------------------------
// Statements

std::string Builder::resolveCallee(SyntaxNode fn) const {
  if (is(fn, "identifier")) {
    std::string n = str(fn);
    // innermost definition first: a nested helper, then a module function
    std::string scope = curFn_;
    while (!scope.empty()) {
      std::string key = scope;
      key += '.';
      key += n;
      if (fns_.count(key))
        return key;
      auto dot = scope.rfind('.');
      scope = dot == std::string::npos ? "" : scope.substr(0, dot);
    }
    return fns_.count(n) ? n : "";
  }
  if (!is(fn, "attribute"))
    return "";
  const std::string obj = str(field(fn, "object"));
  std::string cls;
  if (obj == "self")
    cls = curClass_;
  else if (auto it = instances_.find(obj); it != instances_.end())
    cls = it->second;
  if (cls.empty())
    return "";
  // The method of the class, or of a base class defined in this module.
  const std::string m = str(field(fn, "attribute"));
  for (int depth = 0; depth < 8 && !cls.empty(); ++depth) {
    for (const auto &[key, fi] : fns_)
      if (fi.className == cls && fi.name == m)
        return key;
    auto b = classBases_.find(cls);
    cls = b == classBases_.end() || b->second.empty() ? "" : lastPart(b->second.front());
  }
  return "";
}

void Builder::call(SyntaxNode c, std::vector<Node> &out) {
  SyntaxNode fn = field(c, "function");
  const std::string q = qualified(fn);
  const std::string l = lastPart(q.empty() ? std::string(text(fn)) : q);
  const std::string recv = is(fn, "attribute") ? str(field(fn, "object")) : "";
  auto as = args(c);
  auto objKind = [&](const std::string &name) {
    auto it = objects_.find(name);
    return it == objects_.end() ? ObjKind::None : it->second;
  };
  auto event = [&](EventKind k, std::string name) {
    out.push_back(Node::makeEvent(k, std::move(name), loc(c)));
  };
  const bool dist = startsWith(q, "torch.distributed.") &&
                    q.find('.', std::string("torch.distributed.").size()) == std::string::npos;

  // Environment reads and settings (async error handling)
  if ((q == "os.environ.get" || q == "os.getenv" || q == "environ.get") && !as.empty() &&
      as[0].name.empty())
    envRead(as[0].value, c);
  if ((q == "os.putenv" || q == "os.environ.setdefault") && as.size() >= 2)
    envSet(as[0].value, as[1].value, c);
  if (q == "os.environ.update")
    for (const auto &a : as)
      if (!a.name.empty())
        envSetNamed(std::string(a.name), a.value, c);

  // Process groups
  if ((dist || q == "init_process_group" || q == "new_group") &&
      (l == "init_process_group" || l == "new_group")) {
    core::ProcessGroupCreation pg;
    pg.kind = core::ProcessGroupCreation::Kind::Init;
    pg.loc = loc(c);
    pg.api = l;
    const PyArg *b = arg(as, "backend", l == "init_process_group" ? 0 : 3);
    if (b) {
      std::string t(b->text);
      t.erase(std::remove(t.begin(), t.end(), '"'), t.end());
      t.erase(std::remove(t.begin(), t.end(), '\''), t.end());
      if (t == "nccl" || t == "gloo" || t == "mpi" || t == "cpu:gloo,cuda:nccl")
        pg.backend = t;
    }
    pg.timeoutGiven = arg(as, "timeout", l == "init_process_group" ? 3 : 1) != nullptr;
    bool splat = false;
    for (const auto &a : as)
      splat = splat || is(a.value, "dictionary_splat") || is(a.value, "list_splat");
    if (splat)
      pg.timeoutGiven = true; // *args / **kwargs may carry it
    pg.fixAnchor = argsEnd(c);
    // No peer to wait for: a test backend, or a group of one process.
    const PyArg *ws = arg(as, "world_size", 4);
    const bool single = ws && ws->text == "1";
    const PyArg *bk = arg(as, "backend", 0);
    const bool fake = bk && (bk->text == "\"fake\"" || bk->text == "'fake'");
    if (!single && !fake)
      facts().processGroups.push_back(pg);
    if (l == "new_group")
      event(EventKind::Collective, "new_group");
    return;
  }

  // Data loaders
  if (kindOfCtor(c) == ObjKind::DataLoader) {
    core::DataLoaderCreation dl;
    dl.loc = loc(c);
    dl.api = lastPart(q);
    dl.function = fnKey();
    auto state = [&](const char *name, int pos, Loc &at) {
      const PyArg *a = arg(as, name, pos);
      if (!a)
        return core::ArgState::Absent;
      if (a->text == "True")
        return core::ArgState::True;
      if (a->text == "False") {
        at = loc(a->value);
        return core::ArgState::False;
      }
      return core::ArgState::Unknown;
    };
    if (const PyArg *w = arg(as, "num_workers", 5)) {
      std::int64_t n = 0;
      dl.numWorkersText = std::string(w->text);
      dl.numWorkers = intLiteral(w->text, n)
                          ? (n > 0 ? core::DataLoaderCreation::Workers::Positive
                                   : core::DataLoaderCreation::Workers::Zero)
                          : core::DataLoaderCreation::Workers::Unknown;
    }
    dl.persistentWorkers = state("persistent_workers", 13, dl.persistentWorkersLoc);
    dl.pinMemory = state("pin_memory", 7, dl.pinMemoryLoc);
    for (const auto &a : as)
      if (is(a.value, "dictionary_splat") || is(a.value, "list_splat")) {
        // **loader_kwargs: the options may be in there
        if (dl.persistentWorkers == core::ArgState::Absent)
          dl.persistentWorkers = core::ArgState::Unknown;
        if (dl.pinMemory == core::ArgState::Absent)
          dl.pinMemory = core::ArgState::Unknown;
        if (dl.numWorkers == core::DataLoaderCreation::Workers::Absent)
          dl.numWorkers = core::DataLoaderCreation::Workers::Zero; // unknown: say nothing
      }
    dl.argsEnd = argsEnd(c);
    const PyArg *ds = arg(as, "dataset", 0);
    dl.loops = loopInfos(ds ? ds->value : SyntaxNode{});
    // A sampler over the loop's indices (k-fold) is one loader per input too.
    for (const char *k : {"sampler", "batch_sampler"})
      if (const PyArg *sa = arg(as, k, 99)) {
        auto more = loopInfos(sa->value);
        for (size_t i = 0; i < more.size() && i < dl.loops.size(); ++i)
          dl.loops[i].datasetDependsOnLoop |= more[i].datasetDependsOnLoop;
      }
    dl.storedInContainer = storedInContainer(c);
    facts().dataLoaders.push_back(dl);
    return;
  }

  // Explicit collectives
  if (has(api().collectiveFunctions, q))
    return event(EventKind::Collective, q);
  if (dist && onSubgroup(text(field(c, "arguments"))) &&
      (has(api().barriers, l) || has(api().collectives, l)) && l != "new_group")
    return event(EventKind::PointToPoint, l + " on a subgroup");
  if (dist) {
    if (has(api().barriers, l))
      return event(EventKind::Barrier, l);
    if (has(api().pointToPoint, l))
      return event(EventKind::PointToPoint, l);
    if (has(api().collectives, l)) {
      event(EventKind::Collective, l);
      // The output buffers are agreed once the call returns.
      const PyArg *outArg = as.empty() ? nullptr : &as[0];
      if (outArg && (l == "all_reduce" || l == "broadcast" || l == "broadcast_object_list" ||
                     l == "all_gather" || l == "all_gather_object" || l == "all_gather_into_tensor"))
        bind(outArg->value, Val{Dep::Uniform, RankKind::None, std::nullopt, true});
      // reduce/gather/scatter leave each rank with its own result.
      else if (outArg && (l == "reduce" || l == "gather" || l == "scatter" || l == "reduce_scatter" ||
                          l == "all_to_all" || l == "all_to_all_single" || l == "gather_object" ||
                          l == "scatter_object_list" || l == "reduce_scatter_tensor"))
        bind(outArg->value, Val{Dep::Local, RankKind::None, std::nullopt, false});
      return;
    }
  }
  if (has(user_.collectiveFunctions, q) || has(user_.collectiveFunctions, l))
    return event(EventKind::Collective, l);
  if (has(user_.barrierFunctions, q) || has(user_.barrierFunctions, l))
    return event(EventKind::Barrier, l);

  // Accelerate and Lightning wrappers
  if (!recv.empty() && objKind(recv) == ObjKind::Subgroup)
    return; // its collectives run on a group of some ranks (see ObjKind)
  if (!recv.empty() && (objKind(recv) == ObjKind::Accelerator || recv == "accelerator" ||
                        recv == "self.accelerator" || endsWith(recv, "strategy") ||
                        (recv == "self" && isLightningModule(curClass_)) ||
                        recv == "self.fabric" || recv == "fabric")) {
    if (has(api().wrapperBarriers, l))
      return event(EventKind::Barrier, recv + "." + l);
    if (has(api().wrapperCollectives, l))
      return event(EventKind::Collective, recv + "." + l);
    if (l == "backward" && (objKind(recv) == ObjKind::Accelerator || recv == "accelerator" ||
                            recv == "fabric" || recv == "self.fabric")) {
      if (noSync_ == 0)
        event(EventKind::Collective, "backward (DDP gradient allreduce)");
      return;
    }
    if (l == "log" && recv == "self") {
      for (const auto &a : as)
        if (a.name == "sync_dist" && a.text != "False")
          return event(EventKind::Collective, "self.log(sync_dist=True)");
    }
  }

  // Implicit collectives of wrapped models and friends
  if (is(fn, "identifier") || is(fn, "attribute")) {
    ObjKind k = objKind(str(fn));
    if (k == ObjKind::Ddp)
      return event(EventKind::Collective,
                   "forward of the DistributedDataParallel model '" + str(fn) +
                       "' (buffer broadcast)");
    if (k == ObjKind::Prepared)
      return event(EventKind::Collective,
                   "forward of the model '" + str(fn) +
                       "' prepared by accelerate (DDP buffer broadcast or FSDP all-gather)");
    if (k == ObjKind::Fsdp)
      return event(EventKind::Collective,
                   "forward of the FSDP model '" + str(fn) + "' (parameter all-gather)");
  }
  if (!recv.empty()) {
    ObjKind k = objKind(recv);
    if (l == "backward" && hasDdp_ && noSync_ == 0 && as.empty())
      return event(EventKind::Collective, "backward (DDP gradient allreduce)");
    if ((k == ObjKind::Fsdp && l == "state_dict" && fullStateDict_) ||
        (l == "state_dict" && contains(fullStateScopes_, recv)))
      return event(EventKind::Collective, recv + ".state_dict() (FSDP full state dict all-gather)");
    if (l == "consolidate_state_dict")
      return event(EventKind::Collective, recv + ".consolidate_state_dict()");
    if (k == ObjKind::Metric && (l == "compute" || l == "sync"))
      return event(EventKind::Collective, recv + "." + l + "() (torchmetrics state sync)");
    if (has(api().fsdpCollectiveFunctions, l) && (startsWith(q, "torch.distributed") ||
                                                  recv == "FSDP" || recv == "FullyShardedDataParallel"))
      return event(EventKind::Collective, l);
  }
  if (has(api().fsdpCollectiveFunctions, l) && startsWith(q, "torch.distributed"))
    return event(EventKind::Collective, l);

  // Checkpoint and file writes
  if (has(api().checkpointWriters, q) || has(user_.checkpointWriters, q) ||
      has(user_.checkpointWriters, l)) {
    const PyArg *p = arg(as, "f", 1);
    if (p && (memoryFiles_.count(std::string(p->text)) ||
              p->text.find("BytesIO(") != std::string_view::npos))
      return; // serialised into memory, not a file
    Node n = Node::makeEvent(EventKind::CheckpointWrite, q, loc(c));
    if (p)
      n.pathDep = value(p->value).dep;
    out.push_back(std::move(n));
    return;
  }
  if (q == "open" || q == "io.open" || q == "builtins.open") {
    const PyArg *mode = arg(as, "mode", 1);
    if (mode && mode->text.find_first_of("wax+") != std::string_view::npos) {
      Node n = Node::makeEvent(EventKind::FileWrite, "open", loc(c));
      if (const PyArg *p = arg(as, "file", 0))
        n.pathDep = value(p->value).dep;
      out.push_back(std::move(n));
    }
    return;
  }
  if (has(api().fileWriters, q) || (is(fn, "attribute") && has(api().fileWriteMethods, l))) {
    Node n = Node::makeEvent(EventKind::FileWrite, q.empty() ? l : q, loc(c));
    out.push_back(std::move(n));
    return;
  }

  // Exits
  if (has(api().exitFunctions, q)) {
    // sys.exit raises SystemExit; os._exit ends the process: either way this
    // rank is gone and the others wait in their next collective.
    out.push_back(Node::makeExit(ExitKind::Throw, loc(c)));
    return;
  }

  // Calls of functions of this module
  std::string key = resolveCallee(fn);
  if (!key.empty()) {
    Loc at = loc(c);
    out.push_back(Node::makeCall(key, fns_[key].name, at));
    core::HelperCall hc;
    hc.loc = at;
    hc.caller = fnKey();
    hc.callee = key;
    hc.calleeName = str(fn);
    hc.loops = loopInfos(SyntaxNode{});
    // Called with the loop's element (`make_loaders(fold)`): per input.
    for (const auto &a : as) {
      auto more = loopInfos(a.value);
      for (size_t i = 0; i < more.size() && i < hc.loops.size(); ++i)
        hc.loops[i].datasetDependsOnLoop |= more[i].datasetDependsOnLoop;
    }
    hc.storedInContainer = storedInContainer(c);
    facts().calls.push_back(hc);
    return;
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
  env_ = joinEnv(afterThen, env_);
  return Node::makeIf(cc, Node::block(std::move(t)), Node::block(std::move(f)), at);
}

void Builder::statement(SyntaxNode s, std::vector<Node> &out) {
  const std::string_view k = kindOf(s);
  if (k == "expression_statement") {
    for (SyntaxNode e : namedKids(s)) {
      if (is(e, "assignment") || is(e, "augmented_assignment")) {
        SyntaxNode right = field(e, "right"), left = field(e, "left");
        expr(right, out);
        // os.environ["X"] = "1"
        if (is(left, "subscript") &&
            (qualified(field(left, "value")) == "os.environ" || qualified(field(left, "value")) == "environ"))
          envSet(field(left, "subscript"), right, e);
        // A name assigned from the loop variable is the loop's too.
        if (!loops_.empty() && is(left, "identifier")) {
          bool fromLoop = false;
          std::function<void(SyntaxNode)> uses = [&](SyntaxNode x) {
            if (is(x, "identifier") && loops_.back().vars.count(str(x)))
              fromLoop = true;
            for (SyntaxNode kk : namedKids(x))
              uses(kk);
          };
          uses(right);
          if (fromLoop)
            loops_.back().vars.insert(str(left));
        }
        if (right.isNull())
          continue;
        Val v = value(right);
        if (is(e, "augmented_assignment")) {
          Val old = value(left);
          v = joinVal(old, v);
        }
        // A loss, a batch or logits computed by a call are this rank's own
        // data, even when the call's inputs are not known here.
        if (is(left, "identifier") && v.dep == Dep::Uniform && !v.agreed && !v.cond &&
            perRankDataName(text(left)) &&
            (is(unparen(right), "call") || is(unparen(right), "subscript") ||
             is(unparen(right), "attribute")))
          v.dep = Dep::Local;
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
        }
      } else {
        expr(e, out);
      }
    }
    return;
  }
  if (k == "if_statement") {
    std::vector<SyntaxNode> alts;
    for (uint32_t i = 0; i < namedChildCount(s); ++i) {
      SyntaxNode c = namedChild(s, i);
      if (is(c, "elif_clause") || is(c, "else_clause"))
        alts.push_back(c);
    }
    expr(field(s, "condition"), out);
    Loc at = loc(s);
    m_.ifNodes[at] = s;
    // `if __name__ == "__main__":` is the program's entry, not a decision.
    out.push_back(ifChain(field(s, "condition"), field(s, "consequence"), alts, 0, at));
    return;
  }
  if (k == "for_statement") {
    SyntaxNode left = field(s, "left"), right = field(s, "right");
    expr(right, out);
    // enumerate/tqdm/trange wrap the iterable: their other arguments (desc=,
    // disable=rank != 0) do not change the trip count.
    SyntaxNode iter = unparen(right);
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
    bool loader = isLoaderIterable(iter);
    Dep trip = loader ? Dep::Uniform : it.dep;
    Dep elems = loader ? Dep::Local : it.dep;
    LoopCtx lc;
    lc.text = str(right);
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
    bindTargets(left, elems);
    // `for step, batch in enumerate(loader)`: the index is the same on every rank.
    if (enumerated && (is(left, "pattern_list") || is(left, "tuple_pattern")) &&
        namedChildCount(left) == 2)
      bind(namedChild(left, 0), Val{trip, RankKind::None, std::nullopt, trip == Dep::Uniform});
    std::vector<Node> body;
    block(field(s, "body"), body);
    env_ = joinEnv(before, env_);
    loops_.pop_back();
    Node loop = Node::makeLoop(trip, lc.text, loc(right), Node::block(std::move(body)), at);
    loop.perEpoch = lc.perEpoch;
    out.push_back(std::move(loop));
    if (SyntaxNode e = field(s, "alternative"); !e.isNull())
      block(field(e, "body"), out);
    return;
  }
  if (k == "while_statement") {
    SyntaxNode c = field(s, "condition");
    expr(c, out);
    LoopCtx lc;
    lc.text = str(c);
    std::string lower = lc.text;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    lc.perEpoch = lower.find("epoch") != std::string::npos;
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
    Node loop = Node::makeLoop(trip, lc.text, loc(c), Node::block(std::move(body)), at);
    loop.perEpoch = lc.perEpoch;
    out.push_back(std::move(loop));
    return;
  }
  if (k == "with_statement") {
    int syncOff = 0;
    size_t fullScopes = 0;
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
          if (l == "no_sync" || l == "join")
            ++syncOff; // no_sync: no gradient allreduce; join: uneven inputs are handled
          if (l == "state_dict_type" && text(v).find("FULL_STATE_DICT") != std::string_view::npos) {
            fullStateDict_ = true;
            auto sa = args(v);
            if (!sa.empty() && sa[0].name.empty()) {
              fullStateScopes_.emplace_back(sa[0].text);
              ++fullScopes;
            }
          }
        }
        expr(v, out);
        if (!target.isNull() && namedChildCount(target) > 0)
          bindTargets(namedChild(target, 0), value(v).dep);
      }
    }
    noSync_ += syncOff;
    block(field(s, "body"), out);
    noSync_ -= syncOff;
    fullStateScopes_.resize(fullStateScopes_.size() - fullScopes);
    return;
  }
  if (k == "try_statement") {
    block(field(s, "body"), out);
    for (SyntaxNode c : namedKids(s)) {
      if (is(c, "except_clause") || is(c, "except_group_clause")) {
        SyntaxNode body{};
        for (SyntaxNode kk : namedKids(c))
          if (is(kk, "block"))
            body = kk;
        // A handler that cleans up and re-raises changes nothing: the exception
        // ends this process as it would have, and the launcher (torchrun,
        // mp.spawn) tears the other workers down.
        std::vector<SyntaxNode> hs = namedKids(body);
        while (!hs.empty() && is(hs.back(), "comment"))
          hs.pop_back();
        if (!hs.empty() && is(hs.back(), "raise_statement"))
          continue;
        std::vector<Node> h;
        Env before = env_;
        block(body, h);
        env_ = joinEnv(before, env_);
        if (!h.empty()) {
          // An exception can strike one rank alone.
          Cond ex = Cond::atom("exception@" + std::to_string(startByte(c)), Dep::Local);
          ex.errorCheck = true;
          ex.text = "an exception is raised";
          Loc at = loc(c);
          ex.loc = at;
          out.push_back(Node::makeIf(ex, Node::block(std::move(h)), Node::block(), at));
        }
      } else if (is(c, "else_clause")) {
        block(field(c, "body"), out);
      } else if (is(c, "finally_clause")) {
        for (SyntaxNode kk : namedKids(c))
          if (is(kk, "block"))
            block(kk, out);
      }
    }
    return;
  }
  if (k == "return_statement") {
    for (SyntaxNode e : namedKids(s))
      expr(e, out);
    out.push_back(Node::makeExit(ExitKind::Return, loc(s)));
    return;
  }
  if (k == "raise_statement") {
    for (SyntaxNode e : namedKids(s))
      expr(e, out);
    out.push_back(Node::makeExit(ExitKind::Throw, loc(s)));
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
  if (k == "function_definition" || k == "class_definition" || k == "decorated_definition" ||
      k == "import_statement" || k == "import_from_statement" || k == "comment" ||
      k == "pass_statement" || k == "global_statement" || k == "nonlocal_statement")
    return;
  if (k == "match_statement") {
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
    return;
  }
  if (k == "block") {
    block(s, out);
    return;
  }
  // assert, delete, print(...) as statements, ERROR nodes: their calls still count.
  for (SyntaxNode e : namedKids(s))
    expr(e, out);
}

void Builder::forwardFacts(const FnInfo &fi) {
  // `forward` of an nn.Module: branches on the input (its shape or values)
  // and what each arm runs.  The core decides whether the arms differ.
  if (fi.name != "forward" || fi.className.empty() || !isNnModule(fi.className))
    return;
  core::ForwardMethod fw;
  fw.className = fi.className;
  fw.loc = loc(fi.def);
  std::set<std::string> inputs;
  for (SyntaxNode p : namedKids(field(fi.def, "parameters"))) {
    SyntaxNode id = is(p, "identifier") ? p : field(p, "name");
    if (!is(id, "identifier") || str(id) == "self")
      continue;
    // A flag the caller chooses (`skip_head: bool = False`, `mode="train"`) is
    // the same on every rank: only tensors (and untyped, undefaulted
    // parameters) are the input.
    SyntaxNode def = field(p, "value"), type = field(p, "type");
    const std::string_view dk = kindOf(def);
    if (dk == "true" || dk == "false" || dk == "none" || dk == "integer" || dk == "float" ||
        dk == "string")
      continue;
    const std::string ty(text(type));
    if (ty == "bool" || ty == "int" || ty == "str" || ty == "float" || startsWith(ty, "Optional[bool"))
      continue;
    inputs.insert(str(id));
  }
  // What the module's attributes are: `self.drop = nn.Dropout(p)` runs no
  // parameters; `self.scale = nn.Parameter(...)` is a parameter tensor.
  std::map<std::string, std::string> attrType;
  for (const auto &[key, f] : fns_) {
    if (f.className != fi.className)
      continue;
    std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
      if (is(n, "assignment")) {
        SyntaxNode l = field(n, "left"), r = unparen(field(n, "right"));
        if (is(l, "attribute") && str(field(l, "object")) == "self" && is(r, "call"))
          attrType[str(field(l, "attribute"))] = lastPart(qualified(field(r, "function")));
      }
      for (SyntaxNode k : namedKids(n))
        scan(k);
    };
    scan(field(f.def, "body"));
  }
  static const std::set<std::string> parameterless = {
      "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "ReLU", "ReLU6", "GELU",
      "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Identity", "Flatten", "Unflatten",
      "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
      "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
      "AdaptiveMaxPool2d", "Upsample", "LeakyReLU", "ELU", "Mish", "Hardswish", "Softplus",
      "PixelShuffle", "ZeroPad2d", "Tanhshrink", "Softsign", "GLU"};
  std::function<bool(SyntaxNode)> fromInput = [&](SyntaxNode e) {
    if (is(e, "identifier"))
      return inputs.count(str(e)) > 0;
    if (is(e, "attribute")) {
      // Metadata that is the same on every rank does not count.
      static const std::set<std::string> meta = {"dtype", "device", "requires_grad", "training",
                                                 "layout"};
      const std::string a = str(field(e, "attribute"));
      if (meta.count(a) || startsWith(a, "is_")) // is_cuda, is_xpu, is_sparse: device metadata
        return false;
    }
    for (SyntaxNode k : namedKids(e))
      if (fromInput(k))
        return true;
    return false;
  };
  std::string shapeExpr;
  std::function<bool(SyntaxNode)> shapeOfInput = [&](SyntaxNode e) -> bool {
    e = unparen(e);
    if (is(e, "call")) {
      SyntaxNode fn = field(e, "function");
      std::string l = lastPart(std::string(text(fn)));
      if (is(fn, "attribute") && (l == "size" || l == "dim" || l == "numel" || l == "nelement") &&
          fromInput(field(fn, "object"))) {
        shapeExpr = str(e);
        return true;
      }
      if (is(fn, "identifier") && str(fn) == "len" && fromInput(field(e, "arguments"))) {
        shapeExpr = str(e);
        return true;
      }
    }
    if (is(e, "attribute")) {
      std::string l = str(field(e, "attribute"));
      if ((l == "shape" || l == "ndim") && fromInput(field(e, "object"))) {
        SyntaxNode p = parentOf(e);
        shapeExpr = is(p, "subscript") ? str(p) : str(e);
        return true;
      }
    }
    for (SyntaxNode k : namedKids(e))
      if (shapeOfInput(k))
        return true;
    return false;
  };
  std::function<void(SyntaxNode, core::ArmUse &)> uses = [&](SyntaxNode n, core::ArmUse &u) {
    if (is(n, "function_definition") || is(n, "lambda"))
      return;
    if (is(n, "call")) {
      SyntaxNode fn = field(n, "function");
      if (is(fn, "attribute") && str(field(fn, "object")) == "self") {
        std::string name = str(field(fn, "attribute"));
        bool method = false;
        for (const auto &[key, f] : fns_)
          if (f.className == fi.className && f.name == name && name != "forward") {
            method = true;
            uses(field(f.def, "body"), u);
          }
        auto t = attrType.find(name);
        static const std::set<std::string> reshaping = {
            "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d",
            "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
            "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample",
            "PixelShuffle", "ZeroPad2d"};
        if (!method && t != attrType.end() && parameterless.count(t->second)) {
          if (reshaping.count(t->second))
            u.shapes.push_back(name + "()");
        } else if (!method && !contains(u.modules, name)) {
          u.modules.push_back(name);
        }
        for (SyntaxNode k : namedKids(field(n, "arguments")))
          uses(k, u);
        return;
      }
    }
    if (is(n, "attribute") && str(field(n, "object")) == "self") {
      auto t = attrType.find(str(field(n, "attribute")));
      if (t != attrType.end() && t->second == "Parameter" &&
          !contains(u.params, t->first))
        u.params.push_back(t->first);
    }
    for (SyntaxNode k : namedKids(n))
      uses(k, u);
  };
  auto exits = [&](SyntaxNode blk, bool &returns, bool &throws) {
    for (SyntaxNode st : namedKids(blk)) {
      returns = returns || is(st, "return_statement");
      throws = throws || is(st, "raise_statement");
    }
  };
  auto merge = [](core::ArmUse a, const core::ArmUse &b) {
    for (const auto &m : b.modules)
      if (!contains(a.modules, m))
        a.modules.push_back(m);
    return a;
  };
  // Visit each block statement by statement, so an arm that falls through can
  // be given the rest of its block.
  std::function<void(SyntaxNode, int)> visitBlock = [&](SyntaxNode blk, int parent) {
    auto stmts = namedKids(blk);
    for (size_t i = 0; i < stmts.size(); ++i) {
      SyntaxNode st = stmts[i];
      if (is(st, "expression_statement"))
        for (SyntaxNode e : namedKids(st))
          if (is(e, "assignment") && is(field(e, "left"), "identifier") &&
              fromInput(field(e, "right")))
            inputs.insert(str(field(e, "left")));
      if (!is(st, "if_statement")) {
        // `return self.a(x) if x.sum() > 0 else self.b(x)`
        std::function<void(SyntaxNode)> ternaries = [&](SyntaxNode n) {
          if (is(n, "block") || is(n, "lambda") || is(n, "function_definition"))
            return;
          if (is(n, "conditional_expression") && namedChildCount(n) == 3) {
            SyntaxNode c = namedChild(n, 1);
            shapeExpr.clear();
            const bool sh = shapeOfInput(c);
            const bool va = !sh && fromInput(c);
            if (sh || va) {
              core::ForwardBranch br;
              br.kind = core::ForwardBranch::Kind::Conditional;
              br.loc = loc(n);
              br.condText = str(c);
              br.onShape = sh;
              br.onValues = va;
              br.shapeExpr = shapeExpr;
              br.parent = parent;
              for (uint32_t a : {0u, 2u}) {
                core::ForwardArm arm;
                uses(namedChild(n, a), arm.own);
                arm.effective = arm.own;
                br.arms.push_back(arm);
              }
              fw.branches.push_back(br);
              return;
            }
          }
          for (SyntaxNode k : namedKids(n))
            ternaries(k);
        };
        ternaries(st);
        for (SyntaxNode k : namedKids(st))
          if (is(k, "block"))
            visitBlock(k, parent);
        continue;
      }
      shapeExpr.clear();
      SyntaxNode condNode = field(st, "condition");
      const bool onShape = shapeOfInput(condNode);
      const bool onValues = !onShape && fromInput(condNode);
      const bool onRank = !onShape && !onValues && value(condNode).dep == Dep::Rank;
      core::ArmUse rest;
      for (size_t j = i + 1; j < stmts.size(); ++j)
        uses(stmts[j], rest);
      core::ForwardBranch br;
      br.kind = core::ForwardBranch::Kind::If;
      br.loc = loc(st);
      br.condText = str(condNode);
      br.onShape = onShape;
      br.onValues = onValues;
      br.onRank = onRank;
      br.shapeExpr = shapeExpr;
      br.parent = parent;
      std::vector<SyntaxNode> armBlocks{field(st, "consequence")};
      bool hasElse = false;
      for (SyntaxNode a : namedKids(st)) {
        if (is(a, "elif_clause"))
          armBlocks.push_back(field(a, "consequence"));
        else if (is(a, "else_clause")) {
          armBlocks.push_back(field(a, "body"));
          hasElse = true;
        }
      }
      for (SyntaxNode ab : armBlocks) {
        core::ForwardArm arm;
        uses(ab, arm.own);
        exits(ab, arm.returns, arm.throws);
        arm.effective = arm.returns || arm.throws ? arm.own : merge(arm.own, rest);
        br.arms.push_back(arm);
      }
      if (!hasElse) {
        core::ForwardArm none;
        none.effective = rest;
        br.arms.push_back(none);
      }
      const int me = (onShape || onValues || onRank) ? int(fw.branches.size()) : parent;
      if (onShape || onValues || onRank)
        fw.branches.push_back(br);
      for (SyntaxNode ab : armBlocks)
        visitBlock(ab, me);
    }
  };
  visitBlock(field(fi.def, "body"), -1);
  if (!fw.branches.empty())
    facts().forwards.push_back(std::move(fw));
}

void Builder::buildFunction(const FnInfo &fi) {
  curFn_ = fi.key;
  curClass_ = fi.className;
  loops_.clear();
  noSync_ = 0;
  env_ = paramEnv(fi);
  std::vector<Node> body;
  if (!fi.def.isNull())
    block(field(fi.def, "body"), body);
  buildFunctionRest(fi, std::move(body));
}

// Parameters: `rank`/`local_rank` in a distributed program, and the first
// parameter of a function started by mp.spawn (the process index).
Env Builder::paramEnv(const FnInfo &fi) {
  Env env;
  if (!fi.def.isNull()) {
    int i = 0;
    for (SyntaxNode p : namedKids(field(fi.def, "parameters"))) {
      SyntaxNode id = is(p, "identifier") ? p : field(p, "name");
      if (is(p, "typed_parameter") && namedChildCount(p) > 0)
        id = namedChild(p, 0); // `gpu_id: int` has no name field
      if (!is(id, "identifier"))
        continue;
      std::string name = str(id);
      if (name == "self" && i == 0)
        continue;
      Val v;
      const bool layer = !fi.className.empty() && isNnModule(fi.className);
      if (usesDist_ && !layer && has(api().rankParameters, name))
        v = Val{Dep::Rank, RankKind::Global, {}};
      else if (usesDist_ && !layer && has(api().localRankParameters, name))
        v = Val{Dep::Rank, RankKind::Local, {}};
      else if (i == 0 && spawned_.count(fi.name))
        v = Val{Dep::Rank, name == "rank" ? RankKind::Global : RankKind::Local, {}};
      if (v.dep != Dep::Uniform)
        env.vars[name] = v;
      ++i;
    }
  }
  return env;
}

void Builder::buildFunctionRest(const FnInfo &fi, std::vector<Node> body) {
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
  m_.program.functions.push_back(std::move(f));
  ++m_.functionsAnalysed;
  forwardFacts(fi);
}

PyModel Builder::run() {
  SyntaxNode root = tree_.root();
  collectImports(root);
  collectFunctions(root, "", "");
  collectObjects(root);
  // Helpers that answer "am I the main process?" or "what is my rank?".
  for (int round = 0; round < 2; ++round)
    for (auto &[key, fi] : fns_) {
      SyntaxNode body = field(fi.def, "body");
      auto stmts = namedKids(body);
      std::vector<SyntaxNode> real;
      for (SyntaxNode s : stmts)
        if (!is(s, "comment") && !(is(s, "expression_statement") && namedChildCount(s) == 1 &&
                                   is(namedChild(s, 0), "string")))
          real.push_back(s);
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
      if (rankSource(r)) {
        fi.returnsRank = true;
        continue;
      }
      Val v = value(r);
      if (v.cond && v.cond->dependence() == Dep::Rank)
        fi.returnsCond = v.cond;
      else if (!v.cond && (is(unparen(r), "comparison_operator") || is(unparen(r), "boolean_operator"))) {
        Cond c = cond(r);
        if (c.dependence() == Dep::Rank)
          fi.returnsCond = c;
      }
    }
  m_.positions.clear();
  m_.byteOffsets.clear();
  m_.ifNodes.clear();
  const bool usesCuda = facts().usesCuda;
  m_.program.facts = core::Facts{};
  facts().usesCuda = usesCuda;
  // Attributes and module globals assigned a rank anywhere (`self.rank = dist.get_rank()`,
  // `args.local_rank = int(os.environ["LOCAL_RANK"])`): two rounds settle chains.
  // Each function's assignments are read with its parameters bound
  // (`def __init__(self, gpu_id): self.gpu_id = gpu_id`).
  auto attrPass = [&](SyntaxNode body, const Env &params) {
    std::vector<SyntaxNode> stack{body};
    while (!stack.empty()) {
      SyntaxNode n = stack.back();
      stack.pop_back();
      if (is(n, "function_definition") || is(n, "class_definition"))
        continue; // their own pass
      if (is(n, "assignment")) {
        SyntaxNode left = field(n, "left");
        SyntaxNode right = field(n, "right");
        if (is(left, "attribute") && !right.isNull()) {
          env_ = params;
          Val v = value(right);
          if (v.dep == Dep::Rank)
            attrs_[str(left)] = v;
        }
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
  for (const auto &[key, fi] : fns_)
    buildFunction(fi);
  m_.program.distributed = usesDist_ || hasDdp_ || !facts().processGroups.empty();
  facts().language = core::SourceLanguage::Python;
  facts().versions.torchProduct = "PyTorch";
  return std::move(m_);
}

} // namespace

PyModel buildModel(const SyntaxTree &tree, const core::Wrappers &user) {
  Builder b(tree, user);
  return b.run();
}

} // namespace ddplint::pyfe
