// Unit tests of the rules decided on facts (checks/core/rules) on hand-built
// facts: what any frontend (Clang, Python) reports, decided and worded by the
// core alone, through the rule registry.
#include "ddplint/core/AsyncErrorFacts.h"
#include "ddplint/core/Rules.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ddplint::core;

namespace {

std::vector<Finding> findings(RuleId id, const Program &p) { return RuleRunner(p).run(id); }
std::vector<Finding> initTimeoutFindings(const Program &p) { return findings(RuleId::InitTimeout, p); }
std::vector<Finding> asyncErrorHandlingFindings(const Program &p) {
  return findings(RuleId::AsyncErrorHandling, p);
}
std::vector<Finding> dataLoaderRecreatedFindings(const Program &p) {
  return findings(RuleId::DataloaderRecreated, p);
}
std::vector<Finding> dataLoaderOptionsFindings(const Program &p) {
  return findings(RuleId::DataloaderOptions, p);
}
std::vector<Finding> forwardShapeBranchFindings(const Program &p) {
  return findings(RuleId::ForwardShapeBranch, p);
}

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

ProcessGroupCreation glooGroup(Loc loc) {
  ProcessGroupCreation pg;
  pg.kind = ProcessGroupCreation::Kind::Group;
  pg.loc = loc;
  pg.api = "ProcessGroupGloo";
  pg.backend = "gloo";
  pg.acceptsOptions = true;
  pg.optionsTakeTimeoutArg = true;
  pg.optionsApi = "c10d::ProcessGroupGloo::Options";
  return pg;
}

ProcessGroupCreation ncclGroup(Loc loc) {
  ProcessGroupCreation pg = glooGroup(loc);
  pg.api = "ProcessGroupNCCL";
  pg.backend = "nccl";
  pg.optionsTakeTimeoutArg = false;
  pg.optionsApi = "c10d::ProcessGroupNCCL::Options";
  return pg;
}

ProcessGroupCreation options(Loc loc, const std::string &backend) {
  ProcessGroupCreation pg;
  pg.kind = ProcessGroupCreation::Kind::Options;
  pg.loc = loc;
  pg.backend = backend;
  pg.api = backend == "gloo" ? "ProcessGroupGloo::Options" : "ProcessGroupNCCL::Options";
  pg.optionsTakeTimeoutArg = backend == "gloo";
  return pg;
}

EnvSetting setEnv(const std::string &name, const std::string &value, Loc loc) {
  EnvSetting e;
  e.loc = loc;
  e.name = name;
  e.isSet = true;
  e.valueKnown = true;
  e.value = value;
  e.nameLoc = loc + 1;
  e.renameFixable = true;
  return e;
}

void exactTorch(Program &p, int major, int minor) {
  p.facts.versions.torchBasis = TargetVersions::Basis::Exact;
  p.facts.versions.torchMajor = major;
  p.facts.versions.torchMinor = minor;
}

DataLoaderCreation loader(Loc loc, std::string function = "main") {
  DataLoaderCreation dl;
  dl.loc = loc;
  dl.api = "make_data_loader";
  dl.function = std::move(function);
  return dl;
}

LoopInfo loopAt(Loc loc, bool datasetDepends = false) {
  LoopInfo l;
  l.loc = loc;
  l.datasetDependsOnLoop = datasetDepends;
  return l;
}

HelperCall helperCall(Loc loc, std::string caller, std::string callee, std::vector<LoopInfo> loops) {
  HelperCall c;
  c.loc = loc;
  c.caller = std::move(caller);
  c.callee = callee;
  c.calleeName = std::move(callee);
  c.loops = std::move(loops);
  return c;
}

} // namespace

// --- ddp-init-timeout ---------------------------------------------------------

TEST_CASE("init-timeout: a Gloo group without options, with the options fix", "[facts][init-timeout]") {
  Program p;
  auto pg = glooGroup(10);
  pg.fixAnchor = 11;
  p.facts.processGroups = {pg};
  auto fs = initTimeoutFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].rule == "ddp-init-timeout");
  CHECK(fs[0].loc == 10);
  CHECK(fs[0].message ==
        "process group 'ProcessGroupGloo' is created without an explicit timeout; a hung "
        "collective waits the backend default (30 min for Gloo) before failing; pass options "
        "with a timeout");
  REQUIRE(fs[0].fixes.size() == 1);
  CHECK(fs[0].fixes[0].kind == FixKind::InsertTimeoutOptionsArg);
  CHECK(fs[0].fixes[0].anchor == 11);
  CHECK(fs[0].fixes[0].text == "c10d::ProcessGroupGloo::Options");
}

TEST_CASE("init-timeout: groups given options are judged at the options", "[facts][init-timeout]") {
  Program p;
  auto pg = glooGroup(10);
  pg.optionsGiven = true;
  auto nccl = ncclGroup(20);
  nccl.optionsGiven = true;
  p.facts.processGroups = {pg, nccl};
  CHECK(initTimeoutFindings(p).empty());
}

TEST_CASE("init-timeout: an NCCL group says to set the member, no fix", "[facts][init-timeout]") {
  Program p;
  auto pg = ncclGroup(10);
  pg.fixAnchor = 11; // the frontend had a place, but NCCL's options take no timeout argument
  p.facts.processGroups = {pg};
  auto fs = initTimeoutFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(has(fs[0].message, "(10 to 30 min for NCCL, by version)"));
  CHECK(has(fs[0].message, "pass options whose 'timeout' member is set"));
  CHECK(fs[0].fixes.empty());
}

TEST_CASE("init-timeout: MPI has no timeout to pass", "[facts][init-timeout]") {
  Program p;
  ProcessGroupCreation pg;
  pg.loc = 5;
  pg.api = "ProcessGroupMPI";
  pg.backend = "mpi";
  p.facts.processGroups = {pg};
  CHECK(initTimeoutFindings(p).empty());
}

TEST_CASE("init-timeout: options with a timeout argument or an assigned member are clean",
          "[facts][init-timeout]") {
  Program p;
  auto given = options(10, "gloo");
  given.timeoutGiven = true;
  auto assigned = options(20, "nccl");
  assigned.timeoutAssignedLater = true;
  auto assignedGloo = options(30, "gloo");
  assignedGloo.timeoutAssignedLater = true;
  p.facts.processGroups = {given, assigned, assignedGloo};
  CHECK(initTimeoutFindings(p).empty());
}

TEST_CASE("init-timeout: options without a timeout", "[facts][init-timeout]") {
  Program p;
  auto gloo = options(10, "gloo");
  gloo.fixAnchor = 12;
  auto nccl = options(20, "nccl");
  nccl.optionsVar = "opts";
  nccl.optionsAccess = ".";
  auto unnamed = options(30, "nccl");
  p.facts.processGroups = {gloo, nccl, unnamed};
  auto fs = initTimeoutFindings(p);
  REQUIRE(fs.size() == 3);
  CHECK(fs[0].message ==
        "process group options 'ProcessGroupGloo::Options' are created without an explicit "
        "timeout; a hung collective waits the backend default (30 min for Gloo) before "
        "failing; pass a timeout");
  REQUIRE(fs[0].fixes.size() == 1);
  CHECK(fs[0].fixes[0].kind == FixKind::InsertTimeoutArg);
  CHECK(fs[0].fixes[0].anchor == 12);
  CHECK(has(fs[1].message, "set 'opts.timeout = ...' before creating the group"));
  CHECK(fs[1].fixes.empty());
  // Not stored in a named variable: the message still says what to set.
  CHECK(has(fs[2].message, "set 'opts->timeout = ...' before creating the group"));
}

TEST_CASE("init-timeout: one position is reported once (template instantiations)",
          "[facts][init-timeout]") {
  Program p;
  p.facts.processGroups = {glooGroup(10), glooGroup(10)};
  CHECK(initTimeoutFindings(p).size() == 1);
}

TEST_CASE("init-timeout: Python init calls", "[facts][init-timeout]") {
  Program p;
  p.facts.language = SourceLanguage::Python;
  ProcessGroupCreation init;
  init.kind = ProcessGroupCreation::Kind::Init;
  init.loc = 3;
  init.api = "init_process_group";
  init.backend = "nccl";
  init.fixAnchor = 4;
  ProcessGroupCreation withTimeout = init;
  withTimeout.loc = 8;
  withTimeout.timeoutGiven = true;
  ProcessGroupCreation unknownBackend = init;
  unknownBackend.loc = 9;
  unknownBackend.api = "new_group";
  unknownBackend.backend = "";
  unknownBackend.fixAnchor = 0;
  p.facts.processGroups = {init, withTimeout, unknownBackend};
  auto fs = initTimeoutFindings(p);
  REQUIRE(fs.size() == 2);
  CHECK(fs[0].loc == 3);
  CHECK(has(fs[0].message, "'init_process_group' without an explicit timeout"));
  REQUIRE(fs[0].fixes.size() == 1);
  CHECK(fs[0].fixes[0].kind == FixKind::InsertTimeoutArg);
  CHECK(fs[1].loc == 9);
  // The backend unknown: no parenthesis that says nothing.
  CHECK(has(fs[1].message, "a hung collective waits the backend's default timeout before failing"));
  CHECK_FALSE(has(fs[1].message, "("));
  CHECK(fs[1].fixes.empty());
}

// --- ddp-async-error-handling ---------------------------------------------------

TEST_CASE("async: an NCCL group on LibTorch 1.13 without the variable", "[facts][async]") {
  Program p;
  exactTorch(p, 1, 13);
  p.facts.processGroups = {options(5, "nccl"), ncclGroup(10), ncclGroup(20)};
  auto fs = asyncErrorHandlingFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].rule == "ddp-async-error-handling");
  CHECK(fs[0].loc == 10); // the first group, not its options
  CHECK(has(fs[0].message, "NCCL process group 'ProcessGroupNCCL' is created with async error "
                           "handling off: LibTorch 1.13 reads NCCL_ASYNC_ERROR_HANDLING"));
  CHECK(has(fs[0].message, ", off, and the program never sets it"));
  CHECK(has(fs[0].message, "call setenv(\"NCCL_ASYNC_ERROR_HANDLING\", \"1\", 1) before creating the group"));
}

TEST_CASE("async: setting the variable (any value but 0, or an unknown name) enables it",
          "[facts][async]") {
  Program p;
  exactTorch(p, 1, 13);
  p.facts.processGroups = {ncclGroup(10)};
  SECTION("value 1") { p.facts.env = {setEnv("NCCL_ASYNC_ERROR_HANDLING", "1", 2)}; }
  SECTION("value unknown") {
    auto e = setEnv("NCCL_ASYNC_ERROR_HANDLING", "", 2);
    e.valueKnown = false;
    p.facts.env = {e};
  }
  SECTION("a computed name") {
    EnvSetting e;
    e.isSet = true;
    e.nameKnown = false;
    p.facts.env = {e};
  }
  SECTION("set in the launch file") {
    auto e = setEnv("NCCL_ASYNC_ERROR_HANDLING", "1", 2);
    e.where = EnvSetting::Where::LaunchFile;
    p.facts.env = {e};
  }
  CHECK(asyncErrorHandlingFindings(p).empty());
}

TEST_CASE("async: a read is not a setting; 0 turns it off", "[facts][async]") {
  Program p;
  exactTorch(p, 1, 13);
  p.facts.processGroups = {ncclGroup(10)};
  SECTION("read only") {
    auto e = setEnv("NCCL_ASYNC_ERROR_HANDLING", "", 2);
    e.isSet = false;
    e.valueKnown = false;
    e.nameLoc = 0; // a read through a constant
    p.facts.env = {e};
    REQUIRE(asyncErrorHandlingFindings(p).size() == 1);
  }
  SECTION("set to 0 on a version where it is on by default") {
    exactTorch(p, 2, 4);
    p.facts.env = {setEnv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0", 2)};
    auto fs = asyncErrorHandlingFindings(p);
    REQUIRE(fs.size() == 1);
    CHECK(has(fs[0].message, "LibTorch 2.4 reads TORCH_NCCL_ASYNC_ERROR_HANDLING"));
    CHECK(has(fs[0].message, ", and the program sets it to 0"));
  }
}

TEST_CASE("async: on by default from 2.2; the deprecated name is renamed", "[facts][async]") {
  Program p;
  exactTorch(p, 2, 2);
  p.facts.processGroups = {ncclGroup(10)};
  CHECK(asyncErrorHandlingFindings(p).empty());
  p.facts.env = {setEnv("NCCL_ASYNC_ERROR_HANDLING", "1", 2)};
  auto fs = asyncErrorHandlingFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 3); // the literal
  CHECK(fs[0].message ==
        "'NCCL_ASYNC_ERROR_HANDLING' is deprecated since LibTorch 2.2; use "
        "'TORCH_NCCL_ASYNC_ERROR_HANDLING'");
  REQUIRE(fs[0].fixes.size() == 1);
  CHECK(fs[0].fixes[0].kind == FixKind::RenameEnvVar);
  CHECK(fs[0].fixes[0].text == "TORCH_NCCL_ASYNC_ERROR_HANDLING");
  CHECK(fs[0].fixes[0].oldText == "NCCL_ASYNC_ERROR_HANDLING");
}

TEST_CASE("async: deprecated names are reported once per literal, only in program code",
          "[facts][async]") {
  Program p;
  exactTorch(p, 2, 3);
  auto a = setEnv("NCCL_ASYNC_ERROR_HANDLING", "1", 2);
  auto b = a; // an instantiation again
  auto unfixable = setEnv("NCCL_ASYNC_ERROR_HANDLING", "1", 6);
  unfixable.renameFixable = false;
  auto launch = setEnv("NCCL_ASYNC_ERROR_HANDLING", "1", 9);
  launch.where = EnvSetting::Where::LaunchFile;
  auto viaConstant = setEnv("NCCL_ASYNC_ERROR_HANDLING", "1", 12);
  viaConstant.nameLoc = 0;
  p.facts.env = {a, b, unfixable, launch, viaConstant};
  auto fs = asyncErrorHandlingFindings(p);
  REQUIRE(fs.size() == 2);
  CHECK(fs[0].fixes.size() == 1);
  CHECK(fs[1].fixes.empty());
  // Before 2.2 the old name is the one read: no deprecation.
  exactTorch(p, 2, 1);
  CHECK(asyncErrorHandlingFindings(p).empty());
}

TEST_CASE("async: inferred and unknown versions are worded as such", "[facts][async]") {
  Program p;
  p.facts.processGroups = {ncclGroup(10)};
  p.facts.versions.torchBasis = TargetVersions::Basis::AtMost;
  p.facts.versions.torchMajor = 1;
  p.facts.versions.torchMinor = 13;
  p.facts.versions.torchEvidence = "the headers declare no c10d::Backend";
  auto fs = asyncErrorHandlingFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(has(fs[0].message,
            "LibTorch 1.13 or older (the headers declare no c10d::Backend) reads NCCL_ASYNC_ERROR_HANDLING"));
  p.facts.versions.torchBasis = TargetVersions::Basis::AtLeast;
  p.facts.versions.torchMajor = 2;
  p.facts.versions.torchMinor = 0;
  p.facts.versions.torchEvidence = "the headers declare c10d::Backend";
  CHECK(targetTorchVersionText(p.facts.versions, builtinAsyncErrorFacts()) ==
        "LibTorch 2.0 or newer (the headers declare c10d::Backend)");
  CHECK(asyncErrorHandlingFindings(p).empty()); // 2.0 turns it on by default
  p.facts.versions = TargetVersions{};
  CHECK(targetTorchVersion(p.facts.versions, builtinAsyncErrorFacts()) ==
        builtinAsyncErrorFacts().assumedVersion);
  CHECK(has(targetTorchVersionText(p.facts.versions, builtinAsyncErrorFacts()), "assumed"));
}

TEST_CASE("async: no NCCL group, no finding; Gloo does not count", "[facts][async]") {
  Program p;
  exactTorch(p, 1, 13);
  p.facts.processGroups = {glooGroup(10)};
  CHECK(asyncErrorHandlingFindings(p).empty());
}

TEST_CASE("async: Python words the fix in Python", "[facts][async]") {
  Program p;
  p.facts.language = SourceLanguage::Python;
  p.facts.versions.torchProduct = "PyTorch";
  exactTorch(p, 1, 13);
  ProcessGroupCreation init;
  init.kind = ProcessGroupCreation::Kind::Init;
  init.loc = 4;
  init.api = "init_process_group";
  init.backend = "nccl";
  p.facts.processGroups = {init};
  auto fs = asyncErrorHandlingFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(has(fs[0].message, "PyTorch 1.13 reads NCCL_ASYNC_ERROR_HANDLING"));
  CHECK(has(fs[0].message, "set os.environ[\"NCCL_ASYNC_ERROR_HANDLING\"] = \"1\""));
  exactTorch(p, 2, 1); // on by default
  CHECK(asyncErrorHandlingFindings(p).empty());
}

// --- ddp-dataloader-recreated ---------------------------------------------------

TEST_CASE("dataloader-recreated: a loader built in a loop", "[facts][dataloader]") {
  Program p;
  auto dl = loader(10);
  dl.loops = {loopAt(5)};
  p.facts.dataLoaders = {dl, loader(20)};
  auto fs = dataLoaderRecreatedFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  // No workers (LibTorch's default): a note that says what it does redo.
  CHECK(fs[0].asNote);
  CHECK(fs[0].message ==
        "data loader built by 'make_data_loader' inside a loop; it has no worker threads, but "
        "its sampler, shuffling and batching are set up again every iteration; build the loader "
        "once before the loop and iterate it on every pass");
}

TEST_CASE("dataloader-recreated: with workers a warning, and epochs only where there are epochs",
          "[facts][dataloader]") {
  Program p;
  auto dl = loader(10);
  dl.numWorkers = DataLoaderCreation::Workers::Positive;
  LoopInfo epochs = loopAt(5);
  epochs.perEpoch = true;
  dl.loops = {epochs};
  p.facts.dataLoaders = {dl};
  auto fs = dataLoaderRecreatedFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK_FALSE(fs[0].asNote);
  CHECK(has(fs[0].message, "its worker threads are started and joined every epoch"));
  CHECK(has(fs[0].message, "leaks memory and IPC handles"));
  CHECK(has(fs[0].message, "iterate it every epoch"));
  p.facts.dataLoaders[0].loops[0].perEpoch = false;
  fs = dataLoaderRecreatedFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK_FALSE(has(fs[0].message, "epoch"));
}

TEST_CASE("dataloader-recreated: one loader per input or per container element is fine",
          "[facts][dataloader]") {
  Program p;
  auto perInput = loader(10);
  perInput.loops = {loopAt(5, /*datasetDepends=*/true)};
  auto stored = loader(20);
  stored.loops = {loopAt(15)};
  stored.storedInContainer = true;
  p.facts.dataLoaders = {perInput, stored};
  CHECK(dataLoaderRecreatedFindings(p).empty());
}

TEST_CASE("dataloader-recreated: per input inside the epoch loop is still per epoch",
          "[facts][dataloader]") {
  Program p;
  auto dl = loader(10);
  dl.loops = {loopAt(6, /*datasetDepends=*/true), loopAt(5)};
  p.facts.dataLoaders = {dl};
  CHECK(dataLoaderRecreatedFindings(p).size() == 1);
}

TEST_CASE("dataloader-recreated: helpers and helpers of helpers called in a loop",
          "[facts][dataloader]") {
  Program p;
  p.facts.dataLoaders = {loader(10, "make_loader")};
  p.facts.calls = {
      helperCall(20, "build", "make_loader", {}),        // build() calls the helper once
      helperCall(30, "main", "build", {loopAt(25)}),     // and is called per epoch
      helperCall(40, "main", "make_loader", {}),         // outside a loop: fine
      helperCall(50, "main", "unrelated", {loopAt(45)}), // not a loader helper
  };
  auto fs = dataLoaderRecreatedFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 30);
  CHECK(has(fs[0].message, "'build' builds a data loader (via 'make_data_loader') and is called "
                           "inside a loop"));
}

TEST_CASE("dataloader-recreated: a helper that builds in its own loop is reported there only",
          "[facts][dataloader]") {
  Program p;
  auto dl = loader(10, "helper");
  dl.loops = {loopAt(8)};
  p.facts.dataLoaders = {dl};
  p.facts.calls = {helperCall(30, "main", "helper", {loopAt(25)})};
  auto fs = dataLoaderRecreatedFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
}

TEST_CASE("dataloader-recreated: a helper call stored in a container, and the dataset "
          "argument does not exempt helper calls",
          "[facts][dataloader]") {
  Program p;
  p.facts.dataLoaders = {loader(10, "make_loader")};
  auto stored = helperCall(20, "main", "make_loader", {loopAt(15)});
  stored.storedInContainer = true;
  auto perInput = helperCall(30, "main", "make_loader", {loopAt(25, /*datasetDepends=*/true)});
  p.facts.calls = {stored, perInput};
  auto fs = dataLoaderRecreatedFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 30);
}

// --- ddp-dataloader-options -----------------------------------------------------

namespace {
DataLoaderCreation pyLoader(Loc loc, DataLoaderCreation::Workers workers, std::string text) {
  DataLoaderCreation dl;
  dl.loc = loc;
  dl.api = "DataLoader";
  dl.function = "main";
  dl.numWorkers = workers;
  dl.numWorkersText = std::move(text);
  dl.argsEnd = loc + 5;
  return dl;
}
} // namespace

TEST_CASE("dataloader-options: workers without persistent_workers", "[facts][dataloader-options]") {
  Program p;
  p.facts.language = SourceLanguage::Python;
  p.facts.dataLoaders = {pyLoader(10, DataLoaderCreation::Workers::Positive, "4")};
  auto fs = dataLoaderOptionsFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].rule == "ddp-dataloader-options");
  CHECK(has(fs[0].message, "num_workers=4 does not pass persistent_workers=True"));
  CHECK(!has(fs[0].message, "pin_memory")); // not a CUDA program
  REQUIRE(fs[0].fixes.size() == 1);
  CHECK(fs[0].fixes[0].kind == FixKind::InsertPersistentWorkers);
  CHECK(fs[0].fixes[0].anchor == 15);
}

TEST_CASE("dataloader-options: both missing on CUDA is one finding with two fixes",
          "[facts][dataloader-options]") {
  Program p;
  p.facts.usesCuda = true;
  auto dl = pyLoader(10, DataLoaderCreation::Workers::Unknown, "args.workers");
  dl.pinMemory = ArgState::False;
  dl.pinMemoryLoc = 12;
  p.facts.dataLoaders = {dl};
  auto fs = dataLoaderOptionsFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(has(fs[0].message, "num_workers=args.workers does not pass persistent_workers=True"));
  CHECK(has(fs[0].message, "sets pin_memory=False although the program trains on CUDA"));
  CHECK(has(fs[0].message, "pass persistent_workers=True and pin_memory=True"));
  REQUIRE(fs[0].fixes.size() == 2);
  CHECK(fs[0].fixes[0].kind == FixKind::InsertPersistentWorkers);
  CHECK(fs[0].fixes[1].kind == FixKind::SetPinMemoryTrue);
  CHECK(fs[0].fixes[1].anchor == 12);
}

TEST_CASE("dataloader-options: only pin_memory missing", "[facts][dataloader-options]") {
  Program p;
  p.facts.usesCuda = true;
  auto dl = pyLoader(10, DataLoaderCreation::Workers::Positive, "8");
  dl.persistentWorkers = ArgState::True;
  p.facts.dataLoaders = {dl};
  auto fs = dataLoaderOptionsFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(!has(fs[0].message, "persistent_workers"));
  CHECK(has(fs[0].message, "does not pass pin_memory=True"));
  REQUIRE(fs[0].fixes.size() == 1);
  CHECK(fs[0].fixes[0].kind == FixKind::InsertPinMemory);
}

TEST_CASE("dataloader-options: hard negatives", "[facts][dataloader-options]") {
  Program p;
  p.facts.usesCuda = true;
  // No workers: nothing to keep alive, and pinning is asked only with workers.
  auto none = pyLoader(10, DataLoaderCreation::Workers::Absent, "");
  auto zero = pyLoader(20, DataLoaderCreation::Workers::Zero, "0");
  // Both set.
  auto good = pyLoader(30, DataLoaderCreation::Workers::Positive, "4");
  good.persistentWorkers = ArgState::True;
  good.pinMemory = ArgState::True;
  // Values we cannot read: not flagged.
  auto unknown = pyLoader(40, DataLoaderCreation::Workers::Positive, "4");
  unknown.persistentWorkers = ArgState::Unknown;
  unknown.pinMemory = ArgState::Unknown;
  p.facts.dataLoaders = {none, zero, good, unknown};
  CHECK(dataLoaderOptionsFindings(p).empty());
  // Without CUDA, pin_memory=False is fine.
  p.facts.usesCuda = false;
  auto cpu = pyLoader(50, DataLoaderCreation::Workers::Positive, "2");
  cpu.persistentWorkers = ArgState::True;
  cpu.pinMemory = ArgState::False;
  p.facts.dataLoaders = {cpu};
  CHECK(dataLoaderOptionsFindings(p).empty());
}

TEST_CASE("dataloader-options: persistent_workers=False is replaced, not duplicated",
          "[facts][dataloader-options]") {
  Program p;
  auto dl = pyLoader(10, DataLoaderCreation::Workers::Positive, "4");
  dl.persistentWorkers = ArgState::False;
  dl.persistentWorkersLoc = 13;
  p.facts.dataLoaders = {dl};
  auto fs = dataLoaderOptionsFindings(p);
  REQUIRE(fs.size() == 1);
  CHECK(has(fs[0].message, "sets persistent_workers=False"));
  REQUIRE(fs[0].fixes.size() == 1);
  CHECK(fs[0].fixes[0].kind == FixKind::SetPersistentWorkersTrue);
  CHECK(fs[0].fixes[0].anchor == 13);
}

// --- ddp-forward-shape-branch -----------------------------------------------------

namespace {
ForwardArm arm(std::vector<std::string> modules, std::vector<std::string> shapes = {},
               bool returns = false) {
  ForwardArm a;
  a.own.modules = modules;
  a.own.shapes = shapes;
  a.effective = a.own;
  a.returns = returns;
  return a;
}

ForwardBranch branch(Loc loc, std::vector<ForwardArm> arms, int parent = -1) {
  ForwardBranch b;
  b.loc = loc;
  b.arms = std::move(arms);
  b.parent = parent;
  return b;
}

Program forwardProgram(std::vector<ForwardBranch> branches) {
  Program p;
  ForwardMethod fm;
  fm.loc = 1;
  fm.className = "Net";
  fm.branches = std::move(branches);
  p.facts.forwards = {fm};
  return p;
}
} // namespace

TEST_CASE("forward: a shape branch that skips a submodule", "[facts][forward]") {
  auto b = branch(10, {arm({"head", "fc"}), arm({"fc"})});
  b.onShape = true;
  b.onValues = true; // shape wins in the message
  auto fs = forwardShapeBranchFindings(forwardProgram({b}));
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].rule == "ddp-forward-shape-branch");
  CHECK(fs[0].message ==
        "branch on the input's shape in forward() runs submodule 'head' on some ranks only; "
        "ranks that skip it produce no gradient for its parameters and the gradient allreduce "
        "mismatches; run every submodule on every rank and mask the result");
}

TEST_CASE("forward: parameters, values and the rank", "[facts][forward]") {
  ForwardArm usesW;
  usesW.own.params = {"weight"};
  usesW.effective = usesW.own;
  auto b = branch(10, {usesW, ForwardArm{}});
  b.onValues = true;
  auto r = branch(20, {arm({"aux"}), arm({})});
  r.onRank = true;
  auto fs = forwardShapeBranchFindings(forwardProgram({b, r}));
  REQUIRE(fs.size() == 2);
  CHECK(has(fs[0].message, "branch on the input's values in forward() uses parameter 'weight'"));
  CHECK(has(fs[1].message, "branch on the rank in forward() runs submodule 'aux'"));
}

TEST_CASE("forward: shapes differ only when both arms reshape or one returns", "[facts][forward]") {
  // if (x.dim() == 3) x = x.unsqueeze(0);  -- normalises: fine
  auto normalise = branch(10, {arm({}, {"unsqueeze(0,)"}), arm({})});
  normalise.onShape = true;
  CHECK(forwardShapeBranchFindings(forwardProgram({normalise})).empty());
  // Both arms reshape differently.
  auto both = branch(20, {arm({}, {"view(-1,4,)"}), arm({}, {"view(-1,8,)"})});
  both.onShape = true;
  auto fs = forwardShapeBranchFindings(forwardProgram({both}));
  REQUIRE(fs.size() == 1);
  CHECK(has(fs[0].message, "produces different shapes on different ranks"));
  // An early return with a different shape.
  auto early = branch(30, {arm({}, {"flatten(1,)"}, /*returns=*/true), arm({})});
  early.onShape = true;
  CHECK(forwardShapeBranchFindings(forwardProgram({early})).size() == 1);
  // Same reshapes on both arms (a multiset: counts matter).
  auto same = branch(40, {arm({}, {"view(-1,)"}), arm({}, {"view(-1,)"})});
  same.onShape = true;
  CHECK(forwardShapeBranchFindings(forwardProgram({same})).empty());
  auto twice = branch(50, {arm({}, {"view(-1,)", "view(-1,)"}), arm({}, {"view(-1,)"})});
  twice.onShape = true;
  CHECK(forwardShapeBranchFindings(forwardProgram({twice})).size() == 1);
}

TEST_CASE("forward: hard negatives", "[facts][forward]") {
  // Arms differ, but the condition is a uniform flag (training mode).
  auto flag = branch(10, {arm({"dropout_head"}), arm({})});
  // A throwing arm is an error path.
  auto guard = branch(20, {arm({"fc"}), arm({})});
  guard.onShape = true;
  guard.arms[1].throws = true;
  // Same submodules on both arms.
  auto same = branch(30, {arm({"fc"}), arm({"fc", "fc"})});
  same.onShape = true;
  // One arm only (a switch with a default and one segment).
  auto one = branch(40, {arm({"fc"})});
  one.onRank = true;
  CHECK(forwardShapeBranchFindings(forwardProgram({flag, guard, same, one})).empty());
}

TEST_CASE("forward: a branch inside a reported branch is not reported again", "[facts][forward]") {
  auto outer = branch(10, {arm({"a"}), arm({})});
  outer.onShape = true;
  auto inner = branch(12, {arm({"b"}), arm({})}, /*parent=*/0);
  inner.onShape = true;
  auto innermost = branch(14, {arm({"c"}), arm({})}, /*parent=*/1);
  innermost.onShape = true;
  auto fs = forwardShapeBranchFindings(forwardProgram({outer, inner, innermost}));
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 10);
  // A parent that is not reported (a uniform condition) leaves its children judged.
  outer.onShape = false;
  fs = forwardShapeBranchFindings(forwardProgram({outer, inner, innermost}));
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].loc == 12);
}

TEST_CASE("forward: the first arm's module is named", "[facts][forward]") {
  auto b = branch(10, {arm({"zeta", "alpha", "shared"}), arm({"shared", "beta"})});
  b.onShape = true;
  auto fs = forwardShapeBranchFindings(forwardProgram({b}));
  REQUIRE(fs.size() == 1);
  CHECK(has(fs[0].message, "runs submodule 'alpha'"));
}
