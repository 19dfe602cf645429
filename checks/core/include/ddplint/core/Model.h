// The program model: what a language frontend (checks/clang-frontend for C and
// C++, checks/python-frontend for Python) tells the core about one
// translation unit or module.  Structured, small, and free of any frontend's
// AST types: source positions are opaque handles the frontend maps back.
#pragma once

#include "ddplint/core/Facts.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ddplint::core {

// An opaque source position; 0 means "none".  The frontend owns the mapping.
using Loc = std::uint32_t;

// How a value may differ across ranks.  Ordered: joining two takes the max.
enum class Dep : std::uint8_t {
  Uniform, // the same on every rank (constants, world size, agreed by a collective)
  Rank,    // derived from the process rank
  Local,   // derived from rank-local data: a batch, a local loss, a clock, a file check
};

inline Dep join(Dep a, Dep b) { return a < b ? b : a; }

enum class CmpOp : std::uint8_t { EQ, NE, LT, LE, GT, GE };

// `a op b` for concrete values (a rank against a literal).
inline bool compare(CmpOp op, std::int64_t a, std::int64_t b) {
  switch (op) {
  case CmpOp::EQ: return a == b;
  case CmpOp::NE: return a != b;
  case CmpOp::LT: return a < b;
  case CmpOp::LE: return a <= b;
  case CmpOp::GT: return a > b;
  case CmpOp::GE: return a >= b;
  }
  return false;
}

// A branch condition as the core reasons about it.
struct Cond {
  enum class Kind : std::uint8_t {
    Const,   // a known truth value
    RankCmp, // (rank [% mod]) op value: evaluated for concrete ranks
    Atom,    // an unknown boolean; `key` identifies it across uses, `dep` says how it varies
    Not,
    And,
    Or,
  };
  Kind kind = Kind::Const;
  bool constValue = true;
  CmpOp op = CmpOp::EQ;
  std::int64_t value = 0;
  std::int64_t mod = 0; // 0: no modulus
  std::string key;
  Dep dep = Dep::Uniform;
  // Atom: it tests whether a file exists (`!exists(path)`): a write under it is
  // a create-once cache whose writer the surrounding ordering decides.
  bool probesFile = false;
  // Atom: it tests a call's status (`rc != ncclSuccess`, a check macro's
  // hidden test): a failure that can strike one rank alone.  An exit under it
  // is an error path, not a rank decision.
  bool errorCheck = false;
  // Atom: `p == rank` where `p` is a loop counter that sweeps 0..world size:
  // every rank takes it exactly once over the loop (serialised printing).
  bool sweep = false;
  // Atom: true on the node-local rank 0 only (`LOCAL_RANK == 0`,
  // `is_local_main_process`): one process per node passes, not one per job.
  bool localMain = false;
  // Atom: it reads only what the function is handed and never assigns (HF's
  // `synced_gpus`): every iteration of a loop in it decides alike.
  bool invariant = false;
  // Atom / RankCmp: the group whose rank it reads, when it reads one group's
  // (C/C++: the communicator holder `pipeline_para_` of `pipeline_para_.rank_`).
  std::string group;
  std::vector<Cond> kids;
  std::string text; // source spelling, for messages
  Loc loc = 0;      // where the condition is written

  static Cond constant(bool v);
  static Cond rankCmp(CmpOp op, std::int64_t value, std::int64_t mod = 0);
  static Cond atom(std::string key, Dep dep);
  static Cond negate(Cond inner);
  static Cond both(Cond a, Cond b);
  static Cond either(Cond a, Cond b);

  // The strongest dependence of any leaf.
  Dep dependence() const;
};

enum class EventKind : std::uint8_t {
  Collective,      // every rank must issue it, in the same order
  Barrier,         // a collective that only synchronises
  PointToPoint,    // send/recv: rank-conditional by design
  CheckpointWrite, // torch::save and friends
  FileWrite,       // any other file output
  // A log: a file opened for appending, or one whose name says it is a log.
  // Nobody reads it during the run and a line takes no time to write, so no
  // rank can read it half-written or time out waiting for it: only the
  // literal barrier policy (BarrierAroundEveryWrite) asks for barriers round it.
  LogWrite,
  // The world's rendezvous (Python's init_process_group): no rank leaves it
  // before every rank has come, so it orders what rank 0 did before it; but
  // it is no collective of a group the ranks compare (ddp-rank0-io-barrier
  // alone reads it).
  Rendezvous,
  // A barrier on a group whose members are not known here (`dist.barrier(
  // group=cpu_group)`): no rank condition around it is compared (as
  // point-to-point), but the writer it follows did synchronise, so
  // ddp-rank0-io-barrier cannot say rank 0's file is unordered.
  GroupBarrier,
  // A read of a file by name (Python's `torch.load(path)`, `open(path)`):
  // ddp-rank0-io-barrier matches it with rank 0's write of the same name.
  FileRead,
};

enum class ExitKind : std::uint8_t { None, Return, Break, Continue, Throw, Terminate };

struct Node {
  enum class Kind : std::uint8_t {
    Block,  // kids run in order
    Event,  // a communication or IO event
    Call,   // a call of a function defined in the unit: its summary applies here
    If,     // kids[0] = then, kids[1] = else (both Blocks)
    Loop,   // kids[0] = body; `trip` says whether ranks may run different counts
    Exit,   // return / break / continue / throw / terminate
  };
  Kind kind = Kind::Block;
  Loc loc = 0;
  // Event
  EventKind event = EventKind::Collective;
  std::string name; // Event: operation ("allreduce"); Call: callee's display name
  // Event kinds CheckpointWrite/FileWrite/LogWrite: how the written path varies across ranks.
  Dep pathDep = Dep::Uniform;
  // File events: the file's name as the code spells it (`model_final.pth`
  // from `osp.join(respth, 'model_final.pth')`, or `args.save_path`), for
  // matching a read with a write; empty when not known.
  std::string pathKey;
  // Event / Call: the group the collective runs on, when the frontend knows it
  // (C/C++: the communicator holder handed to it, `tensor_para_`).  A test of
  // another group's rank does not split this one's members (see PathEngine).
  std::string group;
  // Event kind Collective: the collective whose place this one takes when that
  // is the next one the rank issues.  A DDP forward under no_grad broadcasts
  // the buffers and clears the flag that makes the next forward broadcast
  // them, so a rank-0-only evaluation forward followed by every rank's
  // training forward issues the same broadcasts on every rank.
  std::string standsInFor;
  // Event kind Collective: issued only if the program wraps the model in DDP,
  // which the module assumed of an importer it was built for (a helper's
  // `loss.backward()`); an importer that does not is not distributed by it.
  bool assumedDdp = false;
  // Call
  std::string callee; // key into Program::functions
  // If
  Cond cond;
  // Loop
  Dep trip = Dep::Uniform;
  std::string tripText; // what the trip count depends on, for messages
  Loc tripLoc = 0;
  bool perEpoch = false; // the frontend recognised an epoch loop
  // Exit
  ExitKind exit = ExitKind::None;
  std::vector<Node> kids;

  static Node block(std::vector<Node> kids = {});
  static Node makeEvent(EventKind k, std::string name, Loc loc);
  static Node makeCall(std::string callee, std::string display, Loc loc);
  static Node makeIf(Cond c, Node thenB, Node elseB, Loc loc);
  static Node makeLoop(Dep trip, std::string tripText, Loc tripLoc, Node body, Loc loc);
  static Node makeExit(ExitKind k, Loc loc);
};

struct Function {
  std::string key;  // unique in the program
  std::string name; // for messages
  Loc loc = 0;
  Node body;
  // It starts the ranks (`mp.spawn(worker, ...)`, or calls a function that
  // does): its own code runs once, in the launcher's process, not on every rank.
  // Also a script's top level that never joins a group (pyfe's settleProgram).
  bool launchesRanks = false;
  // A framework calls it inside its training loop, between steps (Lightning's
  // `on_train_batch_end`, `training_step`): the next step's collectives follow
  // it, though no caller in the program shows them.
  bool runsEveryStep = false;
  // It stands for a library's hook made at `loc` (detectron2's
  // PeriodicCheckpointer, which saves every period): its body is the
  // library's code, so a finding in it names the hook and offers no fix-it
  // (the barrier belongs in the loop that runs the hook, not here).
  bool libraryHook = false;
};

// True when exactly one of the representative ranks satisfies `c` and it is
// rank 0: the block guarded by `c` runs on the main process only.
bool isMainOnly(const Cond &c);

// True when a file name, or the name of what holds it, has a word that says
// it is a log (`train.log`, `log_path`, `logfile`, `os.path.join(d, "log")`)
// or a record of the run's settings (`args.yaml`, `config.yaml`,
// `params_file`, `optimizer_settings.txt`): nobody reads either during the
// run, so the frontends make such writes LogWrite events.  A name that also
// says checkpoint or weights (`config_ckpt.pt`) is not one.
bool namesRecordFile(std::string_view name);
// True when a file name has a word that says weights or a model's state
// (`ckpt`, `.pth`, `safetensors`, `optimizer_state`).
bool namesWeightsFile(std::string_view name);
// True when a file name says it keeps an evaluation's output
// (`predictions.json`, `eval_results.txt`, `metrics.json`) and not weights.
// The Python frontend reads such writes as records: a training script's
// mid-run evaluation dump (DETR's family) is for people (stop 33's
// reviewers); C and C++ keep them as files until their code shows the idiom.
bool namesEvaluationFile(std::string_view name);
// True when an expression's words say it holds evaluation results (DETR's
// `coco_evaluator.coco_eval["bbox"].eval`, `metrics`, `predictions`) and not
// a model's or an optimizer's state: saved, it is a record of the run.
bool namesEvaluationRecord(std::string_view expr);
// A condition's text that asks whether a number is finite (`math.isnan(loss)`,
// `not torch.isfinite(x).all()`, `std::isnan(r)`), by its words: not
// `model_info` or `inference`.
bool testsNonFinite(std::string_view text);

// Who runs a piece of code: every rank, one process per node (a node-local
// rank 0 test), or one rank or an unknown subset (nobody, for a file that
// only its creator writes).
enum class Reach : std::uint8_t { AllRanks = 0, PerNode = 1, Restricted = 2 };

// A call of one of the program's functions from another module of the
// project (the Python frontend reads the modules that import this one): who
// makes it.  A function called only from elsewhere, and there only by rank 0,
// is rank 0's code here too.
struct ExternalCall {
  std::string callee; // key in this program
  Reach reach = Reach::AllRanks;
  std::string caller; // the calling function (where the calls are read)
};

struct Program {
  std::vector<Function> functions;
  std::vector<ExternalCall> externalCalls;
  // The unit shows that it runs distributed: a process group or communicator,
  // a rank source, a collective, point-to-point, or a configured wrapper.
  // Rules about what "every rank" does (unguarded-save, rank0-io-barrier)
  // say nothing about a single-process program.
  bool distributed = true;
  // What the rules decided on facts read (Facts.h).
  Facts facts;
  const Function *find(const std::string &key) const;
};

} // namespace ddplint::core
