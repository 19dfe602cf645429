// ddp-init-timeout: a process group, its options or an init call created
// without an explicit timeout, so the backend's default applies.  The fix-its
// pass DefaultTimeoutSeconds.
#include "RuleSupport.h"

#include <set>

namespace ddplint::core::rules {
namespace {

// "a hung collective waits the backend default (30 min for Gloo) before
// failing"; with the backend unknown, no parenthesis that says nothing.
std::string waitsText(const std::string &backend) {
  if (backend == "gloo")
    return "a hung collective waits the backend default (30 min for Gloo) before failing";
  if (backend == "nccl")
    return "a hung collective waits the backend default (10 to 30 min for NCCL, by version) "
           "before failing";
  return "a hung collective waits the backend's default timeout before failing";
}

// Backends whose options carry a timeout (rules/api.yaml: an options factory
// `...::Options::create`).  MPI has none: nothing to pass.
bool backendHasTimeout(const std::string &backend) {
  for (const auto &opt : builtinApi().processGroupOptions)
    if (opt.backend == backend && endsWith(opt.factory, "::create"))
      return true;
  return false;
}

std::vector<Finding> decide(const RuleContext &ctx) {
  const Program &program = ctx.program();
  const char *rule = "ddp-init-timeout";
  const int seconds = ctx.options().number("DefaultTimeoutSeconds");
  std::vector<Finding> out;
  std::set<Loc> seen;
  for (const ProcessGroupCreation &pg : program.facts.processGroups) {
    const std::string waits = waitsText(pg.backend);
    switch (pg.kind) {
    case ProcessGroupCreation::Kind::Group: {
      // Options passed explicitly are judged where they are created: one
      // diagnostic per group.
      if (!backendHasTimeout(pg.backend) || !pg.acceptsOptions || pg.optionsGiven)
        continue;
      if (!seen.insert(pg.loc).second)
        continue;
      Finding f = makeFinding(rule, pg.loc,
                       "process group '" + pg.api +
                           "' is created without an explicit timeout; " + waits + "; " +
                           (pg.optionsTakeTimeoutArg
                                ? "pass options with a timeout"
                                : "pass options whose 'timeout' member is set"));
      if (pg.optionsTakeTimeoutArg && pg.fixAnchor && !pg.optionsApi.empty())
        f.fixes.emplace_back(FixKind::InsertTimeoutOptionsArg, pg.fixAnchor, pg.optionsApi, "",
                             seconds);
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
                               "' are created without an explicit timeout; " + waits + "; ";
      if (pg.optionsTakeTimeoutArg) {
        Finding f = makeFinding(rule, pg.loc, head + "pass a timeout");
        if (pg.fixAnchor)
          f.fixes.emplace_back(FixKind::InsertTimeoutArg, pg.fixAnchor, "", "", seconds);
        out.push_back(std::move(f));
      } else {
        std::string msg = head;
        msg += "set '";
        msg += pg.optionsVar.empty() ? "opts" : pg.optionsVar;
        msg += pg.optionsAccess;
        msg += "timeout = ...' before creating the group";
        out.push_back(makeFinding(rule, pg.loc, std::move(msg)));
      }
      break;
    }
    case ProcessGroupCreation::Kind::Init: {
      if (pg.timeoutGiven || !seen.insert(pg.loc).second)
        continue;
      Finding f = makeFinding(rule, pg.loc,
                       "process group created by '" + pg.api +
                           "' without an explicit timeout; " + waits + "; pass a timeout");
      if (pg.fixAnchor)
        f.fixes.emplace_back(FixKind::InsertTimeoutArg, pg.fixAnchor, "", "", seconds);
      out.push_back(std::move(f));
      break;
    }
    }
  }
  return out;
}

} // namespace

const RuleDefinition InitTimeout = {NeedProcessGroups, &decide};

} // namespace ddplint::core::rules
