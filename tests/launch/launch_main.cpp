// Own runner: tests/unit's catch main is an OBJECT library of that folder.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
