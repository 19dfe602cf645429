// ddp-async-error-handling: an NCCL process group while async error handling
// is off for the target PyTorch (its default, or set to 0 by the program or
// its launch files), at the first NCCL group; and every deprecated spelling
// of the variable that version still reads (fix-it: the new name).  The
// facts per version are rules/nccl-async-error.yaml.
#include "RuleSupport.h"

#include "ddplint/core/AsyncErrorFacts.h"

#include <set>

namespace ddplint::core {

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

namespace rules {
namespace {

// The findings on the program's own facts plus `launchEnv`, the settings its
// launch files make.  `atGroup` is set to the "off" finding's position.
std::vector<Finding> findings(const Facts &pf, const std::vector<EnvSetting> &launchEnv,
                              const AsyncErrorFacts &facts, Loc &atGroup) {
  const char *rule = "ddp-async-error-handling";
  std::vector<Finding> out;
  atGroup = 0;
  if (facts.versions.empty())
    return out;
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
    Finding f = makeFinding(rule, use.nameLoc,
                     quoteCode(use.name) + " is deprecated since " + pf.versions.torchProduct + " " +
                         versionString(firstVersionReading(facts, readName)) + "; use " +
                         quoteCode(readName));
    if (use.renameFixable && endsWith(readName, use.name))
      f.fixes.emplace_back(FixKind::RenameEnvVar, use.nameLoc, readName, use.name);
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
  std::vector<const EnvSetting *> settings;
  settings.reserve(pf.env.size() + launchEnv.size());
  for (const EnvSetting &use : pf.env)
    settings.push_back(&use);
  for (const EnvSetting &use : launchEnv)
    settings.push_back(&use);
  for (const EnvSetting *setting : settings) {
    const EnvSetting &use = *setting;
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
  atGroup = first->loc;
  out.push_back(makeFinding(
      rule, first->loc,
      "NCCL process group " + quoteCode(first->api) + " is created with async error handling off: " +
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

// The settings a launch makes, as the program's facts spell them; a launch
// that may hand over variables it does not show counts as setting an unknown
// name (the rule then stays quiet).
std::vector<EnvSetting> launchSettings(const std::vector<Launch> &launches) {
  std::vector<EnvSetting> out;
  for (const Launch &l : launches) {
    for (const auto &v : l.env) {
      EnvSetting e;
      e.name = v.name;
      e.value = v.value;
      e.valueKnown = v.valueKnown;
      e.isSet = true;
      e.where = EnvSetting::Where::LaunchFile;
      out.push_back(e);
    }
  }
  for (const Launch &l : launches)
    if (l.mayInherit) {
      EnvSetting e;
      e.nameKnown = false;
      e.isSet = true;
      e.where = EnvSetting::Where::LaunchFile;
      out.push_back(e);
      break;
    }
  return out;
}

std::vector<Finding> decide(const RuleContext &ctx) {
  const AsyncErrorFacts &facts = builtinAsyncErrorFacts();
  Loc atGroup = 0;
  std::vector<Finding> out = findings(ctx.program().facts, {}, facts, atGroup);
  // Only the "off" finding at an NCCL group can change with the launch files
  // that start the program: ask them then, and say where each launch is.
  if (!atGroup || !ctx.launch() || !*ctx.launch())
    return out;
  const std::vector<Launch> launches = (*ctx.launch())();
  if (launches.empty())
    return out;
  out = findings(ctx.program().facts, launchSettings(launches), facts, atGroup);
  for (Finding &f : out) {
    if (!atGroup || f.loc != atGroup)
      continue;
    for (const Launch &l : launches) {
      std::string how = "launched here without it: set it here or in the program";
      for (const auto &v : l.env)
        if (v.valueKnown && v.value == "0" && f.message.find(v.name) != std::string::npos)
          how = "launched here with " + v.name + "=0";
      Note n;
      n.message = how;
      n.external = l.place;
      f.notes.push_back(std::move(n));
    }
  }
  return out;
}

} // namespace

const RuleDefinition AsyncErrorHandling = {NeedProcessGroups | NeedEnvironment | NeedVersions,
                                           &decide};

} // namespace rules
} // namespace ddplint::core
