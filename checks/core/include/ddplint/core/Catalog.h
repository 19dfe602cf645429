// The rule and API catalogs as plain data.  Filled from rules/*.yaml at build
// time (checks/catalog/gen_catalog.cpp), so no frontend parses YAML at run time
// and the clang-tidy plugin links nothing.
#pragma once

#include <set>
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

// The Python API (rules/api.yaml, section `python`): names as the Python
// frontend sees them.  Functions of torch.distributed are listed by their last
// name (`all_reduce`); other entries by the spelling the field's comment gives.
struct PythonApi {
  std::set<std::string> collectives;        // torch.distributed.<name>: every rank calls it
  std::set<std::string> barriers;           // torch.distributed.<name> that only synchronise
  std::set<std::string> pointToPoint;       // torch.distributed.<name>: rank-conditional by design
  std::set<std::string> collectiveFunctions; // qualified names of other collectives
  std::set<std::string> wrapperCollectives; // accelerator/Lightning/Fabric methods
  std::set<std::string> wrapperBarriers;
  std::set<std::string> fsdpCollectiveFunctions; // FSDP/DCP state-dict helpers that gather
  std::set<std::string> agreeingMethods;    // methods whose result is the same on every rank
  std::set<std::string> ddpClasses, fsdpClasses, acceleratorClasses, zeroClasses,
      dataLoaderClasses, metricClasses;
  std::set<std::string> rankFunctions, localRankFunctions; // qualified
  std::set<std::string> rankEnvVars, localRankEnvVars;
  std::set<std::string> rankAttributes, localRankAttributes; // `args.rank`, `self.local_rank`
  std::set<std::string> mainProcessAttributes, localMainProcessAttributes;
  std::set<std::string> mainProcessFunctions, localMainProcessFunctions; // qualified
  std::set<std::string> mainOnlyDecorators;
  std::set<std::string> rankParameters, localRankParameters;
  std::set<std::string> worldSizeFunctions; // qualified
  std::set<std::string> worldSizeAttributes; // `fabric.world_size`, `trainer.num_nodes`
  std::set<std::string> localFunctions;     // qualified: rank-local results (clocks, files)
  std::set<std::string> localMethods;       // method names with rank-local results
  std::set<std::string> fileProbes;         // qualified: tests whether a file exists
  std::set<std::string> checkpointWriters;  // qualified; the path is argument 1 (or `f=`)
  std::set<std::string> fileWriters;        // qualified functions that write files
  std::set<std::string> fileWriteMethods;   // methods that write files (`to_csv`)
  std::set<std::string> exitFunctions;      // qualified
};

const std::vector<RuleInfo> &builtinRules();
const ApiCatalog &builtinApi();
const PythonApi &builtinPythonApi();
const RuleInfo *findRule(std::string_view id);

// "a;b; c" -> {"a","b","c"}: the format of every list-valued check option.
std::vector<std::string> splitList(std::string_view text);

} // namespace ddplint::core
