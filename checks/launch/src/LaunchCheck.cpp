#include "ddplint/launch/LaunchCheck.h"

#include "Internal.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ddplint::launch {

const char *fileKindName(FileKind kind) {
  switch (kind) {
  case FileKind::KubernetesManifest:
    return "kubernetes";
  case FileKind::SlurmScript:
    return "slurm";
  case FileKind::ShellScript:
    return "shell";
  case FileKind::Unknown:
    break;
  }
  return "unknown";
}

bool parseTorchVersion(const std::string &text, Options &out) {
  size_t b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
  if (b == std::string::npos)
    return false;
  std::string t = text.substr(b, e - b + 1);
  size_t i = (t[0] == 'v' || t[0] == 'V') ? 1 : 0;
  auto number = [&](int &v) {
    size_t start = i;
    v = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) && i - start < 4)
      v = v * 10 + (t[i++] - '0');
    return i > start && !(i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])));
  };
  int major = 0, minor = 0;
  if (!number(major) || i >= t.size() || t[i] != '.')
    return false;
  ++i;
  if (!number(minor))
    return false;
  // What may follow the minor: .patch, +local (cu121), a/b/rc pre-releases, .devN.
  if (i < t.size() && std::string(".+-abrdp").find(t[i]) == std::string::npos)
    return false;
  if (major == 0 && minor == 0)
    return false; // the "unknown" sentinel is not a version
  out.torchMajor = major;
  out.torchMinor = minor;
  return true;
}

namespace {

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string extensionOf(const std::string &file) {
  std::string name = std::filesystem::path(file).filename().string();
  size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? "" : lower(name.substr(dot + 1));
}

std::string withoutBom(const std::string &text) {
  return text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? text.substr(3) : text;
}

enum class Shebang { None, Shell, Other };

Shebang shebangOf(const std::string &text) {
  if (text.compare(0, 2, "#!") != 0)
    return Shebang::None;
  std::istringstream line(text.substr(2, text.find('\n') == std::string::npos
                                             ? std::string::npos
                                             : text.find('\n') - 2));
  std::string interp;
  line >> interp;
  interp = std::filesystem::path(interp).filename().string();
  if (interp == "env") {
    line >> interp;
    while (interp.rfind('-', 0) == 0 && line >> interp) // env -S bash
      ;
  }
  static const char *shells[] = {"sh", "bash", "zsh", "ksh", "dash", "ash"};
  for (const char *s : shells)
    if (interp == s)
      return Shebang::Shell;
  return Shebang::Other;
}

} // namespace

FileKind detectFileKind(const std::string &file, const std::string &rawText) {
  if (rawText.find('\0') != std::string::npos)
    return FileKind::Unknown;
  const std::string text = withoutBom(rawText);
  bool sbatch = false, manifest = false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    sbatch |= line.rfind("#SBATCH", 0) == 0;
    manifest |= line.rfind("apiVersion:", 0) == 0 || line.rfind("kind:", 0) == 0;
  }
  const Shebang bang = shebangOf(text);
  if (sbatch)
    return FileKind::SlurmScript;
  if (bang == Shebang::Shell)
    return FileKind::ShellScript;
  if (bang == Shebang::Other)
    return FileKind::Unknown; // a Python or Perl program is not a launch file
  size_t first = text.find_first_not_of(" \t\r\n");
  if (manifest || (first != std::string::npos && text[first] == '{' &&
                   text.find("\"apiVersion\"") != std::string::npos))
    return FileKind::KubernetesManifest;
  const std::string ext = extensionOf(file);
  if (ext == "yaml" || ext == "yml" || ext == "json")
    return FileKind::KubernetesManifest;
  if (ext == "slurm" || ext == "sbatch")
    return FileKind::SlurmScript;
  if (ext == "sh" || ext == "bash" || ext == "zsh" || ext == "ksh")
    return FileKind::ShellScript;
  return FileKind::Unknown;
}

Result checkLaunchText(const std::string &file, const std::string &rawText, const Options &opts) {
  Result r;
  size_t nul = rawText.find('\0');
  if (nul != std::string::npos) {
    unsigned line = 1 + static_cast<unsigned>(std::count(rawText.begin(), rawText.begin() + nul, '\n'));
    r.errors.push_back({file, line, 0,
                        "binary file (a NUL byte on line " + std::to_string(line) +
                            "): not a Kubernetes manifest, Slurm script or shell script"});
    return r;
  }
  const std::string text = withoutBom(rawText);
  r.kind = detectFileKind(file, text);
  if (r.kind == FileKind::Unknown) {
    r.errors.push_back({file, 0, 0,
                        "cannot tell what kind of launch file this is: expected a Kubernetes "
                        "manifest (apiVersion and kind), a Slurm batch script (#SBATCH lines) or "
                        "a shell script (a #!/bin/sh or #!/bin/bash line, or a .sh name)"});
    return r;
  }
  detail::Sink sink(file);
  if (r.kind == FileKind::KubernetesManifest) {
    bool helm = false;
    if (!detail::checkManifest(text, opts, sink, r.errors, helm)) {
      // No Kubernetes object: ordinary YAML (a dataset or Hydra config, a
      // workflow, kustomization.yaml) is skipped, never an error.  A file that
      // does look like a manifest but does not parse keeps its errors.
      bool looksLikeManifest = false;
      {
        std::istringstream in(text);
        bool api = false, kind = false;
        for (std::string line; std::getline(in, line);) {
          api |= line.rfind("apiVersion:", 0) == 0;
          kind |= line.rfind("kind:", 0) == 0;
        }
        looksLikeManifest = api && kind;
      }
      if (helm) {
        r.errors.clear();
        sink.skip(0, 0, "the file",
                  "Helm template that does not parse with its {{ ... }} directives masked: not "
                  "checked; run check-launch on the output of helm template",
                  /*visible=*/true);
      } else if (!looksLikeManifest || r.errors.empty()) {
        r.errors.clear();
        sink.skip(0, 0, "the file", "not a Kubernetes manifest (no YAML document has apiVersion and kind)");
      }
      r.kind = r.errors.empty() ? FileKind::Unknown : r.kind;
    }
  } else {
    detail::checkShell(text, r.kind == FileKind::SlurmScript, opts, sink, r.errors);
  }
  r.findings = sink.take();
  r.skipped = sink.takeSkipped();
  r.processes = sink.takeProcesses();
  std::stable_sort(r.errors.begin(), r.errors.end(), [](const Error &a, const Error &b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return r;
}

Result checkLaunchFile(const std::string &file, const Options &opts) {
  Result r;
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    r.errors.push_back({file, 0, 0, "is a directory, not a launch file"});
    return r;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    r.errors.push_back({file, 0, 0, std::string("cannot open: ") + std::strerror(errno)});
    return r;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    r.errors.push_back({file, 0, 0, "cannot read the file"});
    return r;
  }
  return checkLaunchText(file, text.str(), opts);
}

} // namespace ddplint::launch
