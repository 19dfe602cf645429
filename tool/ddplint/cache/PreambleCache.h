// Shared, persistent preambles: the leading #includes of a translation unit,
// parsed once into a precompiled header (PCH) and reused by every unit with
// the same leading text and flags, in this run and, kept on disk, in the next.
//
// A unit's preamble is what Clang's Lexer::ComputePreamble finds at the top
// of the file (comments and preprocessor directives), cut back to the last
// line where every #if is closed.  The PCH is built from that text as a
// header with the unit's own flags; the unit is then parsed with the PCH
// loaded and the preamble's bytes skipped (PreprocessorOptions::
// PrecompiledPreambleBytes), so its positions, NOLINT comments and findings
// are those of a plain parse.
//
// Cache entries (in the cache folder):
//   <key>.pch    the precompiled header
//   <key>.meta   a text manifest: key, the PCH's size and hash, every input
//                file (path, size, mtime), the preamble header's path; the
//                last line is "end", so a truncated manifest is never read.
// Both are written to a temporary name and renamed into place.  An entry
// whose manifest or PCH does not check out, or whose inputs changed, is
// rebuilt, never used.
#pragma once

#include "clang/Tooling/CompilationDatabase.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ddplint::cli {

struct PreambleInput {
  std::string path; // absolute
  uint64_t size = 0;
  int64_t mtime = 0; // seconds, as Clang's FileManager saw it
};

// What one translation unit's preamble is, and under which key it is shared.
struct PreambleSpec {
  bool usable = false;
  std::string why;        // when not usable: why not (for --verbose style notes)
  std::string key;        // hex digest of everything the PCH depends on
  std::string text;       // the preamble: the first `bytes` bytes of the unit
  unsigned bytes = 0;
  std::string headerPath; // the (virtual) header the PCH is built from
  clang::tooling::CompileCommand pchCommand; // the unit's command, compiling headerPath
};

struct PreambleKeyContext {
  std::string resourceDir;   // Clang's builtin headers
  std::string toolIdentity;  // ddplint's version and binary (size, mtime)
  bool skipBodies = true;    // the PCH skips bodies outside user code
  std::string cacheDir;      // where headers of preambles without quoted includes live
};

// Computes the preamble of `absFile` under `db`'s command.  Not usable (and
// the unit is parsed whole, as without a cache) when the file has no leading
// #include, has several compile commands, is not C or C++, or its command
// already uses -include/-include-pch/-imacros or modules.
PreambleSpec planPreamble(const std::string &absFile,
                          const clang::tooling::CompilationDatabase &db,
                          const PreambleKeyContext &ctx);

// A ready preamble for a unit: load `pchPath`, provide `headerPath` with
// `text`, skip `bytes` bytes of the main file.
struct PreambleUse {
  std::string pchPath;
  std::string headerPath;
  std::string text;
  unsigned bytes = 0;
};

// Builds `spec`'s PCH into `outPch`; fills the input files it read.  False
// (with `error`) when the preamble does not compile on its own.
using PreambleBuilder = std::function<bool(const PreambleSpec &spec, const std::string &outPch,
                                           std::vector<PreambleInput> &inputs,
                                           std::string &error)>;

struct CacheStats {
  unsigned hits = 0, built = 0, rebuilt = 0, failed = 0;
  // One line per rebuilt entry: which preamble, and what made it stale
  // ("/usr/include/c++/12/vector changed (mtime ...)"), so that `-v` tells a
  // real edit from a cache that never holds.
  std::vector<std::string> rebuiltWhy;
};

// The preambles of one run.  Thread-safe: the first unit that needs a key
// loads or builds it, the others wait for it.
class PreambleStore {
public:
  // `dir`: the cache folder; `persistent` false: a private temporary folder
  // removed at the end of the run (--no-cache).  `maxBytes`: the bound that
  // prune() keeps the folder under.
  PreambleStore(std::string dir, bool persistent, uint64_t maxBytes);
  ~PreambleStore();
  PreambleStore(const PreambleStore &) = delete;
  PreambleStore &operator=(const PreambleStore &) = delete;

  // False when the folder cannot be created or written (then every unit is
  // parsed whole); `error` says why.
  bool ready(std::string &error) const;
  const std::string &dir() const { return dir_; }
  bool persistent() const { return persistent_; }

  std::optional<PreambleUse> get(const PreambleSpec &spec, const PreambleBuilder &build);
  // The entry made a unit fail that compiles without it: drop it.
  void invalidate(const std::string &key);
  // Drops the oldest entries (least recently used) until the folder is under
  // its bound.  Call at the end of a run.
  void prune();
  CacheStats stats() const;

private:
  struct Slot {
    bool done = false;
    std::optional<PreambleUse> use;
  };
  std::optional<PreambleUse> loadOrBuild(const PreambleSpec &spec, const PreambleBuilder &build);
  std::string dir_;
  bool persistent_;
  uint64_t maxBytes_;
  std::string error_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Slot> slots_;
  CacheStats stats_;
};

// The default folder: $XDG_CACHE_HOME/ddplint, else ~/.cache/ddplint.
std::string defaultCacheDir(); // $DDPLINT_CACHE_DIR, $XDG_CACHE_HOME/ddplint, ~/.cache/ddplint
// Identity of this ddplint binary for cache keys: version, size, mtime.
std::string toolIdentity(const char *argv0);

// `ddplint cache stats|clear`.
struct CacheSummary {
  unsigned entries = 0;      // complete entries (manifest + PCH)
  unsigned incomplete = 0;   // stray temporaries, PCHs without manifest
  uint64_t bytes = 0;
};
CacheSummary summarizeCache(const std::string &dir);
// Removes ddplint's entries (and nothing else) from `dir`; the number removed.
unsigned clearCache(const std::string &dir, std::string &error);

} // namespace ddplint::cli
