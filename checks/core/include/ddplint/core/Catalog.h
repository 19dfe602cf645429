// The rule and API catalogs as plain data.  Filled from rules/*.yaml at build
// time (checks/catalog/gen_catalog.cpp), so no frontend parses YAML at run time
// and the clang-tidy plugin links nothing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ddplint::core {

struct RuleOption {
  std::string name;
  std::string defaultValue;
  std::string doc;
};

struct RuleInfo {
  std::string id;
  std::string severity; // error | warning | note
  std::string summary;
  std::string trigger;
  std::string rootCause;
  std::string guardrail;
  std::string fix;
  std::vector<std::string> harness;
  std::vector<RuleOption> options;
  // Which front end runs the rule: "clang-tidy" or "launch" (ddplint check-launch).
  // Last so that aggregate initialisers written before it existed still compile.
  std::string frontend;
  // The languages the rule applies to: "c", "c++" (the rule runs on units of
  // that language; others are reported as skipped, never as clean).
  std::vector<std::string> languages;
};

// A function with one interesting argument (a path, an out-parameter, a timeout).
struct FunctionArg {
  std::string name;
  int arg = -1;
};

struct ProcessGroupApi {
  std::string className;
  std::string backend;
  int optionsArg = -1;
};

struct ProcessGroupOptionsApi {
  std::string factory;
  std::string backend;
  int timeoutArg = -1;
};

// A collective's data buffers (rules/api.yaml, collective_buffers).  Indices are
// 0-based call arguments; for a method, among the written arguments of the
// member call.  `agreed` lists the written buffers (recv or inout) whose content
// is the same on every rank once the call completes; `request` is the request
// out-argument of a nonblocking or persistent call (-1: none).
struct CollectiveBuffers {
  std::string name;
  bool method = false; // a c10d process-group method, not a function
  std::vector<int> send, recv, inout, agreed;
  int request = -1;
};

struct ApiCatalog {
  std::vector<std::string> processGroupClasses;
  std::vector<std::string> collectiveMethods, collectiveFunctions;
  std::vector<std::string> barrierMethods, barrierFunctions;
  std::vector<std::string> pointToPointMethods, pointToPointFunctions;
  std::vector<std::string> notCollectiveFunctions;
  std::vector<std::string> exitFunctions;
  // The other API classes (with collectives, barriers, point-to-point and exits,
  // every MPI/NCCL function and c10d method is in exactly one).  Not to be
  // confused with localFunctions below: those return rank-local values.
  std::vector<std::string> oneSidedFunctions, requestFunctions, fileIoFunctions;
  std::vector<std::string> localApiFunctions, localApiMethods;
  std::vector<std::string> queryFunctions, queryMethods;
  // One entry per collective and barrier function and method.
  std::vector<CollectiveBuffers> collectiveBuffers;
  std::vector<FunctionArg> checkpointWriters;
  std::vector<std::string> fileWriterClasses, fileWriterFunctions;
  std::vector<std::string> rankMethods, rankEnvVars, envFunctions;
  std::vector<FunctionArg> rankOutParams;
  std::vector<std::string> worldSizeMethods, worldSizeEnvVars;
  std::vector<FunctionArg> worldSizeOutParams;
  std::vector<std::string> localFunctions, localClasses, localMethods;
  std::vector<ProcessGroupApi> processGroups;
  std::vector<ProcessGroupOptionsApi> processGroupOptions;
  std::vector<std::string> dataLoaderFactories;
  std::vector<std::string> distributedSamplers;
  std::string asyncErrorEnv;
  std::string asyncErrorEnvDeprecated;
  int asyncErrorEnvRenamedIn = 0; // major*100+minor
};

const std::vector<RuleInfo> &builtinRules();
const ApiCatalog &builtinApi();
const RuleInfo *findRule(std::string_view id);

// "a;b; c" -> {"a","b","c"}: the format of every list-valued check option.
std::vector<std::string> splitList(std::string_view text);

} // namespace ddplint::core
