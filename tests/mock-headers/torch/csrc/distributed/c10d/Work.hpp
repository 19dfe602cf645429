#pragma once
#include "ProcessGroup.hpp"
