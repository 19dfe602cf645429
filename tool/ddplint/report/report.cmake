# ddplint-report: the CLI's output formats (text, JSON, SARIF) and baselines.
# No Clang: only LLVM Support (llvm::json, paths, raw_ostream) from the shared
# LLVM library.  Included by tool/ddplint/CMakeLists.txt; tests in tests/report.
# The version the reports carry: the project's, unless the includer set one.
if(NOT DEFINED DDPLINT_VERSION)
  set(DDPLINT_VERSION "${PROJECT_VERSION}")
endif()
if(DDPLINT_VERSION STREQUAL "")
  set(DDPLINT_VERSION 0.0.0)
endif()

add_library(ddplint-report STATIC
  ${CMAKE_CURRENT_LIST_DIR}/Finding.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Report.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Baseline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/RulesTable.cpp)
target_include_directories(ddplint-report PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_include_directories(ddplint-report SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS})
target_link_libraries(ddplint-report PUBLIC ddplint-core LLVM)
target_compile_definitions(ddplint-report PRIVATE DDPLINT_VERSION="${DDPLINT_VERSION}")
target_compile_options(ddplint-report PRIVATE -Wall -Wextra)
