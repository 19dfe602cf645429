// The `ddp` clang-tidy module.  Which checks exist comes from rules/catalog.yaml
// (generated CheckList.inc), so the catalog, `--list-checks` and the docs
// cannot drift apart without tests/consistency noticing.
#include "clang/Basic/Version.h" // first: CLANG_VERSION_MAJOR picks the registry header
#include "clang-tidy/ClangTidyModule.h"
#if CLANG_VERSION_MAJOR < 22
#include "clang-tidy/ClangTidyModuleRegistry.h" // merged into ClangTidyModule.h in 22
#endif

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "tidy/RuleCheck.h"

namespace ddplint::tidy {

class DdpModule : public clang::tidy::ClangTidyModule {
public:
  void addCheckFactories(clang::tidy::ClangTidyCheckFactories &factories) override {
#define DDPLINT_CHECK(NAME, CLASS, RULE) factories.registerCheck<CLASS>(NAME);
#include "CheckList.inc"
#undef DDPLINT_CHECK
  }
};

namespace {

// A plugin built for another LLVM major loads, lists its checks and then
// reports nothing at all (the AST layout differs).  Refuse loudly instead.
bool hostMatchesBuild() {
  const std::string host = clang::getClangFullVersion();
  const std::string want = "version " + std::to_string(CLANG_VERSION_MAJOR) + ".";
  if (host.find(want) != std::string::npos)
    return true;
  std::fprintf(stderr,
               "error: ddplint-tidy was built for LLVM %d (%s) but was loaded into a host "
               "reporting '%s'; build ddplint with -DDDPLINT_LLVM_VERSION=<host major> and "
               "load that plugin instead\n",
               CLANG_VERSION_MAJOR, CLANG_VERSION_STRING, host.c_str());
  return false;
}

struct Registration {
  std::unique_ptr<clang::tidy::ClangTidyModuleRegistry::Add<DdpModule>> add;
  Registration() {
    if (!hostMatchesBuild())
      std::exit(2);
    add = std::make_unique<clang::tidy::ClangTidyModuleRegistry::Add<DdpModule>>(
        "ddp-module", "Checks for rank divergence in distributed training code.");
  }
};
Registration registration;

} // namespace
} // namespace ddplint::tidy

// Tools that link the checks statically reference this so the linker keeps
// the module (without it clangd silently publishes no ddp diagnostics).
// NOLINTNEXTLINE(misc-use-internal-linkage)
volatile int DdpModuleAnchorSource = 0;
