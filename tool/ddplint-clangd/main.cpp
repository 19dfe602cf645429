// clangd with the ddp checks linked in.  Everything is clangd's own main; this
// file only keeps the module and supplies a default --resource-dir.
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace clang::clangd {
// Defined in libclangdMain.a; no installed header declares it.
int clangdMain(int argc, char *argv[]);
} // namespace clang::clangd

// Defined next to the module's registration (checks/tidy/DdpTidyModule.cpp).
// Without a reference the module can be dropped from the link, and clangd
// then publishes no ddp diagnostics and reports no error.
extern volatile int DdpModuleAnchorSource;
[[maybe_unused]] static int DdpModuleAnchorDestination = DdpModuleAnchorSource;

namespace {

bool isDirectory(const char *path) {
  struct stat st;
  return ::stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// clangd spells it --resource-dir=D, -resource-dir=D or with D as the next word.
bool givesResourceDir(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (std::strcmp(a, "--") == 0)
      break;
    a += (a[0] == '-') + (a[0] == '-' && a[1] == '-');
    if (std::strncmp(a, "resource-dir", 12) == 0 && (a[12] == '\0' || a[12] == '='))
      return true;
  }
  return false;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<char *> args(argv, argv + argc);
  // clangd derives the builtin headers from its own path (build/lib/clang/N,
  // which does not exist): #include <cstddef> then works only where the
  // driver happens to have a fallback (Debian's /usr/include/clang/<version>).
  // The directory is the one `clang -print-resource-dir` of the LLVM we were
  // built against reported at configure time.
  static std::string flag = std::string("--resource-dir=") + DDPLINT_DEFAULT_RESOURCE_DIR;
  // clangd also takes flags from $CLANGD_FLAGS, parsed before argv, so one
  // given there would lose against ours.
  const char *envFlags = std::getenv("CLANGD_FLAGS");
  const bool userGaveOne = givesResourceDir(argc, argv) ||
                           (envFlags != nullptr && std::strstr(envFlags, "resource-dir") != nullptr);
  if (!userGaveOne && isDirectory(DDPLINT_DEFAULT_RESOURCE_DIR))
    args.insert(args.begin() + 1, flag.data());
  const int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  return clang::clangd::clangdMain(n, args.data());
}
