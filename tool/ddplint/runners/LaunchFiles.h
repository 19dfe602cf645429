// The launch files that start a Python program: shell and Slurm scripts and
// Kubernetes manifests in the program's project whose launch commands name the
// script (`torchrun train.py`, `python -m pkg.train`).  The environment they
// give the program counts as the program's own for ddp-async-error-handling.
#pragma once

#include "ddplint/core/Rules.h"
#include "ddplint/launch/LaunchCheck.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ddplint::cli {

class LaunchFiles {
public:
  // The processes that start `script` (absolute path), from the launch files
  // under `root` (the project: the folder of its .ddplint.yaml, else of .git,
  // else the script's own).  Thread-safe; each root is searched once per run.
  struct Root {
    std::string folder;
    bool shallow = false; // the folder and the folders in it only
  };
  std::vector<launch::LaunchedProcess> launchesOf(const std::string &script, const Root &root,
                                                  const launch::Options &opts);
  // The same, as the rules ask for it (searched only when a rule asks).
  core::LaunchEnvironment environmentOf(const std::string &script, const Root &root,
                                        const launch::Options &opts);

  // The project of `script` when no .ddplint.yaml says where it is: the folder
  // of its .git, else (shallow) the script's own folder.
  static Root projectRoot(const std::string &script);

private:
  struct Candidate {
    std::string file, text;
  };
  const std::vector<Candidate> &candidates(const Root &root);
  std::mutex mu_;
  std::map<std::pair<std::string, bool>, std::vector<Candidate>> byRoot_;
  std::map<std::string, launch::Result> parsed_; // file -> its processes
};

// Whether a command line runs `script`: its file name as a path's last part
// (`python train.py`, `torchrun scripts/train.py`) or its module (`-m pkg.train`).
bool commandRuns(const std::string &command, const std::string &script);

} // namespace ddplint::cli
