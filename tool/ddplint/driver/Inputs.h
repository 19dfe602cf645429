// What a lint run works on: the files named or found (folders, the whole
// compilation database), and each unit's compile command (a
// compile_commands.json, a compile_flags.txt, flags after --, or `flags:` of
// .ddplint.yaml), as clang tooling and clangd find them.
#pragma once

#include "Args.h"
#include "Config.h"
#include "Finding.h"

#include "clang/Tooling/CompilationDatabase.h"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ddplint::cli {

// A file a user points ddplint at by mistake (an object file, an image) gets
// a clear error instead of a page of Clang parse errors.
bool looksBinary(const std::string &path);
// What a folder argument expands to without a database: translation units,
// not headers (those are linted through the units that include them).
bool isTranslationUnit(const std::filesystem::path &p);

// Compilation databases, found once per folder.
class Databases {
public:
  Databases(const Args &a, ConfigResolver &configs) : args_(a), configs_(configs) {}

  // The database for `file` (absolute), or null with an error appended.  A
  // file the database does not list (or with no database at all) gets the
  // `flags:` of its .ddplint.yaml when it has some, as clangd's CompileFlags.
  const clang::tooling::CompilationDatabase *forFile(const std::string &file,
                                                     std::vector<ToolError> &errors);
  // The database for the files under `dir`.
  const clang::tooling::CompilationDatabase *forFolder(const std::string &dir,
                                                       std::vector<ToolError> &errors);
  // Every file of the database that `-p` or the cwd leads to.
  std::vector<std::string> allFiles(std::vector<ToolError> &errors);
  // A compile_flags.txt: flags for every file, and no list of files.
  bool givesFlagsOnly(const clang::tooling::CompilationDatabase *db);

private:
  // `what` is named in the error; the search starts in `from`.
  const clang::tooling::CompilationDatabase *forPlace(const std::string &what,
                                                      const std::filesystem::path &from,
                                                      std::vector<ToolError> &errors);
  // The folder of the nearest database above `dir`, as clang tooling finds
  // one: in each folder compile_commands.json, then build/compile_commands.json,
  // then compile_flags.txt (one flag per line, for every file below it).
  std::string search(std::filesystem::path dir);
  const clang::tooling::CompilationDatabase *load(const std::string &dir,
                                                  std::vector<ToolError> &errors);

  const Args &args_;
  ConfigResolver &configs_;
  std::map<std::string, std::unique_ptr<clang::tooling::CompilationDatabase>> dbs_;
  std::unique_ptr<clang::tooling::CompilationDatabase> fixed_;
  std::set<std::string> flagFiles_; // folders whose database is a compile_flags.txt
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<clang::tooling::CompilationDatabase>> flagDbs_;
};

// The files of a run: the paths named (a folder brings its Python files and
// the database's units under it), else every unit of the database.  Missing
// paths and empty folders are errors in `result`.
std::vector<std::string> discoverFiles(const Args &a, Databases &dbs, RunResult &result);

// The units to parse and the Python files to read, after the configs have
// had their say (excludes) and each unit has found its database.
struct Inputs {
  std::vector<std::pair<std::string, const clang::tooling::CompilationDatabase *>> units;
  std::vector<std::string> python; // no database, no preamble
};
// False when a config is broken: it is reported and nothing is linted.
bool sortInputs(const Args &a, const std::vector<std::string> &files, ConfigResolver &configs,
                Databases &dbs, RunResult &result, Inputs &out);

} // namespace ddplint::cli
