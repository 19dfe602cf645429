#include "ddp_guardrails/tracer.hpp"

#include <ATen/ATen.h>

namespace ddpg {

namespace {

thread_local const char* tlsTag = nullptr;

void shapesOf(const std::vector<at::Tensor>& ts, CollRecord& r) {
  // Written straight into the fixed buffer: no heap traffic per collective.
  char* p = r.shapes;
  char* end = r.shapes + kShapeLen - 1;
  int64_t numel = 0;
  for (size_t i = 0; i < ts.size() && p < end; ++i) {
    if (i) *p++ = ';';
    if (p < end) *p++ = '[';
    auto sizes = ts[i].sizes();
    for (size_t d = 0; d < sizes.size() && p < end; ++d) {
      int n = snprintf(p, size_t(end - p), d ? ",%lld" : "%lld", (long long)sizes[d]);
      p += n > 0 ? (p + n < end ? n : end - p) : 0;
    }
    if (p < end) *p++ = ']';
    numel += ts[i].numel();
  }
  *p = '\0';
  r.numel = numel;
  const char* dt = ts.empty() ? "" : c10::toString(ts[0].scalar_type());
  copyStr(r.dtype, sizeof r.dtype, dt);
}

// Work returned to the caller: forwards everything and stamps the record
// when the caller learns the outcome.  The record may have been recycled by
// the ring when the caller waits very late; `seq_` guards against writing
// into a slot that belongs to a newer collective.
class TracedWork : public c10d::Work {
 public:
  TracedWork(c10::intrusive_ptr<c10d::Work> inner, RankSlot* slot, CollRecord* rec, int64_t seq)
      : c10d::Work(-1, c10d::OpType::UNKNOWN), inner_(std::move(inner)), slot_(slot), rec_(rec), seq_(seq) {}

  bool isCompleted() override {
    bool done = inner_->isCompleted();
    if (done) finish(inner_->isSuccess(), nullptr);
    return done;
  }
  bool isSuccess() const override { return inner_->isSuccess(); }
  std::exception_ptr exception() const override { return inner_->exception(); }
  int sourceRank() const override { return inner_->sourceRank(); }
  std::vector<at::Tensor> result() override { return inner_->result(); }
  void synchronize() override { inner_->synchronize(); }
  void abort() override { inner_->abort(); }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return inner_->getFuture(); }

  bool wait(std::chrono::milliseconds timeout) override {
    if (owned() && rec_->state.load() < uint8_t(RecState::Waiting))
      rec_->state.store(uint8_t(RecState::Waiting));
    slot_->progressNs.store(nowNs(), std::memory_order_relaxed);
    try {
      bool ok = inner_->wait(timeout);
      finish(true, nullptr);
      return ok;
    } catch (const std::exception& e) {
      finish(false, e.what());
      throw;
    }
  }

 private:
  bool owned() const { return rec_->seq.load(std::memory_order_acquire) == seq_; }
  void finish(bool ok, const char* what) {
    if (finished_) return;
    finished_ = true;
    int64_t t = nowNs();
    if (owned()) {
      rec_->tEnd.store(t);
      rec_->state.store(uint8_t(ok ? RecState::Completed : RecState::Failed));
    }
    slot_->progressNs.store(t, std::memory_order_relaxed);
    if (!ok) {
      RankRecorder r(slot_);
      std::string msg = std::string(opName(rec_->op)) + " #" + std::to_string(seq_) + " failed: " + (what ? what : "");
      r.setError(msg);
    }
  }

  c10::intrusive_ptr<c10d::Work> inner_;
  RankSlot* slot_;
  CollRecord* rec_;
  int64_t seq_;
  bool finished_ = false;
};

int8_t redOp(const c10d::ReduceOp& op) { return int8_t(op.op_); }

}  // namespace

TracedProcessGroup::TracedProcessGroup(c10::intrusive_ptr<ddpg::PGBase> inner, RankSlot* slot)
    : ddpg::PGBase(inner->getRank(), inner->getSize()), inner_(std::move(inner)), slot_(slot) {
  if (!slot_) {
    ownSlot_ = std::make_unique<RankSlot>();
    slot_ = ownSlot_.get();
  }
}

void TracedProcessGroup::setTag(const char* tag) { tlsTag = tag; }
TracedProcessGroup::TagScope::TagScope(const char* tag) : prev_(tlsTag) { tlsTag = tag; }
TracedProcessGroup::TagScope::~TagScope() { tlsTag = prev_; }

const std::string TracedProcessGroup::getBackendName() const { return inner_->getBackendName(); }

template <class Issue>
c10::intrusive_ptr<c10d::Work> TracedProcessGroup::trace(Op op, const std::vector<at::Tensor>& ts,
                                                         int root, int reduceOp, Issue&& issue) {
  int64_t seq = slot_->nextSeq.fetch_add(1, std::memory_order_relaxed);
  CollRecord& r = slot_->rec[size_t(seq) % kMaxRecords];
  r.seq.store(-1, std::memory_order_relaxed);
  int64_t t0 = nowNs();
  r.op = op;
  r.root = int16_t(root);
  r.reduceOp = int8_t(reduceOp);
  shapesOf(ts, r);
  copyStr(r.tag, kTagLen, tlsTag ? tlsTag : "");
  r.tEnqueue.store(t0, std::memory_order_relaxed);
  r.tIssued.store(0, std::memory_order_relaxed);
  r.tEnd.store(0, std::memory_order_relaxed);
  r.state.store(uint8_t(RecState::Enqueued), std::memory_order_relaxed);
  // Publishing the sequence number last makes the record visible complete.
  r.seq.store(seq, std::memory_order_release);
  slot_->progressNs.store(t0, std::memory_order_relaxed);
  c10::intrusive_ptr<c10d::Work> w;
  try {
    w = issue();
  } catch (const std::exception& e) {
    r.tEnd.store(nowNs());
    r.state.store(uint8_t(RecState::Failed));
    RankRecorder(slot_).setError(std::string(opName(op)) + " #" + std::to_string(seq) + " failed: " + e.what());
    throw;
  }
  r.tIssued.store(nowNs(), std::memory_order_relaxed);
  r.state.store(uint8_t(RecState::Issued), std::memory_order_relaxed);
  return c10::make_intrusive<TracedWork>(std::move(w), slot_, &r, seq);
}

using W = c10::intrusive_ptr<c10d::Work>;

W TracedProcessGroup::broadcast(std::vector<at::Tensor>& t, const c10d::BroadcastOptions& o) {
  return trace(Op::Broadcast, t, int(o.rootRank), -1, [&] { return inner_->broadcast(t, o); });
}
W TracedProcessGroup::allreduce(std::vector<at::Tensor>& t, const c10d::AllreduceOptions& o) {
  return trace(Op::Allreduce, t, -1, redOp(o.reduceOp), [&] { return inner_->allreduce(t, o); });
}
W TracedProcessGroup::allreduce_coalesced(std::vector<at::Tensor>& t, const c10d::AllreduceCoalescedOptions& o) {
  return trace(Op::AllreduceCoalesced, t, -1, redOp(o.reduceOp), [&] { return inner_->allreduce_coalesced(t, o); });
}
W TracedProcessGroup::reduce(std::vector<at::Tensor>& t, const c10d::ReduceOptions& o) {
  return trace(Op::Reduce, t, int(o.rootRank), redOp(o.reduceOp), [&] { return inner_->reduce(t, o); });
}
W TracedProcessGroup::allgather(std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in,
                                const c10d::AllgatherOptions& o) {
  return trace(Op::Allgather, in, -1, -1, [&] { return inner_->allgather(out, in, o); });
}
W TracedProcessGroup::_allgather_base(at::Tensor& out, at::Tensor& in, const c10d::AllgatherOptions& o) {
  return trace(Op::AllgatherBase, {in}, -1, -1, [&] { return inner_->_allgather_base(out, in, o); });
}
W TracedProcessGroup::allgather_coalesced(std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in,
                                          const c10d::AllgatherOptions& o) {
  return trace(Op::AllgatherCoalesced, in, -1, -1, [&] { return inner_->allgather_coalesced(out, in, o); });
}
W TracedProcessGroup::gather(std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in,
                             const c10d::GatherOptions& o) {
  return trace(Op::Gather, in, int(o.rootRank), -1, [&] { return inner_->gather(out, in, o); });
}
W TracedProcessGroup::scatter(std::vector<at::Tensor>& out, std::vector<std::vector<at::Tensor>>& in,
                              const c10d::ScatterOptions& o) {
  return trace(Op::Scatter, out, int(o.rootRank), -1, [&] { return inner_->scatter(out, in, o); });
}
W TracedProcessGroup::reduce_scatter(std::vector<at::Tensor>& out, std::vector<std::vector<at::Tensor>>& in,
                                     const c10d::ReduceScatterOptions& o) {
  return trace(Op::ReduceScatter, out, -1, redOp(o.reduceOp), [&] { return inner_->reduce_scatter(out, in, o); });
}
W TracedProcessGroup::_reduce_scatter_base(at::Tensor& out, at::Tensor& in, const c10d::ReduceScatterOptions& o) {
  return trace(Op::ReduceScatterBase, {in}, -1, redOp(o.reduceOp),
               [&] { return inner_->_reduce_scatter_base(out, in, o); });
}
W TracedProcessGroup::alltoall_base(at::Tensor& out, at::Tensor& in, std::vector<int64_t>& os,
                                    std::vector<int64_t>& is, const c10d::AllToAllOptions& o) {
  return trace(Op::AlltoallBase, {in}, -1, -1, [&] { return inner_->alltoall_base(out, in, os, is, o); });
}
W TracedProcessGroup::alltoall(std::vector<at::Tensor>& out, std::vector<at::Tensor>& in,
                               const c10d::AllToAllOptions& o) {
  return trace(Op::Alltoall, in, -1, -1, [&] { return inner_->alltoall(out, in, o); });
}
W TracedProcessGroup::send(std::vector<at::Tensor>& t, int dst, int tag) {
  return trace(Op::Send, t, dst, -1, [&] { return inner_->send(t, dst, tag); });
}
W TracedProcessGroup::recv(std::vector<at::Tensor>& t, int src, int tag) {
  return trace(Op::Recv, t, src, -1, [&] { return inner_->recv(t, src, tag); });
}
W TracedProcessGroup::recvAnysource(std::vector<at::Tensor>& t, int tag) {
  return trace(Op::RecvAnysource, t, -1, -1, [&] { return inner_->recvAnysource(t, tag); });
}
W TracedProcessGroup::barrier(const c10d::BarrierOptions& o) {
  return trace(Op::Barrier, {}, -1, -1, [&] { return inner_->barrier(o); });
}

}  // namespace ddpg
