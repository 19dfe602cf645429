// ddplint: the command-line front end of the ddp checks, for pre-commit hooks
// and CI gates.
//
//   ddplint [OPTIONS] [PATHS...] [-p BUILD_DIR] [-- COMPILER_FLAGS...]
//   ddplint rules [--format text|markdown|json]
//   ddplint check-launch [OPTIONS] FILES...
//   ddplint cache stats|clear
//
// Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, config or
// tooling errors (findings that could still be made are reported as well).
//
// The driver's parts: Args (the command line), Inputs (files and compile
// databases), LintCommand (the lint run: units and Python files, N at a time,
// with shared preambles), Commands (check-launch, cache, rules), RunReport (the
// report and the exit code), Progress, Fixes.
#include "Args.h"
#include "Commands.h"
#include "PreambleCache.h"

#include "llvm/Support/CrashRecoveryContext.h"

// The ddp module lives in the check library; this reference keeps the linker
// from dropping it (and with it every check) from the executable.
extern volatile int DdpModuleAnchorSource;
static int const ddpModuleAnchor = DdpModuleAnchorSource;

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer build only.  Clang's first temporary output file (a preamble,
// built on a worker thread) makes LLVM install its own, heap-allocated signal
// stack on that thread, because ASan's is smaller than LLVM wants.  At thread
// exit ASan would then unmap LLVM's heap block as if it were its own stack: a
// CHECK failure ("unable to unmap") or, worse, a silently unmapped heap page,
// depending on the block's alignment.  Leaving the signal stacks to LLVM
// avoids both; ASAN_OPTIONS from the environment still take precedence.
extern "C" const char *__asan_default_options() {
  return "use_sigaltstack=0:detect_leaks=0";
}
#endif

int main(int argc, char **argv) {
  (void)ddpModuleAnchor;
  llvm::CrashRecoveryContext::Enable();
  using namespace ddplint::cli;
  Args a = parseArgs(argc, argv);
  a.toolIdentity = toolIdentity(argv[0]);
  if (a.command == "rules")
    return runRules(a);
  if (a.command == "cache")
    return runCache(a);
  if (a.command == "check-launch")
    return runCheckLaunch(a);
  return runLint(a);
}
