# Loads the plugin into a clang-tidy of another LLVM major and expects a clear
# refusal (exit 2 and a message naming both versions), never a silent run.
if(NOT EXISTS "${CLANG_TIDY}")
  message(FATAL_ERROR "${CLANG_TIDY} is missing: the setup script installs it (clang-tidy-19 and clang-tidy-22)")
endif()
execute_process(
  COMMAND "${CLANG_TIDY}" "--load=${PLUGIN}" "--checks=-*,ddp-*" --list-checks
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit code 2 from the version guard, got '${rc}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "was built for LLVM ${BUILT_FOR}")
  message(FATAL_ERROR "the refusal does not name the plugin's LLVM version:\n${err}")
endif()
if(out MATCHES "ddp-")
  message(FATAL_ERROR "the plugin registered checks in the wrong host:\n${out}")
endif()
message(STATUS "refused as expected: ${err}")
