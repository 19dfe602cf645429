#include <set>
#include "ddplint/core/Model.h"

#include <cctype>

namespace ddplint::core {

Cond Cond::constant(bool v) {
  Cond c;
  c.kind = Kind::Const;
  c.constValue = v;
  return c;
}

Cond Cond::rankCmp(CmpOp op, std::int64_t value, std::int64_t mod) {
  Cond c;
  c.kind = Kind::RankCmp;
  c.op = op;
  c.value = value;
  c.mod = mod;
  c.dep = Dep::Rank;
  return c;
}

Cond Cond::atom(std::string key, Dep dep) {
  Cond c;
  c.kind = Kind::Atom;
  c.key = std::move(key);
  c.dep = dep;
  return c;
}

Cond Cond::negate(Cond inner) {
  if (inner.kind == Kind::Const) {
    inner.constValue = !inner.constValue;
    return inner;
  }
  Cond c;
  c.kind = Kind::Not;
  c.text = inner.text.empty() ? "" : "!(" + inner.text + ")";
  c.loc = inner.loc;
  c.kids.push_back(std::move(inner));
  return c;
}

static Cond combine(Cond::Kind kind, Cond a, Cond b) {
  // A constant side decides or drops out: `not dist.is_initialized() or rank == 0`
  // is `rank == 0` in a distributed run.
  const bool isAnd = kind == Cond::Kind::And;
  if (a.kind == Cond::Kind::Const)
    return a.constValue == isAnd ? b : a;
  if (b.kind == Cond::Kind::Const)
    return b.constValue == isAnd ? a : b;
  Cond c;
  c.kind = kind;
  c.kids.push_back(std::move(a));
  c.kids.push_back(std::move(b));
  return c;
}

Cond Cond::both(Cond a, Cond b) { return combine(Kind::And, std::move(a), std::move(b)); }

Cond Cond::either(Cond a, Cond b) { return combine(Kind::Or, std::move(a), std::move(b)); }

Dep Cond::dependence() const {
  switch (kind) {
  case Kind::Const:
    return Dep::Uniform;
  case Kind::RankCmp:
    return Dep::Rank;
  case Kind::Atom:
    return dep;
  default: {
    Dep d = Dep::Uniform;
    for (const auto &k : kids)
      d = join(d, k.dependence());
    return d;
  }
  }
}

Node Node::block(std::vector<Node> kids) {
  Node n;
  n.kind = Kind::Block;
  n.kids = std::move(kids);
  return n;
}

Node Node::makeEvent(EventKind k, std::string name, Loc loc) {
  Node n;
  n.kind = Kind::Event;
  n.event = k;
  n.name = std::move(name);
  n.loc = loc;
  return n;
}

Node Node::makeCall(std::string callee, std::string display, Loc loc) {
  Node n;
  n.kind = Kind::Call;
  n.callee = std::move(callee);
  n.name = std::move(display);
  n.loc = loc;
  return n;
}

Node Node::makeIf(Cond c, Node thenB, Node elseB, Loc loc) {
  Node n;
  n.kind = Kind::If;
  n.cond = std::move(c);
  n.loc = loc;
  n.kids.push_back(std::move(thenB));
  n.kids.push_back(std::move(elseB));
  return n;
}

Node Node::makeLoop(Dep trip, std::string tripText, Loc tripLoc, Node body, Loc loc) {
  Node n;
  n.kind = Kind::Loop;
  n.trip = trip;
  n.tripText = std::move(tripText);
  n.tripLoc = tripLoc;
  n.loc = loc;
  n.kids.push_back(std::move(body));
  return n;
}

Node Node::makeExit(ExitKind k, Loc loc) {
  Node n;
  n.kind = Kind::Exit;
  n.exit = k;
  n.loc = loc;
  return n;
}

bool namesRecordFile(std::string_view name) {
  static const std::set<std::string> logWords = {"log", "logs", "logfile", "logpath",
                                                  "logfilename"};
  static const std::set<std::string> settingsWords = {
      "args", "config", "configs", "cfg", "params", "hparams", "hyperparams",
      "settings", "opts", "options", "argv", "cmdline", "hyperparameters",
      // A checkpoint's `metadata.json` (step and settings, FastVideo's): read
      // when a run resumes, never while this one runs.
      "metadata"};
  // A settings format: what a run writes in YAML or TOML is its configuration
  // (lit-gpt's `model_config.yaml`, `prompt_style.yaml` beside a checkpoint).
  static const std::set<std::string> settingsFormats = {"yaml", "yml", "toml", "ini", "cfg"};
  static const std::set<std::string> weightsWords = {
      "ckpt", "checkpoint", "checkpoints", "weights", "pt", "pth", "bin", "safetensors",
      "npy", "npz", "pkl", "state", "model"};
  static const std::set<std::string> describesModel = {"config", "configs", "cfg", "args",
                                                       "settings", "options", "hparams",
                                                       "hyperparams", "hyperparameters"};
  bool log = false, settings = false, weights = false;
  std::string word, last;
  for (char ch : std::string(name) + " ") {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      continue;
    }
    log = log || logWords.count(word);
    settings = settings || settingsWords.count(word);
    weights = weights || (weightsWords.count(word) && word != "model");
    // "model" says weights unless a settings word follows it: ALPRO's
    // `save_model_config_path`, Hugging Face's `model_config.json` and
    // `model_args.yaml` describe the model.
    if (!word.empty() && last == "model" && !describesModel.count(word))
      weights = true;
    if (!word.empty())
      last = word;
    word.clear();
  }
  weights = weights || last == "model";
  return log || (settings && !weights) || settingsFormats.count(last);
}

// Whether a name's words include one of `yes` and none of `no`.
static bool wordsSay(std::string_view name, const std::set<std::string> &yes,
                     const std::set<std::string> &no) {
  bool said = false;
  std::string word;
  for (char ch : std::string(name) + " ") {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      continue;
    }
    if (no.count(word))
      return false;
    said = said || yes.count(word);
    word.clear();
  }
  return said;
}

bool namesWeightsFile(std::string_view name) {
  static const std::set<std::string> weightsWords = {
      "ckpt", "checkpoint", "checkpoints", "weights", "pt", "pth", "bin", "safetensors",
      "npy", "npz", "pkl", "state", "tar", "h5"};
  return wordsSay(name, weightsWords, {});
}

bool namesEvaluationFile(std::string_view name) {
  static const std::set<std::string> resultsWords = {"predictions", "prediction", "predict",
                                                      "logits", "submission", "results",
                                                      "metrics", "eval", "evaluation", "scores"};
  static const std::set<std::string> weightsWords = {
      "ckpt", "checkpoint", "checkpoints", "weights", "pt", "pth", "bin", "safetensors",
      "state", "model"};
  return wordsSay(name, resultsWords, weightsWords);
}

bool namesEvaluationRecord(std::string_view expr) {
  static const std::set<std::string> resultsWords = {
      "eval", "evaluator", "evaluation", "metrics", "metric", "results", "predictions", "preds",
      "stats", "scores"};
  static const std::set<std::string> stateWords = {
      "model", "module", "net", "state", "dict", "optimizer", "optim", "ckpt", "checkpoint",
      "weights", "params", "parameters", "ema", "scheduler", "scaler"};
  return wordsSay(expr, resultsWords, stateWords);
}

bool testsNonFinite(std::string_view t) {
  static const std::set<std::string_view> words = {"isnan", "isinf", "isfinite", "isneginf",
                                                   "isposinf", "nan", "inf", "finite"};
  for (size_t i = 0; i < t.size();) {
    size_t j = i;
    while (j < t.size() && std::isalnum(static_cast<unsigned char>(t[j])))
      ++j;
    if (j > i && words.count(t.substr(i, j - i)))
      return true;
    i = j + 1;
  }
  return false;
}

const Function *Program::find(const std::string &key) const {
  for (const auto &f : functions)
    if (f.key == key)
      return &f;
  return nullptr;
}

} // namespace ddplint::core
