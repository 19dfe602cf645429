// The fact-based rules (FactRules.h): decisions and wording for
// ddp-init-timeout, ddp-async-error-handling, ddp-dataloader-recreated,
// ddp-dataloader-options and ddp-forward-shape-branch, on the facts a
// frontend reports (Facts.h).
#include "ddplint/core/FactRules.h"

#include "ddplint/core/Catalog.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace ddplint::core {

namespace {

Finding make(const char *rule, Loc loc, std::string message) {
  Finding f;
  f.rule = rule;
  f.loc = loc;
  f.message = std::move(message);
  return f;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// --- ddp-init-timeout ---------------------------------------------------------

std::string defaultTimeoutText(const std::string &backend) {
  if (backend == "gloo")
    return "30 min for Gloo";
  if (backend == "nccl")
    return "10 to 30 min for NCCL, by version";
  return "the backend's default";
}

// Backends whose options carry a timeout (rules/api.yaml: an options factory
// `...::Options::create`).  MPI has none: nothing to pass.
bool backendHasTimeout(const std::string &backend) {
  for (const auto &opt : builtinApi().processGroupOptions)
    if (opt.backend == backend && endsWith(opt.factory, "::create"))
      return true;
  return false;
}

} // namespace

std::vector<Finding> initTimeoutFindings(const Program &program) {
  const char *rule = "ddp-init-timeout";
  std::vector<Finding> out;
  std::set<Loc> seen;
  for (const ProcessGroupCreation &pg : program.facts.processGroups) {
    const std::string defaults = defaultTimeoutText(pg.backend);
    switch (pg.kind) {
    case ProcessGroupCreation::Kind::Group: {
      // Options passed explicitly are judged where they are created: one
      // diagnostic per group.
      if (!backendHasTimeout(pg.backend) || !pg.acceptsOptions || pg.optionsGiven)
        continue;
      if (!seen.insert(pg.loc).second)
        continue;
      Finding f = make(rule, pg.loc,
                       "process group '" + pg.api +
                           "' is created without an explicit timeout; a hung collective waits "
                           "the backend default (" +
                           defaults + ") before failing; " +
                           (pg.optionsTakeTimeoutArg
                                ? "pass options with a timeout"
                                : "pass options whose 'timeout' member is set"));
      if (pg.optionsTakeTimeoutArg && pg.fixAnchor && !pg.optionsApi.empty())
        f.fixes.push_back({FixKind::InsertTimeoutOptionsArg, pg.fixAnchor, pg.optionsApi, ""});
      out.push_back(std::move(f));
      break;
    }
    case ProcessGroupCreation::Kind::Options: {
      // The timeout is either an argument or assigned to the member.
      if (!backendHasTimeout(pg.backend) || pg.timeoutGiven || pg.timeoutAssignedLater)
        continue;
      if (!seen.insert(pg.loc).second)
        continue;
      const std::string head = "process group options '" + pg.api +
                               "' are created without an explicit timeout; a hung collective "
                               "waits the backend default (" +
                               defaults + ") before failing; ";
      if (pg.optionsTakeTimeoutArg) {
        Finding f = make(rule, pg.loc, head + "pass a timeout");
        if (pg.fixAnchor)
          f.fixes.push_back({FixKind::InsertTimeoutArg, pg.fixAnchor, "", ""});
        out.push_back(std::move(f));
      } else {
        std::string msg = head;
        msg += "set '";
        msg += pg.optionsVar.empty() ? "opts" : pg.optionsVar;
        msg += pg.optionsAccess;
        msg += "timeout = ...' before creating the group";
        out.push_back(make(rule, pg.loc, std::move(msg)));
      }
      break;
    }
    case ProcessGroupCreation::Kind::Init: {
      if (pg.timeoutGiven || !seen.insert(pg.loc).second)
        continue;
      Finding f = make(rule, pg.loc,
                       "process group created by '" + pg.api +
                           "' without an explicit timeout; a hung collective waits the "
                           "backend default (" +
                           defaults + ") before failing; pass a timeout");
      if (pg.fixAnchor)
        f.fixes.push_back({FixKind::InsertTimeoutArg, pg.fixAnchor, "", ""});
      out.push_back(std::move(f));
      break;
    }
    }
  }
  return out;
}

// --- ddp-async-error-handling ---------------------------------------------------

int targetTorchVersion(const TargetVersions &v, const AsyncErrorFacts &facts) {
  return v.torchBasis == TargetVersions::Basis::Unknown ? facts.assumedVersion : v.torch();
}

std::string targetTorchVersionText(const TargetVersions &v, const AsyncErrorFacts &facts) {
  std::string text = v.torchProduct + " " + versionString(targetTorchVersion(v, facts));
  switch (v.torchBasis) {
  case TargetVersions::Basis::Unknown:
    return text + " (assumed: the version is not known)";
  case TargetVersions::Basis::Exact:
    break;
  case TargetVersions::Basis::AtLeast:
    text += " or newer";
    break;
  case TargetVersions::Basis::AtMost:
    text += " or older";
    break;
  }
  if (!v.torchEvidence.empty())
    text += " (" + v.torchEvidence + ")";
  return text;
}

std::vector<Finding> asyncErrorHandlingFindings(const Program &program) {
  return asyncErrorHandlingFindings(program, builtinAsyncErrorFacts());
}

std::vector<Finding> asyncErrorHandlingFindings(const Program &program,
                                                const AsyncErrorFacts &facts) {
  const char *rule = "ddp-async-error-handling";
  std::vector<Finding> out;
  if (facts.versions.empty())
    return out;
  const Facts &pf = program.facts;
  const int version = targetTorchVersion(pf.versions, facts);
  const AsyncErrorVersionRange &range = asyncErrorRange(facts, version);
  const std::string readName = range.reads.empty() ? "" : range.reads.front();

  // A deprecated spelling this version still reads: rename it.
  std::set<Loc> seen;
  for (const EnvSetting &use : pf.env) {
    if (use.where != EnvSetting::Where::Program || !use.nameKnown || !use.nameLoc ||
        !contains(range.deprecated, use.name))
      continue;
    if (!seen.insert(use.nameLoc).second)
      continue;
    Finding f = make(rule, use.nameLoc,
                     "'" + use.name + "' is deprecated since " + pf.versions.torchProduct + " " +
                         versionString(firstVersionReading(facts, readName)) + "; use '" +
                         readName + "'");
    if (use.renameFixable && endsWith(readName, use.name))
      f.fixes.push_back({FixKind::RenameEnvVar, use.nameLoc, readName, use.name});
    out.push_back(std::move(f));
  }

  // The first NCCL process group, when async error handling is off.
  const ProcessGroupCreation *first = nullptr;
  for (const ProcessGroupCreation &pg : pf.processGroups)
    if (pg.backend == "nccl" && pg.kind != ProcessGroupCreation::Kind::Options) {
      first = &pg;
      break;
    }
  if (!first || readName.empty())
    return out;
  const AsyncErrorMode *defaultMode = asyncErrorMode(facts, std::to_string(range.defaultMode));
  // The program's own setting comes last and wins; a launch file's counts
  // where the program sets nothing.  At one level, an explicit 0 wins.
  bool progOn = false, progOff = false, launchOn = false, launchOff = false, launchKnown = false;
  for (const EnvSetting &use : pf.env) {
    if (!use.isSet)
      continue;
    const bool launch = use.where == EnvSetting::Where::LaunchFile;
    launchKnown |= launch;
    const bool ours =
        use.nameKnown && (use.name == readName || contains(range.deprecated, use.name));
    // A name we cannot read may well be this one: stay quiet.
    if (!use.nameKnown || (ours && (!use.valueKnown || use.value != "0")))
      (launch ? launchOn : progOn) = true;
    else if (ours && use.valueKnown && use.value == "0")
      (launch ? launchOff : progOff) = true;
  }
  bool enabled = defaultMode && defaultMode->on;
  if (progOn || progOff)
    enabled = !progOff;
  else if (launchOn || launchOff)
    enabled = !launchOff;
  const bool setToOff = progOff, launchSetsOff = !progOn && !progOff && launchOff;
  if (enabled)
    return out;
  const std::string how =
      pf.language == SourceLanguage::Python
          ? "set os.environ[\"" + readName + "\"] = \"1\" before creating the group"
          : "call setenv(\"" + readName + "\", \"1\", 1) before creating the group";
  out.push_back(make(
      rule, first->loc,
      "NCCL process group '" + first->api + "' is created with async error handling off: " +
          targetTorchVersionText(pf.versions, facts) + " reads " + readName + " with default " +
          std::to_string(range.defaultMode) + " (" + (defaultMode ? defaultMode->name : "") +
          ")" +
          (launchSetsOff ? ", and its launch file sets it to 0"
           : setToOff    ? ", and the program sets it to 0"
           : launchKnown ? ", off, and neither the program nor its launch files set it"
                         : ", off, and the program never sets it") +
          ", so a failed or hung collective is not aborted and the other ranks wait forever; " +
          how));
  return out;
}

// --- ddp-dataloader-recreated -----------------------------------------------------

namespace {

// The loop whose every iteration runs the call: the innermost one that does
// not hand the call a new input each iteration.
const LoopInfo *recreatingLoop(const std::vector<LoopInfo> &loops, bool datasetCounts) {
  for (const LoopInfo &l : loops)
    if (!(datasetCounts && l.datasetDependsOnLoop))
      return &l;
  return nullptr;
}

std::string whyRecreated(const Program &program) {
  return std::string("its worker ") +
         (program.facts.language == SourceLanguage::Python ? "processes" : "threads") +
         " are started and joined on every iteration; build the loader once before the loop "
         "and iterate it every epoch";
}

} // namespace

std::vector<Finding> dataLoaderRecreatedFindings(const Program &program) {
  const char *rule = "ddp-dataloader-recreated";
  const Facts &pf = program.facts;
  const std::string why = whyRecreated(program);
  std::vector<Finding> out;
  std::set<Loc> reported;
  // Functions that build a loader outside any loop of their own, and the
  // factory they call (the first one).
  std::map<std::string, std::string> helpers;
  // A Python DataLoader without worker processes starts none: say what it does redo.
  auto noWorkers = [&](const DataLoaderCreation &dl) {
    return pf.language == SourceLanguage::Python &&
           (dl.numWorkers == DataLoaderCreation::Workers::Absent ||
            dl.numWorkers == DataLoaderCreation::Workers::Zero);
  };
  for (const DataLoaderCreation &dl : pf.dataLoaders) {
    if (dl.storedInContainer)
      continue;
    if (recreatingLoop(dl.loops, /*datasetCounts=*/true)) {
      if (reported.insert(dl.loc).second)
        out.push_back(make(rule, dl.loc,
                           "data loader built by '" + dl.api + "' inside a loop; " +
                               (noWorkers(dl) ? std::string("its sampler, shuffling and batching "
                                                            "are set up again on every iteration; "
                                                            "build the loader once before the loop "
                                                            "and iterate it every epoch")
                                              : why)));
      continue;
    }
    helpers.emplace(dl.function, dl.api);
  }
  // Python frontends say when a helper is called with the loop's element
  // (`get_fold_dataloaders(fold)`): one loader per input, like a dataset
  // argument that depends on the loop.
  const bool helperArgsCount = pf.language == SourceLanguage::Python;
  auto inLoop = [&](const HelperCall &c) {
    return !c.storedInContainer && recreatingLoop(c.loops, /*datasetCounts=*/helperArgsCount);
  };
  // Helpers of helpers build loaders too (outside any loop of their own).
  for (bool changed = true; changed;) {
    changed = false;
    for (const HelperCall &c : pf.calls) {
      if (inLoop(c) || c.caller.empty() || helpers.count(c.caller))
        continue;
      auto it = helpers.find(c.callee);
      if (it != helpers.end()) {
        helpers.emplace(c.caller, it->second);
        changed = true;
      }
    }
  }
  for (const HelperCall &c : pf.calls) {
    if (!inLoop(c))
      continue;
    auto it = helpers.find(c.callee);
    if (it == helpers.end() || !reported.insert(c.loc).second)
      continue;
    out.push_back(make(rule, c.loc,
                       "'" + c.calleeName + "' builds a data loader (via '" + it->second +
                           "') and is called inside a loop; " + why));
  }
  return out;
}

// --- ddp-dataloader-options ---------------------------------------------------------

std::vector<Finding> dataLoaderOptionsFindings(const Program &program) {
  const char *rule = "ddp-dataloader-options";
  const Facts &pf = program.facts;
  std::vector<Finding> out;
  std::set<Loc> seen;
  auto missing = [](ArgState s) { return s == ArgState::Absent || s == ArgState::False; };
  for (const DataLoaderCreation &dl : pf.dataLoaders) {
    using W = DataLoaderCreation::Workers;
    if (dl.numWorkers != W::Positive && dl.numWorkers != W::Unknown)
      continue;
    const bool needPersistent = missing(dl.persistentWorkers);
    const bool needPin = pf.usesCuda && missing(dl.pinMemory);
    if ((!needPersistent && !needPin) || !seen.insert(dl.loc).second)
      continue;
    const std::string workers =
        dl.numWorkersText.empty() ? std::string("worker processes")
                                  : "num_workers=" + dl.numWorkersText;
    std::string msg = "data loader '" + dl.api + "' with " + workers + " ";
    std::string pass;
    if (needPersistent) {
      msg += dl.persistentWorkers == ArgState::False ? "sets persistent_workers=False"
                                                     : "does not pass persistent_workers=True";
      msg += ", so its worker processes are shut down and started again every epoch";
      pass = "persistent_workers=True";
    }
    if (needPin) {
      if (needPersistent)
        msg += ", and ";
      msg += dl.pinMemory == ArgState::False ? "sets pin_memory=False"
                                             : "does not pass pin_memory=True";
      msg += " although the program trains on CUDA, so every batch is copied to the GPU "
             "from pageable memory";
      pass += pass.empty() ? "pin_memory=True" : " and pin_memory=True";
    }
    msg += "; pass ";
    msg += pass;
    Finding f = make(rule, dl.loc, std::move(msg));
    auto fix = [&](ArgState s, Loc valueLoc, FixKind insert, FixKind set) {
      if (s == ArgState::False && valueLoc)
        f.fixes.push_back({set, valueLoc, "", ""});
      else if (s == ArgState::Absent && dl.argsEnd)
        f.fixes.push_back({insert, dl.argsEnd, "", ""});
    };
    if (needPersistent)
      fix(dl.persistentWorkers, dl.persistentWorkersLoc, FixKind::InsertPersistentWorkers,
          FixKind::SetPersistentWorkersTrue);
    if (needPin)
      fix(dl.pinMemory, dl.pinMemoryLoc, FixKind::InsertPinMemory, FixKind::SetPinMemoryTrue);
    out.push_back(std::move(f));
  }
  return out;
}

// --- ddp-forward-shape-branch ---------------------------------------------------------

namespace {

struct ArmSets {
  std::set<std::string> modules, params;
  std::multiset<std::string> shapes;
};

struct Divergence {
  enum Kind { None, Module, Param, Shape } kind = None;
  std::string name;
};

// What the first arm (the `then` side) runs that not every arm does.
std::string firstNotInAll(const std::vector<const std::set<std::string> *> &sets) {
  std::set<std::string> common = *sets.front();
  for (const auto *s : sets) {
    std::set<std::string> keep;
    for (const auto &n : common)
      if (s->count(n))
        keep.insert(n);
    common.swap(keep);
  }
  for (const auto *s : sets)
    for (const auto &n : *s)
      if (!common.count(n))
        return n;
  return "";
}

Divergence compare(const std::vector<ForwardArm> &arms) {
  Divergence d;
  if (arms.size() < 2)
    return d;
  for (const ForwardArm &a : arms)
    if (a.throws) // an error path, not a different computation
      return d;
  std::vector<ArmSets> eff;
  eff.reserve(arms.size());
  for (const ForwardArm &a : arms)
    eff.push_back({{a.effective.modules.begin(), a.effective.modules.end()},
                   {a.effective.params.begin(), a.effective.params.end()},
                   {a.effective.shapes.begin(), a.effective.shapes.end()}});
  std::vector<const std::set<std::string> *> modules, params;
  for (const ArmSets &e : eff) {
    modules.push_back(&e.modules);
    params.push_back(&e.params);
  }
  if (auto n = firstNotInAll(modules); !n.empty())
    return {Divergence::Module, n};
  if (auto n = firstNotInAll(params); !n.empty())
    return {Divergence::Param, n};
  // Shapes: only when the arms reshape differently themselves, or one of them
  // returns early; a one-armed `if (x.dim() == 3) x = x.unsqueeze(0);`
  // normalises the input to one shape.
  bool differ = false, anyReturns = false;
  unsigned reshaping = 0;
  for (size_t i = 0; i < arms.size(); ++i) {
    differ |= eff[i].shapes != eff.front().shapes;
    anyReturns |= arms[i].returns;
    reshaping += !arms[i].own.shapes.empty();
  }
  if (differ && (anyReturns || reshaping >= 2))
    return {Divergence::Shape, ""};
  return d;
}

} // namespace

std::vector<Finding> forwardShapeBranchFindings(const Program &program) {
  const char *rule = "ddp-forward-shape-branch";
  std::vector<Finding> out;
  std::set<Loc> seen;
  for (const ForwardMethod &fm : program.facts.forwards) {
    // A branch inside a reported branch is not reported again.
    std::vector<bool> covered(fm.branches.size(), false);
    for (size_t i = 0; i < fm.branches.size(); ++i) {
      const ForwardBranch &b = fm.branches[i];
      if (b.parent >= 0 && static_cast<size_t>(b.parent) < i && covered[b.parent]) {
        covered[i] = true;
        continue;
      }
      const Divergence d = compare(b.arms);
      if (d.kind == Divergence::None)
        continue;
      std::string what;
      if (b.onShape)
        what = "the input's shape";
      else if (b.onValues)
        what = "the input's values";
      else if (b.onRank)
        what = "the rank";
      else
        continue;
      covered[i] = true;
      if (!seen.insert(b.loc).second)
        continue;
      std::string msg = "branch on " + what + " in forward() ";
      switch (d.kind) {
      case Divergence::Module:
        msg += "runs submodule '" + d.name +
               "' on some ranks only; ranks that skip it produce no gradient for its "
               "parameters and the gradient allreduce mismatches; run every submodule on "
               "every rank and mask the result";
        break;
      case Divergence::Param:
        msg += "uses parameter '" + d.name +
               "' on some ranks only; ranks that skip it produce no gradient for it and the "
               "gradient allreduce mismatches; use it on every rank and mask the result";
        break;
      case Divergence::Shape:
        msg += "produces different shapes on different ranks; collectives over the "
               "activations or their gradients then mismatch; keep shapes rank-uniform (pad or "
               "mask) instead of branching";
        break;
      case Divergence::None:
        break;
      }
      out.push_back(make(rule, b.loc, std::move(msg)));
    }
  }
  return out;
}

} // namespace ddplint::core
