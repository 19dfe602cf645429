#include "tidy/ForwardShapeBranchCheck.h"
