// RUN: %check_ddp_tidy %s ddp-init-timeout %t -- -- %mock_flags
// RUN: %check_ddp_tidy --prefix OPT %s ddp-init-timeout %t-opt -- \
// RUN:   -config="{CheckOptions: {ddp-init-timeout.DefaultTimeoutSeconds: 60}}" -- %mock_flags
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

using c10d::ProcessGroupGloo;

c10::intrusive_ptr<c10d::Store> makeStore();

// --- Gloo: Options::create() without a timeout ------------------------------

void glooDefaultOptions(int rank, int size) {
  auto store = makeStore();
  auto opts = c10d::ProcessGroupGloo::Options::create();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: process group options 'ProcessGroupGloo::Options' are created without an explicit timeout; a hung collective waits the backend default (30 min for Gloo) before failing; pass a timeout [ddp-init-timeout]
  // CHECK-FIXES: auto opts = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(1800));
  // OPT-MESSAGES: :[[@LINE-3]]:15: warning: process group options
  // OPT-FIXES: auto opts = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(60));
  opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  // The group gets the options: judged where the options are created.
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
}

void glooUsingDeclaration(int rank, int size) {
  auto pg = c10::make_intrusive<ProcessGroupGloo>(makeStore(), rank, size,
                                                  ProcessGroupGloo::Options::create());
  // CHECK-MESSAGES: :[[@LINE-1]]:51: warning: process group options 'ProcessGroupGloo::Options' are created without an explicit timeout
  // CHECK-FIXES: ProcessGroupGloo::Options::create(std::chrono::seconds(1800)));
  // OPT-MESSAGES: :[[@LINE-3]]:51: warning: process group options
}

// --- Gloo: the group built with its default options --------------------------

void glooNoOptions(int rank, int size) {
  auto store = makeStore();
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size);
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: process group 'ProcessGroupGloo' is created without an explicit timeout; a hung collective waits the backend default (30 min for Gloo) before failing; pass options with a timeout [ddp-init-timeout]
  // CHECK-FIXES: auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(1800)));
  // OPT-MESSAGES: :[[@LINE-3]]:13: warning: process group 'ProcessGroupGloo'
  // OPT-FIXES: auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(60)));
}

void glooSharedAndNew(int rank, int size) {
  auto store = makeStore();
  auto a = std::make_shared<c10d::ProcessGroupGloo>(store, rank, size);
  // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: process group 'ProcessGroupGloo' is created without an explicit timeout
  // OPT-MESSAGES: :[[@LINE-2]]:12: warning: process group 'ProcessGroupGloo'
  auto *b = new c10d::ProcessGroupGloo(store, rank, size);
  // CHECK-MESSAGES: :[[@LINE-1]]:17: warning: process group 'ProcessGroupGloo' is created without an explicit timeout
  // CHECK-FIXES: auto *b = new c10d::ProcessGroupGloo(store, rank, size, c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(1800)));
  // OPT-MESSAGES: :[[@LINE-3]]:17: warning: process group 'ProcessGroupGloo'
  delete b;
}

void glooDirectOptions() {
  auto opts = c10::make_intrusive<c10d::ProcessGroupGloo::Options>();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: process group options 'ProcessGroupGloo::Options' are created without an explicit timeout
  // CHECK-FIXES: auto opts = c10::make_intrusive<c10d::ProcessGroupGloo::Options>(std::chrono::seconds(1800));
  // OPT-MESSAGES: :[[@LINE-3]]:15: warning: process group options
}

// --- NCCL: the options have no timeout parameter ------------------------------

void ncclOptionsWithoutTimeout(int rank, int size) {
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  // CHECK-MESSAGES: :[[@LINE-1]]:15: warning: process group options 'ProcessGroupNCCL::Options' are created without an explicit timeout; a hung collective waits the backend default (10 to 30 min for NCCL, by version) before failing; set 'opts->timeout = ...' before creating the group [ddp-init-timeout]
  // OPT-MESSAGES: :[[@LINE-2]]:15: warning: process group options 'ProcessGroupNCCL::Options'
  opts->is_high_priority_stream = true;
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(makeStore(), rank, size, opts);
}

void ncclDefaultOptions(int rank, int size) {
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(makeStore(), rank, size);
  // CHECK-MESSAGES: :[[@LINE-1]]:13: warning: process group 'ProcessGroupNCCL' is created without an explicit timeout; a hung collective waits the backend default (10 to 30 min for NCCL, by version) before failing; pass options whose 'timeout' member is set [ddp-init-timeout]
  // OPT-MESSAGES: :[[@LINE-2]]:13: warning: process group 'ProcessGroupNCCL'
}

void ncclDirectOptions() {
  c10d::ProcessGroupNCCL::Options opts(true);
  // CHECK-MESSAGES: :[[@LINE-1]]:35: warning: process group options 'ProcessGroupNCCL::Options' are created without an explicit timeout; a hung collective waits the backend default (10 to 30 min for NCCL, by version) before failing; set 'opts.timeout = ...' before creating the group [ddp-init-timeout]
  // OPT-MESSAGES: :[[@LINE-2]]:35: warning: process group options 'ProcessGroupNCCL::Options'
}

// A generic factory: judged per instantiation, reported once, without a fix-it
// (the text is shared by every instantiation).
template <class PG>
c10::intrusive_ptr<c10d::ProcessGroup> makeAny(const c10::intrusive_ptr<c10d::Store> &s, int r, int n) {
  return c10::make_intrusive<PG>(s, r, n);
  // CHECK-MESSAGES: :[[@LINE-1]]:10: warning: process group 'ProcessGroupGloo' is created without an explicit timeout
  // OPT-MESSAGES: :[[@LINE-2]]:10: warning: process group 'ProcessGroupGloo'
}
void useMakeAny() {
  auto a = makeAny<c10d::ProcessGroupGloo>(makeStore(), 0, 2);
  auto b = makeAny<c10d::ProcessGroupGloo>(makeStore(), 1, 2);
}

// --- Negatives -------------------------------------------------------------------

void glooExplicitTimeout(int rank, int size) {
  auto opts = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(60));
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(makeStore(), rank, size, opts);
}

void glooTimeoutAssignedLater(int rank, int size) {
  auto opts = c10d::ProcessGroupGloo::Options::create();
  opts->timeout = std::chrono::milliseconds(5000);
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(makeStore(), rank, size, opts);
}

void ncclTimeoutAssigned(int rank, int size) {
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = std::chrono::seconds(120);
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(makeStore(), rank, size, opts);
}

void ncclDirectOptionsAssigned() {
  c10d::ProcessGroupNCCL::Options opts;
  opts.timeout = std::chrono::seconds(120);
}

// Options handed in by the caller: their timeout is the caller's business.
c10::intrusive_ptr<c10d::ProcessGroup>
groupFrom(c10::intrusive_ptr<c10d::ProcessGroupNCCL::Options> opts, int rank, int size) {
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(makeStore(), rank, size, opts);
}

struct Trainer {
  c10::intrusive_ptr<c10d::ProcessGroupGloo::Options> opts_;
  // The member gets its timeout in the same function.
  void init() {
    opts_ = c10d::ProcessGroupGloo::Options::create();
    opts_->timeout = std::chrono::seconds(30);
  }
};

// An unrelated `timeout` and an unrelated `create` are not process groups.
struct Session {
  std::chrono::milliseconds timeout{0};
  static Session create() { return {}; }
};
void unrelated() {
  Session s = Session::create();
  s.timeout = std::chrono::milliseconds(1);
}
