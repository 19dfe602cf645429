#include "PreambleCache.h"

#include "Report.h" // toolVersion()

#include "clang-frontend/UnitSummary.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Basic/Version.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/xxhash.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace ddplint::cli {
namespace {

constexpr const char *kManifestMagic = "ddplint-preamble 1";

std::string joinPath(llvm::StringRef a, llvm::StringRef b) {
  llvm::SmallString<256> p(a);
  llvm::sys::path::append(p, b);
  return std::string(p);
}

std::string absoluteIn(llvm::StringRef path, llvm::StringRef dir) {
  llvm::SmallString<256> p(path);
  if (!llvm::sys::path::is_absolute(p)) {
    llvm::SmallString<256> base(dir);
    llvm::sys::path::append(base, p);
    p = base;
  }
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p);
}

// Cuts `text` back to the end of the last line where every #if/#ifdef/#ifndef
// is closed: the rest of the unit must not depend on a conditional that the
// PCH left open.  Comments are skipped; a backslash continues a line.
// `directives` gets the directives of that prefix without comments: the
// header the PCH is built from, so units whose preambles differ only in
// comments (a file's header comment) share one.
size_t balancedPrefix(llvm::StringRef text, std::string &directives) {
  size_t lastGood = 0;
  std::string pending; // directives since the last balanced line
  int depth = 0;
  bool inBlockComment = false;
  size_t i = 0;
  while (i < text.size()) {
    // One logical line: [i, end).
    size_t end = i;
    std::string logical;
    while (end < text.size()) {
      size_t nl = text.find('\n', end);
      if (nl == llvm::StringRef::npos)
        nl = text.size();
      llvm::StringRef piece = text.slice(end, nl);
      end = nl < text.size() ? nl + 1 : nl;
      if (piece.ends_with("\r"))
        piece = piece.drop_back();
      if (piece.ends_with("\\")) {
        logical += piece.drop_back().str();
        continue;
      }
      logical += piece.str();
      break;
    }
    if (end == text.size() && (text.empty() || text.back() != '\n'))
      break; // an incomplete last line is never part of the prefix
    // Strip comments, tracking block comments across lines.
    std::string code;
    bool inString = false;
    for (size_t k = 0; k < logical.size(); ++k) {
      if (inString) {
        code += logical[k];
        if (logical[k] == '\\' && k + 1 < logical.size())
          code += logical[++k];
        else if (logical[k] == '"')
          inString = false;
        continue;
      }
      if (inBlockComment) {
        if (logical.compare(k, 2, "*/") == 0) {
          inBlockComment = false;
          ++k;
        }
        continue;
      }
      if (logical.compare(k, 2, "/*") == 0) {
        inBlockComment = true;
        ++k;
        continue;
      }
      if (logical.compare(k, 2, "//") == 0)
        break;
      if (logical[k] == '"')
        inString = true;
      code += logical[k];
    }
    llvm::StringRef t = llvm::StringRef(code).trim();
    if (t.starts_with("#"))
      pending += t.str() + "\n";
    if (t.consume_front("#")) {
      t = t.ltrim();
      if (t.starts_with("if")) // if, ifdef, ifndef
        ++depth;
      else if (t.starts_with("endif"))
        --depth;
    }
    i = end;
    if (depth == 0 && !inBlockComment) {
      lastGood = i;
      directives += pending;
      pending.clear();
    }
    if (depth < 0)
      break;
  }
  return lastGood;
}

bool hasInclude(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  for (llvm::StringRef l : lines) {
    l = l.trim();
    if (!l.consume_front("#"))
      continue;
    l = l.ltrim();
    if (l.starts_with("include") || l.starts_with("import"))
      return true;
  }
  return false;
}

// The language of the unit: "c", "c++", or "" (not handled: CUDA, ObjC...).
std::string languageOf(const std::vector<std::string> &args, llvm::StringRef file) {
  std::string x;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-x")
      x = args[i + 1];
    else if (llvm::StringRef(args[i]).starts_with("-x") && args[i].size() > 2)
      x = args[i].substr(2);
  if (!x.empty())
    return x == "c" ? "c" : x == "c++" ? "c++" : "";
  const llvm::StringRef ext = llvm::sys::path::extension(file);
  if (ext == ".c")
    return "c";
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c++" || ext == ".C" ||
      ext == ".cp" || ext == ".CPP")
    return "c++";
  return "";
}

// The first line of a preamble, to name it in messages ("#include <torch/torch.h>").
std::string firstDirective(llvm::StringRef text) {
  return text.split('\n').first.trim().str();
}

std::string hexOf(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool hashFile(const std::string &path, uint64_t &size, uint64_t &hash) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return false;
  size = (*buf)->getBufferSize();
  hash = llvm::xxh3_64bits((*buf)->getBuffer());
  return true;
}

int64_t mtimeOf(const llvm::sys::fs::file_status &st) {
  return static_cast<int64_t>(llvm::sys::toTimeT(st.getLastModificationTime()));
}

std::string uniqueSuffix() {
  static std::atomic<unsigned> counter{0};
  std::ostringstream s;
  s << ".tmp-" << ::getpid() << "-" << std::hash<std::thread::id>()(std::this_thread::get_id()) % 100000
    << "-" << counter++;
  return s.str();
}

bool isOurFile(const std::string &name) {
  // <32 hex>.pch, <32 hex>.meta, and their temporaries.
  if (name.size() < 36)
    return false;
  for (size_t i = 0; i < 32; ++i)
    if (!llvm::isHexDigit(name[i]))
      return false;
  llvm::StringRef rest = llvm::StringRef(name).drop_front(32);
  return rest == ".pch" || rest == ".meta" || rest.starts_with(".pch.tmp-") ||
         rest.starts_with(".meta.tmp-");
}

struct Manifest {
  std::string key, header;
  uint64_t pchSize = 0, pchHash = 0;
  std::vector<PreambleInput> inputs;
};

bool readManifest(const std::string &path, Manifest &m) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::string line;
  if (!std::getline(in, line) || line != kManifestMagic)
    return false;
  bool ended = false;
  while (std::getline(in, line)) {
    if (line == "end") {
      ended = true;
      break;
    }
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "key") {
      ls >> m.key;
    } else if (tag == "pch") {
      std::string h;
      ls >> m.pchSize >> h;
      if (h.size() != 16 || llvm::StringRef(h).getAsInteger(16, m.pchHash))
        return false;
    } else if (tag == "header") {
      ls >> std::ws;
      std::getline(ls, m.header);
    } else if (tag == "input") {
      PreambleInput f;
      ls >> f.size >> f.mtime >> std::ws;
      std::getline(ls, f.path);
      if (!ls.eof() && ls.fail())
        return false;
      if (f.path.empty())
        return false;
      m.inputs.push_back(std::move(f));
    } else {
      return false;
    }
  }
  return ended && !m.key.empty() && !m.header.empty() && m.pchSize > 0;
}

bool writeFileAtomically(const std::string &path, const std::string &content) {
  const std::string tmp = path + uniqueSuffix();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return false;
    }
  }
  if (llvm::sys::fs::rename(tmp, path)) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

} // namespace

PreambleSpec planPreamble(const std::string &absFile,
                          const clang::tooling::CompilationDatabase &db,
                          const PreambleKeyContext &ctx) {
  PreambleSpec spec;
  std::vector<clang::tooling::CompileCommand> cmds = db.getCompileCommands(absFile);
  if (cmds.size() != 1) {
    spec.why = cmds.empty() ? "no compile command" : "several compile commands";
    return spec;
  }
  const clang::tooling::CompileCommand &cmd = cmds.front();
  if (cmd.CommandLine.empty()) {
    spec.why = "empty compile command";
    return spec;
  }
  // The command without the input and outputs: what the PCH depends on.
  std::vector<std::string> args;
  args.push_back(cmd.CommandLine.front());
  const std::string fileAbs = absoluteIn(cmd.Filename, cmd.Directory);
  for (size_t i = 1; i < cmd.CommandLine.size(); ++i) {
    const std::string &a = cmd.CommandLine[i];
    if (a == "--")
      continue;
    if (a == cmd.Filename || absoluteIn(a, cmd.Directory) == fileAbs)
      continue;
    if (a == "-c" || a == "-MD" || a == "-MMD" || a == "-MP" || a == "-M" || a == "-MM")
      continue;
    if (a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ") {
      ++i;
      continue;
    }
    if ((llvm::StringRef(a).starts_with("-o") && a.size() > 2) ||
        llvm::StringRef(a).starts_with("-MF") || llvm::StringRef(a).starts_with("-MT") ||
        llvm::StringRef(a).starts_with("-MQ"))
      continue;
    if (a == "-include" || a == "-include-pch" || a == "-imacros" || a == "-fmodules" ||
        llvm::StringRef(a).starts_with("-include") || llvm::StringRef(a).starts_with("-fmodule") ||
        a == "--include" || llvm::StringRef(a).starts_with("--include")) {
      spec.why = "the command has " + a;
      return spec;
    }
    args.push_back(a);
  }
  const std::string lang = languageOf(args, absFile);
  if (lang.empty()) {
    spec.why = "not C or C++";
    return spec;
  }
  auto buf = llvm::MemoryBuffer::getFile(absFile, /*IsText=*/false);
  if (!buf) {
    spec.why = "unreadable";
    return spec;
  }
  clang::LangOptions lo;
  lo.CPlusPlus = lang == "c++";
  lo.LineComment = true;
  const clang::PreambleBounds bounds = clang::Lexer::ComputePreamble((*buf)->getBuffer(), lo);
  llvm::StringRef pre = (*buf)->getBuffer().take_front(bounds.Size);
  std::string directives;
  pre = pre.take_front(balancedPrefix(pre, directives));
  if (!hasInclude(directives)) {
    spec.why = "no leading #include";
    return spec;
  }
  spec.text = directives;
  spec.bytes = static_cast<unsigned>(pre.size());

  // Quoted includes resolve against the includer's folder: a preamble with
  // any is only shared by units in the same folder, and its header lives there.
  const bool quoted = spec.text.find('"') != std::string::npos;
  const std::string mainDir = std::string(llvm::sys::path::parent_path(absFile));

  llvm::MD5 md5;
  auto feed = [&](llvm::StringRef s) {
    md5.update(s);
    md5.update(llvm::StringRef("\0", 1));
  };
  feed("ddplint-preamble-key-v1");
  feed(ctx.toolIdentity);
  feed(clang::getClangFullVersion());
  feed(ctx.resourceDir);
  feed(ctx.skipBodies ? "skip-bodies" : "parse-bodies");
  feed(lang);
  feed(cmd.Directory);
  for (const auto &a : args)
    feed(a);
  feed("--");
  feed(quoted ? mainDir : std::string());
  feed(spec.text);
  llvm::MD5::MD5Result digest;
  md5.final(digest);
  spec.key = std::string(digest.digest().str());

  spec.headerPath = joinPath(quoted ? mainDir : ctx.cacheDir,
                             ".ddplint-preamble-" + spec.key + (lang == "c" ? ".h" : ".hpp"));
  spec.pchCommand.Directory = cmd.Directory;
  spec.pchCommand.Filename = spec.headerPath;
  spec.pchCommand.CommandLine = args;
  spec.pchCommand.CommandLine.emplace_back("-x");
  spec.pchCommand.CommandLine.emplace_back(lang == "c" ? "c-header" : "c++-header");
  spec.pchCommand.CommandLine.push_back(spec.headerPath);
  spec.usable = true;
  return spec;
}

PreambleStore::PreambleStore(std::string dir, bool persistent, uint64_t maxBytes)
    : dir_(std::move(dir)), persistent_(persistent), maxBytes_(maxBytes) {
  if (!persistent_) {
    llvm::SmallString<256> tmp;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("ddplint-preamble", tmp))
      error_ = "cannot create a temporary folder for the preambles: " + ec.message();
    dir_ = std::string(tmp);
    return;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(dir_)) {
    error_ = "cannot create the cache folder " + dir_ + ": " + ec.message();
    return;
  }
  // Writable?  A probe file, written and removed.
  const std::string probe = joinPath(dir_, ".probe" + uniqueSuffix());
  {
    std::ofstream out(probe, std::ios::binary);
    out << "x";
    out.flush();
    if (!out) {
      error_ = "cannot write to the cache folder " + dir_;
      return;
    }
  }
  std::error_code ec;
  fs::remove(probe, ec);
}

PreambleStore::~PreambleStore() {
  if (!persistent_ && !dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

bool PreambleStore::ready(std::string &error) const {
  error = error_;
  return error_.empty();
}

std::optional<PreambleUse> PreambleStore::get(const PreambleSpec &spec,
                                              const PreambleBuilder &build) {
  if (!spec.usable || !error_.empty())
    return std::nullopt;
  std::unique_lock<std::mutex> lock(mu_);
  auto it = slots_.find(spec.key);
  if (it != slots_.end()) {
    cv_.wait(lock, [&] { return slots_[spec.key].done; });
    std::optional<PreambleUse> use = slots_[spec.key].use;
    if (use)
      use->bytes = spec.bytes; // same directives, but this unit's own comments around them
    return use;
  }
  slots_[spec.key] = Slot{};
  lock.unlock();
  std::optional<PreambleUse> use = loadOrBuild(spec, build);
  lock.lock();
  slots_[spec.key].done = true;
  slots_[spec.key].use = use;
  cv_.notify_all();
  return use;
}

std::optional<PreambleUse> PreambleStore::loadOrBuild(const PreambleSpec &spec,
                                                      const PreambleBuilder &build) {
  const std::string pch = joinPath(dir_, spec.key + ".pch");
  const std::string meta = joinPath(dir_, spec.key + ".meta");
  PreambleUse use{pch, spec.headerPath, spec.text, spec.bytes};
  bool hadEntry = false;
  std::string why; // what made an existing entry stale
  if (persistent_) {
    Manifest m;
    std::error_code ec;
    hadEntry = fs::exists(meta, ec) || fs::exists(pch, ec);
    bool ok = readManifest(meta, m);
    if (!ok)
      why = "its manifest is missing, truncated or unreadable";
    else if (m.key != spec.key || m.header != spec.headerPath) {
      ok = false;
      why = "its manifest names another preamble";
    }
    if (ok) {
      uint64_t size = 0, hash = 0;
      ok = hashFile(pch, size, hash) && size == m.pchSize && hash == m.pchHash;
      if (!ok)
        why = "its PCH is missing or does not match the manifest's size and hash";
    }
    for (size_t i = 0; ok && i < m.inputs.size(); ++i) {
      const PreambleInput &in = m.inputs[i];
      llvm::sys::fs::file_status st;
      if (llvm::sys::fs::status(in.path, st)) {
        ok = false;
        why = in.path + " is gone";
      } else if (st.getSize() != in.size || mtimeOf(st) != in.mtime) {
        ok = false;
        why = in.path + " changed (size " + std::to_string(in.size) + " -> " +
              std::to_string(st.getSize()) + ", mtime " + std::to_string(in.mtime) + " -> " +
              std::to_string(mtimeOf(st)) + ")";
      }
    }
    if (ok) {
      // Least recently used goes first when the folder is pruned.
      fs::last_write_time(meta, fs::file_time_type::clock::now(), ec);
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.hits;
      return use;
    }
  }
  const std::string tmp = pch + uniqueSuffix();
  std::vector<PreambleInput> inputs;
  std::string error;
  const bool built = build(spec, tmp, inputs, error);
  uint64_t size = 0, hash = 0;
  if (!built || !hashFile(tmp, size, hash) || size == 0) {
    std::error_code ec;
    fs::remove(tmp, ec);
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.failed;
    return std::nullopt;
  }
  if (persistent_) {
    // The old manifest goes first: a reader never pairs it with the new PCH.
    std::error_code ec;
    fs::remove(meta, ec);
  }
  if (llvm::sys::fs::rename(tmp, pch)) {
    std::error_code ec;
    fs::remove(tmp, ec);
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.failed;
    return std::nullopt;
  }
  if (persistent_) {
    std::ostringstream m;
    m << kManifestMagic << "\n"
      << "key " << spec.key << "\n"
      << "pch " << size << " " << hexOf(hash) << "\n"
      << "header " << spec.headerPath << "\n";
    for (const auto &f : inputs)
      m << "input " << f.size << " " << f.mtime << " " << f.path << "\n";
    m << "end\n";
    writeFileAtomically(meta, m.str()); // if it fails, the next run rebuilds
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++(hadEntry ? stats_.rebuilt : stats_.built);
  if (hadEntry)
    stats_.rebuiltWhy.push_back("preamble " + spec.key.substr(0, 8) + " (" +
                                firstDirective(spec.text) + ") rebuilt: " + why);
  return use;
}

void PreambleStore::invalidate(const std::string &key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(key);
    if (it != slots_.end() && it->second.done)
      it->second.use.reset(); // the rest of the run parses those units whole
  }
  if (persistent_) {
    std::error_code ec;
    fs::remove(joinPath(dir_, key + ".meta"), ec);
  }
}

void PreambleStore::prune() {
  if (!persistent_ || !error_.empty())
    return;
  struct Entry {
    fs::file_time_type used;
    uint64_t bytes = 0;
    std::string key;
  };
  std::map<std::string, Entry> entries;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (auto it = fs::directory_iterator(dir_, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!isOurFile(name))
      continue;
    std::error_code e2;
    const auto mtime = it->last_write_time(e2);
    const uint64_t bytes = it->file_size(e2);
    const std::string key = name.substr(0, 32);
    const llvm::StringRef rest = llvm::StringRef(name).drop_front(32);
    if (rest.contains(".tmp-")) {
      // A temporary of a run that died: gone after an hour.
      if (now - mtime > std::chrono::hours(1))
        fs::remove(it->path(), e2);
      continue;
    }
    Entry &e = entries[key];
    e.key = key;
    e.bytes += bytes;
    if (rest == ".meta")
      e.used = mtime;
  }
  uint64_t total = 0;
  std::vector<Entry> sorted;
  for (auto &[k, e] : entries) {
    total += e.bytes;
    sorted.push_back(e);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &e : sorted) {
    if (total <= maxBytes_)
      break;
    std::error_code e2;
    fs::remove(joinPath(dir_, e.key + ".meta"), e2);
    fs::remove(joinPath(dir_, e.key + ".pch"), e2);
    total -= e.bytes;
  }
}

CacheStats PreambleStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

// The plugin and clangd read the summaries from the same folder.
std::string defaultCacheDir() { return clangfe::defaultCacheFolder(); }

std::string toolIdentity(const char *argv0) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  std::string id = std::string("ddplint ") + toolVersion();
  llvm::sys::fs::file_status st;
  if (!exe.empty() && !llvm::sys::fs::status(exe, st))
    id += " " + exe + " " + std::to_string(st.getSize()) + " " + std::to_string(mtimeOf(st));
  return id;
}

CacheSummary summarizeCache(const std::string &dir) {
  CacheSummary s;
  std::error_code ec;
  std::map<std::string, int> parts; // key -> bit 1: pch, bit 2: meta
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!isOurFile(name))
      continue;
    std::error_code e2;
    s.bytes += it->file_size(e2);
    const llvm::StringRef rest = llvm::StringRef(name).drop_front(32);
    if (rest.contains(".tmp-")) {
      ++s.incomplete;
      continue;
    }
    parts[name.substr(0, 32)] |= rest == ".pch" ? 1 : 2;
  }
  for (const auto &[k, bits] : parts)
    (bits == 3 ? s.entries : s.incomplete)++;
  return s;
}

unsigned clearCache(const std::string &dir, std::string &error) {
  unsigned removed = 0;
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return 0;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!isOurFile(name))
      continue;
    std::error_code e2;
    if (fs::remove(it->path(), e2))
      ++removed;
    else if (e2)
      error = "cannot remove " + it->path().string() + ": " + e2.message();
  }
  if (ec)
    error = "cannot read the cache folder " + dir + ": " + ec.message();
  return removed;
}

} // namespace ddplint::cli
