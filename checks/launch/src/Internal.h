// The readers behind checkLaunchText.
#pragma once

#include "Env.h"

namespace ddplint::launch::detail {

// False when no document is a Kubernetes object (the file is no manifest).
// `helmUnparsed`: a document with {{ ... }} did not parse even masked.
bool checkManifest(const std::string &text, const Options &opts, Sink &sink,
                   std::vector<Error> &errors, bool &helmUnparsed);

// Slurm batch scripts and shell launch scripts.
void checkShell(const std::string &text, bool slurm, const Options &opts, Sink &sink,
                std::vector<Error> &errors);

} // namespace ddplint::launch::detail
