// ddp-error-path-exit: an early exit on a failed call's status (or a caught
// exception) while a collective is still ahead of the other ranks.  The path
// engine finds the exits (at most one per function); this file words them.
#include "RuleSupport.h"

#include "engine/PathEngine.h"

namespace ddplint::core::rules {
namespace {

std::string message(const engine::PathEngine &paths, const engine::Divergence &d, bool python) {
  const engine::Atom &a = paths.atoms[d.lit.atom];
  const std::string spelled = paths.spelling(d.lit);
  // A caught exception: the Python frontend spells the atom "an exception is
  // raised".
  const std::string failure = a.errorCheck && spelled == "an exception is raised"
                                  ? std::string("an exception is caught")
                                  : quoteCode(spelled) + " reports a failure";
  const std::string how = !d.exitVia.empty()          ? "exits (" + quoteCode(d.exitVia) + ")"
                          : d.exit == ExitKind::Throw ? "throws"
                          : d.exit == ExitKind::Break ? "leaves the loop"
                          : d.exit == ExitKind::Continue ? "skips to the next iteration"
                          : d.exit == ExitKind::None ? "goes on past " + engine::eventName(d.event)
                                                     : "returns";
  if (python && d.exit == ExitKind::None) {
    // The handler swallows the exception: the rest of the try is skipped.
    return "error-path exit: when " +
           failure +
           " on one rank, that rank " + how +
           " and carries on while the other ranks wait in it and hang; re-raise it (torchrun "
           "and mp.spawn then stop every worker) or agree on the failure first (all_reduce an "
           "error flag) so every rank skips together";
  }
  if (python && a.errorCheck && spelled == "an exception is raised" && !d.lit.pol) {
    // The ranks that caught nothing leave (VMamba's `validate(...); break`
    // in a retry loop whose handler halves the batch): the rank that caught
    // one goes on into the collective alone.
    const std::string they = !d.exitVia.empty()          ? "exit (" + quoteCode(d.exitVia) + ")"
                             : d.exit == ExitKind::Throw ? "throw"
                             : d.exit == ExitKind::Break ? "leave the loop"
                             : d.exit == ExitKind::Continue ? "skip to the next iteration"
                                                            : "return";
    return "error-path exit: when an exception is caught on one rank, the other ranks " + they +
           " here while that rank goes on into " + engine::eventName(d.event) +
           " alone and hangs; re-raise it (torchrun and mp.spawn then stop every worker) or agree "
           "on the failure first (all_reduce an error flag) so every rank takes the same way";
  }
  if (python) {
    return "error-path exit: when " +
           failure +
           " on one rank, that rank " + how + " here while the other ranks wait in " +
           engine::eventName(d.event) +
           " and hang; re-raise it (torchrun and mp.spawn then stop every worker) or agree on "
           "the failure first (all_reduce an error flag) so every rank leaves together";
  }
  if (d.exit == ExitKind::None)
    return "error-path exit: when " + quoteCode(spelled) + " reports a failure on one rank, that rank " +
           how + " while the other ranks wait in it and hang; abort the communicator instead "
           "(ncclCommAbort, MPI_Abort, or abort() under a watchdog) so every rank fails fast";
  return "error-path exit: when " + quoteCode(spelled) + " reports a failure on one rank, that rank " +
         how + " here while the other ranks wait in " + engine::eventName(d.event) +
         " and hang; abort the communicator instead (ncclCommAbort, MPI_Abort, or abort() under "
         "a watchdog) so every rank fails fast";
}

std::vector<Finding> decide(const RuleContext &ctx) {
  const engine::PathEngine &paths = ctx.paths();
  const bool python = ctx.program().facts.language == SourceLanguage::Python;
  // A Python program that never runs distributed (ml-mdm's one-process
  // torchmetrics script): a metric's sync is no collective there, and no
  // other rank waits on a failure.
  if (python && !ctx.program().distributed)
    return {};
  std::vector<Finding> out;
  out.reserve(paths.errorExits.size());
  for (const engine::Divergence &d : paths.errorExits) {
    if (d.exit == ExitKind::None) {
      // No exit to point at: the handler (or the failed check) is where the
      // rank turns away, and the note shows what it skips.
      Finding f = makeFinding("ddp-error-path-exit", paths.condLoc(d.lit), message(paths, d, python));
      f.notes.emplace_back(d.event.loc, "the other ranks wait here");
      out.push_back(std::move(f));
      continue;
    }
    Finding f = makeFinding("ddp-error-path-exit", d.exitLoc ? d.exitLoc : d.event.loc,
                            message(paths, d, python));
    f.notes.emplace_back(paths.condLoc(d.lit),
                         python ? "exception caught here" : "failure checked here");
    out.push_back(std::move(f));
  }
  sortByLoc(out);
  return out;
}

} // namespace

const RuleDefinition ErrorPathExit = {NeedPaths, &decide};

} // namespace ddplint::core::rules
