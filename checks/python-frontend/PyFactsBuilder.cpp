// What the rules decided on facts read in a Python module (core::Facts):
// process groups and their timeouts, the environment it sets and reads, data
// loaders with their loops and options, and forward() methods' branches.
#include "PyBuilder.h"

namespace ddplint::pyfe::build {

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
    if (it->once)
      continue; // one pass builds one loader (CodeT5's `for criteria in ['best-f1']`)
    core::LoopInfo li;
    li.loc = it->loc;
    li.perEpoch = it->perEpoch;
    if (!datasetArg.isNull()) {
      std::function<void(SyntaxNode)> uses = [&](SyntaxNode x) {
        if (is(x, "identifier") && it->vars.count(str(x)))
          li.datasetDependsOnLoop = true;
        // MOSS-RLHF's PPO loop: `self.make_experiences()` fills
        // `self.replay_buffer`, then `DataLoader(ExperienceDataset(
        // self.replay_buffer, ...))`: each iteration's loader is over the
        // samples that iteration made, not the same data again.
        if ((is(x, "identifier") || (is(x, "attribute") && str(field(x, "object")) == "self")) &&
            !is(parentOf(x), "attribute") && refilledInLoop(str(x), it->body, startByte(datasetArg)))
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

// Whether the loop body, before `before`, grows `container` (`buf.append(x)`,
// `buf.extend(xs)`, `buf += [x]`) or calls a method of this class that grows or
// rebinds it (`self.make_experiences()` appending to `self.replay_buffer`).
bool Builder::refilledInLoop(const std::string &container, SyntaxNode body, unsigned before) const {
  if (body.isNull())
    return false;
  static const std::set<std::string> grows = {"append", "extend", "insert", "add", "update", "put"};
  auto mutates = [&](SyntaxNode n, bool rebinds) {
    if (is(n, "call") && is(field(n, "function"), "attribute") &&
        str(field(field(n, "function"), "object")) == container &&
        grows.count(str(field(field(n, "function"), "attribute"))))
      return true;
    // `buf += [x]`, not a counter's `step += 1`.
    if (is(n, "augmented_assignment") && str(field(n, "left")) == container) {
      SyntaxNode r = unparen(field(n, "right"));
      return is(r, "list") || is(r, "list_comprehension") || is(r, "tuple");
    }
    return rebinds && is(n, "assignment") && str(field(n, "left")) == container;
  };
  const bool attribute = container.rfind("self.", 0) == 0;
  bool found = false;
  forEachOwnNode(body, [&](SyntaxNode n) {
    if (startByte(n) >= before)
      return true;
    if (mutates(n, false)) {
      found = true;
      return false;
    }
    if (attribute && is(n, "call") && is(field(n, "function"), "attribute") &&
        str(field(field(n, "function"), "object")) == "self") {
      const std::string key = resolveCallee(field(n, "function"));
      if (auto f = fns_.find(key); f != fns_.end() && !f->second.def.isNull())
        forEachOwnNode(field(f->second.def, "body"), [&](SyntaxNode m) {
          found = found || mutates(m, true);
          return !found;
        });
    }
    return !found;
  });
  return found;
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
  if (!is(p, "assignment"))
    return false;
  if (is(field(p, "left"), "subscript"))
    return true;
  // `loader = build(...)` then `loaders.append(loader)` later in the block.
  SyntaxNode target = field(p, "left");
  SyntaxNode st = parentOf(p);
  if (!is(target, "identifier") || !is(st, "expression_statement"))
    return false;
  const std::string name = str(target);
  // A helper's result is the loader only when the name says so (`acc1 =
  // validate(...)` kept in a list is an accuracy, not a loader).
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  if (kindOfCtor(c) != ObjKind::DataLoader && lower.find("loader") == std::string::npos)
    return false;
  std::function<bool(SyntaxNode)> keeps = [&](SyntaxNode n) {
    if (is(n, "function_definition") || is(n, "class_definition"))
      return false;
    if (is(n, "call")) {
      const std::string l = lastPart(std::string(text(field(n, "function"))));
      if (l == "append" || l == "extend" || l == "insert" || l == "add")
        for (SyntaxNode a : namedKids(field(n, "arguments")))
          if (is(a, "identifier") && str(a) == name)
            return true;
    }
    if (is(n, "assignment") && is(field(n, "left"), "subscript") &&
        is(unparen(field(n, "right")), "identifier") && str(unparen(field(n, "right"))) == name)
      return true;
    for (SyntaxNode k : namedKids(n))
      if (keeps(k))
        return true;
    return false;
  };
  bool after = false;
  for (SyntaxNode sib : namedKids(parentOf(st))) {
    if (after && keeps(sib))
      return true;
    after = after || sib == st;
  }
  return false;
}

void Builder::forwardFacts(const FnInfo &fi) {
  // `forward` of an nn.Module: branches on the input (its shape or values)
  // and what each arm runs.  The core decides whether the arms differ.
  if (fi.name != "forward" || fi.className.empty() || !isNnModule(fi.className))
    return;
  // No gradient, so no gradient allreduce to mismatch.
  if (noGradDecorated(fi))
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
        // `self.disc_loss = hinge_d_loss` (or `a if c else b` of such): a
        // plain function of the module, or of torch.nn.functional, which
        // holds no parameters.
        if (is(l, "attribute") && str(field(l, "object")) == "self" &&
            !attrType.count(str(field(l, "attribute")))) {
          std::function<bool(SyntaxNode)> plainFunction = [&](SyntaxNode v) {
            v = unparen(v);
            if (is(v, "conditional_expression") && namedChildCount(v) == 3)
              return plainFunction(namedChild(v, 0)) && plainFunction(namedChild(v, 2));
            // `self.loss_fn = F.l1_loss` (ST-P3's losses): torch's functional API.
            if (is(v, "attribute"))
              return startsWith(qualified(v), "torch.nn.functional.");
            if (!is(v, "identifier"))
              return false;
            auto fn = fns_.find(str(v));
            return fn != fns_.end() && fn->second.className.empty();
          };
          if (plainFunction(r))
            attrType[str(field(l, "attribute"))] = "Callable";
        }
      }
      for (SyntaxNode k : namedKids(n))
        scan(k);
    };
    scan(field(f.def, "body"));
    // `self.activation = activation`, `self.mask_func = mask_func`: a callable
    // handed in for its effect on values (an activation, a masking function)
    // holds no parameters of this module.
    if (f.name == "__init__") {
      std::set<std::string> callables;
      for (SyntaxNode p : namedKids(field(f.def, "parameters"))) {
        SyntaxNode id = parameterName(p);
        if (!is(id, "identifier"))
          continue;
        const std::string n = str(id);
        const std::string ty(text(field(p, "type")));
        if (n == "activation" || n == "act" || endsWith(n, "_func") || endsWith(n, "_fn") ||
            endsWith(n, "_function") || ty.find("Callable") != std::string::npos)
          callables.insert(n);
      }
      std::function<void(SyntaxNode)> plain = [&](SyntaxNode n) {
        if (is(n, "assignment")) {
          SyntaxNode l = field(n, "left"), r = unparen(field(n, "right"));
          if (is(l, "attribute") && str(field(l, "object")) == "self" && is(r, "identifier") &&
              callables.count(str(r)) && !attrType.count(str(field(l, "attribute"))))
            attrType[str(field(l, "attribute"))] = "Callable";
        }
        if (!is(n, "function_definition") || n == f.def)
          for (SyntaxNode k : namedKids(n))
            plain(k);
      };
      plain(f.def);
    }
  }
  // A class of this module, an nn.Module itself, whose methods give their
  // attributes constants only (FastVideo's `Attn` wrapper of
  // scaled_dot_product_attention): it holds no parameters either.
  auto holdsNothing = [&](const std::string &cls) {
    auto b = classBases_.find(cls);
    if (b == classBases_.end() || b->second.size() != 1 ||
        (b->second.front() != "nn.Module" && b->second.front() != "torch.nn.Module" &&
         b->second.front() != "Module"))
      return false;
    bool any = false, holds = false;
    for (const auto &[key, f] : fns_) {
      if (f.className != cls || f.def.isNull())
        continue;
      any = true;
      std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
        if (holds)
          return;
        if (is(n, "assignment")) {
          SyntaxNode l = field(n, "left"), r = unparen(field(n, "right"));
          // Only constants: a module handed in (`self.fn = fn`) has parameters.
          if (is(l, "attribute") && str(field(l, "object")) == "self" &&
              !is(r, "integer") && !is(r, "float") && !is(r, "string") && !is(r, "true") &&
              !is(r, "false") && !is(r, "none"))
            holds = true;
        }
        for (SyntaxNode k : namedKids(n))
          scan(k);
      };
      scan(field(f.def, "body"));
    }
    return any && !holds;
  };
  for (auto &[attr, ty] : attrType)
    if (ty != "Callable" && holdsNothing(ty))
      ty = "Callable";
  static const std::set<std::string> parameterless = {
      "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "ReLU", "ReLU6", "GELU",
      "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Identity", "Flatten", "Unflatten",
      "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
      "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
      "AdaptiveMaxPool2d", "Upsample", "LeakyReLU", "ELU", "Mish", "Hardswish", "Softplus",
      "PixelShuffle", "ZeroPad2d", "Tanhshrink", "Softsign", "GLU", "Callable",
      // torch.nn's losses (LLaMA-Adapter's `nn.CrossEntropyLoss()` criterion);
      // not AdaptiveLogSoftmaxWithLoss, which has parameters, nor a project's
      // own `CenterLoss`, which may.
      "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
      "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "CTCLoss", "CosineEmbeddingLoss",
      "MarginRankingLoss", "TripletMarginLoss", "MultiLabelSoftMarginLoss", "SoftMarginLoss",
      "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MultiMarginLoss",
      "MultiLabelMarginLoss"};
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
      // `self.shortcut` is the module's attribute even when a local is named
      // `shortcut` too: only the object can carry the input.
      return fromInput(field(e, "object"));
    }
    for (SyntaxNode k : namedKids(e))
      if (fromInput(k))
        return true;
    return false;
  };
  // What can differ between ranks in one step is the data: a test that reads
  // the input tensor's contents (`x.sum() > 0`, `mask.any()`,
  // `torch.isnan(x).any()`).  A test of whether an argument was passed
  // (`temb is not None`), of a flag or an index the caller hands in
  // (`optimizer_idx == 0`) reads none: the caller passes the same on every rank.
  static const std::set<std::string> contentMethods = {
      "any",  "all",  "sum",    "max",    "min",     "mean",   "item",   "nonzero",
      "count_nonzero", "norm", "isnan", "isinf", "isfinite", "abs", "std", "var",
      "argmax", "argmin", "tolist", "numpy", "eq",   "ne",     "gt",      "lt",
      "ge",   "le",   "equal",  "allclose", "prod", "unique", "isclose"};
  std::function<bool(SyntaxNode)> readsContent = [&](SyntaxNode e) -> bool {
    e = unparen(e);
    if (is(e, "call")) {
      SyntaxNode fn = field(e, "function");
      const std::string l = lastPart(std::string(text(fn)));
      if (contentMethods.count(l)) {
        if (is(fn, "attribute") && fromInput(field(fn, "object")))
          return true;
        const std::string q = qualified(fn);
        if ((startsWith(q, "torch.") || startsWith(q, "numpy.") || startsWith(q, "np.")) &&
            fromInput(field(e, "arguments")))
          return true;
      }
    }
    for (SyntaxNode k : namedKids(e))
      if (readsContent(k))
        return true;
    return false;
  };
  std::string shapeExpr;
  std::function<bool(SyntaxNode)> shapeOfInput = [&](SyntaxNode e) -> bool {
    e = unparen(e);
    if (is(e, "call")) {
      SyntaxNode fn = field(e, "function");
      std::string l = lastPart(std::string(text(fn)));
      // The number of dimensions (`x.dim()`, `x.ndim`, `len(x.shape)`) is the
      // layout the caller chose (a class token, a view), not the batch: only
      // sizes are read as the data's shape.
      if (is(fn, "attribute") && (l == "size" || l == "numel" || l == "nelement") &&
          fromInput(field(fn, "object"))) {
        shapeExpr = str(e);
        return true;
      }
      if (is(fn, "identifier") && str(fn) == "len" && fromInput(field(e, "arguments"))) {
        SyntaxNode a = namedChildCount(field(e, "arguments")) == 1
                           ? unparen(namedChild(field(e, "arguments"), 0))
                           : SyntaxNode();
        const bool rankOfShape =
            (is(a, "attribute") && str(field(a, "attribute")) == "shape") ||
            (is(a, "call") && lastPart(std::string(text(field(a, "function")))) == "size" &&
             namedChildCount(field(a, "arguments")) == 0);
        if (rankOfShape)
          return false;
        shapeExpr = str(e);
        return true;
      }
    }
    if (is(e, "attribute")) {
      std::string l = str(field(e, "attribute"));
      if (l == "shape" && fromInput(field(e, "object"))) {
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
  // `if x.numel() == 0: return ...`: an empty input is handled apart from
  // every real batch (a degenerate case, not a branch on the data's shape).
  auto sizeOfInput = [&](SyntaxNode x) { // shapeOfInput, leaving shapeExpr as it was
    const std::string saved = shapeExpr;
    const bool shape = shapeOfInput(x);
    shapeExpr = saved;
    return shape;
  };
  auto emptinessTest = [&](SyntaxNode c) {
    c = unparen(c);
    if (is(c, "not_operator"))
      return sizeOfInput(field(c, "argument"));
    if (!is(c, "comparison_operator") || namedChildCount(c) != 2)
      return false;
    const std::string op = comparisonOperator(c);
    SyntaxNode a = unparen(namedChild(c, 0)), b = unparen(namedChild(c, 1));
    if (str(b) != "0" && str(a) == "0")
      std::swap(a, b);
    // The size itself (`x.numel()`, `len(x)`, `x.shape[0]`), not arithmetic on it
    // (`h.size(0) % 2 == 0` is a branch on the shape).
    if (str(b) != "0" || (op != "==" && op != "<=" && op != "!=" && op != ">") ||
        !(is(a, "call") || is(a, "subscript") || is(a, "attribute")))
      return false;
    return sizeOfInput(a);
  };
  // `if gt.shape[1] == 3:` (RIFE's IFNet: is a ground-truth frame stacked
  // on the channels?), `x.size(-1) == 4`: a channel count, which the
  // caller's layout fixes for every batch, as `x.dim()` is.  Only the
  // channel axis (1 or -1) against a small count; a length (`x.size(1) >
  // max_len`) or the batch axis (`x.shape[0] == 1`) stays the data's.
  auto channelTest = [&](SyntaxNode c) {
    c = unparen(c);
    if (!is(c, "comparison_operator") || namedChildCount(c) != 2)
      return false;
    const std::string op = comparisonOperator(c);
    if (op != "==" && op != "!=")
      return false;
    SyntaxNode a = unparen(namedChild(c, 0)), b = unparen(namedChild(c, 1));
    if (is(a, "integer"))
      std::swap(a, b);
    const std::string count = str(b);
    if (!is(b, "integer") || count.empty() || count.size() > 1 || count[0] < '1' || count[0] > '4')
      return false;
    std::string axis;
    if (is(a, "subscript") && is(unparen(field(a, "value")), "attribute") &&
        str(field(unparen(field(a, "value")), "attribute")) == "shape")
      axis = str(unparen(field(a, "subscript")));
    else if (is(a, "call") && lastPart(std::string(text(field(a, "function")))) == "size" &&
             namedChildCount(field(a, "arguments")) == 1)
      axis = str(unparen(namedChild(field(a, "arguments"), 0)));
    return (axis == "1" || axis == "-1") && sizeOfInput(a);
  };
  // `if not self.training and x.shape[1] > self.max_len:` (Amphion's
  // FastSpeech encoder): an arm only evaluation takes, where no gradient is
  // all-reduced.
  std::function<bool(SyntaxNode)> evalOnly = [&](SyntaxNode c) -> bool {
    c = unparen(c);
    if (is(c, "boolean_operator") && str(field(c, "operator")) == "and")
      return evalOnly(field(c, "left")) || evalOnly(field(c, "right"));
    return is(c, "not_operator") && str(unparen(field(c, "argument"))) == "self.training";
  };
  // `if mode == 'image':` (a string the caller picks), `if type(h) == list:`
  // (the layer's structure): the same for every batch, so not the data.
  std::function<bool(SyntaxNode)> modeTest = [&](SyntaxNode c) -> bool {
    c = unparen(c);
    if (is(c, "boolean_operator"))
      return modeTest(field(c, "left")) && modeTest(field(c, "right"));
    if (is(c, "not_operator"))
      return modeTest(field(c, "argument"));
    if (!is(c, "comparison_operator") || namedChildCount(c) != 2)
      return false;
    for (SyntaxNode side : {unparen(namedChild(c, 0)), unparen(namedChild(c, 1))}) {
      if (is(side, "string"))
        return true;
      if (is(side, "call") && str(field(side, "function")) == "type")
        return true;
    }
    return false;
  };
  // A rank within a model-parallel group (`self.expert_parallel_rank == 0`,
  // `dist.get_rank(self.p2p.pg) != self.rank`, a pipeline stage): each rank
  // of that group owns its own layers by design, and the data-parallel
  // replicas that reduce their gradients together share that rank.
  auto modelParallelRank = [&](SyntaxNode c) {
    std::string t(text(c));
    std::transform(t.begin(), t.end(), t.begin(), ::tolower);
    // The data-parallel rank is the replicas' own: a branch on it is one.
    if (t.find("data_parallel") != std::string::npos || t.find("dp_rank") != std::string::npos)
      return false;
    for (std::string_view w : {"parallel", "pipeline", "expert", "pp_rank", "tp_rank", "mp_rank", "stage"})
      if (t.find(w) != std::string::npos)
        return true;
    bool groupRank = false;
    std::function<void(SyntaxNode)> scan = [&](SyntaxNode n) {
      if (is(n, "call") && lastPart(qualified(field(n, "function"))) == "get_rank" &&
          !args(n).empty())
        groupRank = true;
      for (SyntaxNode k : namedKids(n))
        scan(k);
    };
    scan(c);
    return groupRank;
  };
  std::set<std::string> inMethods;
  // The class and the classes of this module it derives from: SEINE's
  // attention subclass calls `self._sliced_attention(...)` that its base
  // class defines, a method, not a submodule.
  std::set<std::string> lineage;
  for (std::vector<std::string> todo{fi.className}; !todo.empty() && lineage.size() < 16;) {
    std::string c = todo.back();
    todo.pop_back();
    if (c.empty() || !lineage.insert(c).second)
      continue;
    if (auto b = classBases_.find(c); b != classBases_.end())
      for (const auto &base : b->second)
        todo.push_back(lastPart(base));
  }
  std::function<void(SyntaxNode, core::ArmUse &)> uses = [&](SyntaxNode n, core::ArmUse &u) {
    if (is(n, "function_definition") || is(n, "lambda"))
      return;
    if (is(n, "call")) {
      SyntaxNode fn = field(n, "function");
      if (is(fn, "attribute") && str(field(fn, "object")) == "self") {
        std::string name = str(field(fn, "attribute"));
        bool method = false;
        for (const auto &[key, f] : fns_)
          if (!f.className.empty() && lineage.count(f.className) && f.name == name && name != "forward") {
            method = true;
            // Methods that call each other (or themselves) are read once per
            // chain: a recursive helper would otherwise recurse here forever.
            if (inMethods.insert(name).second) {
              uses(field(f.def, "body"), u);
              inMethods.erase(name);
            }
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
  // An arm that falls through runs the rest of its block too: its submodules
  // and its parameter tensors (`self.decoder(h) + self.bias` after the `if`).
  auto merge = [](core::ArmUse a, const core::ArmUse &b) {
    for (const auto &m : b.modules)
      if (!contains(a.modules, m))
        a.modules.push_back(m);
    for (const auto &p : b.params)
      if (!contains(a.params, p))
        a.params.push_back(p);
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
            const bool va = !sh && readsContent(c);
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
      const bool empty = emptinessTest(condNode) || modeTest(condNode) || channelTest(condNode) ||
                         evalOnly(condNode);
      const bool onShape = !empty && shapeOfInput(condNode);
      const bool onValues = !empty && !onShape && readsContent(condNode);
      const bool onRank = !onShape && !onValues && value(condNode).dep == Dep::Rank &&
                          !modelParallelRank(condNode);
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

// Environment reads and settings (async error handling).
void Builder::environmentCall(const CallSite &cs) {
  if ((cs.q == "os.environ.get" || cs.q == "os.getenv" || cs.q == "environ.get") && !cs.as.empty() &&
      cs.as[0].name.empty())
    envRead(cs.as[0].value, cs.c);
  if ((cs.q == "os.putenv" || cs.q == "os.environ.setdefault") && cs.as.size() >= 2)
    envSet(cs.as[0].value, cs.as[1].value, cs.c);
  if (cs.q == "os.environ.update")
    for (const auto &a : cs.as)
      if (!a.name.empty())
        envSetNamed(std::string(a.name), a.value, cs.c);
}

// dist.init_process_group / dist.new_group (new_group is a collective too).
// The catalog's process-group init that a call makes: by its qualified name,
// or (torch.distributed's, called without an import we saw) by its last name.
const core::PyProcessGroupInit *Builder::processGroupInit(const CallSite &cs) const {
  for (const auto &init : api().processGroupInits) {
    if (cs.q == init.name)
      return &init;
    if (cs.q == cs.l && startsWith(init.name, "torch.distributed.") && lastPart(init.name) == cs.l)
      return &init;
  }
  return nullptr;
}

// Whether a call runs whenever its function does: under no `if`, `try` or
// conditional expression, and after no `return` (`init_distributed_mode`
// returns early when the launcher set no rank: the script also runs as one
// process).
bool Builder::madeOnEveryPath(SyntaxNode call, int depth) const {
  SyntaxNode fn;
  for (SyntaxNode p = parentOf(call); !p.isNull(); p = parentOf(p)) {
    if (is(p, "function_definition")) {
      fn = p;
      break;
    }
    if (is(p, "if_statement") || is(p, "elif_clause") || is(p, "else_clause") ||
        is(p, "try_statement") || is(p, "except_clause") || is(p, "conditional_expression") ||
        is(p, "boolean_operator") || is(p, "for_statement") || is(p, "while_statement"))
      return false;
  }
  if (fn.isNull())
    return true;
  std::vector<SyntaxNode> stack{field(fn, "body")};
  while (!stack.empty()) {
    SyntaxNode s = stack.back();
    stack.pop_back();
    if (startByte(s) >= startByte(call) || is(s, "function_definition") ||
        is(s, "class_definition") || is(s, "lambda"))
      continue;
    if (is(s, "return_statement"))
      return false;
    for (SyntaxNode k : namedKids(s))
      stack.push_back(k);
  }
  // tacotron2's `init_distributed(...)`, called under `if
  // hparams.distributed_run:`: the helper's calls in this module decide.
  if (depth >= 3)
    return true;
  const std::string_view name = text(field(fn, "name"));
  std::vector<SyntaxNode> calls{tree_.root()};
  while (!calls.empty()) {
    SyntaxNode s = calls.back();
    calls.pop_back();
    if (is(s, "call")) {
      SyntaxNode f = field(s, "function");
      if (is(f, "attribute"))
        f = field(f, "attribute");
      if (is(f, "identifier") && text(f) == name && !madeOnEveryPath(s, depth + 1))
        return false;
    }
    for (SyntaxNode k : namedKids(s))
      calls.push_back(k);
  }
  return true;
}

// Code after an unconditional `exit()`, `sys.exit()`, `raise` or `return`
// in its block never runs (VMamba's analyze/eval.py: `exit()` and then the
// many-GPU init_process_group it replaced).
static bool afterExit(SyntaxNode at) {
  SyntaxNode st = at;
  while (!st.isNull() && !is(parentOf(st), "block") && !is(parentOf(st), "module"))
    st = parentOf(st);
  if (st.isNull())
    return false;
  for (SyntaxNode k : namedKids(parentOf(st))) {
    if (k == st)
      return false;
    if (is(k, "raise_statement") || is(k, "return_statement"))
      return true;
    if (is(k, "expression_statement") && namedChildCount(k) == 1 && is(namedChild(k, 0), "call")) {
      SyntaxNode f = field(namedChild(k, 0), "function");
      const std::string_view t = f.isNull() ? std::string_view() : f.tree()->text(f);
      if (t == "exit" || t == "sys.exit" || t == "quit" || t == "os._exit")
        return true;
    }
  }
  return false;
}

bool Builder::processGroupCall(const CallSite &cs, std::vector<Node> &out) {
  if (const core::PyProcessGroupInit *init = processGroupInit(cs)) {
    core::ProcessGroupCreation pg;
    pg.kind = core::ProcessGroupCreation::Kind::Init;
    // The world's group only: a subgroup (`new_group`, GroundingDINO's cached
    // gloo group) needs a world some other code made.
    if (!curFn_.empty() && !init->collective)
      initsGroup_.insert(curFn_);
    const bool everyPath = madeOnEveryPath(cs.c);
    (everyPath ? initPlain_ : initGuarded_) = true;
    pg.loc = loc(cs.c);
    pg.api = cs.l;
    const PyArg *b = arg(cs.as, init->name == "deepspeed.init_distributed" ||
                                        init->name == "deepspeed.comm.init_distributed"
                                    ? "dist_backend"
                                    : "backend",
                         init->backendArg);
    if (b) {
      std::string t(b->text);
      t.erase(std::remove(t.begin(), t.end(), '"'), t.end());
      t.erase(std::remove(t.begin(), t.end(), '\''), t.end());
      if (t == "nccl" || t == "gloo" || t == "mpi" || t == "cpu:gloo,cuda:nccl")
        pg.backend = t;
    }
    // `timeout=None` is the backend's default, not a timeout.
    const PyArg *timeout = arg(cs.as, "timeout", init->timeoutArg);
    pg.timeoutGiven = timeout && timeout->text != "None";
    bool splat = false;
    for (const auto &a : cs.as)
      splat = splat || is(a.value, "dictionary_splat") || is(a.value, "list_splat");
    if (splat)
      pg.timeoutGiven = true; // *args / **kwargs may carry it
    pg.fixAnchor = argsEnd(cs.c);
    // No peer to wait for: a test backend, or a group of one process.
    const PyArg *ws = arg(cs.as, "world_size", init->worldSizeArg);
    const bool single = ws && ws->text == "1";
    const bool fake = b && (b->text == "\"fake\"" || b->text == "'fake'");
    const bool dead = afterExit(cs.c);
    if (!single && !fake && !dead)
      facts().processGroups.push_back(pg);
    if (!dead && !fake)
      ++(single ? oneRankInits_ : manyRankInits_);
    // A group made once per process and kept (fairseq's `get_global_group`):
    // every later call, on every rank, makes nothing; the first is the set-up
    // every rank goes through.
    if (init->collective) {
      if (!memoisedCreation(cs.c))
        emit(out, cs.c, EventKind::Collective, cs.l);
    }
    // The world's rendezvous: no rank leaves it before every rank, rank 0
    // too, has come (the store rank 0 hosts, the store barrier).  What rank 0
    // writes before it (vits' logger and git hash) is over when the others go
    // on, and no barrier could go there: the group does not exist yet.
    else if (everyPath)
      emit(out, cs.c, EventKind::Rendezvous, cs.l);
    return true;
  }
  return false;
}

// `DataLoader(ds, **kwargs)` with `kwargs = {"batch_size": b, "num_workers":
// n}` (or `dict(num_workers=n)`, or `kwargs["num_workers"] = n`) written in
// the same function before the call (unicom's extract_feat): the options as
// written there, key -> value.  Empty: not a dict this function spells out.
std::map<std::string, SyntaxNode> Builder::splattedOptions(SyntaxNode splat, SyntaxNode call) const {
  std::map<std::string, SyntaxNode> out;
  SyntaxNode name;
  for (SyntaxNode k : namedKids(splat))
    name = k;
  if (name.isNull() || !is(name, "identifier"))
    return out;
  const std::string var = str(name);
  SyntaxNode scope = enclosingScope(call);
  if (scope.isNull())
    return out;
  auto key = [&](SyntaxNode k) {
    k = unparen(k);
    if (!is(k, "string"))
      return std::string();
    std::string t(text(k));
    return t.size() >= 2 ? t.substr(1, t.size() - 2) : std::string();
  };
  bool found = false;
  std::vector<SyntaxNode> assigns;
  forEachOwnNode(scope, [&](SyntaxNode n) {
    if (is(n, "assignment") && startByte(n) < startByte(call))
      assigns.push_back(n);
    return true;
  });
  std::sort(assigns.begin(), assigns.end(),
            [](SyntaxNode a, SyntaxNode b) { return startByte(a) < startByte(b); });
  for (SyntaxNode a : assigns) {
    SyntaxNode left = field(a, "left"), right = unparen(field(a, "right"));
    if (is(left, "identifier") && str(left) == var) {
      out.clear();
      found = false;
      if (is(right, "dictionary")) {
        found = true;
        for (SyntaxNode p : namedKids(right))
          if (is(p, "pair"))
            if (std::string k = key(field(p, "key")); !k.empty())
              out[k] = field(p, "value");
      } else if (is(right, "call") && text(field(right, "function")) == "dict") {
        found = true;
        for (const auto &pa : args(right))
          if (!pa.name.empty())
            out[std::string(pa.name)] = pa.value;
      }
    } else if (found && is(left, "subscript") && is(field(left, "value"), "identifier") &&
               str(field(left, "value")) == var) {
      if (std::string k = key(field(left, "subscript")); !k.empty())
        out[k] = right;
    }
  }
  if (!found)
    out.clear();
  else
    out.emplace("", SyntaxNode()); // spelled out, even with no option in it
  return out;
}

// torch.utils.data.DataLoader and its options.
bool Builder::dataLoaderCall(const CallSite &cs) {
  if (kindOfCtor(cs.c) != ObjKind::DataLoader)
    return false;
  {
    core::DataLoaderCreation dl;
    dl.loc = loc(cs.c);
    dl.api = lastPart(cs.q);
    dl.function = fnKey();
    auto state = [&](const char *name, int pos, Loc &at) {
      const PyArg *a = arg(cs.as, name, pos);
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
    if (const PyArg *w = arg(cs.as, "num_workers", 5)) {
      std::int64_t n = 0;
      dl.numWorkersText = std::string(w->text);
      dl.numWorkers = intLiteral(w->text, n)
                          ? (n > 0 ? core::DataLoaderCreation::Workers::Positive
                                   : core::DataLoaderCreation::Workers::Zero)
                          : core::DataLoaderCreation::Workers::Unknown;
    }
    dl.persistentWorkers = state("persistent_workers", 13, dl.persistentWorkersLoc);
    dl.pinMemory = state("pin_memory", 7, dl.pinMemoryLoc);
    for (const auto &a : cs.as)
      if (is(a.value, "dictionary_splat") || is(a.value, "list_splat")) {
        if (auto spelled = splattedOptions(a.value, cs.c); !spelled.empty()) {
          if (auto w = spelled.find("num_workers"); w != spelled.end() &&
                                                    dl.numWorkers == core::DataLoaderCreation::Workers::Absent) {
            std::int64_t n = 0;
            dl.numWorkersText = std::string(text(w->second));
            dl.numWorkers = intLiteral(dl.numWorkersText, n)
                                ? (n > 0 ? core::DataLoaderCreation::Workers::Positive
                                         : core::DataLoaderCreation::Workers::Zero)
                                : core::DataLoaderCreation::Workers::Unknown;
          }
          auto flag = [&](const char *k, core::ArgState &st, Loc &at) {
            auto f = spelled.find(k);
            if (f == spelled.end() || st != core::ArgState::Absent)
              return;
            const std::string_view t = text(f->second);
            st = t == "True" ? core::ArgState::True : t == "False" ? core::ArgState::False : core::ArgState::Unknown;
            if (st == core::ArgState::False)
              at = loc(f->second);
          };
          flag("persistent_workers", dl.persistentWorkers, dl.persistentWorkersLoc);
          flag("pin_memory", dl.pinMemory, dl.pinMemoryLoc);
          continue;
        }
        // **loader_kwargs: the options may be in there
        if (dl.persistentWorkers == core::ArgState::Absent)
          dl.persistentWorkers = core::ArgState::Unknown;
        if (dl.pinMemory == core::ArgState::Absent)
          dl.pinMemory = core::ArgState::Unknown;
        if (dl.numWorkers == core::DataLoaderCreation::Workers::Absent)
          dl.numWorkers = core::DataLoaderCreation::Workers::Zero; // unknown: say nothing
      }
    dl.argsEnd = argsEnd(cs.c);
    const PyArg *ds = arg(cs.as, "dataset", 0);
    dl.loops = loopInfos(ds ? ds->value : SyntaxNode{});
    // A sampler over the loop's indices (k-fold) is one loader per input too.
    for (const char *k : {"sampler", "batch_sampler"})
      if (const PyArg *sa = arg(cs.as, k, 99)) {
        auto more = loopInfos(sa->value);
        for (size_t i = 0; i < more.size() && i < dl.loops.size(); ++i)
          dl.loops[i].datasetDependsOnLoop |= more[i].datasetDependsOnLoop;
      }
    dl.storedInContainer = storedInContainer(cs.c);
    facts().dataLoaders.push_back(dl);
  }
  return true;
}

} // namespace ddplint::pyfe::build
