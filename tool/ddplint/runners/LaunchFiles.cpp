#include "LaunchFiles.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace ddplint::cli {
namespace {

bool launchExtension(const fs::path &p) {
  const std::string e = p.extension().string();
  return e == ".sh" || e == ".bash" || e == ".sbatch" || e == ".slurm" || e == ".yaml" ||
         e == ".yml";
}

// Folders that hold no launch files of the project's own.
bool skippedFolder(const std::string &name) {
  return (!name.empty() && name[0] == '.') || name == "node_modules" || name == "__pycache__" ||
         name == "site-packages" || name == "venv" || name == "env" || name == "build" ||
         name == "dist" || name.rfind("build-", 0) == 0;
}

bool boundary(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'' || c == ';' ||
         c == '&' || c == '|' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')';
}

// A project is not searched without end: a monorepo's data folders can hold
// many thousands of YAML files that are no launch files.
constexpr size_t kMaxEntries = 20000;
constexpr size_t kMaxFileBytes = 1 << 20;

} // namespace

bool commandRuns(const std::string &command, const std::string &script) {
  const fs::path p(script);
  const std::string name = p.filename().string(), stem = p.stem().string();
  for (size_t at = command.find(name); at != std::string::npos; at = command.find(name, at + 1)) {
    const size_t end = at + name.size();
    const bool before = at == 0 || command[at - 1] == '/' || boundary(command[at - 1]);
    const bool after = end == command.size() || boundary(command[end]);
    if (before && after)
      return true;
  }
  // python -m pkg.train / torchrun -m pkg.train / accelerate launch -m pkg.train
  std::istringstream words(command);
  std::string w, prev;
  while (words >> w) {
    if (prev == "-m" || prev == "--module") {
      while (!w.empty() && (w.back() == '"' || w.back() == '\'' || w.back() == ';'))
        w.pop_back();
      while (!w.empty() && (w.front() == '"' || w.front() == '\''))
        w.erase(0, 1);
      if (w == stem || (w.size() > stem.size() && w.compare(w.size() - stem.size(), stem.size(),
                                                            stem) == 0 &&
                        w[w.size() - stem.size() - 1] == '.'))
        return true;
    }
    prev = w;
  }
  return false;
}

LaunchFiles::Root LaunchFiles::projectRoot(const std::string &script) {
  std::error_code ec;
  for (fs::path d = fs::path(script).parent_path(); !d.empty(); d = d.parent_path()) {
    if (fs::exists(d / ".git", ec))
      return {d.string(), false};
    if (d == d.parent_path())
      break;
  }
  return {fs::path(script).parent_path().string(), true};
}

const std::vector<LaunchFiles::Candidate> &LaunchFiles::candidates(const Root &root) {
  const auto key = std::make_pair(root.folder, root.shallow);
  auto it = byRoot_.find(key);
  if (it != byRoot_.end())
    return it->second;
  std::vector<Candidate> &out = byRoot_[key];
  const std::string &folder = root.folder;
  const bool shallow = root.shallow;
  std::error_code ec;
  size_t seen = 0;
  for (auto d = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
       !ec && d != fs::recursive_directory_iterator() && seen < kMaxEntries; d.increment(ec)) {
    ++seen;
    const fs::path &p = d->path();
    if (d->is_directory(ec)) {
      if (skippedFolder(p.filename().string()) || (shallow && d.depth() >= 1))
        d.disable_recursion_pending();
      continue;
    }
    if (!launchExtension(p) || !d->is_regular_file(ec) || d->file_size(ec) > kMaxFileBytes)
      continue;
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    // Only a file that starts some Python program can start this one.
    if (text.find(".py") == std::string::npos && text.find("-m ") == std::string::npos)
      continue;
    out.push_back({p.string(), std::move(text)});
  }
  return out;
}

core::LaunchEnvironment LaunchFiles::environmentOf(const std::string &script, const Root &root,
                                                   const launch::Options &opts) {
  return [this, script, root, opts] {
    std::vector<core::Launch> out;
    for (const auto &p : launchesOf(script, root, opts)) {
      core::Launch l;
      l.place = {p.file, p.line, p.column};
      for (const auto &v : p.env)
        l.env.push_back({v.name, v.value, v.valueKnown});
      l.mayInherit = p.mayInherit;
      out.push_back(std::move(l));
    }
    return out;
  };
}

std::vector<launch::LaunchedProcess> LaunchFiles::launchesOf(const std::string &script,
                                                             const Root &root,
                                                             const launch::Options &opts) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<launch::LaunchedProcess> out;
  const std::string stem = fs::path(script).stem().string();
  for (const Candidate &c : candidates(root)) {
    if (c.text.find(stem) == std::string::npos)
      continue;
    auto it = parsed_.find(c.file);
    if (it == parsed_.end())
      it = parsed_.emplace(c.file, launch::checkLaunchText(c.file, c.text, opts)).first;
    for (const auto &p : it->second.processes)
      if (commandRuns(p.command, script))
        out.push_back(p);
  }
  return out;
}

} // namespace ddplint::cli
