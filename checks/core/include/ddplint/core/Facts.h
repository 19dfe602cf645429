// Facts: what a language frontend (Clang or Python) reports about one program
// for the rules that are not about paths and collectives: process-group
// creation (ddp-init-timeout, ddp-async-error-handling), environment settings
// and target versions (ddp-async-error-handling), data loaders
// (ddp-dataloader-recreated, ddp-dataloader-options) and forward() branches
// (ddp-forward-shape-branch).
//
// The contract: a frontend only *observes* (what is created where, with which
// arguments, inside which loops); the core *decides* and *words* the finding
// (one file per rule in checks/core/rules).  Frontends render the fix-its the
// findings ask for (FixHint in Finding.h), because only they know the
// language's syntax.
//
// No frontend types here: positions are core::Loc handles (0 = none), text is
// std::string.  Lists are in source order within a function; a template or
// generic instantiated several times reports each position once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddplint::core {

using Loc = std::uint32_t;

enum class SourceLanguage : std::uint8_t { Cpp, Python };

// A yes/no argument as written at a call.
enum class ArgState : std::uint8_t {
  Absent,  // not passed (the API's default applies)
  True,    // passed and known to be true
  False,   // passed and known to be false
  Unknown, // passed, but its value is not known statically (a variable, a call)
};

// --- process groups (ddp-init-timeout, ddp-async-error-handling) -------------

struct ProcessGroupCreation {
  enum class Kind : std::uint8_t {
    Group,   // a process-group object (ProcessGroupGloo/NCCL constructor, make_intrusive<...>)
    Options, // its options object (ProcessGroupGloo::Options::create(), make_intrusive<Options>())
    Init,    // a call that creates a group and takes the timeout itself
             // (Python: dist.init_process_group, dist.new_group)
  };
  Kind kind = Kind::Group;
  Loc loc = 0;               // where the creation is written (diagnostic position)
  std::string api;           // for messages: "ProcessGroupGloo", "ProcessGroupGloo::Options",
                             // "init_process_group", "new_group"
  std::string backend;       // "nccl", "gloo", "mpi"; "" when not known
  // Group: the constructor has an options parameter (MPI has none).
  bool acceptsOptions = false;
  // Group: an options object is passed; its timeout is judged where it is created.
  bool optionsGiven = false;
  // Options and Init: a timeout is passed as an argument.
  bool timeoutGiven = false;
  // Options: `opts->timeout = ...` / `opts.timeout = ...` is assigned in the
  // same function (or lambda) as the creation.
  bool timeoutAssignedLater = false;
  // The backend's options factory takes the timeout as an argument (Gloo's
  // Options::create(timeout)); false when it can only be assigned (NCCL).
  bool optionsTakeTimeoutArg = false;
  // The qualified options class of the backend, for fix texts
  // ("c10d::ProcessGroupGloo::Options"); "" when none.
  std::string optionsApi;
  // Options: the variable the options are stored in ("" = not stored in a
  // named variable) and how its members are reached ("->" or ".").
  std::string optionsVar;
  std::string optionsAccess = "->";
  // Where a timeout argument can be inserted (0: no safe insertion point:
  // macro text, a template instantiation, arguments that must come first).
  // C++: the closing parenthesis; Python: the end of the argument list.
  Loc fixAnchor = 0;
};

// --- environment and versions (ddp-async-error-handling) ---------------------

struct EnvSetting {
  enum class Where : std::uint8_t { Program, LaunchFile };
  Loc loc = 0;           // the call or assignment
  std::string name;      // "TORCH_NCCL_ASYNC_ERROR_HANDLING"
  bool nameKnown = true; // false: the name is computed; it may be any variable
  bool isSet = false;    // true: the program sets it (setenv, putenv, os.environ[..] =); false: reads it
  bool valueKnown = false;
  std::string value;     // when valueKnown
  Where where = Where::Program;
  // The string literal that spells the name at this call (0: the name comes
  // from a constant defined elsewhere, or is not a literal): the position of
  // a "deprecated name" finding and of its rename fix.
  Loc nameLoc = 0;
  // The literal can be edited in place (not macro text, one literal piece).
  bool renameFixable = false;
};

struct TargetVersions {
  // How the torch version is known.
  enum class Basis : std::uint8_t {
    Unknown, // no information: the rules assume AsyncErrorFacts::assumedVersion
    Exact,   // <torch/version.h>, the configuration, the installed package
    AtLeast, // inferred: the API declares something introduced in that version
    AtMost,  // inferred: the API lacks something introduced after it
  };
  Basis torchBasis = Basis::Unknown;
  int torchMajor = 0, torchMinor = 0;
  std::string torchEvidence; // for inferred versions: "the headers declare c10d::Backend"
  std::string torchProduct = "LibTorch"; // "LibTorch" (C++) or "PyTorch" (Python), for messages
  // NCCL version when known (nccl.h's NCCL_MAJOR/MINOR/PATCH); -1 unknown.
  int ncclMajor = -1, ncclMinor = -1, ncclPatch = -1;

  // major*100+minor, 0 when unknown.
  int torch() const { return torchBasis == Basis::Unknown ? 0 : torchMajor * 100 + torchMinor; }
};

// --- data loaders (ddp-dataloader-recreated, ddp-dataloader-options) ---------

struct LoopInfo {
  Loc loc = 0;
  // The frontend recognised an epoch loop (`for epoch in range(...)`).
  bool perEpoch = false;
  // The loader's dataset argument depends on this loop's variable
  // (`for ds in datasets: make(ds)`, `datasets[i]`): one loader per input, not
  // one per epoch.  Only the dataset argument counts.
  bool datasetDependsOnLoop = false;
};

struct DataLoaderCreation {
  Loc loc = 0;
  std::string api;      // for messages: "make_data_loader", "DataLoader"
  std::string function; // key of the function (or lambda) the call is written in
  // Enclosing loops within that function, innermost first (a lambda body is a
  // function of its own: loops outside it are not listed).
  std::vector<LoopInfo> loops;
  // The loader is kept beyond the iteration (appended to a container, stored
  // into an element): one loader per element, built in a setup loop.
  bool storedInContainer = false;

  // ddp-dataloader-options (Python's torch.utils.data.DataLoader).
  enum class Workers : std::uint8_t {
    Absent,   // num_workers not passed (default 0)
    Zero,     // num_workers=0
    Positive, // a literal > 0
    Unknown,  // a variable or expression: counts as > 0
  };
  Workers numWorkers = Workers::Absent;
  std::string numWorkersText; // as written, for messages ("4", "args.workers")
  ArgState persistentWorkers = ArgState::Absent;
  ArgState pinMemory = ArgState::Absent;
  Loc persistentWorkersLoc = 0; // the written value (to replace a False), 0 when absent
  Loc pinMemoryLoc = 0;
  Loc argsEnd = 0; // fix anchor: the end of the argument list (insert `, name=value`)
};

// A call of one of the program's own functions (or lambdas), for helpers that
// build a loader: a helper called inside a loop builds one every iteration.
struct HelperCall {
  Loc loc = 0;
  std::string caller;     // key of the calling function
  std::string callee;     // key of the called function
  std::string calleeName; // for messages (a lambda: the variable it is called through)
  std::vector<LoopInfo> loops; // as for DataLoaderCreation (datasetDependsOnLoop is ignored)
  bool storedInContainer = false;
};

// --- forward() (ddp-forward-shape-branch) ------------------------------------

// What one arm of a branch runs.  Names are sets (duplicates are ignored),
// except `shapes`, which is compared as a multiset.
struct ArmUse {
  std::vector<std::string> modules; // submodules with parameters it runs ("fc1", "head")
  std::vector<std::string> params;  // parameter tensors of the module it reads
  std::vector<std::string> shapes;  // shape operations with their arguments ("view(-1,4,)"),
                                    // parameterless reshaping submodules as "pool()"
};

struct ForwardArm {
  ArmUse own;       // what the arm itself runs
  ArmUse effective; // own, plus the rest of the enclosing block when the arm falls through
  bool returns = false; // the arm itself returns
  bool throws = false;  // the arm itself throws (an error path, not a computation)
};

struct ForwardBranch {
  enum class Kind : std::uint8_t { If, Conditional, Switch };
  Kind kind = Kind::If;
  Loc loc = 0;          // the `if` / `switch` keyword, or the start of `?:`
  std::string condText; // the condition as written
  // What the condition reads.  Precedence in messages: shape, values, rank.
  bool onShape = false;  // the input's shape (x.size(0), x.dim(), len(x))
  bool onValues = false; // the input's values (x.sum() > 0, a tensor from the batch)
  // The process rank.  A frontend may leave it false where it cannot matter:
  // the input decides (onShape/onValues), or every arm's `effective` use is
  // the same (the Clang frontend runs its rank analysis only otherwise).
  bool onRank = false;
  std::string shapeExpr; // the shape read, when onShape ("x.size(0)"); "" unknown
  // Arms: if/?: then, else (an absent else is an empty arm); switch: one per
  // case segment, plus an empty arm when there is no default.
  std::vector<ForwardArm> arms;
  // The branch (index into ForwardMethod::branches) inside one of whose arms
  // this one is written; -1 at the top.  A branch inside a reported branch is
  // not reported again.  Parents come before their children.
  int parent = -1;
};

struct ForwardMethod {
  Loc loc = 0;
  std::string className; // "Net", "NetImpl"
  std::vector<ForwardBranch> branches; // in source order, parents first
};

// --- all facts of a program ---------------------------------------------------

struct Facts {
  SourceLanguage language = SourceLanguage::Cpp;
  TargetVersions versions;
  // The program trains on CUDA (tensors or the model moved to a CUDA device,
  // an NCCL process group): ddp-dataloader-options asks for pin_memory.
  bool usesCuda = false;
  // The module makes a DistributedSampler: its loaders feed the ranks of a
  // distributed program even when the module itself starts nothing
  // distributed (a data module its trainer imports).  The data-loader rules
  // read it beside Program::distributed, in a module that makes no process
  // group (one that does and still is not distributed was found to run
  // alone: DataParallel's scripts with a `--local_rank` path).
  bool shardsData = false;
  std::vector<ProcessGroupCreation> processGroups;
  std::vector<EnvSetting> env;
  std::vector<DataLoaderCreation> dataLoaders;
  std::vector<HelperCall> calls;
  std::vector<ForwardMethod> forwards;
};

} // namespace ddplint::core
