#include "PyProject.h"

#include "PySyntax.h"

#include "ddplint/core/ModelIO.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unordered_map>

namespace fs = std::filesystem;

namespace ddplint::pyfe {

// Where imports are looked up for one file: its own folder (Python's
// sys.path[0]), the folders above it up to the project's root (the first with
// .git, .ddplint.yaml, pyproject.toml, setup.py or setup.cfg; without one, the
// folder above the file's top package), and the root's src/.
struct PyProject::Roots {
  std::vector<std::string> dirs;
  std::string key;  // the dirs joined: roots are compared by it
  size_t id = 0;    // the key interned: what the per-run maps compare
  std::string root; // the project's root
};

// The project's Python files and the words of their import lines: who may
// import a module, without parsing every file.
struct PyProject::Index {
  std::vector<std::pair<std::string, std::set<std::string>>> files;
  bool truncated = false;
  // A hash of the file list: a file added or removed can change how every
  // import resolves, so stored callers' calls made under another list are stale.
  std::uint64_t filesKey = 0;
  std::map<std::string, int> settingsFlags; // see noteSettingsFlag
  std::map<std::string, int> fieldFlags;    // see noteFieldFlags
};

struct PyProject::Module {
  // `id` names the module in linked keys ("id:function"): its dotted name,
  // made unique when another file of the project has the same dotted name
  // under another source root (two sub-projects' `utils.utils`).
  std::string path, name, package, id;
  PyModel model; // program, positions and summaries (no syntax tree kept)
  Roots roots;   // the importer's: the module's own imports resolve the same way
  // The other modules its build read (their summaries shaped its model),
  // with theirs: what a result made from this module depends on.
  std::set<std::string> deps;
};

namespace {

constexpr std::uintmax_t kMaxModuleBytes = 4u << 20;

thread_local std::vector<std::string> tBuilding; // paths being built on this thread
thread_local bool tDepthLimited = false;
// The modules the computations under way on this thread read, innermost last.
thread_local std::vector<std::set<std::string> *> tReads;

void noteRead(const PyProject::Module &m) {
  if (tReads.empty())
    return;
  // Seen before: its deps came with it (a module's deps hold its reads' deps).
  if (!tReads.back()->insert(m.path).second)
    return;
  tReads.back()->insert(m.deps.begin(), m.deps.end());
}

// FNV-1a: content hashes for the caller cache (no Clang in this library).
std::uint64_t hashBytes(std::string_view bytes, std::uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(std::uint64_t v) {
  static const char *digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4)
    s[i] = digits[v & 15];
  return s;
}

std::vector<std::string> split(const std::string &dotted) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= dotted.size()) {
    size_t e = dotted.find('.', b);
    if (e == std::string::npos)
      e = dotted.size();
    out.push_back(dotted.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

std::string join(const std::vector<std::string> &parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i)
    out += (out.empty() ? "" : ".") + parts[i];
  return out;
}

bool isFile(const fs::path &p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool projectMarker(const fs::path &d) {
  std::error_code ec;
  for (const char *m : {".git", ".ddplint.yaml"})
    if (fs::exists(d / m, ec))
      return true;
  // A package's own module named setup.py (efficientvit/apps/setup.py, a
  // helper that sets up a run) does not make the package a project: its
  // modules are imported as `efficientvit.apps.x` from the folder above.
  if (isFile(d / "__init__.py"))
    return false;
  for (const char *m : {"pyproject.toml", "setup.py", "setup.cfg"})
    if (fs::exists(d / m, ec))
      return true;
  return false;
}

// The folder's package, from the __init__.py files above it: util/crop.py
// with util/__init__.py is in package "util".  A folder without one (a
// namespace package, or scripts) is a package only below a project root.
std::string packageOf(const fs::path &dir, const fs::path &root) {
  std::vector<std::string> parts;
  fs::path d = dir;
  while (!d.empty() && d != d.parent_path() && isFile(d / "__init__.py")) {
    parts.push_back(d.filename().string());
    d = d.parent_path();
  }
  if (parts.empty() && !root.empty() && dir != root) {
    // PEP 420: a folder of the project without __init__.py is still a package.
    std::error_code ec;
    fs::path rel = fs::relative(dir, root, ec);
    if (!ec && !rel.empty() && *rel.begin() != "..")
      for (const auto &p : rel)
        parts.insert(parts.begin(), p.string());
  }
  std::reverse(parts.begin(), parts.end());
  return join(parts, 0, parts.size());
}

bool readSource(const std::string &path, std::string &out) {
  std::error_code ec;
  if (fs::file_size(path, ec) > kMaxModuleBytes || ec)
    return false;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

void relocate(core::Cond &c, core::Loc base) {
  if (c.loc)
    c.loc += base;
  for (auto &k : c.kids)
    relocate(k, base);
}

// A function of module `prefix` moved into the importer's program: its
// positions follow the importer's, its calls of its own module's functions
// get the module's prefix (calls of other modules have theirs already).
void relocate(core::Node &n, core::Loc base, const std::string &prefix, const std::string &owner,
              LinkResult &res, std::vector<std::string> &calls) {
  if (n.loc) {
    n.loc += base;
    res.owner.emplace(n.loc, owner);
  }
  if (n.tripLoc)
    n.tripLoc += base;
  relocate(n.cond, base);
  if (n.kind == core::Node::Kind::Call && !n.callee.empty()) {
    if (n.callee.find(':') == std::string::npos)
      n.callee = prefix + n.callee;
    calls.push_back(n.callee);
  }
  for (auto &k : n.kids)
    relocate(k, base, prefix, owner, res, calls);
}

void collectCalls(const core::Node &n, std::vector<std::pair<std::string, core::Loc>> &out) {
  if (n.kind == core::Node::Kind::Call && n.callee.find(':') != std::string::npos)
    out.emplace_back(n.callee, n.loc);
  for (const auto &k : n.kids)
    collectCalls(k, out);
}

} // namespace

bool distributedThroughLinks(const LinkResult &linked, const std::string &path, bool trainsHere) {
  if (!linked.distributed && !(linked.collectives && (linked.trains || trainsHere)))
    return false;
  // A test by its folder, not by its name: detectron2's and SlowFast's
  // tools/test_net.py are distributed evaluation scripts.
  for (const auto &part : fs::path(path).parent_path())
    if (part == "tests" || part == "test")
      return false;
  return true;
}

// Whether a body makes the world on some path its known tests leave open.
bool reachesRendezvous(const core::Node &n) {
  if (n.kind == core::Node::Kind::Event && n.event == core::EventKind::Rendezvous)
    return true;
  if (n.kind == core::Node::Kind::If && n.cond.kind == core::Cond::Kind::Const && !n.kids.empty()) {
    const size_t arm = n.cond.constValue ? 0 : 1;
    return arm < n.kids.size() && reachesRendezvous(n.kids[arm]);
  }
  return std::any_of(n.kids.begin(), n.kids.end(), [](const core::Node &k) { return reachesRendezvous(k); });
}

// A collective or barrier the code names itself (not a backward() that is
// DDP's all-reduce only when an importer wraps the model).
bool runsCollective(const core::Node &n) {
  if (n.kind == core::Node::Kind::Event && !n.assumedDdp &&
      (n.event == core::EventKind::Collective || n.event == core::EventKind::Barrier))
    return true;
  return std::any_of(n.kids.begin(), n.kids.end(), [](const core::Node &k) { return runsCollective(k); });
}

// DDP's gradient all-reduce that a helper module's `backward()` stands for.
bool runsBackward(const core::Node &n) {
  if (n.kind == core::Node::Kind::Event && n.name.find("backward") != std::string::npos)
    return true;
  return std::any_of(n.kids.begin(), n.kids.end(), [](const core::Node &k) { return runsBackward(k); });
}

bool hasCheckpointWrite(const core::Node &n) {
  if (n.kind == core::Node::Kind::Event && n.event == core::EventKind::CheckpointWrite)
    return true;
  return std::any_of(n.kids.begin(), n.kids.end(),
                     [](const core::Node &k) { return hasCheckpointWrite(k); });
}

static void dropAssumedDdp(core::Node &n) {
  n.kids.erase(std::remove_if(n.kids.begin(), n.kids.end(),
                              [](const core::Node &k) {
                                return k.kind == core::Node::Kind::Event && k.assumedDdp;
                              }),
               n.kids.end());
  for (auto &k : n.kids)
    dropAssumedDdp(k);
}

void dropAssumedDdp(core::Program &p) {
  for (auto &f : p.functions)
    dropAssumedDdp(f.body);
}

bool hasCheckpointWrite(const core::Program &p) {
  return std::any_of(p.functions.begin(), p.functions.end(),
                     [](const core::Function &f) { return hasCheckpointWrite(f.body); });
}

const LinkedModule *LinkResult::moduleOf(core::Loc l) const {
  for (const auto &m : modules)
    if (l >= m.first && l <= m.last)
      return &m;
  return nullptr;
}

class PyProject::Context : public ModuleContext {
public:
  Context(PyProject &p, Roots r, std::string pkg, bool imported)
      : p_(p), roots_(std::move(r)), package_(std::move(pkg)), imported_(imported) {}
  bool testFolder_ = false; // set by contextFor
  bool imported() const override { return imported_; }
  bool inTestFolder() const override { return testFolder_; }
  std::string package() const override { return package_; }
  // A builder asks again for the same names, once per question it has of a
  // call (hundreds of times per module in real code); within one build the
  // answers cannot change: the modules being built and the reads' owner are
  // the same until the build ends.
  const ExternalFunction *function(const std::string &dotted) override {
    auto [it, fresh] = functions_.try_emplace(dotted, nullptr);
    if (fresh)
      it->second = p_.function(dotted, roots_, 0);
    return it->second;
  }
  bool isClass(const std::string &dotted) override {
    auto [it, fresh] = classes_.try_emplace(dotted, false);
    if (fresh)
      it->second = p_.isClass(dotted, roots_);
    return it->second;
  }
  bool classDefinesMethods(const std::string &dotted) override {
    auto [it, fresh] = definesMethods_.try_emplace(dotted, false);
    if (fresh)
      it->second = p_.classDefinesMethods(dotted, roots_);
    return it->second;
  }
  bool hfTrainerClass(const std::string &dotted) override {
    auto [it, fresh] = hfTrainer_.try_emplace(dotted, false);
    if (fresh)
      it->second = p_.hfTrainerClass(dotted, roots_, 0);
    return it->second;
  }
  bool classBufferFree(const std::string &dotted) override {
    auto [it, fresh] = bufferFree_.try_emplace(dotted, false);
    if (fresh)
      it->second = p_.classBufferFree(dotted, roots_);
    return it->second;
  }
  std::set<std::string> signalFlagsOf(const std::string &dotted) override {
    return p_.signalFlagsOf(dotted, roots_);
  }
  std::map<std::string, std::string> libraryAliasesOf(const std::string &dotted) override {
    return p_.libraryAliasesOf(dotted, roots_);
  }
  std::string moduleName() const override { return name_; }
  std::string name_; // set by its maker
  bool mainProcessSetting(const std::string &attr) override {
    return !roots_.root.empty() && mainOnly(p_.indexOf(roots_.root).settingsFlags, attr);
  }
  bool mainProcessField(const std::string &attr) override {
    return !roots_.root.empty() && mainOnly(p_.indexOf(roots_.root).fieldFlags, attr);
  }

private:
  // Every assignment of the name in the project was a main-process test.
  static bool mainOnly(const std::map<std::string, int> &flags, const std::string &attr) {
    auto it = flags.find(attr);
    return it != flags.end() && it->second > 0;
  }
  PyProject &p_;
  Roots roots_;
  std::string package_;
  bool imported_;
  std::unordered_map<std::string, const ExternalFunction *> functions_;
  std::unordered_map<std::string, bool> bufferFree_;
  std::unordered_map<std::string, bool> hfTrainer_;
  std::unordered_map<std::string, bool> definesMethods_;
  std::unordered_map<std::string, bool> classes_;
};

PyProject::PyProject(core::Wrappers wrappers, const std::vector<std::string> &folders)
    : wrappers_(std::move(wrappers)) {
  for (const auto &f : folders) {
    fs::path p = fs::path(f).lexically_normal();
    if (!p.has_filename() && p.has_parent_path())
      p = p.parent_path(); // "a/b/" -> "a/b"
    folders_.push_back(p.string());
  }
}

std::shared_ptr<const SyntaxTree> PyProject::tree(const std::string &file, std::string source) {
  const std::string path = fs::path(file).lexically_normal().string();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = trees_.find(path);
    if (it != trees_.end() && it->second->source() == source)
      return it->second;
  }
  auto parsed = std::make_shared<const SyntaxTree>(std::move(source));
  std::lock_guard<std::mutex> lock(mu_);
  if (trees_.size() < kMaxKeptTrees)
    trees_[path] = parsed; // past the bound a file is parsed again when imported: slower, same result
  return parsed;
}
PyProject::~PyProject() = default;

std::unique_ptr<ModuleContext> PyProject::contextFor(const std::string &file) {
  tDepthLimited = false;
  const fs::path dir = fs::path(file).parent_path();
  Roots r;
  fs::path root;
  for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
    if (projectMarker(d)) {
      root = d;
      break;
    }
    if (d == d.parent_path())
      break;
  }
  if (root.empty()) {
    // No marker: the outermost folder the run lints that holds the file.
    for (const auto &f : folders_) {
      const fs::path rel = dir.lexically_normal().lexically_relative(f);
      if (!rel.empty() && *rel.begin() != ".." && (root.empty() || f.size() < root.string().size()))
        root = f;
    }
  }
  if (root.empty()) {
    // No marker, no folder: the folder above the file's top package (the file's own
    // folder for a script), where `import pkg.mod` starts.
    fs::path top = dir;
    while (!top.empty() && top != top.parent_path() && isFile(top / "__init__.py"))
      top = top.parent_path();
    root = top;
  }
  // `import utils` searches from the script's folder.  A folder that is a
  // package (it has an __init__.py) is not one: its modules are imported as
  // `pkg.utils`, and a bare `import utils` in dataset/utils.py is the
  // project's top-level utils.py (ALBEF), not the file itself.  Package
  // folders are searched last, for scripts run from inside a package.
  std::vector<std::string> packageDirs;
  for (fs::path d = dir;; d = d.parent_path()) {
    const bool top = d == root || d == d.parent_path() || d.empty();
    if (!top && isFile(d / "__init__.py"))
      packageDirs.push_back(d.string());
    else
      r.dirs.push_back(d.string());
    if (top)
      break;
  }
  std::error_code ec;
  if (fs::is_directory(root / "src", ec))
    r.dirs.push_back((root / "src").string());
  // HRNet-style trees (CvT): `tools/_init_paths.py` puts `lib` on sys.path,
  // so `from utils.comm import comm` is lib/utils/comm.py.  Only a `lib` that
  // is not itself a package: a package named lib is imported as `lib.x`.
  if (fs::is_directory(root / "lib", ec) && !isFile(root / "lib" / "__init__.py"))
    r.dirs.push_back((root / "lib").string());
  // Each folder searched from the script's own up to the root: its
  // sub-folders that are a package's own project.
  const std::vector<std::string> searched = r.dirs;
  for (const auto &d : searched) {
    std::vector<std::string> subs;
    bool known = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = installedSubprojects_.find(d); it != installedSubprojects_.end()) {
        subs = it->second;
        known = true;
      }
    }
    if (!known) {
      for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path sub = it->path();
        if (!it->is_directory(ec) || isFile(sub / "__init__.py") ||
            !(isFile(sub / "setup.py") || isFile(sub / "pyproject.toml")))
          continue;
        bool package = false;
        for (fs::directory_iterator jt(sub, ec), jend; !ec && jt != jend && !package; jt.increment(ec))
          package = jt->is_directory(ec) && isFile(jt->path() / "__init__.py");
        ec.clear();
        if (package)
          subs.push_back(sub.string());
      }
      ec.clear();
      std::sort(subs.begin(), subs.end());
      std::lock_guard<std::mutex> lock(mu_);
      installedSubprojects_.emplace(d, subs);
    }
    for (const auto &sub : subs)
      if (std::find(r.dirs.begin(), r.dirs.end(), sub) == r.dirs.end())
        r.dirs.push_back(sub);
  }
  r.dirs.insert(r.dirs.end(), packageDirs.begin(), packageDirs.end());
  for (const auto &d : r.dirs)
    r.key += d + '\n';
  r.root = root.string();
  {
    std::lock_guard<std::mutex> lock(mu_);
    rootOf_[file] = r.root;
    r.id = rootsIds_.emplace(r.key, rootsIds_.size()).first->second;
  }
  fs::path pkgRoot = root;
  auto ctx = std::make_unique<Context>(*this, std::move(r), packageOf(dir, pkgRoot), false);
  {
    const fs::path f(file);
    const std::string stem = f.stem().string();
    const std::string &pkg = ctx->package();
    ctx->name_ = f.filename() == "__init__.py" ? pkg : pkg.empty() ? stem : pkg + "." + stem;
  }
  for (const auto &part : dir)
    ctx->testFolder_ = ctx->testFolder_ || part == "tests" || part == "test";
  return ctx;
}

std::shared_ptr<const PyProject::Module> PyProject::byName(const std::string &name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto p = nameToPath_.find(name);
  if (p == nameToPath_.end())
    return nullptr;
  auto m = modules_.find(p->second);
  if (m == modules_.end())
    return nullptr;
  noteRead(*m->second);
  return m->second;
}

std::shared_ptr<const PyProject::Module> PyProject::load(const std::string &dotted,
                                                         const Roots &roots) {
  std::shared_ptr<const Module> m = loadUnnoted(dotted, roots);
  if (m)
    noteRead(*m);
  return m;
}

std::shared_ptr<const PyProject::Module> PyProject::loadUnnoted(const std::string &dotted,
                                                                const Roots &roots) {
  const std::string path = pathOf(dotted, roots);
  if (path.empty())
    return nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto m = modules_.find(path);
    if (m != modules_.end())
      return m->second;
  }
  return build(path, dotted, roots);
}

std::set<std::string> PyProject::signalFlagsOf(const std::string &dotted, const Roots &roots) {
  // Only a module that registers a handler is built for this question: a
  // build started here for every import would change which modules an import
  // cycle sees half-built.
  const std::string path = pathOf(dotted, roots);
  if (path.empty())
    return {};
  std::optional<bool> registers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = registersSignal_.find(path); it != registersSignal_.end())
      registers = it->second;
  }
  if (!registers) {
    std::string source; // read outside the lock: the other workers go on
    registers = readSource(path, source) && source.find("signal.signal(") != std::string::npos;
    std::lock_guard<std::mutex> lock(mu_);
    registersSignal_[path] = *registers;
  }
  if (!*registers)
    return {};
  std::shared_ptr<const Module> mod = load(dotted, roots);
  return mod ? mod->model.signalFlagAttrs : std::set<std::string>();
}

std::map<std::string, std::string> PyProject::libraryAliasesOf(const std::string &dotted, const Roots &roots) {
  // Read from the module's text, not its build: an importer asks while it
  // collects its imports, before any module it imports should be built.
  const std::string path = pathOf(dotted, roots);
  if (path.empty())
    return {};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = libraryAliases_.find(path); it != libraryAliases_.end())
      return it->second;
  }
  std::string source;
  std::map<std::string, std::string> aliases;
  if (readSource(path, source) && source.find(" = ") != std::string::npos)
    aliases = libraryFunctionAliases(*tree(path, std::move(source)));
  std::lock_guard<std::mutex> lock(mu_);
  return libraryAliases_.emplace(path, std::move(aliases)).first->second;
}

std::string PyProject::pathOf(const std::string &dotted, const Roots &roots) {
  std::string path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pathOf_.find({roots.id, dotted});
    if (it != pathOf_.end())
      return it->second;
  }
  {
    const std::vector<std::string> parts = split(dotted);
    // The module of parts[from:] under the first root that holds it.
    auto lookup = [&](size_t from) -> std::string {
      for (const auto &dir : roots.dirs) {
        fs::path p = dir;
        for (size_t i = from; i < parts.size(); ++i)
          p /= parts[i];
        fs::path asFile = p;
        asFile += ".py";
        if (isFile(asFile))
          return asFile.lexically_normal().string();
        if (isFile(p / "__init__.py"))
          return (p / "__init__.py").lexically_normal().string();
      }
      return "";
    };
    path = lookup(0);
    // mae_st's `from mae_st.util import misc` in a clone named mae_st: the
    // project's folder is the package its modules import themselves by.
    if (path.empty() && parts.size() >= 2 && !roots.root.empty()) {
      std::error_code ec;
      const fs::path root = fs::weakly_canonical(fs::path(roots.root), ec);
      if (!ec && root.filename() == parts[0]) {
        fs::path p = roots.root;
        for (size_t i = 1; i < parts.size(); ++i)
          p /= parts[i];
        fs::path asFile = p;
        asFile += ".py";
        if (isFile(asFile))
          path = asFile.lexically_normal().string();
        else if (isFile(p / "__init__.py"))
          path = (p / "__init__.py").lexically_normal().string();
      }
    }
    // mvit's `import vision.fair.mvit.mvit.utils.checkpoint as cu`: code
    // published out of a monorepo keeps the monorepo's prefix.  Where no root
    // holds the first part, the longest tail of at least three parts that a
    // root holds, after at least two dropped (`torch.utils.data` never
    // becomes a project's `utils/data.py`).
    if (path.empty() && parts.size() >= 5) {
      bool firstHeld = false;
      for (const auto &dir : roots.dirs) {
        std::error_code ec;
        firstHeld = firstHeld || fs::exists(fs::path(dir) / parts[0], ec) ||
                    isFile(fs::path(dir) / (parts[0] + ".py"));
      }
      for (size_t from = 2; !firstHeld && path.empty() && from + 3 <= parts.size(); ++from)
        path = lookup(from);
    }
    std::lock_guard<std::mutex> lock(mu_);
    pathOf_[{roots.id, dotted}] = path;
  }
  return path;
}

std::shared_ptr<const PyProject::Module> PyProject::build(const std::string &path,
                                                          const std::string &dotted,
                                                          const Roots &roots) {
  if (std::find(tBuilding.begin(), tBuilding.end(), path) != tBuilding.end())
    return nullptr; // an import cycle: the module is being built further up
  if (tBuilding.size() >= kMaxImportDepth) {
    tDepthLimited = true;
    return nullptr;
  }
  std::string source;
  if (!readSource(path, source))
    return nullptr;
  const std::shared_ptr<const SyntaxTree> parsed = this->tree(path, std::move(source));
  const SyntaxTree &tree = *parsed;
  if (!tree.ok())
    return nullptr;
  auto mod = std::make_shared<Module>();
  mod->path = path;
  mod->name = dotted;
  const bool isPackage = fs::path(path).filename() == "__init__.py";
  const auto parts = split(dotted);
  mod->package = isPackage ? dotted : join(parts, 0, parts.size() - 1);
  mod->roots = roots;
  tBuilding.push_back(path);
  tReads.push_back(&mod->deps);
  {
    Context ctx(*this, roots, mod->package, true);
    ctx.name_ = dotted;
    mod->model = buildModel(tree, wrappers_, &ctx);
  }
  tReads.pop_back();
  tBuilding.pop_back();
  mod->deps.erase(path);
  mod->model.ifNodes.clear(); // they point into the tree, which goes now
  std::lock_guard<std::mutex> lock(mu_);
  if (auto done = modules_.find(path); done != modules_.end())
    return done->second; // another thread built it meanwhile: the first one stays
  mod->id = dotted;
  for (int n = 2; nameToPath_.count(mod->id) && nameToPath_[mod->id] != path; ++n)
    mod->id = dotted + "#" + std::to_string(n);
  nameToPath_.emplace(mod->id, path);
  return modules_.emplace(path, std::move(mod)).first->second;
}

std::shared_ptr<const PyProject::Module> PyProject::specialized(const std::shared_ptr<const Module> &plain,
                                                                const std::string &key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = specialized_.find({plain->path, key}); it != specialized_.end())
      return it->second;
  }
  if (std::find(tBuilding.begin(), tBuilding.end(), plain->path) != tBuilding.end())
    return nullptr;
  std::string source;
  if (!readSource(plain->path, source))
    return nullptr;
  const std::shared_ptr<const SyntaxTree> parsed = this->tree(plain->path, std::move(source));
  if (!parsed->ok())
    return nullptr;
  auto mod = std::make_shared<Module>();
  mod->path = plain->path;
  mod->name = plain->name;
  mod->package = plain->package;
  mod->roots = plain->roots;
  mod->id = plain->id;
  mod->deps = plain->deps;
  tBuilding.push_back(plain->path);
  tReads.push_back(&mod->deps);
  {
    Context ctx(*this, plain->roots, plain->package, true);
    ctx.name_ = plain->name;
    mod->model = buildModel(*parsed, wrappers_, &ctx, {key});
  }
  tReads.pop_back();
  tBuilding.pop_back();
  mod->deps.erase(plain->path);
  mod->model.ifNodes.clear();
  std::lock_guard<std::mutex> lock(mu_);
  return specialized_.emplace(std::make_pair(plain->path, key), std::move(mod)).first->second;
}

const ExternalFunction *PyProject::function(const std::string &dotted, const Roots &roots,
                                            int depth) {
  if (depth > 6)
    return nullptr;
  const std::vector<std::string> parts = split(dotted);
  // The longest prefix that is a module; the rest is a function or Class.method.
  for (size_t k = parts.size() - 1; k >= 1; --k) {
    const size_t rest = parts.size() - k;
    if (rest > 2)
      break;
    std::shared_ptr<const Module> mod = load(join(parts, 0, k), roots);
    if (!mod)
      continue;
    const std::string key = join(parts, k, parts.size());
    auto s = mod->model.summaries.find(key);
    if (s != mod->model.summaries.end()) {
      const std::string linked = mod->id + ":" + key;
      std::lock_guard<std::mutex> lock(mu_);
      auto &slot = functions_[linked];
      if (!slot) {
        slot = std::make_unique<ExternalFunction>();
        slot->summary = s->second;
        slot->key = linked;
      }
      return slot.get();
    }
    // `Class.method` that the class inherits: from a base in this module
    // (first base first, as Python's lookup for single inheritance), or from
    // one it imports.
    if (rest == 2 && mod->model.classes.count(parts[k])) {
      std::string cls = parts[k];
      for (int hop = 0; hop < 8; ++hop) {
        auto here = mod->model.classes.find(cls);
        if (here == mod->model.classes.end() || here->second.empty())
          break;
        const std::string &base = here->second.front();
        cls = base.substr(base.rfind('.') + 1);
        if (mod->model.classes.count(cls)) {
          if (mod->model.summaries.count(cls + "." + parts[k + 1]))
            return function(join(parts, 0, k) + "." + cls + "." + parts[k + 1], roots, depth + 1);
        } else if (base.find('.') != std::string::npos) {
          return function(base + "." + parts[k + 1], mod->roots, depth + 1);
        } else {
          break;
        }
      }
      return nullptr;
    }
    // A name the module imports: a package's re-export, a helper's alias.
    auto imp = mod->model.imports.find(parts[k]);
    if (imp != mod->model.imports.end() && imp->second != dotted) {
      std::string target = imp->second;
      if (rest == 2)
        target += "." + parts[k + 1];
      return function(target, mod->roots, depth + 1);
    }
    // `from .dist import *` in a package's __init__.
    for (const auto &star : mod->model.starImports) {
      std::string there = star;
      there.append(".").append(key);
      if (const ExternalFunction *f = function(there, mod->roots, depth + 1))
        return f;
    }
    return nullptr;
  }
  return nullptr;
}

// The module that defines the class a dotted name names (imports,
// re-exports and star imports followed), and the class's name there.
std::pair<std::shared_ptr<const PyProject::Module>, std::string>
PyProject::classModule(const std::string &dotted, const Roots &roots, int depth) {
  if (depth > 6)
    return {};
  const std::vector<std::string> parts = split(dotted);
  if (parts.size() < 2)
    return {};
  std::shared_ptr<const Module> mod = load(join(parts, 0, parts.size() - 1), roots);
  if (!mod)
    return {};
  if (mod->model.classes.count(parts.back()))
    return {mod, parts.back()};
  auto imp = mod->model.imports.find(parts.back());
  if (imp != mod->model.imports.end() && imp->second != dotted)
    return classModule(imp->second, mod->roots, depth + 1);
  for (const auto &star : mod->model.starImports)
    if (auto found = classModule(star + "." + parts.back(), mod->roots, depth + 1); found.first)
      return found;
  return {};
}

bool PyProject::classDefinesMethods(const std::string &dotted, const Roots &roots) {
  auto [mod, name] = classModule(dotted, roots, 0);
  if (!mod)
    return false;
  const std::string prefix = name + ".";
  for (auto it = mod->model.summaries.lower_bound(prefix);
       it != mod->model.summaries.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    if (it->first != prefix + "__init__")
      return true;
  return false;
}

bool PyProject::hfTrainerClass(const std::string &dotted, const Roots &roots, int depth) {
  auto [mod, name] = classModule(dotted, roots, 0);
  if (!mod || depth > 4)
    return false;
  auto c = mod->model.classes.find(name);
  if (c == mod->model.classes.end())
    return false;
  for (const auto &b : c->second) {
    const std::string head = b.substr(0, b.find('.'));
    std::string full = b;
    if (auto imp = mod->model.imports.find(head); imp != mod->model.imports.end())
      full = imp->second + b.substr(head.size());
    else if (mod->model.classes.count(b) && !mod->name.empty())
      full = mod->name + '.' + b; // a base of the same module
    if ((full.rfind("transformers.", 0) == 0 || full.rfind("trl.", 0) == 0) &&
        core::builtinPythonApi().mainProcessOverrideBases.count(full))
      return true;
    if (full.find('.') != std::string::npos && hfTrainerClass(full, roots, depth + 1))
      return true;
  }
  return false;
}

bool PyProject::classBufferFree(const std::string &dotted, const Roots &roots) {
  auto [mod, name] = classModule(dotted, roots, 0);
  return mod && mod->model.bufferFreeClasses.count(name) > 0;
}

bool PyProject::isClass(const std::string &dotted, const Roots &roots) {
  return classModule(dotted, roots, 0).first != nullptr;
}

namespace {
// How often `word` stands as a whole word in `source`; with `asCode`, only
// where it is used as code: followed by a call, a separator, the end of a
// line or a quote (`fn=convert`, `[convert]`, `__all__ = ["convert"]`), not
// by a word of prose (a docstring's "convert torch weights").
size_t wordOccurrences(std::string_view source, const std::string &word, bool asCode) {
  auto wordChar = [&](size_t i) {
    return i < source.size() &&
           (std::isalnum(static_cast<unsigned char>(source[i])) || source[i] == '_');
  };
  size_t n = 0;
  for (size_t at = source.find(word); at != std::string_view::npos; at = source.find(word, at + 1)) {
    if ((at > 0 && wordChar(at - 1)) || wordChar(at + word.size()))
      continue;
    if (!asCode) {
      ++n;
      continue;
    }
    size_t k = at + word.size();
    while (k < source.size() && (source[k] == ' ' || source[k] == '\t'))
      ++k;
    n += k >= source.size() || std::string_view("(),]}:=\"'\n\r.").find(source[k]) != std::string_view::npos;
  }
  return n;
}
// How often the code names the module-level `name` (its own `def` counts
// once): not another object's attribute (`torch.save`), a keyword
// argument's name, or a parameter or local of that name and its uses in the
// function that binds it (NVAE's `def save_checkpoint(state, is_best, save)`
// beside its `def save(model, model_path)`).
size_t moduleNameUses(const SyntaxTree &tree, const std::string &name) {
  size_t n = 0;
  auto bindsLocally = [&](SyntaxNode def) {
    for (SyntaxNode p : namedKids(field(def, "parameters")))
      if (SyntaxNode id = parameterName(p); is(id, "identifier") && tree.text(id) == name)
        return true;
    bool assigned = false;
    forEachOwnNode(field(def, "body"), [&](SyntaxNode k) {
      if ((is(k, "assignment") || is(k, "for_statement")) && is(field(k, "left"), "identifier") &&
          tree.text(field(k, "left")) == name)
        assigned = true;
      return !assigned;
    });
    return assigned;
  };
  std::function<void(SyntaxNode)> walk = [&](SyntaxNode x) {
    if (is(x, "function_definition")) {
      if (tree.text(field(x, "name")) == name)
        ++n;
      if (bindsLocally(x))
        return;
      walk(field(x, "body"));
      for (SyntaxNode p : namedKids(field(x, "parameters")))
        walk(field(p, "value")); // defaults are read where the def runs
      return;
    }
    if (is(x, "identifier")) {
      SyntaxNode up = parentOf(x);
      const bool attr = is(up, "attribute") && field(up, "attribute") == x;
      const bool keyword = is(up, "keyword_argument") && field(up, "name") == x;
      if (!attr && !keyword && tree.text(x) == name)
        ++n;
      return;
    }
    for (SyntaxNode k : namedKids(x))
      walk(k);
  };
  walk(tree.root());
  return n;
}
} // namespace

// No rank decision, no collective or barrier and no loop in `n`: a writer
// whose ranks its caller chooses, not a training or evaluation routine.
static bool decidesNothing(const core::Node &n) {
  if (n.kind == core::Node::Kind::Event &&
      (n.event == core::EventKind::Collective || n.event == core::EventKind::Barrier ||
       n.event == core::EventKind::GroupBarrier || n.event == core::EventKind::Rendezvous))
    return false;
  if (n.kind == core::Node::Kind::If && n.cond.dependence() != core::Dep::Uniform)
    return false;
  if (n.kind == core::Node::Kind::Loop)
    return false;
  for (const auto &k : n.kids)
    if (!decidesNothing(k))
      return false;
  return true;
}

void PyProject::markUncalledApis(PyModel &model, const SyntaxTree &tree) {
  const std::string_view source = tree.source();
  std::set<std::string> called;
  std::function<void(const core::Node &)> visit = [&](const core::Node &n) {
    if (n.kind == core::Node::Kind::Call)
      called.insert(n.callee.substr(0, n.callee.find('{')));
    for (const auto &k : n.kids)
      visit(k);
  };
  for (const auto &f : model.program.functions)
    visit(f.body);
  for (const auto &c : model.program.externalCalls)
    called.insert(c.callee.substr(0, c.callee.find('{')));
  // Whether a class of this module derives, through this module's classes,
  // from a base whose last name is one of `bases`.
  std::function<bool(const std::string &, const std::set<std::string> &, int)> basedOn =
      [&](const std::string &cls, const std::set<std::string> &bases, int depth) {
        auto c = model.classes.find(cls);
        if (c == model.classes.end() || depth > 4)
          return false;
        for (const auto &b : c->second) {
          const std::string last = b.substr(b.rfind('.') + 1);
          if (bases.count(last) || basedOn(last, bases, depth + 1))
            return true;
        }
        return false;
      };
  // A model class: one of torch's or Hugging Face's module bases, or a
  // class of this module that has one.
  auto modelClass = [&](const std::string &cls) {
    return basedOn(cls, {"Module", "PreTrainedModel", "PeftModel"}, 0);
  };
  // A LightningModule or Lightning callback.
  auto lightningClass = [&](const std::string &cls) {
    return basedOn(cls, {"LightningModule", "Callback"}, 0);
  };
  // A subclass of a framework class that calls some of its methods on the
  // main process only (rules/api.yaml main_process_override_bases).
  std::function<bool(const std::string &, int)> frameworkBase = [&](const std::string &cls, int depth) {
    auto c = model.classes.find(cls);
    if (c == model.classes.end() || depth > 4)
      return false;
    for (const auto &b : c->second) {
      const std::string head = b.substr(0, b.find('.'));
      std::string full = b;
      if (auto imp = model.imports.find(head); imp != model.imports.end())
        full = imp->second + b.substr(head.size());
      if (core::builtinPythonApi().mainProcessOverrideBases.count(full) ||
          frameworkBase(b.substr(b.rfind('.') + 1), depth + 1))
        return true;
    }
    return false;
  };
  // How many methods of this module's classes have this name (each class's
  // `def export_model` names it once).
  auto definitionsOf = [&](const std::string &method) {
    size_t n = 0;
    for (const auto &g : model.program.functions)
      if (const size_t d = g.key.find('.'); d != std::string::npos && g.key.find(':') == std::string::npos &&
                                            g.key.find('{') == std::string::npos &&
                                            g.key.compare(d + 1, std::string::npos, method) == 0)
        ++n;
    return n;
  };
  auto hubSaveMethod = [](const std::string &method) {
    return method == "save_pretrained" || method == "_save_pretrained";
  };
  // A class with no base a framework could call its methods from.
  auto plainClass = [&](const std::string &cls) {
    auto c = model.classes.find(cls);
    if (c == model.classes.end())
      return false;
    for (const auto &b : c->second)
      if (b != "object")
        return false;
    return true;
  };
  std::vector<std::string> uncalled;
  for (const auto &f : model.program.functions) {
    // `def export_model(self, path): torch.save(...)` in a LightningModule:
    // Lightning calls its hooks on every rank, not this; a project script
    // that calls it is where the ranks that run it are known.
    if (const size_t dot = f.key.find('.');
        dot != std::string::npos && f.key.find('.', dot + 1) == std::string::npos &&
        f.key.find(':') == std::string::npos && f.key.find('{') == std::string::npos &&
        !called.count(f.key) && f.key.compare(dot + 1, 3, "on_") != 0 &&
        !core::builtinPythonApi().lightningModuleHooks.count(f.key.substr(dot + 1)) &&
        hasCheckpointWrite(f.body) && lightningClass(f.key.substr(0, dot)) &&
        wordOccurrences(source, f.key.substr(dot + 1), true) == definitionsOf(f.key.substr(dot + 1))) {
      uncalled.push_back(f.key);
      continue;
    }
    // `class MyTrainer(Trainer): def _save(self, output_dir, ...)`: the
    // framework calls it on its main process; nothing in the project does.
    if (const size_t dot = f.key.find('.');
        dot != std::string::npos && f.key.find('.', dot + 1) == std::string::npos &&
        f.key.find(':') == std::string::npos && f.key.find('{') == std::string::npos &&
        !called.count(f.key) &&
        core::builtinPythonApi().mainProcessOverrideMethods.count(f.key.substr(dot + 1)) &&
        frameworkBase(f.key.substr(0, dot), 0)) {
      uncalled.push_back(f.key);
      continue;
    }
    // A model class's own `save_pretrained(self, *args, **kwargs)` (trl's and
    // trlx's value-head wrappers) that nothing in the project calls through
    // its class: an API the framework's saver calls on the rank it chose.
    // Named as Hugging Face's API, in any class (VILA's model mixin, a
    // PyTorchModelHubMixin's `_save_pretrained`): whoever calls it picks.
    const size_t dot = f.key.find('.');
    if (dot != std::string::npos && f.key.find('.', dot + 1) == std::string::npos &&
        f.key.find(':') == std::string::npos && f.key.find('{') == std::string::npos &&
        !called.count(f.key) && hasCheckpointWrite(f.body) &&
        ((f.key.compare(dot + 1, 4, "save") == 0 && modelClass(f.key.substr(0, dot))) ||
         hubSaveMethod(f.key.substr(dot + 1)))) {
      uncalled.push_back(f.key);
      continue;
    }
    // A method of a script's class that nothing names again (CenterPoint's
    // `Trainer.save_checkpoint`, beside the `train` its `__main__` runs): dead
    // code, not every rank's write.  Only in a script (another module's class
    // may be driven from anywhere), of a class with no base a framework could
    // call it from (a Lightning callback's hooks, a Trainer's `_save`), and
    // only where the method's name occurs nowhere else in the file.
    if (dot != std::string::npos && f.key.find('.', dot + 1) == std::string::npos &&
        plainClass(f.key.substr(0, dot)) &&
        f.key.find(':') == std::string::npos && f.key.find('{') == std::string::npos &&
        !called.count(f.key) && hasCheckpointWrite(f.body) &&
        source.find("__main__") != std::string_view::npos &&
        f.key.compare(dot + 1, 2, "__") != 0 &&
        wordOccurrences(source, f.key.substr(dot + 1), true) == definitionsOf(f.key.substr(dot + 1))) {
      uncalled.push_back(f.key);
      continue;
    }
    if (f.key.find(':') != std::string::npos || f.key.find('.') != std::string::npos ||
        f.key.find('{') != std::string::npos || f.key == "<module>" || called.count(f.key))
      continue;
    auto s = model.summaries.find(f.key);
    if (s == model.summaries.end())
      continue;
    const auto &ps = s->second.params;
    const bool writesItsPath =
        s->second.writesThroughSplat ||
        std::any_of(ps.begin(), ps.end(), [](const ParamSig &p) { return p.writtenTo; });
    // A file of its own in the caller's folder (CDARTS' `save_checkpoint(state,
    // ckpt_dir)`): the caller's decision too, when the function decides
    // nothing of who runs it (no rank test, no collective of its own).
    const bool writesInItsFolder =
        std::any_of(ps.begin(), ps.end(), [](const ParamSig &p) { return p.writesUnder; }) &&
        decidesNothing(f.body);
    if (!writesItsPath && !writesInItsFolder)
      continue;
    // Named again as code: handed to mp.spawn, a callback, __all__; a
    // docstring's ":func:`save_alignments`" (icefall's utils) is prose.
    if (!hasCheckpointWrite(f.body) || moduleNameUses(tree, f.key) != 1)
      continue;
    uncalled.push_back(f.key);
  }
  // A checkpoint hook runs where the checkpoint call does (diffusers'
  // `save_model_hook`, whose `save_pretrained` runs inside the main
  // process's `save_state`).
  for (const auto &key : model.checkpointHooks)
    if (!called.count(key) && std::find(uncalled.begin(), uncalled.end(), key) == uncalled.end())
      uncalled.push_back(key);
  for (const auto &key : uncalled)
    model.program.externalCalls.push_back({key, core::Reach::Restricted, std::string()});
}

void PyProject::markOneProcessEntries(PyModel &model, std::string_view source, const LinkResult &linked) {
  std::map<std::string, std::set<std::string>> calls; // function -> callees
  std::set<std::string> called;
  std::function<void(const core::Node &, std::set<std::string> &)> visit =
      [&](const core::Node &n, std::set<std::string> &out) {
        if (n.kind == core::Node::Kind::Call) {
          out.insert(n.callee);
          called.insert(n.callee.substr(0, n.callee.find('{')));
        }
        for (const auto &k : n.kids)
          visit(k, out);
      };
  for (const auto &f : model.program.functions)
    visit(f.body, calls[f.key]);
  // What reaches an initializer, then everything that runs after it there.
  std::set<std::string> reaches(linked.initializers.begin(), linked.initializers.end());
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto &[f, cs] : calls)
      if (!reaches.count(f))
        for (const auto &c : cs)
          if (reaches.count(c)) {
            grew = reaches.insert(f).second || grew;
            break;
          }
  }
  std::set<std::string> ranks = reaches;
  std::vector<std::string> work(reaches.begin(), reaches.end());
  while (!work.empty()) {
    const std::string f = work.back();
    work.pop_back();
    if (auto it = calls.find(f); it != calls.end())
      for (const auto &c : it->second)
        if (ranks.insert(c).second)
          work.push_back(c);
  }
  for (const auto &c : model.program.externalCalls)
    called.insert(c.callee.substr(0, c.callee.find('{')));
  auto occurrences = [&](const std::string &word) { return wordOccurrences(source, word, true); };
  std::vector<std::string> alone;
  for (const auto &f : model.program.functions) {
    // The module's own top-level functions; the top level itself is the
    // program's entry and runs where the script is launched.
    if (f.key.find(':') != std::string::npos || f.key.find('.') != std::string::npos ||
        f.key.find('{') != std::string::npos || f.key == "<module>" || ranks.count(f.key) ||
        called.count(f.key) || occurrences(f.key) != 1)
      continue;
    alone.push_back(f.key);
  }
  for (const auto &key : alone)
    model.program.externalCalls.push_back({key, core::Reach::Restricted, std::string()});
}

LinkResult PyProject::link(PyModel &model) {
  LinkResult res;
  // The file's own calls into other modules, first position first.
  std::vector<std::pair<std::string, core::Loc>> calls;
  for (const auto &f : model.program.functions)
    collectCalls(f.body, calls);
  auto before = [&](core::Loc a, core::Loc b) {
    const SourcePos pa = model.positions[a - 1], pb = model.positions[b - 1];
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  };
  for (const auto &[callee, at] : calls) {
    auto it = res.entry.find(callee);
    if (it == res.entry.end() || before(at, it->second))
      res.entry[callee] = at;
  }
  std::vector<std::string> work(model.externalCalls.begin(), model.externalCalls.end());
  std::set<std::string> linked;
  std::map<const Module *, core::Loc> base; // module build -> offset of its positions
  size_t next = 0;
  for (; next < work.size() && linked.size() < kMaxLinkedFunctions; ++next) {
    const std::string key = work[next];
    if (!linked.insert(key).second)
      continue;
    const size_t colon = key.find(':');
    std::shared_ptr<const Module> mod = byName(key.substr(0, colon));
    const std::string local = key.substr(colon + 1);
    const core::Function *fn = mod ? mod->model.program.find(local) : nullptr;
    if (!fn && mod && local.find('{') != std::string::npos) {
      // A specialisation the module's own build did not need: built for this call.
      mod = specialized(mod, local);
      fn = mod ? mod->model.program.find(local) : nullptr;
    }
    if (!fn)
      continue;
    // Keyed by the build: a specialised build has its own positions.
    auto [b, fresh] = base.emplace(mod.get(), static_cast<core::Loc>(model.positions.size()));
    if (fresh) {
      model.positions.insert(model.positions.end(), mod->model.positions.begin(),
                             mod->model.positions.end());
      model.byteOffsets.insert(model.byteOffsets.end(), mod->model.byteOffsets.begin(),
                               mod->model.byteOffsets.end());
      res.modules.push_back({b->second + 1, static_cast<core::Loc>(model.positions.size()),
                             mod->path, mod->name});
    }
    // A specialisation whose bindings decide the group away (fast-autoaugment's
    // Ray search calls `train_and_eval(..., local_rank=-1)`, whose `if
    // local_rank >= 0: init_process_group(...)` is then dead) makes none.
    if (auto s = mod->model.summaries.find(local.substr(0, local.find('{')));
        s != mod->model.summaries.end() && s->second.initsProcessGroup &&
        (local.find('{') == std::string::npos || reachesRendezvous(fn->body))) {
      res.distributed = true;
      res.initializers.insert(key);
    }
    // A helper that runs a collective (`reduce_dict`, `all_gather`) is one
    // every rank of a job calls together: a module that calls it, and
    // trains, is part of a distributed program though another module made
    // the process group (D-FINE's solver reaches torch.distributed only
    // through dist_utils); see distributedThroughLinks.
    res.collectives = res.collectives || runsCollective(fn->body);
    res.trains = res.trains || runsBackward(fn->body);
    core::Function copy = *fn;
    copy.key = key;
    if (copy.loc)
      copy.loc += b->second;
    std::vector<std::string> callees;
    relocate(copy.body, b->second, mod->id + ":", key, res, callees);
    res.names[key] = copy.name;
    for (const auto &c : callees) {
      if (!res.entry.count(c) && res.entry.count(key))
        res.entry[c] = res.entry[key];
      if (!linked.count(c))
        work.push_back(c);
    }
    model.program.functions.push_back(std::move(copy));
  }
  if (next < work.size() || tDepthLimited) {
    core::AnalysisNotice n;
    n.function = "<module>";
    n.message = std::string(core::kAnalysisLimitPrefix) +
                (tDepthLimited ? "imports nest deeper than " + std::to_string(kMaxImportDepth) +
                                     " modules; the deeper modules' functions are not followed"
                               : "calls reach more than " + std::to_string(kMaxLinkedFunctions) +
                                     " functions of other modules; the rest are not followed");
    res.limits.push_back(std::move(n));
  }
  return res;
}

namespace {
bool skippedDir(const std::string &name) {
  return name.empty() || name[0] == '.' || name == "__pycache__" || name == "node_modules" ||
         name == "site-packages" || name == "venv" || name == "build" || name == "dist";
}

// An expression that holds on the main process only, by its words.
bool saysMainProcess(std::string_view rhs) {
  bool main = false;
  for (const char *t : {"is_master(", "is_main_process", "is_global_zero", "is_rank_zero(",
                        "rank == 0", "rank==0", "rank() == 0", "rank()==0"})
    main = main || rhs.find(t) != std::string_view::npos;
  // `rank == 0 or` / `not is_master(...)` say something else.
  return main && rhs.find(" or ") == std::string_view::npos && rhs.find("not ") == std::string_view::npos;
}

// `args.save_logs = args.logs and is_master(args)` (open_clip's, MetaCLIP's
// main.py): a setting that holds on the main process only, read as
// `if args.save_logs:` by the training module.  Per attribute of a settings
// object: 1 while every assignment in the project is such a test, -1 once
// one is not.  Read from the text, as the import words are.
void noteSettingsFlag(std::string_view l, std::map<std::string, int> &flags) {
  static const std::set<std::string> settingsObjects = {"args", "opt", "opts", "cfg", "config",
                                                        "hparams", "params"};
  const size_t dot = l.find('.');
  if (dot == std::string_view::npos || !settingsObjects.count(std::string(l.substr(0, dot))))
    return;
  size_t end = dot + 1;
  while (end < l.size() && (std::isalnum(static_cast<unsigned char>(l[end])) || l[end] == '_'))
    ++end;
  size_t eq = end;
  while (eq < l.size() && l[eq] == ' ')
    ++eq;
  if (end == dot + 1 || eq >= l.size() || l[eq] != '=' || (eq + 1 < l.size() && l[eq + 1] == '='))
    return;
  const std::string attr(l.substr(dot + 1, end - dot - 1));
  int &f = flags[attr];
  f = saysMainProcess(l.substr(eq + 1)) && f >= 0 ? 1 : -1;
}

// `DistEnv(..., master=(dist.get_rank() == 0), ...)` (rq-vae-transformer's
// dist.py): a field a constructor is handed as a main-process test, read as
// `if distenv.master:` in other modules.  Per keyword name: 1 while every
// keyword argument of that name in the project is such a test, -1 once one
// is not (a keyword is `name=` with no space, after `(`, `,` or the line's
// start).  Read from the text, as the settings flags are.
void noteFieldFlags(std::string_view l, std::map<std::string, int> &flags) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 1; i < l.size(); ++i) {
    if (l[i] != '=' || (i + 1 < l.size() && l[i + 1] == '=') || !word(l[i - 1]))
      continue;
    size_t b = i;
    while (b > 0 && word(l[b - 1]))
      --b;
    size_t p = b;
    while (p > 0 && l[p - 1] == ' ')
      --p;
    if (std::isdigit(static_cast<unsigned char>(l[b])) || (p > 0 && l[p - 1] != '(' && l[p - 1] != ','))
      continue;
    size_t e = i + 1;
    for (int depth = 0; e < l.size(); ++e) {
      const char c = l[e];
      if (c == '(' || c == '[' || c == '{')
        ++depth;
      else if ((c == ')' || c == ']' || c == '}') && depth-- == 0)
        break;
      else if (c == ',' && depth == 0)
        break;
    }
    int &f = flags[std::string(l.substr(b, i - b))];
    f = saysMainProcess(l.substr(i + 1, e - i - 1)) && f >= 0 ? 1 : -1;
  }
}

// The identifiers on a file's import lines (`from a.b import c as d`: a, b, c, d),
// and the settings flags and constructor fields its lines set
// (noteSettingsFlag, noteFieldFlags).
std::set<std::string> importWords(const std::string &path, std::map<std::string, int> &flags,
                                  std::map<std::string, int> &fields) {
  std::set<std::string> out;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  bool continued = false;
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos)
      continue;
    std::string_view l(line);
    l.remove_prefix(b);
    if (!continued && l.find('=') != std::string_view::npos && l.find('.') != std::string_view::npos)
      noteSettingsFlag(l, flags);
    if (!continued && l.find('=') != std::string_view::npos)
      noteFieldFlags(l.substr(0, l.find('#')), fields);
    if (!continued && l.substr(0, 7) != "import " && l.substr(0, 5) != "from ")
      continue;
    continued = l.find('(') != std::string_view::npos && l.find(')') == std::string_view::npos;
    std::string word;
    for (char c : l) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
        word += c;
      } else if (!word.empty()) {
        out.insert(word);
        word.clear();
      }
      if (c == '#')
        break;
    }
    if (!word.empty())
      out.insert(word);
  }
  return out;
}
} // namespace

const PyProject::Index &PyProject::indexOf(const std::string &root) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = indexes_.find(root);
    if (it != indexes_.end())
      return *it->second;
  }
  auto idx = std::make_unique<Index>();
  std::error_code ec;
  for (auto d = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       !ec && d != fs::recursive_directory_iterator(); d.increment(ec)) {
    const fs::path &p = d->path();
    if (d->is_directory(ec)) {
      if (skippedDir(p.filename().string()))
        d.disable_recursion_pending();
      continue;
    }
    if (p.extension() != ".py" || !d->is_regular_file(ec))
      continue;
    if (idx->files.size() >= kMaxProjectFiles) {
      idx->truncated = true;
      break;
    }
    idx->files.emplace_back(p.lexically_normal().string(),
                            importWords(p.string(), idx->settingsFlags, idx->fieldFlags));
  }
  std::sort(idx->files.begin(), idx->files.end()); // the walk's order is the file system's
  std::uint64_t key = hashBytes("");
  for (const auto &f : idx->files)
    key = hashBytes(f.first + '\n', key);
  // A settings flag set in one file shapes every importer's build (see
  // noteSettingsFlag): stored callers' calls made under other flags are stale.
  for (const auto &[attr, flag] : idx->settingsFlags)
    if (flag > 0)
      key = hashBytes(attr + "=main\n", key);
  for (const auto &[attr, flag] : idx->fieldFlags)
    if (flag > 0)
      key = hashBytes(attr + "=(main)\n", key);
  idx->filesKey = key;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, fresh] = indexes_.emplace(root, std::move(idx));
  (void)fresh;
  return *it->second;
}

// What one importer's calls into other modules are, with who makes them: its
// program linked as when it is linted, analysed once per run (and kept
// between runs when a cache folder is set).
const std::vector<PyProject::CallInto> &PyProject::callsOf(const std::string &importer,
                                                            const Index &index) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = callsOf_.find(importer);
    if (it != callsOf_.end())
      return it->second;
  }
  std::vector<CallInto> calls;
  if (!storedCallsOf(importer, index, calls)) {
    std::set<std::string> reads;
    tReads.push_back(&reads);
    calls = computeCallsOf(importer);
    tReads.pop_back();
    const bool limited = tDepthLimited; // cut short by the import depth: not kept
    if (!cacheFolder_.empty() && !limited)
      storeCallsOf(importer, index, reads, calls);
  }
  std::lock_guard<std::mutex> lock(mu_);
  return callsOf_.emplace(importer, std::move(calls)).first->second;
}

std::vector<PyProject::CallInto> PyProject::computeCallsOf(const std::string &importer) {
  std::vector<CallInto> out;
  std::string source;
  if (!readSource(importer, source))
    return out;
  const std::shared_ptr<const SyntaxTree> tree = this->tree(importer, std::move(source));
  if (!tree->ok())
    return out;
  std::unique_ptr<ModuleContext> ctx = contextFor(importer);
  PyModel model = buildModel(*tree, wrappers_, ctx.get());
  if (model.externalCalls.empty())
    return out;
  const LinkResult linked = link(model);
  // A program that runs in one process (a conversion script, a test's parent
  // process) calls the helper in that one process: one writer, not every rank.
  const bool oneProcess =
      !model.program.distributed && !distributedThroughLinks(linked, importer, model.trainsHere);
  core::RuleRunner runner(model.program);
  for (auto c : runner.callsInto("")) {
    if (oneProcess)
      c.reach = core::Reach::Restricted;
    // Calls into other modules, not a module's calls of itself.
    const size_t colon = c.callee.find(':');
    if (colon == std::string::npos || c.caller.compare(0, colon + 1, c.callee, 0, colon + 1) == 0)
      continue;
    std::string target;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto n = nameToPath_.find(c.callee.substr(0, colon));
      if (n != nameToPath_.end())
        target = n->second;
    }
    if (!target.empty())
      out.push_back({c.callee.substr(colon + 1), c.reach, std::move(target)});
  }
  return out;
}

namespace {
constexpr const char *kCallerCacheFormat = "ddplint-python-callers 3";
constexpr const char *kCallerCacheSuffix = ".pycallers";

struct FileStamp {
  std::uint64_t size = 0;
  std::int64_t mtime = 0;
};

bool stampOf(const std::string &path, FileStamp &st) {
  std::error_code ec;
  st.size = fs::file_size(path, ec);
  if (ec)
    return false;
  const auto t = fs::last_write_time(path, ec);
  if (ec)
    return false;
  st.mtime = static_cast<std::int64_t>(t.time_since_epoch().count());
  return true;
}

bool contentHashOf(const std::string &path, std::uint64_t &h) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  h = hashBytes(ss.str());
  return true;
}
} // namespace

namespace {
// Entries of importers that are gone (temporary checkouts, renamed files) are
// never read again: past the bound, the oldest written go first.
constexpr size_t kMaxCallerEntries = 20000;

void pruneCallerCache(const std::string &folder) {
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  std::error_code ec;
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->path().extension() != kCallerCacheSuffix)
      continue;
    std::error_code e2;
    entries.emplace_back(it->last_write_time(e2), it->path());
  }
  if (entries.size() <= kMaxCallerEntries)
    return;
  std::sort(entries.begin(), entries.end());
  const size_t drop = entries.size() - kMaxCallerEntries * 4 / 5;
  for (size_t i = 0; i < drop; ++i) {
    std::error_code e2;
    fs::remove(entries[i].second, e2);
  }
}
} // namespace

std::string PyProject::callerCacheFolder(const std::string &cacheDir) {
  return (fs::path(cacheDir) / "python-callers").string();
}

void PyProject::keepCallersIn(std::string folder, const std::string &identity) {
  std::error_code ec;
  if (!folder.empty())
    fs::create_directories(folder, ec);
  cacheFolder_ = ec ? std::string() : std::move(folder);
  if (!cacheFolder_.empty())
    pruneCallerCache(cacheFolder_);
  cacheIdentity_ = std::string(kCallerCacheFormat) + "|" + identity + wrappers_.key();
}

PyProject::CallerCacheUse PyProject::callerCacheUse() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cacheUse_;
}

bool PyProject::storedCallsOf(const std::string &importer, const Index &index,
                              std::vector<CallInto> &out) {
  if (cacheFolder_.empty())
    return false;
  const std::string file =
      (fs::path(cacheFolder_) / (hex(hashBytes(importer)) + kCallerCacheSuffix)).string();
  std::string text;
  if (!readSource(file, text))
    return false;
  core::ModelReader r(text, [](std::uint32_t p) { return static_cast<core::Loc>(p); });
  std::string format, identity, path, filesKey;
  std::int64_t inputs = 0, n = 0;
  if (!r.string(format) || format != kCallerCacheFormat || !r.string(identity) ||
      identity != cacheIdentity_ || !r.string(path) || path != importer ||
      !r.string(filesKey) || filesKey != hex(index.filesKey) ||
      !r.integer(inputs) || inputs < 0 || inputs > 100000)
    return false;
  for (std::int64_t i = 0; i < inputs; ++i) {
    std::string in, hash;
    std::int64_t size = 0, mtime = 0;
    if (!r.string(in) || !r.integer(size) || !r.integer(mtime) || !r.string(hash))
      return false;
    FileStamp st;
    if (!stampOf(in, st) || st.size != static_cast<std::uint64_t>(size))
      return false;
    std::uint64_t h = 0;
    if (st.mtime != mtime && (!contentHashOf(in, h) || hex(h) != hash))
      return false; // touched and changed
  }
  if (!r.integer(n) || n < 0 || n > 1000000)
    return false;
  std::vector<CallInto> calls(static_cast<size_t>(n));
  for (auto &c : calls) {
    std::int64_t reach = 0;
    if (!r.string(c.callee) || !r.integer(reach) || reach < 0 || reach > 2 ||
        !r.string(c.target))
      return false;
    c.reach = static_cast<core::Reach>(reach);
  }
  if (!r.atEnd())
    return false;
  out = std::move(calls);
  std::lock_guard<std::mutex> lock(mu_);
  ++cacheUse_.reused;
  return true;
}

void PyProject::storeCallsOf(const std::string &importer, const Index &index,
                             const std::set<std::string> &reads,
                             const std::vector<CallInto> &calls) {
  core::ModelWriter w([](core::Loc l) { return static_cast<std::uint32_t>(l); });
  w.string(kCallerCacheFormat);
  w.string(cacheIdentity_);
  w.string(importer);
  w.string(hex(index.filesKey));
  std::set<std::string> inputs = reads;
  inputs.insert(importer);
  w.integer(static_cast<std::int64_t>(inputs.size()));
  for (const auto &in : inputs) {
    FileStamp st;
    std::uint64_t h = 0;
    {
      // Every importer of a module names it: its stamp and hash are read once per run.
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = stamps_.find(in); it != stamps_.end())
        std::tie(st.size, st.mtime, h) = it->second;
    }
    if (!h) {
      if (!stampOf(in, st) || !contentHashOf(in, h))
        return; // gone meanwhile: nothing kept
      std::lock_guard<std::mutex> lock(mu_);
      stamps_[in] = {st.size, st.mtime, h};
    }
    w.string(in);
    w.integer(static_cast<std::int64_t>(st.size));
    w.integer(st.mtime);
    w.string(hex(h));
  }
  w.integer(static_cast<std::int64_t>(calls.size()));
  for (const auto &c : calls) {
    w.string(c.callee);
    w.integer(static_cast<std::int64_t>(c.reach));
    w.string(c.target);
  }
  const std::string text = w.take();
  const fs::path file = fs::path(cacheFolder_) / (hex(hashBytes(importer)) + kCallerCacheSuffix);
  // Written aside and renamed: a reader never sees half an entry.
  fs::path tmp = file;
  tmp += ".tmp-" + hex(hashBytes(text)) +
         hex(std::hash<std::thread::id>()(std::this_thread::get_id()));
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    ok = static_cast<bool>(out.write(text.data(), static_cast<std::streamsize>(text.size())));
  }
  std::error_code ec;
  if (ok)
    fs::rename(tmp, file, ec);
  if (!ok || ec)
    fs::remove(tmp, ec);
  std::lock_guard<std::mutex> lock(mu_);
  ++cacheUse_.analysed;
  if (!ok || ec)
    ++cacheUse_.unwritable;
}

size_t PyProject::callerCacheEntries(const std::string &cacheDir, std::uint64_t *bytes) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(callerCacheFolder(cacheDir), ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != kCallerCacheSuffix)
      continue;
    ++n;
    std::error_code e2;
    if (bytes)
      *bytes += it->file_size(e2);
  }
  return n;
}

unsigned PyProject::clearCallerCache(const std::string &cacheDir, std::string &error) {
  unsigned n = 0;
  std::error_code ec;
  const std::string folder = callerCacheFolder(cacheDir);
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->path().extension() != kCallerCacheSuffix &&
        name.find(std::string(kCallerCacheSuffix) + ".tmp-") == std::string::npos)
      continue;
    std::error_code e2;
    if (fs::remove(it->path(), e2))
      ++n;
    else if (e2 && error.empty())
      error = it->path().string() + ": " + e2.message();
  }
  return n;
}

std::vector<core::ExternalCall> PyProject::callersOf(const std::string &path, bool *truncated) {
  std::string root;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rootOf_.find(path);
    if (it == rootOf_.end())
      return {};
    root = it->second;
  }
  fs::path p(path);
  const std::string self = p.lexically_normal().string();
  const std::string stem =
      p.filename() == "__init__.py" ? p.parent_path().filename().string() : p.stem().string();
  std::vector<core::ExternalCall> out;
  const Index &index = indexOf(root);
  if (truncated)
    *truncated = index.truncated;
  // The names an importer may reach the module by: its own, and the packages
  // above it whose __init__ re-exports from it (`from utils import
  // save_checkpoint`, where utils/__init__.py says `from .checkpoint import
  // save_checkpoint`), up through packages that re-export those.
  std::set<std::string> stems{stem};
  {
    std::string reached = stem;
    fs::path pkg = p.filename() == "__init__.py" ? p.parent_path() : p;
    for (int up = 0; up < 4; ++up) {
      pkg = pkg.parent_path();
      const std::string init = (pkg / "__init__.py").lexically_normal().string();
      auto it = std::find_if(index.files.begin(), index.files.end(),
                             [&](const auto &f) { return f.first == init; });
      if (it == index.files.end() || !it->second.count(reached))
        break;
      reached = pkg.filename().string();
      stems.insert(reached);
    }
  }
  // ...and the modules that name one of those: a factory's importer calls the
  // class it returns without ever naming its module (KAIR's main_train_psnr
  // gets a models.model_plain.ModelPlain from select_model.define_Model).
  {
    std::set<std::string> hop;
    for (const auto &[file, words] : index.files)
      if (file != self && std::any_of(stems.begin(), stems.end(),
                                      [&](const std::string &w) { return words.count(w) > 0; })) {
        const fs::path fp(file);
        if (fp.filename() != "__init__.py")
          hop.insert(fp.stem().string());
      }
    stems.insert(hop.begin(), hop.end());
  }
  for (const auto &[file, words] : index.files) {
    if (file == self)
      continue;
    if (std::none_of(stems.begin(), stems.end(),
                     [&](const std::string &w) { return words.count(w) > 0; }))
      continue;
    for (const auto &c : callsOf(file, index))
      if (c.target == self)
        out.push_back({c.callee, c.reach, file});
  }
  return out;
}

namespace {
// A program whose parallelism is DataParallel's, one process over the GPUs,
// and that never communicates across processes: no collective, barrier or
// send of its own or of what it calls, no model wrapped in DDP, FSDP or
// DeepSpeed, no framework that syncs for it (CodeT5's scripts also call
// `init_process_group` under `--local_rank`, and then train the
// DataParallel model: each rank would be a job of its own).  The path rules
// reason about ranks that meet; these never do.
bool communicates(const core::Node &n) {
  if (n.kind == core::Node::Kind::Event &&
      (n.event == core::EventKind::Collective || n.event == core::EventKind::Barrier ||
       n.event == core::EventKind::PointToPoint || n.event == core::EventKind::GroupBarrier))
    return true;
  for (const auto &k : n.kids)
    if (communicates(k))
      return true;
  return false;
}

// Whether the text names any of `words`, each as a whole word ("ray" is no
// "array").
bool namesAnyWord(std::string_view source, const std::vector<std::string_view> &words) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::string_view w : words)
    for (size_t at = source.find(w); at != std::string_view::npos; at = source.find(w, at + 1))
      if ((at == 0 || !word(source[at - 1])) &&
          (at + w.size() >= source.size() || !word(source[at + w.size()])))
        return true;
  return false;
}

// The words that make a file one that runs with other ranks, or that
// communicates with them, by a wrapper, a framework or a collective.
const std::vector<std::string_view> kMeetingWords = {
    "DistributedDataParallel", "DDP", "FSDP", "FullyShardedDataParallel", "deepspeed", "accelerate",
    "Accelerator", "lightning", "Fabric", "Trainer", "horovod", "all_reduce", "all_gather",
    "broadcast", "barrier", "fairscale", "megatron", "colossalai", "composer", "ray", "mpi4py", "xla"};

bool ranksNeverMeet(const core::Program &p, const LinkResult &linked, std::string_view source) {
  auto count = [&](std::string_view w) {
    size_t n = 0;
    for (size_t at = source.find(w); at != std::string_view::npos; at = source.find(w, at + 1))
      ++n;
    return n;
  };
  if (linked.collectives || count("DataParallel") <= count("DistributedDataParallel"))
    return false;
  for (const auto &f : p.functions)
    if (communicates(f.body))
      return false;
  return !namesAnyWord(source, kMeetingWords);
}

// The words of a script that may join a group: a launcher variable, an
// initializer, a spawn, a rank query (besides kMeetingWords' frameworks and
// collectives).
const std::vector<std::string_view> kJoiningWords = {
    "init_process_group", "init_distributed", "spawn", "local_rank", "LOCAL_RANK", "RANK",
    "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "torchrun", "launch", "new_group"};

// A `__main__` script whose text names no framework, collective, launcher,
// initializer or rank query: whatever its helpers hold, it joins no group
// unless one of its calls makes the world's (see settleProgram).
bool scriptNeverJoins(std::string_view source) {
  return source.find("__name__") != std::string_view::npos && !namesAnyWord(source, kMeetingWords) &&
         !namesAnyWord(source, kJoiningWords) &&
         !namesAnyWord(source, {"get_rank", "get_world_size", "is_main_process"});
}

// A script that only asks torch.distributed questions (`dist.get_rank()` in a
// helper's `if distributed:` arm, VMamba's analyze/clseval.py) and never
// joins a group: no init_process_group, no launcher variable, no spawn, no
// wrapper or framework, no collective of its own or of what it calls, and no
// module of the project calling into it.  Its one process is no rank among
// others; a group it never makes has no other ranks to overwrite its files.
bool neverJoinsAGroup(const core::Program &p, const LinkResult &linked, std::string_view source) {
  if (linked.distributed || linked.collectives || source.find("__name__") == std::string_view::npos)
    return false;
  for (const auto &f : p.functions)
    if (communicates(f.body))
      return false;
  return !namesAnyWord(source, kMeetingWords) && !namesAnyWord(source, kJoiningWords);
}

// A module that runs distributed through its functions (a dataset's method
// waits in a barrier) and whose script entry, its top level, never joins a
// group: no initializer, launcher, collective or framework on any call the
// top level makes (OpenPCDet's waymo_dataset.py: `__main__` dispatches to
// `create_waymo_infos`, offline preprocessing).  Run as a script it is one
// process; what only the top level calls is that process's.
bool topLevelRunsAlone(const PyModel &model, const LinkResult &linked, std::string_view source) {
  const core::Function *top = model.program.find("<module>");
  if (!top || source.find("__name__") == std::string_view::npos)
    return false;
  if (namesAnyWord(source, {"accelerate", "Accelerator", "lightning", "Fabric", "Trainer", "deepspeed",
                            "horovod", "colossalai", "composer", "megatron", "xla", "mpi4py", "spawn",
                            "local_rank", "LOCAL_RANK", "RANK", "WORLD_SIZE", "SLURM_PROCID",
                            "OMPI_COMM_WORLD_RANK", "torchrun", "launch", "DistributedDataParallel",
                            "DDP", "FSDP", "FullyShardedDataParallel", "init_process_group",
                            "init_distributed"}))
    return false;
  std::set<std::string> seen{"<module>"};
  std::vector<const core::Function *> work{top};
  std::function<void(const core::Node &)> calls = [&](const core::Node &n) {
    if (n.kind == core::Node::Kind::Call && seen.insert(n.callee).second)
      if (const core::Function *g = model.program.find(n.callee))
        work.push_back(g);
    for (const auto &k : n.kids)
      calls(k);
  };
  while (!work.empty()) {
    const core::Function *f = work.back();
    work.pop_back();
    const std::string plain = f->key.substr(0, f->key.find('{'));
    if (communicates(f->body) || f->launchesRanks || linked.initializers.count(f->key))
      return false;
    if (auto s = model.summaries.find(plain); s != model.summaries.end() && s->second.initsProcessGroup)
      return false;
    calls(f->body);
  }
  return true;
}

} // namespace

core::Loc settleProgram(PyModel &model, LinkResult &linked, const SyntaxTree &tree, const std::string &path,
                        ModuleContext *ctx, PyProject &project, const core::Wrappers &wrappers,
                        long long *linkNs, long long *callersNs) {
  using Clock = std::chrono::steady_clock;
  core::Loc own = static_cast<core::Loc>(model.positions.size());
  const auto l0 = Clock::now();
  linked = project.link(model);
  // What its own functions write, and what the helpers they call in other
  // modules write (sd-scripts' train_util hands its callers' checkpoints to
  // model_util): the callers' guards say on which ranks that runs.
  const bool writesCheckpoints = hasCheckpointWrite(model.program);

  bool throughLinksOnly = (!model.program.distributed || model.distributedByLinks) &&
                          distributedThroughLinks(linked, path, model.trainsHere);
  // Read again with its `rank` parameters as the rank (OpenPCDet's
  // train_utils: `if rank == 0: save_checkpoint(...)`, distributed through
  // commu_utils' collectives): built once more, for such modules only.
  if (throughLinksOnly && !model.distributedByLinks) {
    model = buildModel(tree, wrappers, ctx, {}, /*distributedByLinks=*/true);
    own = static_cast<core::Loc>(model.positions.size());
    linked = project.link(model);
    throughLinksOnly = distributedThroughLinks(linked, path, model.trainsHere);
  }
  // A script whose own text makes no group and names no launcher, framework
  // or collective, and none of whose calls makes one: its helpers'
  // collectives (sam-hq's COCO evaluation gathers through GroundingDINO's
  // `all_gather`, which returns at once in a world of one) run in its one
  // process.
  if (throughLinksOnly && !linked.distributed && model.program.find("<module>") &&
      scriptNeverJoins(tree.source()))
    throughLinksOnly = false;
  if (throughLinksOnly)
    model.program.distributed = true;
  if (model.program.distributed && ranksNeverMeet(model.program, linked, tree.source()))
    model.program.distributed = false;
  if (model.oneRankWorld && !linked.distributed)
    model.program.distributed = false;
  // `os.environ["MASTER_PORT"] = str(random.randint(10000, 20000))` in a
  // script that starts no ranks of its own (CodeGeeX's checkpoint
  // converters, run with plain `python`): every process would pick its own
  // port, so no two of them could ever meet; the group it makes is of one.
  if (model.program.distributed) {
    bool randomPort = false, launches = false;
    for (const auto &e : model.program.facts.env)
      randomPort = randomPort || (e.isSet && e.name == "MASTER_PORT" && e.value.find("rand") != std::string::npos);
    for (const auto &f : model.program.functions)
      launches = launches || f.launchesRanks;
    if (randomPort && !launches)
      model.program.distributed = false;
  }
  if (!model.program.distributed)
    dropAssumedDdp(model.program);
  const auto l1 = Clock::now();
  bool truncated = false;
  if (writesCheckpoints) {
    model.program.externalCalls = project.callersOf(path, &truncated);
    if (!truncated)
      PyProject::markUncalledApis(model, tree);
    if (model.program.distributed && !truncated && model.program.externalCalls.empty() &&
        neverJoinsAGroup(model.program, linked, tree.source()))
      model.program.distributed = false;
    if (model.program.distributed && !truncated && topLevelRunsAlone(model, linked, tree.source()))
      for (auto &f : model.program.functions)
        if (f.key == "<module>")
          f.launchesRanks = true; // its one process: see core::Function::launchesRanks
  }
  if (throughLinksOnly)
    PyProject::markOneProcessEntries(model, tree.source(), linked);
  if (truncated) {
    core::AnalysisNotice n;
    n.function = "<module>";
    n.message = std::string(core::kAnalysisLimitPrefix) + "the project has more than " +
                std::to_string(PyProject::kMaxProjectFiles) +
                " Python files; callers of this module beyond them are not read";
    linked.limits.push_back(std::move(n));
  }
  const auto l2 = Clock::now();
  if (linkNs)
    *linkNs = std::chrono::duration_cast<std::chrono::nanoseconds>(l1 - l0).count();
  if (callersNs)
    *callersNs = std::chrono::duration_cast<std::chrono::nanoseconds>(l2 - l1).count();
  return own;
}

std::set<PyProject::AloneFinding> PyProject::findingsAlone(
    const std::string &modulePath,
    const std::vector<std::pair<core::RuleId, core::RuleOptions>> &rules) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto a = alone_.find(modulePath);
    if (a != alone_.end())
      return a->second;
    if (!modules_.count(modulePath))
      return {};
  }
  // As the module's own lint sees it (lintPython): built as the program, not
  // for an importer (which assumes a DDP model and the rank where the module
  // alone does not), with the modules it calls linked in.  What is said here
  // is what that lint reports; a finding kept out of a caller's report
  // because of it is never lost.
  std::set<AloneFinding> out;
  std::string source;
  if (!readSource(modulePath, source))
    return out;
  const std::shared_ptr<const SyntaxTree> parsed = this->tree(modulePath, std::move(source));
  if (!parsed->ok())
    return out;
  std::unique_ptr<ModuleContext> ctx = contextFor(modulePath);
  PyModel alone = buildModel(*parsed, wrappers_, ctx.get());
  LinkResult linked;
  // The module's own places come first, before those of what it links.
  const core::Loc own = settleProgram(alone, linked, *parsed, modulePath, ctx.get(), *this, wrappers_);
  auto at = [&](core::Loc l) { return placeKey(alone.positions[l - 1]); };
  core::RuleRunner runner(alone.program);
  for (const auto &[id, options] : rules) {
    const core::RuleSpec &spec = core::ruleSpec(id);
    if (!spec.definition || !spec.appliesTo("python"))
      continue;
    for (const auto &f : runner.run(id, options)) {
      if (!f.loc || f.loc > alone.positions.size())
        continue;
      if (f.loc <= own)
        out.emplace(std::string(spec.name), modulePath, at(f.loc));
      else if (const LinkedModule *m = linked.moduleOf(f.loc))
        out.emplace(std::string(spec.name), m->path, at(f.loc));
      // The decision that diverges, in this module's own code: a caller that
      // reaches it reports no second finding of it (see conditionKey).
      for (const auto &n : f.notes)
        if (n.loc && n.loc <= own && isConditionNote(n))
          out.emplace(conditionKey(spec.name), modulePath, at(n.loc));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  alone_.emplace(modulePath, out);
  return out;
}

} // namespace ddplint::pyfe
