#include "clang-frontend/UnitSummary.h"

#include "ddplint/core/ModelIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdlib>
#include <mutex>
#include <set>

#ifndef DDPLINT_SUMMARY_TAG
#define DDPLINT_SUMMARY_TAG "dev"
#endif

namespace ddplint::clangfe {
namespace {

// Bumped whenever the model a unit is summarised into changes meaning: an
// older summary is then stale, never misread.
constexpr const char *kFormat = "ddplint-summary 7 " DDPLINT_SUMMARY_TAG;

std::string hex(std::uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

std::uint64_t contentHash(const std::string &bytes) {
  return llvm::xxh3_64bits(llvm::StringRef(bytes));
}

std::string summaryConfigKey(const core::Wrappers &w) { return kFormat + w.key(); }

std::string serializeSummary(const UnitSummary &s) {
  core::ModelWriter w([](core::Loc l) { return l; }); // positions are place numbers already
  w.string(kFormat);
  w.string(s.unit);
  w.string(s.configKey);
  w.integer(s.distributed);
  w.integer(std::int64_t(s.inputs.size()));
  for (const auto &in : s.inputs) {
    w.string(in.path);
    w.integer(std::int64_t(in.size));
    w.integer(in.mtime);
    w.string(hex(in.hash));
  }
  w.integer(std::int64_t(s.places.size()));
  for (const auto &p : s.places) {
    w.string(p.file);
    w.integer(p.line);
    w.integer(p.column);
  }
  w.integer(std::int64_t(s.functions.size()));
  for (const auto &f : s.functions)
    w.function(f);
  w.integer(std::int64_t(s.exports.size()));
  for (const auto &e : s.exports) {
    w.string(e.symbol);
    w.string(e.key);
    w.string(e.name);
    w.integer(e.returnsRank);
    w.integer(e.predicate.has_value());
    if (e.predicate)
      w.cond(*e.predicate);
  }
  w.integer(std::int64_t(s.rankGlobals.size()));
  for (const auto &g : s.rankGlobals)
    w.string(g);
  w.string("end");
  return w.take();
}

std::optional<UnitSummary> parseSummary(const std::string &text, std::string &error) {
  UnitSummary s;
  std::int64_t places = 0;
  core::ModelReader r(text, [&](std::uint32_t n) -> core::Loc {
    return n <= places ? n : 0; // a position outside the table is none
  });
  auto bad = [&](const char *what) -> std::optional<UnitSummary> {
    error = std::string("not a complete summary (") + what + " at byte " +
            std::to_string(r.position()) + ")";
    return std::nullopt;
  };
  std::string format, end;
  std::int64_t n = 0, v = 0;
  if (!r.string(format))
    return bad("header");
  if (format != kFormat) {
    error = "made by another ddplint version ('" + format + "')";
    return std::nullopt;
  }
  if (!r.string(s.unit) || !r.string(s.configKey) || !r.integer(v))
    return bad("unit");
  s.distributed = v != 0;
  if (!r.integer(n) || n < 0 || n > 1 << 20)
    return bad("inputs");
  s.inputs.resize(size_t(n));
  for (auto &in : s.inputs) {
    std::int64_t size = 0;
    std::string h;
    if (!r.string(in.path) || !r.integer(size) || !r.integer(in.mtime) || !r.string(h) ||
        h.size() != 16)
      return bad("input");
    in.size = std::uint64_t(size);
    in.hash = std::strtoull(h.c_str(), nullptr, 16);
  }
  if (!r.integer(places) || places < 0 || places > 1 << 24)
    return bad("places");
  s.places.resize(size_t(places));
  for (auto &p : s.places) {
    std::int64_t line = 0, col = 0;
    if (!r.string(p.file) || !r.integer(line) || !r.integer(col) || line < 0 || col < 0)
      return bad("place");
    p.line = unsigned(line);
    p.column = unsigned(col);
  }
  if (!r.integer(n) || n < 0 || n > 1 << 20)
    return bad("functions");
  s.functions.resize(size_t(n));
  for (auto &f : s.functions)
    if (!r.function(f))
      return bad("function");
  if (!r.integer(n) || n < 0 || n > 1 << 20)
    return bad("exports");
  s.exports.resize(size_t(n));
  for (auto &e : s.exports) {
    std::int64_t rank = 0, pred = 0;
    if (!r.string(e.symbol) || !r.string(e.key) || !r.string(e.name) || !r.integer(rank) ||
        !r.integer(pred))
      return bad("export");
    e.returnsRank = rank != 0;
    if (pred) {
      core::Cond c;
      if (!r.cond(c))
        return bad("predicate");
      e.predicate = std::move(c);
    }
  }
  if (!r.integer(n) || n < 0 || n > 1 << 20)
    return bad("rank globals");
  s.rankGlobals.resize(size_t(n));
  for (auto &g : s.rankGlobals)
    if (!r.string(g))
      return bad("rank global");
  if (!r.string(end) || end != "end" || !r.atEnd())
    return bad("end");
  return s;
}

bool summaryIsStale(const UnitSummary &s, std::string *why) {
  for (const auto &in : s.inputs) {
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(in.path, st) || !llvm::sys::fs::is_regular_file(st)) {
      if (why)
        *why = in.path + " is gone";
      return true;
    }
    const auto mtime = std::chrono::duration_cast<std::chrono::seconds>(
                           st.getLastModificationTime().time_since_epoch())
                           .count();
    if (st.getSize() == in.size && mtime == in.mtime)
      continue;
    // Touched, perhaps not changed (a checkout, a build system): the contents decide.
    auto buf = llvm::MemoryBuffer::getFile(in.path, /*IsText=*/false);
    if (!buf || contentHash((*buf)->getBuffer().str()) != in.hash) {
      if (why)
        *why = in.path + " changed";
      return true;
    }
  }
  return false;
}

std::string defaultCacheFolder() {
  if (const char *d = std::getenv("DDPLINT_CACHE_DIR"); d && *d && llvm::sys::path::is_absolute(d))
    return d;
  llvm::SmallString<256> p;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x && llvm::sys::path::is_absolute(x)) {
    p = x;
  } else if (llvm::sys::path::home_directory(p)) {
    llvm::sys::path::append(p, ".cache");
  } else {
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, p);
    llvm::sys::path::append(p, "ddplint-cache");
    return std::string(p);
  }
  llvm::sys::path::append(p, "ddplint");
  return std::string(p);
}

std::string summaryFolder(const std::string &cacheDir) {
  llvm::SmallString<256> p(cacheDir);
  llvm::sys::path::append(p, "summaries");
  return std::string(p);
}

std::string SummaryStore::fileFor(const std::string &unit) const {
  llvm::SmallString<256> p(folder_);
  llvm::sys::path::append(p, hex(contentHash(unit)) + ".summary");
  return std::string(p);
}

std::optional<UnitSummary> SummaryStore::load(const std::string &unit, std::string *error) const {
  auto buf = llvm::MemoryBuffer::getFile(fileFor(unit), /*IsText=*/false);
  if (!buf) {
    if (error)
      error->clear(); // none stored: not an error
    return std::nullopt;
  }
  std::string err;
  std::optional<UnitSummary> s = parseSummary((*buf)->getBuffer().str(), err);
  if (s && s->unit != unit) {
    s.reset(); // a hash collision of two paths: treat as none
    err = "stored for another file";
  }
  if (!s && error)
    *error = fileFor(unit) + ": " + err;
  return s;
}

bool SummaryStore::save(const UnitSummary &s, std::string *error) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(folder_)) {
    if (error)
      *error = "cannot create " + folder_ + ": " + ec.message();
    return false;
  }
  const std::string target = fileFor(s.unit);
  llvm::SmallString<256> tmp;
  int fd = -1;
  if (llvm::sys::fs::createUniqueFile(target + ".tmp-%%%%%%", fd, tmp)) {
    if (error)
      *error = "cannot write in " + folder_;
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << serializeSummary(s);
    os.flush();
    if (os.has_error()) {
      os.clear_error();
      std::error_code ignored = llvm::sys::fs::remove(tmp); // best effort: `cache clear` removes strays
      (void)ignored;
      if (error)
        *error = "cannot write " + std::string(tmp);
      return false;
    }
  }
  if (llvm::sys::fs::rename(tmp, target)) {
    std::error_code ignored = llvm::sys::fs::remove(tmp); // best effort, as above
    (void)ignored;
    if (error)
      *error = "cannot rename into " + target;
    return false;
  }
  return true;
}

namespace {
// Ours: a summary, or the temporary a crashed writer left.
bool ownFile(llvm::StringRef name) {
  return name.ends_with(".summary") || name.contains(".summary.tmp-");
}
} // namespace

size_t SummaryStore::count(std::uint64_t *bytes) const {
  size_t n = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (!name.ends_with(".summary"))
      continue;
    ++n;
    llvm::sys::fs::file_status st;
    if (bytes && !llvm::sys::fs::status(it->path(), st))
      *bytes += st.getSize();
  }
  return n;
}

unsigned SummaryStore::clear(std::string &error) const {
  unsigned n = 0;
  std::error_code ec;
  std::vector<std::string> files;
  for (llvm::sys::fs::directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec))
    if (ownFile(llvm::sys::path::filename(it->path())))
      files.push_back(it->path());
  for (const auto &f : files) {
    if (std::error_code rc = llvm::sys::fs::remove(f))
      error = "cannot remove " + f + ": " + rc.message();
    else
      ++n;
  }
  std::error_code notEmpty = llvm::sys::fs::remove(folder_); // files of others stay
  (void)notEmpty;
  return n;
}

void SummaryIndex::add(UnitSummary s) {
  auto u = std::make_unique<Unit>();
  u->stale = summaryIsStale(s, &u->staleWhy);
  u->summary = std::move(s);
  for (size_t i = 0; i < u->summary.exports.size(); ++i)
    bySymbol_.emplace(u->summary.exports[i].symbol, std::make_pair(u.get(), i));
  for (const auto &g : u->summary.rankGlobals)
    rankGlobals_.emplace(g, u.get());
  units_.push_back(std::move(u));
}

bool SummaryIndex::rankGlobal(const std::string &symbol, const std::string &exceptUnit) const {
  auto [b, e] = rankGlobals_.equal_range(symbol);
  for (auto it = b; it != e; ++it)
    if (it->second->summary.unit != exceptUnit && !it->second->stale)
      return true;
  return false;
}

std::optional<SummaryIndex::Hit> SummaryIndex::find(const std::string &symbol,
                                                    const std::string &exceptUnit) const {
  auto [b, e] = bySymbol_.equal_range(symbol);
  std::optional<Hit> stale;
  for (auto it = b; it != e; ++it) {
    const Unit *u = it->second.first;
    if (u->summary.unit == exceptUnit)
      continue;
    Hit h{u, &u->summary.exports[it->second.second]};
    if (!u->stale)
      return h; // a fresh definition wins over a stale one of the same symbol
    if (!stale)
      stale = h;
  }
  return stale;
}

std::shared_ptr<const SummaryIndex> SummaryIndex::load(const SummaryStore &store,
                                                       const std::vector<std::string> &units) {
  auto index = std::make_shared<SummaryIndex>();
  for (const auto &u : units)
    if (std::optional<UnitSummary> s = store.load(u))
      index->add(std::move(*s));
  return index;
}

namespace {
std::mutex gMu;
std::shared_ptr<const SummaryIndex> gRun;
std::function<void(UnitSummary)> gSink;
// Per database file (the plugin, clangd): read once, with its time, so that
// a newer database or a new CLI run is read again.
struct Discovered {
  std::int64_t stamp = 0;
  std::shared_ptr<const SummaryIndex> index;
};
std::map<std::string, Discovered> gDiscovered;

std::string nearestDatabase(llvm::StringRef file) {
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(file));
  while (!dir.empty()) {
    for (const char *rel : {"compile_commands.json", "build/compile_commands.json"}) {
      llvm::SmallString<256> p(dir);
      llvm::sys::path::append(p, rel);
      if (llvm::sys::fs::is_regular_file(p))
        return std::string(p);
    }
    llvm::StringRef parent = llvm::sys::path::parent_path(dir);
    if (parent == dir)
      break;
    dir = parent;
  }
  return "";
}

std::vector<std::string> databaseFiles(const std::string &db) {
  std::vector<std::string> out;
  auto buf = llvm::MemoryBuffer::getFile(db, /*IsText=*/true);
  if (!buf)
    return out;
  llvm::Expected<llvm::json::Value> v = llvm::json::parse((*buf)->getBuffer());
  if (!v) {
    llvm::consumeError(v.takeError());
    return out;
  }
  const llvm::json::Array *entries = v->getAsArray();
  if (!entries)
    return out;
  std::set<std::string> seen;
  for (const llvm::json::Value &e : *entries) {
    const llvm::json::Object *o = e.getAsObject();
    if (!o)
      continue;
    std::optional<llvm::StringRef> file = o->getString("file");
    std::optional<llvm::StringRef> dir = o->getString("directory");
    if (!file)
      continue;
    llvm::SmallString<256> p(*file);
    if (!llvm::sys::path::is_absolute(p) && dir) {
      p = *dir;
      llvm::sys::path::append(p, *file);
    }
    llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
    if (seen.insert(std::string(p)).second)
      out.push_back(std::string(p));
  }
  return out;
}
} // namespace

void setRunSummaries(std::shared_ptr<const SummaryIndex> index) {
  std::lock_guard<std::mutex> lock(gMu);
  gRun = std::move(index);
}

std::shared_ptr<const SummaryIndex> summariesFor(const std::string &mainFile) {
  std::lock_guard<std::mutex> lock(gMu);
  if (gRun)
    return gRun;
  const std::string db = nearestDatabase(mainFile);
  if (db.empty())
    return nullptr;
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(db, st))
    return nullptr;
  SummaryStore store(summaryFolder(defaultCacheFolder()));
  llvm::sys::fs::file_status sst;
  std::int64_t stamp = std::chrono::duration_cast<std::chrono::seconds>(
                           st.getLastModificationTime().time_since_epoch())
                           .count();
  if (!llvm::sys::fs::status(store.folder(), sst))
    stamp = stamp * 31 + std::chrono::duration_cast<std::chrono::seconds>(
                             sst.getLastModificationTime().time_since_epoch())
                             .count();
  Discovered &d = gDiscovered[db];
  if (!d.index || d.stamp != stamp) {
    d.index = SummaryIndex::load(store, databaseFiles(db));
    d.stamp = stamp;
  }
  return d.index;
}

void setSummarySink(std::function<void(UnitSummary)> sink) {
  std::lock_guard<std::mutex> lock(gMu);
  gSink = std::move(sink);
}

bool summarySinkSet() {
  std::lock_guard<std::mutex> lock(gMu);
  return bool(gSink);
}

void sendSummary(UnitSummary s) {
  std::function<void(UnitSummary)> sink;
  {
    std::lock_guard<std::mutex> lock(gMu);
    sink = gSink;
  }
  if (sink)
    sink(std::move(s));
}

} // namespace ddplint::clangfe
