// clang-tidy with the ddp checks linked in.  Everything is clang-tidy's own
// main; this file only keeps the module and fixes the builtin-header lookup.
#include "clang-tidy/tool/ClangTidyMain.h"

#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

// Defined next to the module's registration (checks/tidy/DdpTidyModule.cpp).
// Reading it here keeps the module in the link even if the checks ever come
// from a static archive, where an unreferenced registration object is dropped.
extern volatile int DdpModuleAnchorSource;
[[maybe_unused]] static int DdpModuleAnchorDestination = DdpModuleAnchorSource;

namespace {

bool isDirectory(const char *path) {
  struct stat st;
  return ::stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool mentionsResourceDir(int argc, const char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strstr(argv[i], "resource-dir") != nullptr)
      return true;
  return false;
}

} // namespace

int main(int argc, const char **argv) {
  std::vector<const char *> args(argv, argv + argc);
  // Without this, Tooling derives the resource dir from this binary's path
  // (build/lib/clang/N), which does not exist: <cstddef> then compiles only
  // where the driver has a fallback (Debian's /usr/include/clang/<version>).
  // As an --extra-arg-before it lands first on every compile command, so a
  // -resource-dir in the compile database (or a later --extra-arg) still
  // wins; skip it when the user names one anyway.
  static const std::string extra =
      std::string("--extra-arg-before=-resource-dir=") + DDPLINT_DEFAULT_RESOURCE_DIR;
  if (isDirectory(DDPLINT_DEFAULT_RESOURCE_DIR) && !mentionsResourceDir(argc, argv))
    args.insert(args.begin() + 1, extra.c_str());
  const int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  return clang::tidy::clangTidyMain(n, args.data());
}
