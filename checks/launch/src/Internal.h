// The readers behind checkLaunchText.
#pragma once

#include "Env.h"

namespace ddplint::launch::detail {

// False when no document is a Kubernetes object (the file is no manifest).
bool checkManifest(const std::string &text, const Options &opts, Sink &sink,
                   std::vector<Error> &errors);

// Slurm batch scripts and shell launch scripts.
void checkShell(const std::string &text, bool slurm, const Options &opts, Sink &sink,
                std::vector<Error> &errors);

} // namespace ddplint::launch::detail
