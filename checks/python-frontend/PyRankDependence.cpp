// How a Python value or condition varies across ranks (core::Dep, core::Cond):
// rank sources (dist.get_rank(), RANK, args.local_rank, is_main_process),
// values derived from them through locals, attributes, globals and helpers'
// returns, rank-local data (a loss, a clock, a file check), and values that a
// collective made the same everywhere.
#include "PyBuilder.h"

#include <algorithm>
#include <cctype>

namespace ddplint::pyfe::build {

std::optional<RankKind> Builder::rankSource(SyntaxNode e) {
  std::optional<RankKind> r = rankSourceAsWritten(e);
  if (r && *r == RankKind::Local && localRankIsGlobal_)
    return RankKind::Global;
  return r;
}

std::optional<RankKind> Builder::rankSourceAsWritten(SyntaxNode e) {
  e = unparen(e);
  // `dist.get_rank() if dist.is_initialized() else 0`: the rank, with a
  // fallback for a run that is not distributed.
  if (is(e, "conditional_expression") && namedChildCount(e) == 3 &&
      value(namedChild(e, 1)).dep == Dep::Uniform) {
    SyntaxNode a = namedChild(e, 0), b = namedChild(e, 2);
    auto ra = rankSource(a), rb = rankSource(b);
    if (ra && (rb || value(b).dep == Dep::Uniform))
      return ra;
    if (rb && value(a).dep == Dep::Uniform)
      return rb;
    return std::nullopt;
  }
  // VL-BERT's `int(os.environ['RANK'] or 0)`: the rank, with a fallback for
  // a variable set empty.
  if (is(e, "boolean_operator") && text(field(e, "operator")) == "or") {
    SyntaxNode b = unparen(field(e, "right"));
    if (is(b, "integer") || is(b, "none") || is(b, "string"))
      return rankSource(field(e, "left"));
    return std::nullopt;
  }
  // `node_rank * ngpus_per_node + gpu`: the global rank computed from a node's
  // offset and the process's index on its node (mp.spawn's first argument).
  // Only a product on the other side: `local_rank + 1` is not a rank.
  if (is(e, "binary_operator") && text(field(e, "operator")) == "+") {
    SyntaxNode a = unparen(field(e, "left")), b = unparen(field(e, "right"));
    auto product = [&](SyntaxNode x) {
      return is(x, "binary_operator") && text(field(x, "operator")) == "*";
    };
    auto offset = [&](SyntaxNode x) {
      SyntaxNode xl = unparen(field(x, "left")), xr = unparen(field(x, "right"));
      return (rankSource(xl) || value(xl).dep == Dep::Uniform) &&
             (rankSource(xr) || value(xr).dep == Dep::Uniform);
    };
    // The shape first: a long `a + b + c` string concatenation costs nothing.
    if ((product(b) && rankSource(a) && offset(b)) || (product(a) && rankSource(b) && offset(a)))
      return RankKind::Global;
    return std::nullopt;
  }
  // int(x), str(x): the rank converted
  if (is(e, "call")) {
    std::string q = qualified(field(e, "function"));
    std::string l = lastPart(q);
    auto as = args(e);
    if ((q == "int" || q == "str") && !as.empty() && as[0].name.empty())
      return rankSource(as[0].value);
    // ml-cvnets' `getattr(opts, "ddp.rank", 0)`: a dotted option name whose
    // last part is a rank attribute, read as `opts.ddp.rank` would be.
    if (q == "getattr" && as.size() >= 2 && as[1].name.empty()) {
      bool literal = false;
      const std::string key = unquote(as[1].text, literal);
      const std::string attr = lastPart(key);
      if (literal && key.find('.') != std::string::npos) {
        if (has(api().rankAttributes, attr))
          return RankKind::Global;
        if (has(api().localRankAttributes, attr))
          return RankKind::Local;
      }
      return std::nullopt;
    }
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
    if (is(field(e, "function"), "attribute") && has(api().deviceMeshRankMethods, l)) {
      std::string recv = lastPart(std::string(text(field(field(e, "function"), "object"))));
      std::transform(recv.begin(), recv.end(), recv.begin(), ::tolower);
      if (recv.find("mesh") != std::string::npos)
        return RankKind::Global;
    }
    if (startsWith(q, "torch.distributed.") && (l == "get_local_rank" || l == "get_node_local_rank"))
      return RankKind::Local;
    auto f = fns_.find(resolveCallee(field(e, "function")));
    if (f != fns_.end() && f->second.returnsRank)
      return RankKind::Global;
    if (f == fns_.end())
      if (const ExternalFunction *ext = externalCallee(field(e, "function")))
        if (ext->summary.returnsRank)
          return RankKind::Global;
    return std::nullopt;
  }
  // `self.data_parallel_rank`, a @property that returns the rank.
  if (is(e, "attribute"))
    if (auto f = fns_.find(resolveCallee(e)); f != fns_.end() && isProperty(f->second) &&
                                              f->second.returnsRank)
      return RankKind::Global;
  if (is(e, "subscript")) {
    std::string v = qualified(field(e, "value"));
    if (v == "os.environ" || v == "environ") {
      bool literal = false;
      const std::string var = unquote(text(field(e, "subscript")), literal);
      if (has(api().rankEnvVars, var))
        return RankKind::Global;
      if (has(api().localRankEnvVars, var))
        return RankKind::Local;
      return std::nullopt;
    }
    // BasicSR's `opt['rank']`: the run options' rank entry, as `args.rank`.
    // A bare "rank" only in a dict named for the run's options: LoRA's
    // `hparams["rank"]` is the adapter's rank.
    bool literal = false;
    const std::string key = unquote(text(field(e, "subscript")), literal);
    static const std::set<std::string> optionDicts = {"opt", "opts", "options", "args", "cfg",
                                                      "config", "conf"};
    if (literal && has(api().rankAttributes, key) &&
        (key != "rank" || optionDicts.count(lastPart(std::string(text(field(e, "value")))))))
      return RankKind::Global;
    if (literal && has(api().localRankAttributes, key))
      return RankKind::Local;
    // `get_dist_info()[0]`: the element of the helper's tuple that is the rank.
    if (SyntaxNode c = unparen(field(e, "value")); is(c, "call") && is(field(e, "subscript"), "integer"))
      if (bool local = false; true)
        if (const int at = rankElementOf(c, &local); at >= 0 && text(field(e, "subscript")) == std::to_string(at))
          return local ? RankKind::Local : RankKind::Global;
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
    // A yacs-style configuration spells its keys in capitals: OpenPCDet's
    // `cfg.LOCAL_RANK` holds the rank its launcher returned.
    if (std::any_of(attr.begin(), attr.end(), [](unsigned char c) { return std::isupper(c); }) &&
        std::none_of(attr.begin(), attr.end(), [](unsigned char c) { return std::islower(c); }))
      std::transform(attr.begin(), attr.end(), attr.begin(), [](unsigned char c) { return std::tolower(c); });
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

// A parameter whose default is True or False is a switch the caller sets
// (`def __call__(self, loss, optimizer, update_grad=True)`), whatever its name says.
bool Builder::flagParameter(const std::string &name) const {
  auto f = fns_.find(curFn_);
  if (f == fns_.end() || f->second.def.isNull())
    return false;
  for (SyntaxNode p : namedKids(field(f->second.def, "parameters")))
    if (is(p, "default_parameter") || is(p, "typed_default_parameter")) {
      SyntaxNode id = parameterName(p);
      SyntaxNode d = unparen(field(p, "value"));
      if (is(id, "identifier") && str(id) == name)
        return is(d, "true") || is(d, "false");
    }
  return false;
}

// A main-process flag read as `text`: true on the job's rank 0, or on each
// node's first process.
static Val mainProcessFlag(bool perNode, const std::string &text) {
  Val v;
  v.dep = Dep::Rank;
  v.cond = mainProcessCond(perNode, text);
  return v;
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
  if ((k == "attribute" || k == "call") && totalSizeValue(e)) {
    v.worldSize = true;
    return v;
  }
  // `initialized = dist.is_initialized()`, or torch < 1.0's `dist._initialized`
  // on the other arm of a version test: true in the distributed run, as the
  // test itself is.  One text for both, so that the arms' values join.
  if ((k == "call" && initializedTest(e)) ||
      (k == "attribute" && qualified(e) == "torch.distributed._initialized")) {
    v.cond = Cond::constant(true);
    v.cond->text = "dist.is_initialized()";
    return v;
  }
  // SimpleTuner's `getattr(self.accelerator, "is_main_process", True)`: the
  // attribute read by name, with a default for an object that lacks it.
  if (k == "call" && qualified(field(e, "function")) == "getattr") {
    const auto as = args(e);
    bool literal = false;
    const std::string attr = as.size() >= 2 && as[1].name.empty() ? unquote(as[1].text, literal) : "";
    if (literal && attr.find('.') == std::string::npos) {
      const std::string t = std::string(text(as[0].value)) + "." + attr;
      if (has(api().mainProcessAttributes, attr))
        return mainProcessFlag(false, t);
      if (has(api().localMainProcessAttributes, attr))
        return mainProcessFlag(true, t);
    }
  }
  if (k == "identifier") {
    if (signalGlobals_.count(str(e))) {
      v.dep = Dep::Local; // set by this process's signal handler
      return v;
    }
    auto it = env_.vars.find(str(e));
    if (it != env_.vars.end()) {
      Val bound = it->second; // a bound value: its origin says how it varies, not its name
      bound.worldSize = bound.worldSize || totalSizeValue(e);
      return bound;
    }
    auto g = globals_.find(str(e));
    if (g != globals_.end()) {
      Val bound = g->second;
      bound.worldSize = bound.worldSize || totalSizeValue(e);
      return bound;
    }
    v.worldSize = totalSizeValue(e);
    if (perRankDataName(str(e)) && !flagParameter(str(e))) {
      v.dep = Dep::Local;
      // A parameter named for the batch (`def forward_backward(self, batch, cond)`)
      // holds one: the rank's samples, as many as every other rank's.
      const std::string n = str(e);
      v.batch = n == "batch" || n == "inputs" || n == "images" || n == "labels" || n == "targets";
    }
    return v;
  }
  if (k == "attribute") {
    std::string t = str(e);
    // Tensor metadata that is the same on every rank: `if loss.requires_grad:`.
    {
      const std::string a = lastPart(t);
      if (a == "requires_grad" || a == "dtype" || a == "ndim" || a == "is_cuda" ||
          a == "is_leaf" || a == "layout" || a == "is_sparse" || a == "is_quantized" || a == "is_meta")
        return v;
    }
    if (signalFlagAttribute(lastPart(t))) {
      v.dep = Dep::Local; // set by this process's signal handler
      return v;
    }
    auto ev = env_.vars.find(t);
    if (ev != env_.vars.end())
      return ev->second;
    if (worldRankAttributes_.count(t))
      return Val{Dep::Rank, RankKind::Global, std::nullopt};
    auto a = attrs_.find(t);
    if (a != attrs_.end()) {
      // Spelled as the reader sees it here (`self.is_main_node`), not as the
      // method that set it wrote it (`process_id == 0`).
      Val r = a->second;
      if (r.cond && r.cond->kind == Cond::Kind::RankCmp)
        r.cond->text = t;
      return r;
    }
    std::string attr = lastPart(t);
    if (has(api().worldSizeAttributes, attr))
      return v; // the same on every rank
    // A loader's batch count (open-muse's and open_clip's `DataInfo`-style
    // `train_dataloader.num_batches`, webdataset's `with_epoch` length): what
    // a DistributedSampler or the shard plan gives every rank alike, even
    // where the loader was swapped for a list of this rank's batches.
    if (attr == "num_batches")
      return v;
    // A configuration reached through a rank's data (ai-toolkit's
    // `batch.file_items[0].dataset_config.guidance_type`): the settings the
    // dataset was built with, which the ranks share, not the samples.
    auto endsWith = [&](std::string_view s) {
      return attr.size() >= s.size() && attr.compare(attr.size() - s.size(), s.size(), s) == 0;
    };
    if (attr == "config" || attr == "cfg" || attr == "hparams" || endsWith("_config") ||
        endsWith("_cfg"))
      return v;
    // `training_args.should_save`: an entry with its object's name says whose
    // attribute it is (the Trainer's arguments, not any `should_save` flag).
    std::string owned;
    if (const auto dot = t.rfind('.', t.size() - attr.size() - 2);
        t.size() > attr.size() + 1 && dot != std::string::npos)
      owned = t.substr(dot + 1);
    else if (t.size() > attr.size() + 1)
      owned = t;
    if (has(api().mainProcessAttributes, attr) ||
        (!owned.empty() && has(api().mainProcessAttributes, owned)))
      return mainProcessFlag(false, t);
    if (has(api().localMainProcessAttributes, attr))
      return mainProcessFlag(true, t);
    // `if args.save_logs:` where the project's main module set it to
    // `args.logs and is_master(args)` (MetaCLIP's trainers).
    if (project_ && is(field(e, "object"), "identifier") &&
        (str(field(e, "object")) == "args" || str(field(e, "object")) == "opt" ||
         str(field(e, "object")) == "cfg" || str(field(e, "object")) == "config") &&
        project_->mainProcessSetting(attr))
      return mainProcessFlag(false, t);
    // `if distenv.master:` where the project builds its DistEnv with
    // `master=(dist.get_rank() == 0)` (rq-vae-transformer).
    if (project_ && project_->mainProcessField(attr))
      return mainProcessFlag(false, t);
    // `self.is_data_parallel_master`, a @property of the class (fairseq's
    // Trainer): what its body returns, as a call of a method would.
    if (auto f = fns_.find(resolveCallee(e)); f != fns_.end() && isProperty(f->second)) {
      if (const std::optional<Cond> &rc = f->second.returnsCond) {
        Cond c = *rc;
        c.text = t;
        v.dep = c.dependence();
        v.cond = std::move(c);
        return v;
      }
      if (f->second.returnsRankDependent)
        return Val{Dep::Rank, RankKind::None, std::nullopt};
    }
    // `trainer.is_main` on an object of another module's class (imagen's
    // ImagenTrainer, whose property returns `accelerator.is_main_process`).
    if (project_ && !fns_.count(resolveCallee(e)))
      if (const ExternalFunction *ext = externalCallee(e); ext && ext->summary.method &&
                                                           ext->summary.returnsCond) {
        Cond c = *ext->summary.returnsCond;
        c.text = t;
        v.dep = c.dependence();
        v.cond = std::move(c);
        return v;
      }
    return Val{value(field(e, "object")).dep, RankKind::None, std::nullopt};
  }
  if (k == "call")
    return callValue(e);
  if (k == "subscript") {
    // batch.shape[0]: as many samples on every rank (see Val::batch).
    if (SyntaxNode sv = unparen(field(e, "value")); is(sv, "attribute") &&
        str(field(sv, "attribute")) == "shape" && namedChildCount(e) == 2 &&
        str(namedChild(e, 1)) == "0" && value(field(sv, "object")).batch)
      return v;
    // batch.size()[0] (NVIDIA's BERT: `if input_ids.size()[0] != batch_size`).
    if (SyntaxNode sv = unparen(field(e, "value")); is(sv, "call") && args(sv).empty() &&
        is(field(sv, "function"), "attribute") && str(field(field(sv, "function"), "attribute")) == "size" &&
        namedChildCount(e) == 2 && str(namedChild(e, 1)) == "0" &&
        value(field(field(sv, "function"), "object")).batch)
      return v;
    Val b = value(field(e, "value"));
    Val out;
    out.dep = b.dep;
    for (SyntaxNode s : namedKids(e))
      if (s != field(e, "value"))
        out.dep = core::join(out.dep, value(s).dep);
    // An element of an agreed tensor, at an index every rank uses, is agreed.
    out.agreed = b.agreed && out.dep == Dep::Uniform;
    out.batch = b.batch && out.dep == Dep::Local;
    return out;
  }
  if (k == "binary_operator") {
    // Arithmetic on agreed values and constants stays agreed: `total[0] / total[1]`.
    Val l = value(field(e, "left")), r = value(field(e, "right"));
    Val out;
    out.dep = core::join(l.dep, r.dep);
    auto plain = [](const Val &x) {
      return x.agreed || (x.dep == Dep::Uniform && !x.cond && x.rank == RankKind::None);
    };
    out.agreed = (l.agreed || r.agreed) && plain(l) && plain(r);
    return out;
  }
  if (k == "none") {
    v.none = true;
    return v;
  }
  if (k == "true" || k == "false")
    v.literal = k == "true";
  if (k == "integer" || k == "float" || k == "true" || k == "false")
    return v;
  if (k == "conditional_expression" && namedChildCount(e) == 3) {
    // `tqdm(pbar) if rank == 0 else pbar`: a progress bar on one rank goes
    // over the same items as the bare iterable on the others.
    auto wraps = [&](SyntaxNode w, SyntaxNode bare) {
      w = unparen(w);
      if (!is(w, "call"))
        return false;
      std::string l = lastPart(qualified(field(w, "function")));
      std::transform(l.begin(), l.end(), l.begin(), ::tolower);
      auto wa = args(w);
      return (l == "tqdm" || l == "iter" || l == "enumerate") && !wa.empty() && wa[0].name.empty() &&
             text(unparen(wa[0].value)) == text(unparen(bare));
    };
    if (wraps(namedChild(e, 0), namedChild(e, 2)))
      return value(namedChild(e, 2));
    if (wraps(namedChild(e, 2), namedChild(e, 0)))
      return value(namedChild(e, 0));
    // `Saver() if rank == 0 else None`, `rank == 0 if ddp else True`
    Cond c = cond(namedChild(e, 1));
    Val out = joinArms(value(namedChild(e, 0)), value(namedChild(e, 2)), c);
    out.dep = core::join(out.dep, c.dependence());
    if (out.cond && !out.existsWhen)
      out.dep = out.cond->dependence();
    return out;
  }
  if (k == "comparison_operator" || k == "boolean_operator" || k == "not_operator") {
    Val out;
    out.cond = cond(e);
    out.dep = out.cond->dependence();
    return out;
  }
  if (k == "lambda")
    return v;
  // A comprehension over an agreed dict (`{k: v.item() / n for k, v in
  // reduced.items()}`) is agreed.
  if ((k == "dictionary_comprehension" || k == "list_comprehension" ||
       k == "generator_expression" || k == "set_comprehension")) {
    for (SyntaxNode c : namedKids(e))
      if (is(c, "for_in_clause")) {
        SyntaxNode src = unparen(field(c, "right"));
        if (is(src, "call") && is(field(src, "function"), "attribute"))
          src = field(field(src, "function"), "object");
        if (value(src).agreed)
          return Val{Dep::Uniform, RankKind::None, std::nullopt, true};
      }
  }
  // Anything else: the strongest dependence of its parts.  A list of batches
  // (`[next(it) for _ in range(n)]`, `[batch]`) is a batch too: its length is
  // what every rank shares.
  Val out;
  bool onlyBatches = k == "list" || k == "tuple" || k == "list_comprehension" ||
                     k == "generator_expression" || k == "for_in_clause";
  // `[img.cuda() for img in batch]` keeps the batch's length; a filter
  // (`[t for t in targets if len(t)]`) keeps what this rank's data passes.
  for (SyntaxNode c : namedKids(e)) {
    Val cv = value(c);
    out.dep = core::join(out.dep, cv.dep);
    onlyBatches = onlyBatches && (cv.dep != Dep::Local || cv.batch) && !is(c, "if_clause");
  }
  out.batch = out.dep == Dep::Local && onlyBatches;
  return out;
}

// The parameter every `return` of the function hands back (`return
// info_dict`), or "".
// A name the body binds again (`items = items[rank::world]`, a loop target,
// `with ... as items`) is no longer the caller's object.
std::string Builder::returnedParameter(const FnInfo &fi) const {
  if (fi.def.isNull())
    return "";
  std::string returned;
  std::vector<std::string> rebound;
  std::vector<SyntaxNode> st{field(fi.def, "body")};
  while (!st.empty()) {
    SyntaxNode n = st.back();
    st.pop_back();
    if (is(n, "function_definition") || is(n, "lambda") || is(n, "class_definition"))
      continue;
    if (is(n, "return_statement")) {
      SyntaxNode r = namedChildCount(n) ? unparen(namedChild(n, 0)) : SyntaxNode();
      if (r.isNull() || !is(r, "identifier") || (!returned.empty() && str(r) != returned))
        return "";
      returned = str(r);
      continue;
    }
    SyntaxNode target = is(n, "assignment") || is(n, "augmented_assignment") || is(n, "for_statement")
                            ? field(n, "left")
                        : is(n, "as_pattern_target") ? n
                                                     : SyntaxNode();
    if (!target.isNull()) {
      std::vector<SyntaxNode> names{target};
      while (!names.empty()) {
        SyntaxNode t = names.back();
        names.pop_back();
        if (is(t, "identifier"))
          rebound.push_back(str(t));
        else if (!is(t, "attribute") && !is(t, "subscript"))
          for (SyntaxNode k : namedKids(t))
            names.push_back(k);
      }
    }
    for (SyntaxNode k : namedKids(n))
      st.push_back(k);
  }
  if (std::find(rebound.begin(), rebound.end(), returned) != rebound.end())
    return "";
  bool method = false;
  for (const auto &p : parameterList(fi, method))
    if (p.name == returned)
      return returned;
  return "";
}

// The parameters whose length a returned sequence has, per element of a
// returned tuple (-1: the value itself): `[f(q, p) for q, p in zip(qs, ps)]`,
// or a list bound once to `[]` and appended to once per iteration of a loop
// of the body over them (LSGM's `kl_per_group_vada`, one entry per latent
// group).  Its values are the caller's data; its length is the arguments'.
// A filter, an append under a test, a break or another way to grow the
// list, and the length is this rank's data's: nothing is said.
std::vector<std::pair<int, std::string>> Builder::lengthOfParameters(const FnInfo &fi) const {
  std::vector<std::pair<int, std::string>> out;
  if (fi.def.isNull())
    return out;
  bool method = false;
  std::set<std::string> params;
  for (const auto &p : parameterList(fi, method))
    params.insert(p.name);
  // The parameters an iterable walks in step: `qs`, `zip(qs, ps)`,
  // `enumerate(qs)`, `range(len(qs))`.
  std::function<std::vector<std::string>(SyntaxNode)> walked = [&](SyntaxNode it) -> std::vector<std::string> {
    it = unparen(it);
    if (is(it, "identifier"))
      return params.count(str(it)) ? std::vector<std::string>{str(it)} : std::vector<std::string>{};
    if (!is(it, "call"))
      return {};
    const std::string f = qualified(field(it, "function"));
    const auto as = args(it);
    if (as.empty())
      return {};
    for (const auto &a : as)
      if (!a.name.empty() || is(unparen(a.value), "list_splat"))
        return {};
    if (f == "enumerate")
      return walked(as[0].value);
    if (f == "range" && as.size() == 1 && is(unparen(as[0].value), "call") &&
        qualified(field(unparen(as[0].value), "function")) == "len" && args(unparen(as[0].value)).size() == 1)
      return walked(args(unparen(as[0].value))[0].value);
    if (f != "zip")
      return {};
    std::vector<std::string> all;
    for (const auto &a : as) {
      auto w = walked(a.value);
      if (w.empty())
        return {};
      all.insert(all.end(), w.begin(), w.end());
    }
    return all;
  };
  std::vector<SyntaxNode> returns, appends;
  forEachOwnNode(field(fi.def, "body"), [&](SyntaxNode n) {
    if (is(n, "return_statement") && namedChildCount(n))
      returns.push_back(unparen(namedChild(n, 0)));
    if (is(n, "call") && is(field(n, "function"), "attribute") &&
        str(field(field(n, "function"), "attribute")) == "append")
      appends.push_back(n);
    return true;
  });
  if (returns.size() != 1)
    return out;
  auto lengthOf = [&](SyntaxNode e) -> std::vector<std::string> {
    e = unparen(e);
    if (is(e, "list_comprehension") || is(e, "generator_expression")) {
      SyntaxNode loop;
      for (SyntaxNode k : namedKids(e)) {
        if (is(k, "if_clause") || (is(k, "for_in_clause") && !loop.isNull()))
          return {};
        if (is(k, "for_in_clause"))
          loop = k;
      }
      return loop.isNull() ? std::vector<std::string>{} : walked(field(loop, "right"));
    }
    if (!is(e, "identifier"))
      return {};
    static const std::set<std::string> grow = {"extend", "insert", "pop", "remove", "clear"};
    std::vector<SyntaxNode> values;
    if (!plainBindings(fi.def, str(e), grow, values) || values.size() != 1 || !is(unparen(values[0]), "list") ||
        namedChildCount(unparen(values[0])) != 0)
      return {};
    // One `name.append(...)` statement, directly in the body of a loop that
    // is itself a statement of the function's body.
    SyntaxNode loop;
    for (SyntaxNode a : appends) {
      if (str(field(field(a, "function"), "object")) != str(e))
        continue;
      SyntaxNode stmt = parentOf(a), block = parentOf(stmt), f = parentOf(block);
      if (!loop.isNull() || !is(stmt, "expression_statement") || !is(block, "block") || !is(f, "for_statement") ||
          parentOf(parentOf(f)) != fi.def)
        return {};
      loop = f;
    }
    if (loop.isNull())
      return {};
    const bool leavesEarly = !forEachOwnNode(field(loop, "body"), [&](SyntaxNode n) {
      return !is(n, "break_statement") && !is(n, "continue_statement") && !is(n, "return_statement");
    });
    return leavesEarly ? std::vector<std::string>{} : walked(field(loop, "right"));
  };
  SyntaxNode r = returns[0];
  if (is(r, "expression_list") || is(r, "tuple")) {
    for (uint32_t i = 0; i < namedChildCount(r); ++i)
      for (const std::string &p : lengthOf(namedChild(r, i)))
        out.emplace_back(int(i), p);
  } else {
    for (const std::string &p : lengthOf(r))
      out.emplace_back(-1, p);
  }
  return out;
}

Val Builder::callValue(SyntaxNode c) {
  SyntaxNode fn = field(c, "function");
  const std::string q = qualified(fn);
  const std::string l = lastPart(q.empty() ? std::string(text(fn)) : q);
  Val v;
  // `range(rank * n, (rank + 1) * n)`, `range(start, start + n)`: this
  // rank's window of a split, as long on every rank (VILA's shard list).
  // A window every rank computes alike holds the same values too.
  if (q == "range" && args(c).size() == 2 && args(c)[0].name.empty() && args(c)[1].name.empty() &&
      core::join(value(args(c)[0].value).dep, value(args(c)[1].value).dep) != Dep::Uniform) {
    auto bound = [&](SyntaxNode e) {
      e = unparen(e);
      if (is(e, "identifier"))
        if (SyntaxNode a = assignedBefore(e); !a.isNull())
          return unparen(a);
      return e;
    };
    SyntaxNode lo = bound(args(c)[0].value), hi = bound(args(c)[1].value);
    auto op = [&](SyntaxNode e, std::string_view o) {
      return is(e, "binary_operator") && text(field(e, "operator")) == o;
    };
    bool window = false;
    // (X + 1) * S after X * S
    if (op(lo, "*") && op(hi, "*") && text(field(lo, "right")) == text(field(hi, "right"))) {
      SyntaxNode x1 = unparen(field(hi, "left"));
      window = op(x1, "+") && text(unparen(field(x1, "right"))) == "1" &&
               text(unparen(field(x1, "left"))) == text(unparen(field(lo, "left"))) &&
               value(field(lo, "right")).dep == Dep::Uniform;
    }
    // S + n after S
    if (op(hi, "+") &&
        (text(unparen(field(hi, "left"))) == text(lo) ||
         text(unparen(field(hi, "left"))) == text(unparen(args(c)[0].value))) &&
        value(field(hi, "right")).dep == Dep::Uniform)
      window = true;
    if (window) {
      v.dep = Dep::Local;
      v.batch = true;
      return v;
    }
  }
  if (nullObjectClass(fn)) {
    v.none = true;
    v.nullObject = true;
    return v;
  }
  // `gold_labels.dim()`: how many dimensions a tensor has is fixed by the
  // code that made it (as its `ndim`), not by this rank's samples.
  if ((l == "dim" || l == "ndimension") && args(c).empty() && q != l)
    return v;
  if (has(api().worldSizeFunctions, q) || (startsWith(q, "torch.distributed.") &&
                                           (l == "get_world_size" || l == "is_initialized" ||
                                            l == "is_available" || l == "get_backend")))
    return v;
  // math.isnan(x), sum(x), float(x) of a value a collective agreed (an
  // all-reduced loss) is agreed.
  if ((l == "isnan" || l == "isinf" || l == "isfinite" || q == "sum" || q == "float" ||
       q == "abs" || q == "min" || q == "max" || q == "round") &&
      !args(c).empty()) {
    bool agreed = true;
    for (const auto &a : args(c))
      agreed = agreed && a.name.empty() && value(a.value).agreed;
    if (agreed)
      return Val{Dep::Uniform, RankKind::None, std::nullopt, true};
  }
  // `int(f.read())` of `open(os.path.join(resume, "step.txt"))`: a file at a
  // path every rank names holds what it holds for every rank, as torch.load's
  // does; the console (`sys.stdin.readline()`) and a rank's own file do not.
  if (has(api().fileReadMethods, l) && is(fn, "attribute") &&
      str(field(fn, "object")).find("stdin") == std::string::npos) {
    Val h = value(field(fn, "object"));
    v.dep = h.dep == Dep::Uniform && !h.cond && h.rank == RankKind::None ? Dep::Uniform : Dep::Local;
    return v;
  }
  // `all_losses.isnan()` of the tensor every rank all-gathered (dinov3's
  // trainer): the same answer on every rank.
  if (is(fn, "attribute") && (l == "isnan" || l == "isinf" || l == "isfinite") &&
      value(field(fn, "object")).agreed)
    return Val{Dep::Uniform, RankKind::None, std::nullopt, true};
  // A library's own `uuid4` (lhotse.utils re-exports uuid's) names this
  // process as uuid's does.
  // A builtin by its bare name only (`input()`, not a project's
  // `config.input(cfg, "val")`, MLPerf's RNN-T).
  if (has(api().localFunctions, q) || (q == l && has(api().localFunctions, l)) ||
      has(api().localMethods, l) || has(api().localFunctions, "uuid." + l)) {
    v.dep = Dep::Local;
    return v;
  }
  if (has(api().fileProbes, q)) {
    v.dep = probeRacesWrite(c) ? Dep::Local : Dep::Uniform;
    return v;
  }
  // pathlib's probe of a path the function does not write: alike on every
  // rank (a rank-made name, `f"ckpt.{rank}"`, as os.path's).  Where it may
  // race, the object's own value decides, as for any method.
  if (pathProbe(c) && !probeRacesWrite(c))
    return v;
  // The norm of the gradients after they were averaged (`clip_grad_norm_`,
  // fairseq's and metaseq's `self.clip_grad_norm(...)`; FSDP's all-reduces
  // it): every rank holds the same gradients, so the same norm, and a
  // non-finite one stops every rank alike.
  if (l.find("clip_grad_norm") != std::string::npos || l == "get_grad_norm" ||
      l == "clip_gradients" || l == "get_global_grad_norm") {
    v.dep = Dep::Uniform;
    v.agreed = true;
    return v;
  }
  if (has(api().agreeingFunctions, q))
    return Val{Dep::Uniform, RankKind::None, std::nullopt, true};
  // `loss_list = torch.tensor(loss_list)` after all_gathering into it
  // (InternVideo2's NaN check): the same values in another container.
  if ((q == "torch.tensor" || q == "torch.as_tensor" || q == "torch.stack" || q == "torch.cat" ||
       q == "numpy.array" || q == "numpy.asarray" || q == "numpy.stack" || q == "numpy.concatenate") &&
      !args(c).empty() && args(c)[0].name.empty() && value(args(c)[0].value).agreed)
    return Val{Dep::Uniform, RankKind::None, std::nullopt, true};
  // A collective's result is the same on every rank (`data = comm.bcast(data)`).
  if (startsWith(q, "torch.distributed.") || (is(fn, "attribute") && has(api().agreeingMethods, l)) ||
      (startsWith(q, "accelerate.utils.") && has(api().agreeingMethods, l)))
    return v;
  if (startsWith(q, "mpi4py.MPI.COMM_WORLD.") && has(api().collectiveFunctions, q) &&
      l != "gather" && l != "scatter" && l != "reduce")
    return Val{Dep::Uniform, RankKind::None, std::nullopt, true};
  if (is(fn, "attribute")) {
    const std::string recv = str(field(fn, "object"));
    auto o = findObject(recv);
    if (o != objects_.end() && o->second == ObjKind::Metric && l == "compute")
      return Val{Dep::Uniform, RankKind::None, std::nullopt, true};
    // Moving or converting a value keeps its dependence: `x.to(local_rank)`.
    // Reshaping one too (FlagAI's `lm_loss.detach().clone().view(1)` of a
    // summed loss).
    if (isMoveOrCastMethod(l) || l == "detach" || l == "clone" || l == "contiguous" ||
        l == "item" || l == "tolist" || l == "values" || l == "items" || l == "keys" ||
        l == "view" || l == "reshape" || l == "squeeze" || l == "unsqueeze" || l == "flatten")
      return value(field(fn, "object"));
    // `isnan(gathered).any()`: a reduction every rank computes alike from
    // what they all hold.
    if ((l == "any" || l == "all") && args(c).empty())
      if (Val ov = value(field(fn, "object")); ov.agreed)
        return ov;
  }
  if (q == "torch.device")
    return v;
  // `with accelerator.split_between_processes(records) as shard:` (Accelerate,
  // SimpleTuner's cache builders): this process's share of the items, so
  // what is named after them is this rank's own.
  if (is(fn, "attribute") && l == "split_between_processes") {
    v.dep = Dep::Rank;
    return v;
  }
  // A value's type is the code's: `isinstance(loss, torch.Tensor)`,
  // `hasattr(model, "module")` answer the same on every rank.
  if (q == "isinstance" || q == "hasattr" || q == "callable" || q == "issubclass" ||
      q == "torch.is_tensor" || q == "torch.is_floating_point" || q == "torch.is_complex")
    return v;
  // A replicated model, wrapped: the same model on every rank, whatever its
  // wrapper was told of the rank, the data or the schedule
  // (`model.module.config.num_hidden_layers` after deepspeed.initialize).
  if (q == "deepspeed.initialize" || kindOfCtor(c) == ObjKind::Ddp ||
      kindOfCtor(c) == ObjKind::Fsdp)
    return v;
  // len(batch): as many samples on every rank (see Val::batch).
  if (q == "len" && args(c).size() == 1 && value(args(c)[0].value).batch)
    return v;
  // `batch = tuple(t.to(device) for t in batch)`: the same batch, moved.
  if ((q == "tuple" || q == "list") && args(c).size() == 1 && args(c)[0].name.empty())
    if (Val b = value(args(c)[0].value); b.batch)
      return b;
  // batch.size(0): the same; another dimension (a padded length) is the rank's.
  if (is(fn, "attribute") && l == "size" && args(c).size() == 1 &&
      str(args(c)[0].value) == "0" && value(field(fn, "object")).batch)
    return v;
  // `batch, cond = next(data)`: the next batch of a loader (or of a generator
  // over one), drawn by every rank together.
  if (q == "next" && !args(c).empty() && args(c)[0].name.empty()) {
    SyntaxNode it = unparen(args(c)[0].value);
    // `next(iter(raw_datasets.values()))`: a dict's first entry (parler-tts
    // reads the column names of its first split), not a batch.
    SyntaxNode inner = it;
    if (is(inner, "call") && qualified(field(inner, "function")) == "iter" && !args(inner).empty())
      inner = unparen(args(inner)[0].value);
    const bool dictEntry = is(inner, "call") && is(field(inner, "function"), "attribute") &&
                           args(inner).empty() &&
                           (str(field(field(inner, "function"), "attribute")) == "values" ||
                            str(field(field(inner, "function"), "attribute")) == "keys" ||
                            str(field(field(inner, "function"), "attribute")) == "items");
    std::string lower(text(it));
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (!dictEntry && (isLoaderIterable(it) || value(it).batch || lower.find("data") != std::string::npos ||
                       lower.find("iter") != std::string::npos)) {
      v.dep = Dep::Local;
      v.batch = true;
      return v;
    }
  }
  // A DistributedSampler pads every rank to the same number of samples, and a
  // loader over it has the same length everywhere.
  if (kindOfCtor(c) == ObjKind::DataLoader || endsWith(q, "DistributedSampler"))
    return v;
  // User helpers: a predicate on the rank keeps its condition.
  auto f = fns_.find(resolveCallee(fn));
  std::optional<Cond> helperCond =
      f != fns_.end() ? f->second.returnsCond : std::optional<Cond>();
  if (f == fns_.end())
    if (const ExternalFunction *ext = externalCallee(fn); ext && ext->summary.returnsCond) {
      // Another module's predicate, spelled and placed as this call.
      helperCond = ext->summary.returnsCond;
      unstamp(*helperCond);
      helperCond->text = str(c);
    }
  if (!helperCond) {
    // A predicate whose arm a parameter picks: the constant this call hands
    // it, or either arm (a test of the rank all the same) when not constant.
    std::optional<CondByParam> by;
    std::vector<ParamSig> params;
    bool method = false;
    if (f != fns_.end() && f->second.returnsCondBy) {
      by = f->second.returnsCondBy;
      params = parameterList(f->second, method);
    } else if (f == fns_.end()) {
      if (const ExternalFunction *ext = externalCallee(fn); ext && ext->summary.returnsCondBy) {
        by = ext->summary.returnsCondBy;
        params = ext->summary.params;
        method = ext->summary.method;
      }
    }
    if (by) {
      std::optional<std::int64_t> known;
      bool given = false, splat = false;
      const std::vector<PyArg> as = args(c);
      const auto to = boundParameters(as, fn, params, method, splat);
      for (size_t k = 0; k < as.size(); ++k)
        if (to[k] && to[k]->name == by->param) {
          given = true;
          known = constantArgument(as[k].value);
        }
      if (!given && !splat)
        for (const auto &p : params)
          if (p.name == by->param)
            known = p.literalDefault;
      if (known) {
        helperCond = *known ? by->ifTrue : by->ifFalse;
        unstamp(*helperCond);
        helperCond->text = str(c);
      } else {
        return Val{Dep::Rank, RankKind::None, atom(c, Dep::Rank)};
      }
    }
  }
  if (helperCond) {
    v.dep = helperCond->dependence();
    v.cond = helperCond;
    return v;
  }
  // A helper that names something after the rank (`rankstr()`): per rank.
  {
    bool rankNamed = f != fns_.end() && f->second.returnsRankDependent;
    if (f == fns_.end())
      if (const ExternalFunction *ext = externalCallee(fn))
        rankNamed = ext->summary.returnsRankDependent;
    if (rankNamed) {
      v.dep = Dep::Rank;
      return v;
    }
  }
  // A helper that returns what it all-reduced (`validation()` returning the
  // reduced loss): the same on every rank, whatever its arguments.
  {
    bool agreedReturn = f != fns_.end() && f->second.returnsAgreed == 1;
    if (f == fns_.end())
      if (const ExternalFunction *ext = externalCallee(fn))
        agreedReturn = ext->summary.returnsAgreed;
    if (agreedReturn) {
      v.agreed = true;
      return v;
    }
  }
  // `info_dict = batch_forward(model, batch, info_dict)` (CosyVoice's
  // executor): a helper that returns one of its parameters hands back the
  // caller's object, whatever else it was given.
  {
    std::string returned;
    std::vector<ParamSig> params;
    bool method = false;
    if (f != fns_.end() && !f->second.def.isNull()) {
      returned = f->second.returnsParameter;
      if (!returned.empty())
        params = parameterList(f->second, method);
    } else if (f == fns_.end()) {
      if (const ExternalFunction *ext = externalCallee(fn); ext && !ext->summary.returnsParameter.empty()) {
        returned = ext->summary.returnsParameter;
        params = ext->summary.params;
        method = ext->summary.method;
      }
    }
    if (!returned.empty()) {
      bool splat = false;
      const std::vector<PyArg> as = args(c);
      const auto to = boundParameters(as, fn, params, method, splat);
      for (size_t k = 0; k < as.size(); ++k)
        if (to[k] && to[k]->name == returned)
          return value(as[k].value);
    }
  }
  // A step function that answers True or False (Open-Sora-Plan's `if
  // train_one_step(step, batch): break`): what it answers is decided by the
  // tests around its returns, not by the batch it was handed.
  if (f != fns_.end() && !f->second.def.isNull())
    if (std::optional<Dep> d = decisionReturnDep(f->second)) {
      v.dep = *d;
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
  // A keyword that only says who logs (`verbose=is_primary(args)`,
  // `log_info=rank == 0`, `disable=rank != 0`) does not change what is built.
  // Cut from a batch only (`split_microbatches(n, batch)`), the result is a
  // batch too: rank-local contents, a length every rank shares.
  bool onlyBatches = true;
  if (is(fn, "attribute")) {
    Val ov = value(field(fn, "object"));
    v.dep = ov.dep;
    onlyBatches = ov.dep != Dep::Local || ov.batch;
  }
  // A constructor told by position who does something (fvcore's and GLIP's
  // `Checkpointer(model, dir, get_rank() == 0)`) builds the same object as
  // when told by keyword: the flag gates its methods, not what they return.
  const bool constructor = !l.empty() && std::isupper(static_cast<unsigned char>(l[0])) &&
                           l.find('_') == std::string::npos &&
                           !std::all_of(l.begin(), l.end(), [](char ch) { return std::isupper(static_cast<unsigned char>(ch)); });
  for (const auto &a : args(c)) {
    if (deviceName(a.name) || deviceName(a.text))
      continue;
    Val av = value(a.value);
    if ((!a.name.empty() && (av.cond || loggingKeyword(a.name) || mainOnlySetting(a.value))) ||
        (constructor && av.cond) ||
        loggerArgument(a.text) ||
        (av.dep == Dep::Rank && trainingStateArgument(a.text)))
      continue;
    // An object that only some ranks made (`ema = EMA(model) if rank == 0 else
    // None`) handed to a helper: what the helper does with it is its own
    // business; what it returns is not made from the rank.
    if (av.existsWhen && !av.cond && av.rank == RankKind::None)
      continue;
    v.dep = core::join(v.dep, av.dep);
    onlyBatches = onlyBatches && (av.dep != Dep::Local || av.batch);
  }
  v.batch = v.dep == Dep::Local && (onlyBatches || modelForward(fn) || lengthFollowsArguments(c, -1));
  return v;
}

// Whether what a call returns (or its tuple's element) is as long on every
// rank because the helper makes it as long as an argument that is: one entry
// per latent group of a model's output (FunctionSummary::returnsLengthOf).
bool Builder::lengthFollowsArguments(SyntaxNode call, int element) {
  SyntaxNode fn = field(call, "function");
  std::vector<std::pair<int, std::string>> follows;
  std::vector<ParamSig> params;
  bool method = false;
  if (auto f = fns_.find(resolveCallee(fn)); f != fns_.end()) {
    follows = f->second.returnsLengthOf;
    if (!follows.empty())
      params = parameterList(f->second, method);
  } else if (const ExternalFunction *ext = externalCallee(fn)) {
    follows = ext->summary.returnsLengthOf;
    params = ext->summary.params;
    method = ext->summary.method;
  }
  if (follows.empty())
    return false;
  bool splat = false;
  const std::vector<PyArg> as = args(call);
  const auto to = boundParameters(as, fn, params, method, splat);
  for (size_t k = 0; k < as.size(); ++k) {
    if (!to[k])
      continue;
    for (const auto &[at, name] : follows)
      if (at == element && name == to[k]->name) {
        const Val av = value(as[k].value);
        if (av.batch || (av.dep == Dep::Uniform && !av.cond) || fixedLengthSequence(as[k].value))
          return true;
      }
  }
  return false;
}

// `logits, log_q, log_p, kl_all, kl_diag = model(x)` (NVAE): what a model's
// forward returns has the model's shape (a list per latent group, a tuple
// of heads) filled with this rank's values, so its lengths are alike on
// every rank, as a batch's are (Val::batch).
bool Builder::modelForward(SyntaxNode fn) const {
  std::string name;
  if (is(fn, "identifier"))
    name = str(fn);
  else if (is(fn, "attribute") && str(field(fn, "object")) == "self")
    name = str(field(fn, "attribute"));
  else
    return false;
  const ObjKind k = objectKind(str(fn));
  if (k == ObjKind::Ddp || k == ObjKind::Fsdp || k == ObjKind::Prepared || k == ObjKind::DeepSpeedEngine)
    return true;
  if (auto in = instances_.find(str(fn)); in != instances_.end() && isNnModule(in->second))
    return true;
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  return name == "model" || name == "net" || name == "network" || endsWith(name, "_model") ||
         endsWith(name, "_net") || startsWith(name, "model_");
}

// `wandb_project=cfg.wandb if is_master(cfg) else None`: a setting that the
// main process alone turns on says where that process reports (fairseq's
// progress bar), not what the call computes.
bool Builder::mainOnlySetting(SyntaxNode e) {
  e = unparen(e);
  if (!is(e, "conditional_expression") || namedChildCount(e) != 3)
    return false;
  auto off = [&](SyntaxNode x) {
    x = unparen(x);
    return is(x, "none") || is(x, "false") || text(x) == "0" || text(x) == "\"\"";
  };
  if (!off(namedChild(e, 0)) && !off(namedChild(e, 2)))
    return false;
  const Cond c = cond(namedChild(e, 1));
  return c.dependence() == Dep::Rank;
}

Cond Builder::atom(SyntaxNode e, Dep d) {
  // The same spelling in another function is another value (`flag` there may
  // be agreed, here not); within a function it is one decision.
  Cond c = Cond::atom(fnKey() + ":" + str(e), d);
  c.text = str(e);
  c.loc = 0;
  c.invariant = d == Dep::Uniform && unassignedParameter(e);
  return c;
}

bool Builder::unassignedParameter(SyntaxNode e) {
  e = unparen(e);
  if (!is(e, "identifier"))
    return false;
  auto f = fns_.find(curFn_);
  if (f == fns_.end() || f->second.def.isNull())
    return false;
  const std::string name = str(e);
  bool param = false;
  for (SyntaxNode p : namedKids(field(f->second.def, "parameters")))
    if (SyntaxNode id = parameterName(p); is(id, "identifier") && str(id) == name)
      param = true;
  if (!param)
    return false;
  auto [it, fresh] = assignedIn_.try_emplace(curFn_);
  if (fresh) {
    std::vector<SyntaxNode> stack{field(f->second.def, "body")};
    while (!stack.empty()) {
      SyntaxNode n = stack.back();
      stack.pop_back();
      if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
        continue;
      SyntaxNode target = is(n, "assignment") || is(n, "augmented_assignment") || is(n, "for_statement") ||
                                  is(n, "named_expression")
                              ? field(n, is(n, "named_expression") ? "name" : "left")
                          : is(n, "as_pattern_target") ? n
                                                       : SyntaxNode();
      std::vector<SyntaxNode> names;
      if (!target.isNull())
        names.push_back(target);
      while (!names.empty()) {
        SyntaxNode t = names.back();
        names.pop_back();
        if (is(t, "identifier"))
          it->second.insert(str(t));
        else if (!is(t, "attribute") && !is(t, "subscript"))
          for (SyntaxNode k : namedKids(t))
            names.push_back(k);
      }
      for (SyntaxNode k : namedKids(n))
        stack.push_back(k);
    }
  }
  return !it->second.count(name);
}

bool Builder::worldSizeValue(SyntaxNode x) {
  if (is(x, "call")) {
    const std::string q = qualified(field(x, "function"));
    const std::string l = lastPart(q.empty() ? std::string(text(field(x, "function"))) : q);
    return has(api().worldSizeFunctions, q) || l == "get_world_size" || l == "get_global_size";
  }
  // `cfg.NUM_GPUS`, `WORLD_SIZE`: configuration constants spell it in capitals.
  std::string last = lastPart(std::string(text(x)));
  std::transform(last.begin(), last.end(), last.begin(), ::tolower);
  return (is(x, "attribute") || is(x, "identifier")) && has(api().worldSizeAttributes, last);
}

// The number of processes in the job, not per node: `rank % n == 0` with such
// an n is rank 0's test (`nprocs` is mp.spawn's count on one node).
bool Builder::totalSizeValue(SyntaxNode x) {
  if (!worldSizeValue(x))
    return false;
  std::string last = lastPart(std::string(text(x)));
  std::transform(last.begin(), last.end(), last.begin(), ::tolower);
  return last != "num_nodes" && last != "num_devices" && last != "nprocs";
}

bool Builder::initializedTest(SyntaxNode call) {
  SyntaxNode fn = field(call, "function");
  if (has(api().initializedFunctions, qualified(fn)))
    return true;
  auto f = fns_.find(resolveCallee(fn));
  if (f != fns_.end())
    return f->second.returnsInitialized;
  const ExternalFunction *ext = externalCallee(fn);
  return ext && ext->summary.returnsInitialized;
}

// `x op literal` (or a literal list) where x is a parameter bound to a constant.
std::optional<bool> Builder::knownTest(SyntaxNode lhs, SyntaxNode rhs, const std::string &op) const {
  auto known = [&](SyntaxNode side) -> std::optional<std::int64_t> {
    side = unparen(side);
    if (!is(side, "identifier"))
      return std::nullopt;
    auto it = env_.vars.find(str(side));
    return it == env_.vars.end() ? std::nullopt : it->second.known;
  };
  std::optional<std::int64_t> x = known(lhs);
  SyntaxNode other = rhs;
  bool flipped = false;
  if (!x) {
    x = known(rhs);
    other = lhs;
    flipped = true;
  }
  if (!x)
    return std::nullopt;
  std::vector<std::int64_t> lits;
  other = unparen(other);
  const bool membership = op == "in" || op == "not in";
  if (membership && !flipped && (is(other, "list") || is(other, "tuple") || is(other, "set"))) {
    for (SyntaxNode k : namedKids(other)) {
      auto c = constantArgument(k);
      if (!c || is(unparen(k), "identifier"))
        return std::nullopt;
      lits.push_back(*c);
    }
  } else if (auto c = constantArgument(other, true); c && !membership) {
    lits.push_back(*c);
  } else {
    return std::nullopt;
  }
  // None equals only None; it has no order.
  const bool none = *x == kNoneValue || std::find(lits.begin(), lits.end(), kNoneValue) != lits.end();
  if (none && op != "==" && op != "!=" && op != "is" && op != "is not" && !membership)
    return std::nullopt;
  if (membership) {
    const bool in = std::find(lits.begin(), lits.end(), *x) != lits.end();
    return op == "in" ? in : !in;
  }
  const std::int64_t a = flipped ? lits[0] : *x, b = flipped ? *x : lits[0];
  if (op == "==" || op == "is")
    return a == b;
  if (op == "!=" || op == "is not")
    return a != b;
  if (op == "<")
    return a < b;
  if (op == "<=")
    return a <= b;
  if (op == ">")
    return a > b;
  if (op == ">=")
    return a >= b;
  return std::nullopt;
}

// The names of a setting that selects the distributed run.
static bool distributedRunFlag(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  static const std::set<std::string> names = {
      "distributed", "is_distributed", "use_distributed", "multiprocessing_distributed",
      "ddp", "use_ddp", "is_ddp", "distributed_training", "dist_training", "dist_train",
      "use_dist", "is_dist",
      "is_dist_avail_and_initialized", "is_dist_available_and_initialized",
      // MONAI's deepgrow/deepedit trainers: `--multi_gpu` turns DDP on
      "multi_gpu", "use_multi_gpu"};
  return names.count(name) > 0;
}

Cond Builder::cond(SyntaxNode e) {
  e = unparen(e);
  const std::string_view k = kindOf(e);
  // transfuser's `if parallel == True: ... init_process_group(...)`: the
  // test under which this module makes the world holds in every run whose
  // ranks can diverge; its other arm is the one-process run.
  if (!distSwitches_.empty() && !askingSwitch_ &&
      (k == "identifier" || k == "attribute" || k == "comparison_operator") &&
      distSwitches_.count(withoutSpaces(text(e)))) {
    askingSwitch_ = true; // value() of a comparison asks cond() of it
    const Val v = value(e);
    const Dep d = cond(e).dependence();
    askingSwitch_ = false;
    if (v.dep == Dep::Uniform && v.rank == RankKind::None && d == Dep::Uniform) {
      Cond c = Cond::constant(true);
      c.text = str(e);
      return c;
    }
  }
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
  // `dist.is_initialized()`, and a helper that answers it
  // (`is_dist_avail_and_initialized()`): true in the distributed run.
  if (k == "call" && initializedTest(e)) {
    Cond c = Cond::constant(true);
    c.text = str(e);
    return c;
  }
  if (k == "comparison_operator" && namedChildCount(e) == 2) {
    SyntaxNode lhs = namedChild(e, 0), rhs = namedChild(e, 1);
    const std::string op = comparisonOperator(e);
    // A parameter this specialisation's callers bound (`local_rank not in [-1, 0]`
    // with local_rank=-1): decided alike on every rank.
    if (std::optional<bool> known = knownTest(lhs, rhs, op)) {
      Cond c = Cond::constant(*known);
      c.text = str(e);
      return c;
    }
    // `if gold_labels.size() != predictions.size(): raise ...` (allennlp's
    // metrics): two tensors of one batch compared whole, shape against shape.
    // They agree or not by the code that made them, alike on every rank.
    auto wholeShape = [&](SyntaxNode x) { // `x.size()` or `x.shape`, not one dimension
      x = unparen(x);
      if (is(x, "attribute"))
        return str(field(x, "attribute")) == "shape";
      SyntaxNode f = field(x, "function");
      return is(x, "call") && is(f, "attribute") && str(field(f, "attribute")) == "size" &&
             namedChildCount(field(x, "arguments")) == 0;
    };
    if ((op == "==" || op == "!=") && wholeShape(lhs) && wholeShape(rhs)) {
      Cond c = Cond::atom(str(e), Dep::Uniform);
      c.text = str(e);
      return c;
    }
    // `if dist.get_world_size() > 1:` holds wherever ranks can disagree: a
    // one-process run has no one to diverge from.
    if (std::int64_t n = 0; worldSizeValue(unparen(lhs)) && intLiteral(text(unparen(rhs)), n)) {
      std::optional<bool> known;
      if ((op == ">" && n == 1) || (op == ">=" && n == 2) || (op == "!=" && n == 1))
        known = true;
      else if ((op == "==" && n == 1) || (op == "<=" && n == 1) || (op == "<" && n == 2))
        known = false;
      if (known) {
        Cond c = Cond::constant(*known);
        c.text = str(e);
        return c;
      }
    }
    // rank-valued side and a literal or literal list
    auto evalSide = [&](SyntaxNode side, std::int64_t &mod, std::optional<RankKind> &rk) {
      side = unparen(side);
      mod = 0;
      if (is(side, "binary_operator") && str(field(side, "operator")) == "%") {
        std::int64_t m = 0;
        rk = rankSource(field(side, "left"));
        const Val divisor = value(field(side, "right"));
        if (rk && intLiteral(text(field(side, "right")), m))
          mod = m;
        else if (rk && divisor.worldSize && *rk == RankKind::Global)
          mod = 0; // rank % world_size is the rank itself
        else if (rk && divisor.dep == Dep::Uniform) {
          mod = -1; // rank % n with n known only at run time: one rank per group of n
        } else
          rk.reset();
        return;
      }
      rk = rankSource(side);
    };
    // Accelerate's `accelerator.distributed_type != DistributedType.NO`: true in
    // every run the rules reason about, as `dist.is_initialized()` is.
    {
      const std::string l = str(unparen(lhs)), r = str(unparen(rhs));
      auto single = [](const std::string &t) {
        return t == "DistributedType.NO" || endsWith(t, ".DistributedType.NO");
      };
      if ((single(l) || single(r)) && (lastPart(single(l) ? r : l) == "distributed_type")) {
        Cond c = Cond::constant(op == "!=" || op == "is not");
        if (op == "!=" || op == "is not" || op == "==" || op == "is") {
          c.text = str(e);
          return c;
        }
      }
    }
    // `task_type in ['image_classification']` after `task_type =
    // data['task_info']['task_type']` (Uni-Perceiver's tester): a field of a
    // sample that names its kind, tested against names the code wrote.  The
    // datasets fill it from their settings, alike on every rank; only what the
    // sample holds is the rank's.  (A rank or a launcher variable is no
    // rank-local value of this kind: `os.environ["LOCAL_RANK"] == "0"` stays.)
    if (op == "==" || op == "!=" || op == "in" || op == "not in") {
      auto literal = [&](SyntaxNode x) {
        return is(x, "string") &&
               std::none_of(namedKids(x).begin(), namedKids(x).end(),
                            [](SyntaxNode k) { return is(k, "interpolation"); });
      };
      auto names = [&](SyntaxNode x) {
        x = unparen(x);
        if (literal(x))
          return true;
        if (!is(x, "list") && !is(x, "tuple") && !is(x, "set"))
          return false;
        size_t n = 0;
        for (SyntaxNode k : namedKids(x)) {
          if (is(k, "comment"))
            continue;
          if (!literal(k))
            return false;
          ++n;
        }
        return n > 0;
      };
      SyntaxNode other = names(rhs) ? lhs : (op == "==" || op == "!=") && names(lhs) ? rhs : SyntaxNode();
      if (!other.isNull()) {
        SyntaxNode f = unparen(other);
        if (is(f, "identifier"))
          if (SyntaxNode v = assignedBefore(f); !v.isNull())
            f = unparen(v);
        const bool sampleField =
            (is(f, "subscript") && is(unparen(field(f, "subscript")), "string")) ||
            (is(f, "call") && is(field(f, "function"), "attribute") &&
             str(field(field(f, "function"), "attribute")) == "get" && !args(f).empty() &&
             args(f)[0].name.empty() && is(unparen(args(f)[0].value), "string") &&
             !startsWith(qualified(field(f, "function")), "os."));
        const Val fv = value(other);
        if (sampleField && fv.dep == Dep::Local && fv.rank == RankKind::None && !fv.cond && !fv.existsWhen &&
            !rankSource(unparen(other)))
          return atom(e, Dep::Uniform);
      }
    }
    // `saver is not None` where saver exists on some ranks only: that rank test.
    if ((op == "is" || op == "is not" || op == "==" || op == "!=") &&
        (is(unparen(rhs), "none") || is(unparen(lhs), "none"))) {
      Val obj = value(is(unparen(rhs), "none") ? lhs : rhs);
      // VL-BERT's `rank is None or rank == 0` with `rank =
      // distributed.get_rank()`: a rank is a number in every run whose ranks
      // can diverge (None is its one-process run).
      if (obj.rank != RankKind::None && !obj.existsWhen && !obj.cond) {
        Cond c = Cond::constant(op == "is not" || op == "!=");
        c.text = str(e);
        return c;
      }
      if (obj.existsWhen) {
        Cond c = *obj.existsWhen;
        unstamp(c);
        if (op == "is" || op == "==")
          c = Cond::negate(c);
        c.text = str(e);
        return c;
      }
      // `if accelerator is not None: accelerator.wait_for_everyone()`
      // (lerobot's checkpoint helpers, handed the Accelerator or None): the
      // object that runs the ranks is there in every run whose ranks can
      // diverge, as a rank is a number there.
      {
        SyntaxNode tested = unparen(is(unparen(rhs), "none") ? lhs : rhs);
        const std::string w = lastPart(str(tested));
        if ((is(tested, "identifier") || is(tested, "attribute")) &&
            (objectKind(str(tested)) == ObjKind::Accelerator || w == "accelerator" || w == "fabric")) {
          Cond c = Cond::constant(op == "is not" || op == "!=");
          c.text = str(e);
          return c;
        }
      }
      // `grad is not None`, `p.grad is None`: whether a parameter has a
      // gradient is the model's and the graph's, the same on every rank;
      // only its values are the rank's.
      {
        SyntaxNode tested = unparen(is(unparen(rhs), "none") ? lhs : rhs);
        const std::string w = lastPart(str(tested));
        if ((is(tested, "identifier") || is(tested, "attribute")) && (w == "grad" || w == "grads"))
          return atom(e, Dep::Uniform);
      }
      if (obj.presenceUniform)
        return atom(e, Dep::Uniform);
      // `dp_rank is not None` (OpenDiT's `set_seed(seed, dp_rank=None)`):
      // every rank is handed its rank, or none is; only the value differs.
      if (rankSource(unparen(is(unparen(rhs), "none") ? lhs : rhs)))
        return atom(e, Dep::Uniform);
      // `os.getenv("RANK") is not None`: a launcher sets its variables on
      // every rank or on none; only their values are the rank's.
      {
        SyntaxNode tested = unparen(is(unparen(rhs), "none") ? lhs : rhs);
        if (is(tested, "call")) {
          const std::string q = qualified(field(tested, "function"));
          if ((q == "os.environ.get" || q == "os.getenv" || q == "environ.get") &&
              args(tested).size() == 1)
            return atom(e, Dep::Uniform);
        }
      }
      // Whether a value is there at all is the code's, alike on every rank,
      // where the caller or the collator decides it: a forward()'s optional
      // argument (`labels is not None`), a batch key read with `.get("k")`,
      // a field of a model's output (`outputs.token_accuracy is not None`);
      // trl's and InternVL's trainers.  (A batch drawn with `next(it, None)`
      // is the rank's own: it stays rank-local.)
      {
        SyntaxNode tested = unparen(is(unparen(rhs), "none") ? lhs : rhs);
        bool structural = false;
        // `labels = inputs.get("labels")`, then `if labels is not None:`.
        // `latents = batch.latents`, then `if latents is None: raise` (FastVideo's
        // training methods): whether the pipeline filled a field of the batch.
        if (is(tested, "identifier"))
          if (SyntaxNode v = assignedBefore(tested);
              !v.isNull() && (is(unparen(v), "call") || is(unparen(v), "attribute") || is(unparen(v), "subscript")))
            tested = unparen(v);
        auto batchName = [](std::string o) {
          std::transform(o.begin(), o.end(), o.begin(), ::tolower);
          return o.find("batch") != std::string::npos || o == "inputs" || o == "sample" || o == "samples";
        };
        // The object whose field is tested: `outputs.loss`, or
        // `getattr(outputs, "loss", None)` (peft's AdaLoRA), the field read
        // with a default.
        std::string fieldObject;
        if (is(tested, "attribute") && is(field(tested, "object"), "identifier")) {
          fieldObject = str(field(tested, "object"));
        } else if (is(tested, "call") && qualified(field(tested, "function")) == "getattr") {
          auto as = args(tested);
          if (as.size() == 3 && as[0].name.empty() && is(unparen(as[0].value), "identifier") &&
              is(unparen(as[1].value), "string") && is(unparen(as[2].value), "none"))
            fieldObject = str(unparen(as[0].value));
        }
        if (!fieldObject.empty()) {
          std::transform(fieldObject.begin(), fieldObject.end(), fieldObject.begin(), ::tolower);
          structural = fieldObject.find("output") != std::string::npos || fieldObject == "out" ||
                       fieldObject == "outs" || batchName(fieldObject);
        } else if (is(tested, "call") && is(field(tested, "function"), "attribute") &&
                   str(field(field(tested, "function"), "attribute")) == "get") {
          auto as = args(tested);
          structural = !as.empty() && as[0].name.empty() && is(unparen(as[0].value), "string");
        } else if (is(tested, "subscript") && is(field(tested, "value"), "identifier")) {
          structural = batchName(str(field(tested, "value"))) && is(unparen(field(tested, "subscript")), "string");
          // `losses[key] is not None` over a model's loss dict (TorchMultimodal's
          // FLAVA): which losses a result holds is the code's that made it.
          std::string o = str(field(tested, "value"));
          std::transform(o.begin(), o.end(), o.begin(), ::tolower);
          structural = structural || o == "losses" || o == "loss_dict" || o.find("output") != std::string::npos ||
                       o == "out" || o == "outs";
        } else if (is(tested, "identifier")) {
          auto f = fns_.find(curFn_);
          // Or any function's optional argument left at None or handed one
          // (allennlp's metrics: `def __call__(self, predictions, gold_labels,
          // mask=None)`, then `if mask is not None:`), not bound again here.
          const bool unbound = assignedBefore(tested).isNull();
          if (f != fns_.end() && !f->second.def.isNull())
            for (SyntaxNode k : namedKids(field(f->second.def, "parameters"))) {
              const bool named = (is(k, "identifier") ? text(k) : text(parameterName(k))) == text(tested);
              const bool noneDefault = (is(k, "default_parameter") || is(k, "typed_default_parameter")) &&
                                       is(unparen(field(k, "value")), "none");
              structural = structural || (named && (f->second.name == "forward" || (noneDefault && unbound)));
              // A hook handed the step's outputs (DeBERTa's `post_loss_fn(outputs)`:
              // `if outputs is None or len(outputs) == 0: return`): whether the
              // trainer hands any is its code's, not a rank's data.
              std::string o = str(tested);
              std::transform(o.begin(), o.end(), o.begin(), ::tolower);
              structural = structural || (named && unbound && (o == "outputs" || o == "output" || o == "outs"));
            }
        }
        if (structural && !obj.existsWhen && !obj.cond)
          return atom(e, Dep::Uniform);
      }
      // `val_loader is not None` where the loader was made with the rank
      // (`DistributedDataLoader(path, B, T, rank, world)`) under a decision
      // every rank takes alike: made from the rank is not None by rank.
      if (obj.dep == Dep::Rank && obj.rank == RankKind::None && !obj.cond)
        return atom(e, Dep::Uniform);
    }
    // `"total_loss" not in loss_dict.keys()`: which keys a loss or output
    // dict has is the code's that made it, the same on every rank (only its
    // values are the rank's); a batch's keys may be the rank's own (a loader
    // that mixes tasks: `"image" in samples`), so only result dicts by name.
    // A key held by name (`main_input_name not in inputs`, HF Trainer's token
    // count that trainers copy): a key as well.
    auto keyName = [&](SyntaxNode k) {
      k = unparen(k);
      if (is(k, "string"))
        return true;
      if (!is(k, "identifier") && !is(k, "attribute"))
        return false;
      std::string n = lastPart(str(k));
      std::transform(n.begin(), n.end(), n.begin(), ::tolower);
      return value(k).dep != Dep::Rank && (endsWith(n, "_name") || n == "key" || endsWith(n, "_key"));
    };
    // `tr_loss.device != tr_loss_step.device` (HF Trainer's check, copied into
    // LLaVA-NeXT's): two values of this rank compared by where or what they
    // are; the code put them there, alike on every rank.
    {
      auto placement = [&](SyntaxNode x) {
        x = unparen(x);
        return is(x, "attribute") && (text(field(x, "attribute")) == "device" || text(field(x, "attribute")) == "dtype");
      };
      if ((op == "==" || op == "!=" || op == "is" || op == "is not") && placement(lhs) && placement(rhs))
        return atom(e, Dep::Uniform);
    }
    if ((op == "in" || op == "not in") && keyName(lhs)) {
      SyntaxNode box = unparen(rhs);
      if (is(box, "call") && is(field(box, "function"), "attribute") &&
          str(field(field(box, "function"), "attribute")) == "keys")
        box = field(field(box, "function"), "object");
      // A batch's keys too: the collator and the config that made it are
      // every rank's (trl's `"attention_mask" in inputs`, open-instruct's
      // `"cu_seq_lens_q" in batch`; no true report on the corpora rested on
      // a loader that mixes key sets across ranks).
      if (is(box, "identifier") || is(box, "attribute") || is(box, "subscript"))
        return atom(e, Dep::Uniform);
    }
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
      // `local_rank > -1`, `rank >= 0` (Person_reID's save helper: `if
      // local_rank > -1: if local_rank == 0: save`): true in every
      // distributed run, `< 0` false, as above.
      if (!lits.empty() && mod == 0 && (op == ">" || op == ">=" || op == "<" || op == "<=")) {
        bool negative = true;
        for (auto x : lits)
          negative = negative && (x < 0 || (x == 0 && (op == ">=" || op == "<") && !flipped));
        if (negative) {
          const bool greater = (op == ">" || op == ">=") != flipped;
          Cond k = Cond::constant(greater);
          k.text = str(e);
          return k;
        }
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
  if (v.existsWhen && !v.cond) {
    Cond c = *v.existsWhen; // `if saver:`
    unstamp(c);
    c.text = str(e);
    return c;
  }
  if (v.cond) {
    Cond c = *v.cond;
    if (c.text.empty())
      c.text = str(e);
    return c;
  }
  if (v.known && (is(e, "identifier") || is(e, "attribute"))) {
    Cond c = Cond::constant(*v.known != 0 && *v.known != kNoneValue);
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
  // `if args.distributed:`, `if self.config.run_cfg.distributed:`: a setting
  // that says the run is distributed, unknown here but the same on every rank.
  // In the run whose hazards these are it holds, as `dist.is_initialized()` does.
  if (v.dep == Dep::Uniform && (is(e, "identifier") || is(e, "attribute")) &&
      distributedRunFlag(is(e, "identifier") ? str(e) : str(field(e, "attribute")))) {
    Cond c = Cond::constant(true);
    c.text = str(e);
    return c;
  }
  // A library's `distributed_utils.is_distributed()` (OLMo-core's): the same
  // question, asked of code outside the project.
  if (v.dep == Dep::Uniform && is(e, "call") && args(e).empty() &&
      resolveCallee(field(e, "function")).empty() && !externalCallee(field(e, "function")) &&
      distributedRunFlag(lastPart(std::string(text(field(e, "function")))))) {
    Cond c = Cond::constant(true);
    c.text = str(e);
    return c;
  }
  Cond c = atom(e, v.dep);
  // `os.path.exists(path)`: a create-once cache
  if (is(e, "call") && (has(api().fileProbes, qualified(field(e, "function"))) || pathProbe(e)))
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
    for (SyntaxNode t : namedKids(target)) {
      Val part{v.dep, RankKind::None, std::nullopt};
      part.batch = v.batch;
      bind(t, part);
    }
  }
}

void Builder::bindTargets(SyntaxNode target, Dep d) { bind(target, Val{d, RankKind::None, {}}); }

namespace {
// The values an expression is made of: names and attribute chains, not the
// functions it calls (`os.path.join(args.out, "x")` is made of `args.out`).
void valueNames(const SyntaxTree &t, SyntaxNode e, std::set<std::string> &out) {
  if (e.isNull())
    return;
  if (is(e, "identifier") || is(e, "attribute")) {
    out.insert(std::string(t.text(e))); // `args.resume`, not every `args.*`
    return;
  }
  if (is(e, "call")) {
    SyntaxNode fn = field(e, "function");
    // `Path(d).joinpath(...)`, `out_dir.open()`: the object is the path; in
    // `os.path.join(a, b)` it is the module, which names no file (a probe of
    // one join and a write to another share it).
    static const std::set<std::string_view> modules = {"os", "os.path", "osp", "posixpath", "pathlib"};
    if (is(fn, "attribute") && !modules.count(t.text(field(fn, "object"))))
      valueNames(t, field(fn, "object"), out);
    valueNames(t, field(e, "arguments"), out);
    return;
  }
  for (SyntaxNode k : namedKids(e))
    valueNames(t, k, out);
}
} // namespace

// A file probe (`os.path.isfile(opts.resume)`) answers alike on every rank
// of a run on shared storage, the storage a resumable job needs.  It races
// when the function also writes what it asks about (the create-once cache,
// `if not os.path.exists(cached): ... torch.save(data, cached)`): one rank
// may ask after another wrote it.
// `checkpoint_path.exists()`, `(out / "done").is_file()`: pathlib's probes,
// as os.path's.
bool Builder::pathProbe(SyntaxNode c) const {
  SyntaxNode fn = field(c, "function");
  if (!is(fn, "attribute") || !args(c).empty())
    return false;
  const std::string m = str(field(fn, "attribute"));
  if (m != "exists" && m != "is_file" && m != "is_dir")
    return false;
  // not `os.path.exists` spelled through an alias, nor a method of a module
  return qualified(fn).find("os.path") == std::string::npos;
}

// A function whose every return hands back True, False or None: the
// dependence of the tests that choose among its returns, read where it is
// called, when they read nothing of its own (no parameter, no local) -- the
// run's settings and objects around it (`progress.global_step >=
// args.max_train_steps`).  Otherwise none.
std::optional<Dep> Builder::decisionReturnDep(const FnInfo &fi) {
  SyntaxNode body = field(fi.def, "body");
  std::set<std::string> own;
  bool method = false;
  for (const auto &p : parameterList(fi, method))
    own.insert(p.name);
  std::vector<SyntaxNode> returns;
  std::vector<SyntaxNode> stack{body};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda"))
      continue;
    if (is(n, "assignment") || is(n, "augmented_assignment"))
      for (SyntaxNode t : {field(n, "left")})
        if (is(t, "identifier"))
          own.insert(str(t));
    if (is(n, "for_statement") && is(field(n, "left"), "identifier"))
      own.insert(str(field(n, "left")));
    if (is(n, "return_statement")) {
      if (namedChildCount(n) == 1) {
        SyntaxNode r = unparen(namedChild(n, 0));
        if (!is(r, "true") && !is(r, "false") && !is(r, "none"))
          return std::nullopt;
      }
      returns.push_back(n);
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  if (returns.empty())
    return std::nullopt;
  std::set<uint32_t> seen;
  Dep d = Dep::Uniform;
  for (SyntaxNode r : returns)
    for (SyntaxNode p = parentOf(r); !p.isNull() && p != fi.def; p = parentOf(p)) {
      SyntaxNode test;
      if (is(p, "if_statement") || is(p, "elif_clause") || is(p, "while_statement"))
        test = field(p, "condition");
      else if (is(p, "for_statement"))
        test = field(p, "right");
      else if (is(p, "try_statement") || is(p, "except_clause") || is(p, "with_statement"))
        return std::nullopt; // an exception or a context decides: not read here
      if (test.isNull() || !seen.insert(startByte(test)).second)
        continue;
      std::vector<SyntaxNode> names{test};
      while (!names.empty()) {
        SyntaxNode n = names.back();
        names.pop_back();
        if (is(n, "identifier") && own.count(str(n)) &&
            !(is(parentOf(n), "attribute") && field(parentOf(n), "attribute") == n))
          return std::nullopt;
        for (SyntaxNode k : namedKids(n))
          names.push_back(k);
      }
      d = core::join(d, value(test).dep);
    }
  return d;
}

bool Builder::probeRacesWrite(SyntaxNode probe) {
  SyntaxNode scope = enclosingScope(probe);
  if (scope.isNull())
    return true;
  auto [it, fresh] = writtenNames_.try_emplace(startByte(scope));
  FunctionWrites &fw = it->second;
  if (fresh) {
    std::vector<SyntaxNode> stack{scope};
    while (!stack.empty()) {
      SyntaxNode n = stack.back();
      stack.pop_back();
      if (is(n, "call")) {
        SyntaxNode fn = field(n, "function");
        const std::string q = qualified(fn);
        const std::string l = lastPart(q.empty() ? std::string(text(fn)) : q);
        const bool opens = q == "open" || q == "io.open" || (is(fn, "attribute") && l == "open");
        const bool writes = has(api().checkpointWriters, q) || has(user_.checkpointWriters, q) ||
                            has(user_.checkpointWriters, l) || has(api().fileWriters, q) ||
                            (opens && openKind(n) != OpenKind::None) ||
                            (is(fn, "attribute") && has(api().fileWriteMethods, l));
        // `if not os.path.exists(d): os.makedirs(d, exist_ok=True)` on every
        // rank makes the same empty folder whoever comes first: what the
        // folder holds, which the code goes on to read, is not changed.
        // (parler-tts' resume step, read from the checkpoints folder.)
        if (writes) {
          FunctionWrites::Write w{n, {}};
          valueNames(tree_, field(n, "arguments"), w.names);
          if (is(fn, "attribute"))
            valueNames(tree_, field(fn, "object"), w.names);
          fw.writes.push_back(std::move(w));
        }
        // Wrapping the model in DDP broadcasts rank 0's parameters to every
        // rank, and creating the group is a rendezvous: no rank goes past
        // either before every rank has come (Wuerstchen probes its resume
        // checkpoint before `DDP(model)` and saves to it in the loop after).
        if (synchronisingCall(fn) || kindOfCtor(n) == ObjKind::Ddp || l == "init_process_group")
          fw.syncs.push_back(n);
        // A training step between the probe and the write orders them too:
        // fast-autoaugment's `run_epoch(model, ...)`, whose backward
        // all-reduces the DDP model's gradients, or this module's helper that
        // runs a collective.
        else if (auto g = fns_.find(resolveCallee(fn)); g != fns_.end() && !g->second.def.isNull() &&
                 g->second.def != scope &&
                 (bodySynchronises(g->second.def, 1) ||
                  (hasDdp_ && text(g->second.def).find(".backward(") != std::string_view::npos)))
          fw.syncs.push_back(n);
        else if (hasDdp_ && l == "backward" && is(fn, "attribute"))
          fw.syncs.push_back(n);
      }
      for (SyntaxNode k : namedKids(n))
        stack.push_back(k);
    }
  }
  std::set<std::string> asked;
  valueNames(tree_, field(probe, "arguments"), asked);
  if (pathProbe(probe)) // `ckpt_path.exists()`: the path is the object
    valueNames(tree_, field(field(probe, "function"), "object"), asked);
  auto contains = [](SyntaxNode a, SyntaxNode b) {
    return startByte(a) <= startByte(b) && endByte(b) <= endByte(a);
  };
  // A collective after `from` and before `to` that every way to `target`
  // passes: no branch, loop or handler around it that does not hold the
  // target too (rank 0's barrier in one arm orders nothing in the other).
  auto syncBetween = [&](std::uint32_t from, std::uint32_t to, SyntaxNode target) {
    return std::any_of(fw.syncs.begin(), fw.syncs.end(), [&](SyntaxNode sy) {
      if (startByte(sy) <= from || startByte(sy) >= to)
        return false;
      for (SyntaxNode up = parentOf(sy); !up.isNull() && !contains(up, target); up = parentOf(up))
        if (is(up, "if_statement") || is(up, "elif_clause") || is(up, "else_clause") ||
            is(up, "for_statement") || is(up, "while_statement") || is(up, "try_statement") ||
            is(up, "except_clause") || is(up, "conditional_expression") ||
            is(up, "boolean_operator") || is(up, "lambda") || is(up, "function_definition"))
          return false;
      return true;
    });
  };
  // A write in a handler of the try whose body makes the probe (Wuerstchen's
  // resume: `try: ckpt = torch.load(p) if os.path.exists(p) else None`
  // `except RuntimeError: os.remove(p); shutil.copyfile(p + ".bak", p)`)
  // comes after a load of the file failed on that rank: every rank has long
  // asked by then, at start-up.  The handler's every-rank rewrite of one
  // file is a hazard of its own, not a reason for the ranks to answer the
  // question differently.
  auto afterFailedLoad = [&](SyntaxNode call) {
    for (SyntaxNode q = call, p = parentOf(call); !p.isNull() && p != scope; q = p, p = parentOf(p))
      if (is(q, "except_clause") && is(p, "try_statement"))
        return contains(field(p, "body"), probe);
    return false;
  };
  // The string literals a path is spelled with (`osp.join(out,
  // 'checkpoint_best.pt')`): a probe and a write in one folder whose
  // literals share nothing name different files (LaViLa's narrator probes
  // the trained checkpoint and writes its caches beside it).
  auto literals = [](SyntaxNode from) { return pathLiterals(from); };
  // projected-gan's `os.path.isfile(misc.get_ckpt_path(run_dir))`: the
  // literals a path helper of the project joins (its returns').
  auto withHelpers = [&](SyntaxNode from) {
    std::set<std::string> out = literals(from);
    forEachOwnNode(from, [&](SyntaxNode n) {
      if (!is(n, "call"))
        return true;
      auto f = fns_.find(resolveCallee(field(n, "function")));
      if (f == fns_.end() || f->second.def.isNull()) {
        if (f == fns_.end())
          if (const ExternalFunction *ext = externalCallee(field(n, "function")))
            out.insert(ext->summary.returnLiterals.begin(), ext->summary.returnLiterals.end());
        return true;
      }
      forEachOwnNode(field(f->second.def, "body"), [&](SyntaxNode r) {
        if (is(r, "return_statement"))
          for (const std::string &l : literals(r))
            out.insert(l);
        return true;
      });
      return true;
    });
    return out;
  };
  const std::set<std::string> probeLiterals = withHelpers(field(probe, "arguments"));
  for (const auto &w : fw.writes) {
    if (std::none_of(asked.begin(), asked.end(), [&](const std::string &n) { return w.names.count(n); }))
      continue;
    if (afterFailedLoad(w.call))
      continue;
    if (!probeLiterals.empty()) {
      const std::set<std::string> writeLiterals = withHelpers(field(w.call, "arguments"));
      if (!writeLiterals.empty() &&
          std::none_of(probeLiterals.begin(), probeLiterals.end(),
                       [&](const std::string &l) { return writeLiterals.count(l) > 0; }))
        continue;
    }
    // Every rank asks, then waits, and only then does anyone write
    // (LLaMA2-Accessory's evaluation scripts: skip a finished task, run
    // it, barrier, rank 0 writes the result): no rank asks after a write.
    // In a loop the next round's question must wait behind the write too.
    // (Unless each round names its own file: `task_infer_path =
    // f"{out}/{task}.jsonl"` assigned in the loop before the question.)
    auto namedPerRound = [&](SyntaxNode loop) {
      std::vector<SyntaxNode> st{loop};
      while (!st.empty()) {
        SyntaxNode n = st.back();
        st.pop_back();
        if (startByte(n) >= startByte(probe))
          continue;
        if (is(n, "assignment") && is(field(n, "left"), "identifier") && asked.count(str(field(n, "left"))))
          return true;
        for (SyntaxNode k : namedKids(n))
          st.push_back(k);
      }
      return false;
    };
    bool ordered = syncBetween(endByte(probe), startByte(w.call), w.call);
    for (SyntaxNode up = parentOf(w.call); ordered && !up.isNull() && up != scope; up = parentOf(up))
      if ((is(up, "for_statement") || is(up, "while_statement")) && startByte(probe) > startByte(up) &&
          endByte(probe) < endByte(up) && !namedPerRound(up))
        ordered = syncBetween(endByte(w.call), endByte(up), up);
    if (!ordered)
      return true;
  }
  return false;
}

bool Builder::isLoaderIterable(SyntaxNode it) const {
  it = unparen(it);
  // `tqdm(loader) if rank == 0 else loader`: either way the same batches.
  if (is(it, "conditional_expression") && namedChildCount(it) == 3)
    return isLoaderIterable(namedChild(it, 0)) || isLoaderIterable(namedChild(it, 2));
  if (is(it, "call")) {
    std::string l = lastPart(qualified(field(it, "function")));
    std::transform(l.begin(), l.end(), l.begin(), ::tolower);
    // Progress bars (`tqdm`, a project's `TQDM` class) iterate what they wrap.
    if (l == "enumerate" || l == "tqdm" || l == "zip" || l == "iter") {
      for (SyntaxNode a : namedKids(field(it, "arguments")))
        if (isLoaderIterable(a))
          return true;
      return false;
    }
    return kindOfCtor(it) == ObjKind::DataLoader;
  }
  std::string t(text(it));
  if (is(it, "identifier") && loaderNames_.count(t))
    return true;
  auto o = findObject(t);
  if (o != objects_.end() && o->second == ObjKind::DataLoader)
    return true;
  std::string lower = t;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  // `for split in raw_datasets` goes over the datasets (their names), the
  // same on every rank, not over one dataset's samples.
  const bool manyDatasets = endsWith(lower, "datasets");
  // Likewise `for loader in self.loaders` (SeqTrack's train and val
  // loaders): the loop goes over the loaders, and `loader.epoch_interval`
  // is a setting, not a sample.
  if (endsWith(lower, "loaders"))
    return false;
  return lower.find("loader") != std::string::npos || lower.find("batches") != std::string::npos ||
         (lower.find("dataset") != std::string::npos && !manyDatasets) ||
         lower.find("iterator") != std::string::npos;
}

// ---------------------------------------------------------------------------
// Statements

} // namespace ddplint::pyfe::build
