#include "batch_pieces.hpp"

#include <algorithm>
#include <map>

namespace redist {

RankPlan batch_skeleton(BatchParts &parts) {
  RankPlan out;
  // One skeleton peer per rank, the parts of its message in the order of the operations.
  const auto combine = [&](bool sending, std::vector<Peer> &peers,
                           std::vector<std::vector<BatchPart>> &lists) {
    std::map<int, std::vector<BatchPart>> by_rank;
    for (std::size_t k = 0; k < parts.ops.size(); ++k) {
      const RankPlan &plan = parts.ops[k].plan();
      const std::vector<Peer> &messages = sending ? plan.sends : plan.recvs;
      const auto es = static_cast<Index>(parts.ops[k].element_size());
      for (std::size_t i = 0; i < messages.size(); ++i) {
        by_rank[messages[i].rank].push_back({k, i, 0, messages[i].elements * es});
      }
    }
    for (auto &[rank, list] : by_rank) {
      Index offset = 0;
      for (BatchPart &part : list) {
        part.offset = offset;
        offset += part.bytes;
      }
      Peer peer;
      peer.rank = rank;
      peer.row_slot = static_cast<int>(lists.size());
      peer.elements = offset;
      peers.push_back(peer);
      lists.push_back(std::move(list));
    }
  };
  combine(true, out.sends, parts.sends);
  combine(false, out.recvs, parts.recvs);
  for (const Pieces &op : parts.ops) {
    out.rank = op.plan().rank;
    out.in_src = out.in_src || op.plan().in_src;
    out.in_dst = out.in_dst || op.plan().in_dst;
    out.self.elements += op.plan().self.elements * static_cast<Index>(op.element_size());
  }
  out.self.row_slot = -1;
  return out;
}

Pieces::Pieces(std::vector<Pieces> operations, BatchArrays arrays)
    : element_size_(1), lld_src_(0), lld_dst_(0), batch_(std::make_shared<BatchParts>()) {
  batch_->ops = std::move(operations);
  batch_->arrays = std::move(arrays);
  plan_ = batch_skeleton(*batch_);
}

std::span<const Pieces> Pieces::batch_operations() const {
  if (!batch_) {
    return {};
  }
  return batch_->ops;
}

void Pieces::set_batch_operations(const Operation *ops) {
  const BatchArrays &arrays = batch_->arrays;
  for (std::size_t k = 0; k < batch_->ops.size(); ++k) {
    batch_->ops[k].set_operation(ops == nullptr  ? nullptr
                                 : arrays.shared ? ops
                                                 : &ops[arrays.entry(k)]);
  }
}

bool Pieces::combines() const {
  if (batch_) {
    return std::any_of(batch_->ops.begin(), batch_->ops.end(),
                       [](const Pieces &op) { return op.combines(); });
  }
  return operation_ != nullptr;
}

void Pieces::copy_batch(const Peer &peer, bool sending, const std::byte *from, std::byte *to,
                        Index lo, Index hi) const {
  // A batch's local arrays: one pointer per operation (NULL where this rank has none of it,
  // or, in a deferred execution, after an argument error: that part is sent unfilled).
  const BatchArrays &arrays = batch_->arrays;
  const auto source = [&](std::size_t k) {
    return arrays.shared ? from : reinterpret_cast<const std::byte *const *>(from)[arrays.entry(k)];
  };
  const auto destination = [&](std::size_t k) {
    return arrays.shared ? to : reinterpret_cast<std::byte *const *>(to)[arrays.entry(k)];
  };
  const std::vector<BatchPart> &parts =
      (sending ? batch_->sends : batch_->recvs)[static_cast<std::size_t>(peer.row_slot)];
  for (const BatchPart &part : parts) {
    const Index begin = std::max(lo, part.offset);
    const Index end = std::min(hi, part.offset + part.bytes);
    if (begin >= end || (sending ? source(part.op) : destination(part.op)) == nullptr) {
      continue;
    }
    const Pieces &op = batch_->ops[part.op];
    const auto es = static_cast<Index>(op.element_size());
    const Index first = (begin - part.offset) / es;
    const Index last = (end - part.offset) / es;
    if (sending) {
      op.pack(op.plan().sends[part.peer], source(part.op), to + (begin - lo), first, last);
    } else {
      op.unpack(op.plan().recvs[part.peer], from + (begin - lo), destination(part.op), first, last);
    }
  }
}

single_copy::PieceCounts Pieces::estimate_batch_pieces(const Peer &peer) const {
  single_copy::PieceCounts sum;
  sum.packed_only = true;
  sum.from_array = false;
  for (const BatchPart &part : batch_->recvs[static_cast<std::size_t>(peer.row_slot)]) {
    const Pieces &op = batch_->ops[part.op];
    const single_copy::PieceCounts counts = op.estimate_pieces(op.plan().recvs[part.peer]);
    sum.bytes += counts.bytes;
    sum.remote_pieces += counts.remote_pieces;
    sum.local_pieces += counts.local_pieces;
    sum.transposes = sum.transposes || counts.transposes;
  }
  return sum;
}

void Pieces::copy_batch_local(const std::byte *a, std::byte *b,
                              const std::function<void()> &between) const {
  const BatchArrays &arrays = batch_->arrays;
  const auto *from = reinterpret_cast<const std::byte *const *>(a);
  const auto *to = reinterpret_cast<std::byte *const *>(b);
  for (std::size_t k = 0; k < batch_->ops.size(); ++k) {
    batch_->ops[k].copy_local(arrays.shared ? a : from[arrays.entry(k)],
                              arrays.shared ? b : to[arrays.entry(k)]);
    if (between) {
      between();
    }
  }
}

} // namespace redist
