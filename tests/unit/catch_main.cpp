// The Catch2 v2 runner shared by core_tests and frontend_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
