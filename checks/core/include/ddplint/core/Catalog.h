// The rule and API catalogs as plain data.  Filled from rules/*.yaml at build
// time (checks/catalog: CatalogReader validates, gen_catalog emits the
// tables), so nothing parses YAML at run time and the clang-tidy plugin links
// nothing.
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
  // What the rule is decided on: "program" (a program's model, through the
  // registry: the clang-tidy checks for C and C++, the Python linter) or
  // "launch" (launch files, `ddplint check-launch`).
  std::string runner;
  // The languages of the programs the rule applies to: "c", "c++", "python"
  // (units of other languages are reported as skipped, never as clean).
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
  // Collectives that set up or tear down (MPI_Init, ncclCommInitRank): worded
  // as calls every rank makes together.
  std::vector<std::string> collectiveSetupFunctions;
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
  // Calls that write a rank-local value (a clock) through an argument.
  std::vector<FunctionArg> localOutParams;
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
// Looked up by string_view on the Python frontend's hot path: no temporary strings.
using NameSet = std::set<std::string, std::less<>>;

// A call that runs a collective underneath (rules/api.yaml,
// python.implicit_collectives, the entries with a `match`), as the Python
// frontend models it.  The first entry that matches a call wins.
struct ImplicitCollective {
  std::string id;
  bool callsObject = false;          // the object itself is called (its forward)
  std::vector<std::string> methods;  // else: these methods of it
  std::string object;                // its kind: ddp, fsdp, prepared, metric, accelerator,
                                     // lightning_self, fsdp_full_state, any
  std::vector<std::string> requires; // program_wraps_ddp, outside_no_sync, no_gradient_argument, sync_dist,
                                     // module_has_buffers, module_names_sharding
  std::string event;                 // the event's name: {object}, {receiver}, {method}
  // The catalog's `collective: barrier`: no rank returns from the call before
  // every rank has entered it (DeepSpeed's save_checkpoint), so it orders a
  // rank-0 write before the others go on, as dist.barrier() does.
  bool barrier = false;
};

// A call that creates a process group and takes its timeout itself
// (rules/api.yaml, python.process_group_inits); argument positions, -1: keyword only.
struct PyProcessGroupInit {
  std::string name; // qualified: "torch.distributed.init_process_group"
  int backendArg = -1, timeoutArg = -1, worldSizeArg = -1;
  bool collective = false; // every rank of the world makes it together
};

struct PythonApi {
  NameSet collectives;        // torch.distributed.<name>: every rank calls it
  NameSet barriers;           // torch.distributed.<name> that only synchronise
  NameSet pointToPoint;       // torch.distributed.<name>: rank-conditional by design
  NameSet collectiveFunctions; // qualified names of other collectives
  NameSet barrierFunctions;   // qualified names of other barriers (libraries' helpers)
  NameSet wrapperCollectives; // accelerator/Lightning/Fabric methods
  NameSet wrapperBarriers;
  NameSet fsdpCollectiveFunctions; // FSDP/DCP state-dict helpers that gather
  NameSet agreeingFunctions;  // qualified functions whose result is the same on every rank
  NameSet agreeingMethods;    // methods whose result is the same on every rank
  NameSet ddpClasses, fsdpClasses, acceleratorClasses, zeroClasses,
      dataLoaderClasses, metricClasses;
  NameSet rankFunctions, localRankFunctions; // qualified
  NameSet deviceMeshRankMethods; // of a receiver named for a DeviceMesh
  NameSet rankEnvVars, localRankEnvVars;
  NameSet rankAttributes, localRankAttributes; // `args.rank`, `self.local_rank`
  NameSet mainProcessAttributes, localMainProcessAttributes;
  NameSet mainProcessFunctions, localMainProcessFunctions; // qualified
  NameSet mainOnlyDecorators;
  NameSet rankParameters, localRankParameters;
  NameSet worldSizeFunctions; // qualified
  NameSet initializedFunctions; // qualified: true in a distributed run (`dist.is_initialized`)
  NameSet worldSizeAttributes; // `fabric.world_size`, `trainer.num_nodes`
  NameSet localFunctions;     // qualified: rank-local results (clocks, files)
  NameSet localMethods;       // method names with rank-local results
  NameSet fileReadMethods;    // `f.read()`: as uniform as the file's path
  NameSet fileProbes;         // qualified: tests whether a file exists
  NameSet checkpointWriters;  // qualified; the path is argument 1 (or `f=`)
  NameSet fileWriters;        // qualified functions that write files
  NameSet fileWriteMethods;   // methods that write files (`to_csv`)
  NameSet imageWriters;       // qualified functions that draw a picture (written like a log)
  NameSet imageWriteMethods;  // methods that draw one (`fig.savefig`)
  // Methods that write a model's weights to a folder (`model.save_pretrained(dir)`);
  // an `is_main_process=` argument is the call's own guard.
  NameSet checkpointWriteMethods;
  // Checkpoint writers (of checkpointWriters) that write only where their
  // `rank` argument is 0 (default 0), at the path of their first argument
  // (icefall's save_checkpoint): `rank=rank` makes the call rank 0's write.
  NameSet rankArgumentCheckpointWriters; // qualified
  // An Accelerator's methods that write a checkpoint (`accelerator.save_state(dir)`).
  NameSet acceleratorCheckpointMethods;
  // Checkpoint savers of a library (timm's CheckpointSaver): an object made
  // from one of these classes writes a checkpoint when one of the methods runs.
  NameSet checkpointSaverClasses; // qualified
  NameSet checkpointSaverMethods;
  // Checkpointers that write on the main process only (detectron2's
  // DetectionCheckpointer and PeriodicCheckpointer): a call of one of the
  // methods is a rank-0 checkpoint write.
  NameSet mainProcessCheckpointerClasses; // qualified
  NameSet mainProcessCheckpointerMethods;
  // Checkpointers that write on every rank unless handed a main-process test
  // (fvcore's Checkpointer, `save_to_disk=True` by default).
  NameSet everyRankCheckpointerClasses; // qualified
  // Checkpointers that call the one they are handed (PeriodicCheckpointer):
  // they write where it writes.
  NameSet wrappingCheckpointerClasses; // qualified
  // A framework's hook classes whose methods it calls between training steps
  // (detectron2's HookBase: before_step, after_step).
  NameSet stepHookBases; // qualified
  NameSet stepHookMethods;
  // A framework's hooks that save through the checkpointer they are handed
  // every period of the training loop (detectron2's PeriodicCheckpointer hook).
  NameSet stepCheckpointHookClasses; // qualified
  // Methods that register a function run inside a checkpoint call (Accelerate's
  // register_save_state_pre_hook): the ranks that call the checkpoint run it.
  NameSet saveStateHookRegistrars;
  // Calls whose result names this process alone (a uuid, the pid, a fresh
  // temporary folder): a folder so named is every process's own.
  NameSet perProcessIds; // qualified
  // A framework base class (qualified) and the methods it calls on its main
  // process only (`transformers.Trainer` and `_save`).
  NameSet mainProcessOverrideBases;
  NameSet mainProcessOverrideMethods;
  // What Lightning calls on every rank of a LightningModule (and `on_*`).
  NameSet lightningModuleHooks;
  // Names only Lightning 1.x code uses: a module that uses one is 1.x code.
  NameSet lightning1Markers;
  // Callback hooks Lightning 2 no longer calls: in 2.x code, dead methods.
  NameSet lightning2RemovedHooks;
  NameSet exitFunctions;      // qualified
  // Library modules with no buffers (timm's ViT blocks).
  NameSet bufferFreeModules; // qualified
  // A framework's launchers: they start the ranks and run the function
  // they are handed in each (detectron2's launch).
  NameSet rankLaunchers; // qualified
  std::vector<ImplicitCollective> implicitCollectives;
  std::vector<PyProcessGroupInit> processGroupInits;
};

const std::vector<RuleInfo> &builtinRules();
const ApiCatalog &builtinApi();
const PythonApi &builtinPythonApi();
const RuleInfo *findRule(std::string_view id);

// "a;b; c" -> {"a","b","c"}: the format of every list-valued check option.
std::vector<std::string> splitList(std::string_view text);

} // namespace ddplint::core
