#include "Inputs.h"

#include "PythonRunner.h"
#include "Report.h"

#include "clang/Tooling/JSONCompilationDatabase.h"

#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace ddplint::cli {

bool looksBinary(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char buf[8192];
  in.read(buf, sizeof buf);
  return std::find(buf, buf + in.gcount(), '\0') != buf + in.gcount();
}

bool isTranslationUnit(const fs::path &p) {
  static const std::set<std::string> exts = {".cpp", ".cc", ".cxx", ".c++", ".C", ".cu", ".c"};
  return exts.count(p.extension().string()) > 0;
}

const clang::tooling::CompilationDatabase *Databases::forFile(const std::string &file,
                                                              std::vector<ToolError> &errors) {
  if (args_.fixedFlags)
    return forPlace(file, fs::path(file).parent_path(), errors);
  std::vector<ToolError> ignored;
  std::shared_ptr<const Config> cfg = configs_.forFile(file, ignored);
  if (!cfg || !cfg->hasFlags)
    return forPlace(file, fs::path(file).parent_path(), errors);
  std::vector<ToolError> dbErrors;
  const auto *db = forPlace(file, fs::path(file).parent_path(), dbErrors);
  if (db) {
    bool listed = false;
    for (const auto &c : db->getCompileCommands(file))
      listed |= c.Heuristic.empty(); // not inferred from a neighbour
    if (listed)
      return db;
  } else if (!args_.buildDir) {
    dbErrors.clear(); // no database found: the config's flags stand in
  }
  for (auto &e : dbErrors)
    errors.push_back(std::move(e)); // a broken or missing -p database stays an error
  if (!dbErrors.empty())
    return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  auto &slot = flagDbs_[cfg->path];
  if (!slot)
    slot = std::make_unique<clang::tooling::FixedCompilationDatabase>(cfg->dir, cfg->flags);
  return slot.get();
}

bool Databases::givesFlagsOnly(const clang::tooling::CompilationDatabase *db) {
  if (!db)
    return false;
  for (const auto &[dir, d] : dbs_)
    if (d.get() == db)
      return flagFiles_.count(dir) > 0;
  return false;
}

const clang::tooling::CompilationDatabase *Databases::forFolder(const std::string &dir,
                                                                std::vector<ToolError> &errors) {
  return forPlace(dir, dir, errors);
}

const clang::tooling::CompilationDatabase *Databases::forPlace(const std::string &what,
                                                               const fs::path &from,
                                                               std::vector<ToolError> &errors) {
  std::string dbDir;
  if (args_.fixedFlags) {
    if (!fixed_) {
      std::vector<std::string> flags = *args_.fixedFlags;
      fixed_ = std::make_unique<clang::tooling::FixedCompilationDatabase>(
          fs::current_path().string(), flags);
    }
    return fixed_.get();
  }
  if (args_.buildDir) {
    dbDir = absolute(*args_.buildDir);
  } else {
    dbDir = search(from);
    if (dbDir.empty()) {
      errors.push_back(fileError(
          what, "no compilation database: no compile_commands.json or compile_flags.txt "
                "beside it or in any folder above it, and no build/compile_commands.json "
                "there; pass -p BUILD_DIR "
                "(CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON), compiler flags after --, or "
                "list them under flags: in .ddplint.yaml"));
      return nullptr;
    }
  }
  return load(dbDir, errors);
}

std::vector<std::string> Databases::allFiles(std::vector<ToolError> &errors) {
  std::string dbDir = args_.buildDir ? absolute(*args_.buildDir) : search(fs::current_path());
  if (dbDir.empty()) {
    errors.push_back(fileError("", "no compilation database: no compile_commands.json or "
                                   "compile_flags.txt in the current folder or any folder "
                                   "above it, and no build/compile_commands.json there; pass "
                                   "-p BUILD_DIR or the files to lint"));
    return {};
  }
  const auto *db = load(dbDir, errors);
  if (!db)
    return {};
  if (flagFiles_.count(dbDir)) {
    errors.push_back(fileError((fs::path(dbDir) / "compile_flags.txt").string(),
                               "compile_flags.txt gives flags, not files: name the files or "
                               "folders to lint"));
    return {};
  }
  std::vector<std::string> files;
  for (const auto &f : db->getAllFiles())
    files.push_back(absolute(f));
  return files;
}

std::string Databases::search(fs::path dir) {
  std::error_code ec;
  for (; !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "compile_commands.json", ec))
      return dir.string();
    if (fs::is_regular_file(dir / "build" / "compile_commands.json", ec))
      return (dir / "build").string();
    if (fs::is_regular_file(dir / "compile_flags.txt", ec))
      return dir.string();
    if (dir == dir.root_path())
      break;
  }
  return "";
}

const clang::tooling::CompilationDatabase *Databases::load(const std::string &dir,
                                                           std::vector<ToolError> &errors) {
  auto it = dbs_.find(dir);
  if (it != dbs_.end())
    return it->second.get();
  const std::string path = (fs::path(dir) / "compile_commands.json").string();
  const std::string flagsPath = (fs::path(dir) / "compile_flags.txt").string();
  std::unique_ptr<clang::tooling::CompilationDatabase> db;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    std::string err;
    db = clang::tooling::JSONCompilationDatabase::loadFromFile(
        path, err, clang::tooling::JSONCommandLineSyntax::AutoDetect);
    if (!db)
      errors.push_back(fileError(path, "cannot read the compilation database: " + err));
    else // headers and new files get the flags of their nearest neighbour, as in clangd
      db = clang::tooling::inferMissingCompileCommands(
          clang::tooling::inferTargetAndDriverMode(std::move(db)));
  } else if (fs::is_regular_file(flagsPath, ec)) {
    std::string err;
    db = clang::tooling::FixedCompilationDatabase::loadFromFile(flagsPath, err);
    if (!db)
      errors.push_back(fileError(flagsPath, "cannot read the compile flags: " + err));
    else
      flagFiles_.insert(dir);
  } else {
    errors.push_back(fileError(path, "no compilation database here (-p " + dir +
                                         "): no compile_commands.json or compile_flags.txt; "
                                         "configure the project with "
                                         "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"));
  }
  return (dbs_[dir] = std::move(db)).get();
}

std::vector<std::string> discoverFiles(const Args &a, Databases &dbs, RunResult &result) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  auto add = [&](const std::string &f) {
    if (seen.insert(f).second)
      files.push_back(f);
  };
  if (a.paths.empty()) {
    for (const auto &f : dbs.allFiles(result.errors))
      add(f);
  }
  for (const auto &p : a.paths) {
    const std::string abs = absolute(p);
    std::error_code ec;
    if (!fs::exists(abs, ec)) {
      result.errors.push_back(fileError(abs, "no such file or directory"));
      continue;
    }
    if (fs::is_directory(abs, ec)) {
      bool any = false;
      // Python files need no database: every .py under the folder is linted.
      bool cxxOnDisk = false;
      for (auto it = fs::recursive_directory_iterator(abs, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (it->is_directory(ec) && (name.empty() || name[0] == '.' || name == "__pycache__" ||
                                     name == "node_modules" || name == "site-packages")) {
          it.disable_recursion_pending();
          continue;
        }
        if (!it->is_regular_file(ec))
          continue;
        if (isPythonFile(it->path().string())) {
          add(absolute(it->path().string()));
          any = true;
        } else if (isTranslationUnit(it->path())) {
          cxxOnDisk = true;
        }
      }
      if (!cxxOnDisk) {
        if (!any)
          result.errors.push_back(
              fileError(abs, "no C, C++ or Python files under this folder"));
        continue;
      }
      const clang::tooling::CompilationDatabase *folderDb =
          a.fixedFlags ? nullptr : dbs.forFolder(abs, result.errors);
      if (!a.fixedFlags && !dbs.givesFlagsOnly(folderDb)) {
        if (const auto *db = folderDb)
          for (const auto &f : db->getAllFiles()) {
            const std::string af = absolute(f);
            if (af.rfind(abs + "/", 0) == 0) {
              add(af);
              any = true;
            }
          }
      } else if (a.fixedFlags || folderDb) {
        // Flags without a file list (-- or compile_flags.txt): every unit on disk.
        for (auto it = fs::recursive_directory_iterator(abs, ec);
             it != fs::recursive_directory_iterator(); it.increment(ec))
          if (it->is_regular_file(ec) && isTranslationUnit(it->path())) {
            add(absolute(it->path().string()));
            any = true;
          }
      }
      if (!any)
        result.errors.push_back(fileError(abs, "no C, C++ or Python files under this folder"));
      continue;
    }
    add(abs);
  }
  return files;
}

bool sortInputs(const Args &a, const std::vector<std::string> &files, ConfigResolver &configs,
                Databases &dbs, RunResult &result, Inputs &out) {
  // Configs first: a broken config is exit code 2 before any parsing.
  std::vector<std::string> todo;
  size_t configErrorsBefore = result.errors.size();
  std::set<std::string> named;
  for (const auto &p : a.paths)
    named.insert(absolute(p));
  for (const auto &f : files) {
    auto cfg = configs.forFile(f, result.errors);
    if (!cfg)
      continue;
    if (cfg->excluded(f)) {
      // Named on the command line (a pre-commit hook passes staged files):
      // say it was skipped rather than count it silently.
      if (named.count(f))
        result.skipped.emplace_back(f, "excluded by " + (cfg->path.empty() ? std::string("the config") : cfg->path));
      continue;
    }
    todo.push_back(f);
  }
  if (result.errors.size() > configErrorsBefore) {
    RunResult onlyErrors;
    onlyErrors.errors = result.errors;
    ReportOptions ro;
    std::error_code ec;
    ro.baseDir = fs::current_path(ec).string();
    std::cerr << renderText(onlyErrors, ro) << "ddplint: not linting: fix the config first\n";
    return false;
  }

  // Files that cannot be C or C++ sources, and each unit's database.
  for (const auto &f : todo) {
    std::error_code ec;
    if (!fs::exists(f, ec)) { // explicit paths were checked above: this one is the database's
      result.errors.push_back(fileError(
          f, "listed in the compilation database but does not exist (a stale database: "
             "re-run the build system's configure step)"));
      continue;
    }
    if (looksBinary(f)) {
      result.errors.push_back(fileError(
          f, std::string("binary file, not a ") + (isPythonFile(f) ? "Python" : "C or C++") +
                 " source; skipped"));
      continue;
    }
    if (isPythonFile(f)) {
      out.python.push_back(f);
      continue;
    }
    if (const auto *db = dbs.forFile(f, result.errors))
      out.units.emplace_back(f, db);
  }
  return true;
}

} // namespace ddplint::cli
