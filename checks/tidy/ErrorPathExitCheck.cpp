// The check lives in the analysis core (checks/core/src/Analysis.cpp); this
// file only anchors it in the check library.
#include "tidy/ErrorPathExitCheck.h"
