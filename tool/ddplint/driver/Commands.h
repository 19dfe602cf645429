// ddplint's commands: each takes the parsed command line and returns the
// exit code (0 clean, 1 findings at or above --fail-on, 2 errors).
#pragma once

#include "Args.h"

namespace ddplint::cli {

int runLint(const Args &a);        // ddplint [PATHS...]: C, C++ and Python programs
int runCheckLaunch(const Args &a); // ddplint check-launch: launch files
int runCache(const Args &a);       // ddplint cache stats|clear
int runRules(const Args &a);       // ddplint rules

} // namespace ddplint::cli
