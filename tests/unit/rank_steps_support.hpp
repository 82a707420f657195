#pragma once
// Helpers shared by the planner tests (2-D and N-d): every rank's laid-out steps checked
// together -- each message covered in order, sender and receiver agreeing chunk by chunk,
// each step within the memory cap, and no deadlock in a step-by-step simulation.

#include "planner.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace redist::test {

struct RankView {
  RankPlan plan;
  ScheduleChoice choice;
};

// The chunks a rank sends (or receives) in order, per peer: (offset, count) as the executor
// cuts them.
using Chunks = std::map<int, std::vector<std::pair<Index, Index>>>;

inline void cut(Index offset, Index count, Index chunk, std::vector<std::pair<Index, Index>> &out) {
  const Index step = chunk > 0 ? chunk : std::max<Index>(count, 1);
  for (Index begin = 0; begin < count; begin += step) {
    out.emplace_back(offset + begin, std::min(step, count - begin));
  }
}

// Simulates stepwise execution: at its current step a rank has posted its receive and send;
// a send completes when the receiver is at the step with the matching receive, a receive
// when the sender is at the step with the matching send. Returns false on a deadlock.
inline bool simulate(const std::vector<RankView> &views) {
  struct Op {
    int send_to = -1;
    int recv_from = -1;
  };
  std::vector<std::vector<Op>> ops(views.size());
  for (std::size_t r = 0; r < views.size(); ++r) {
    const ScheduleChoice &c = views[r].choice;
    for (const RankStep &s : c.steps) {
      const Index longest = std::max(s.send_count, s.recv_count);
      const Index chunk = c.chunk_elements > 0 ? c.chunk_elements : longest;
      for (Index begin = 0; begin < longest; begin += chunk) {
        Op op;
        if (begin < s.send_count)
          op.send_to = views[r].plan.sends[static_cast<std::size_t>(s.send)].rank;
        if (begin < s.recv_count)
          op.recv_from = views[r].plan.recvs[static_cast<std::size_t>(s.recv)].rank;
        ops[r].push_back(op);
      }
    }
  }
  // Per ordered pair, the number of messages completed so far: the k-th message of a pair
  // matches the k-th receive of that pair (MPI's non-overtaking rule).
  std::map<std::pair<int, int>, int> sent;
  std::map<std::pair<int, int>, int> posted_recv;
  std::vector<std::size_t> at(views.size(), 0);
  std::vector<std::pair<bool, bool>> done(views.size(), {false, false});
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::size_t r = 0; r < views.size(); ++r) {
      if (at[r] >= ops[r].size()) continue;
      const Op &op = ops[r][at[r]];
      auto &[send_done, recv_done] = done[r];
      if (!send_done) {
        if (op.send_to < 0) {
          send_done = true;
        } else {
          const auto peer = static_cast<std::size_t>(op.send_to);
          if (at[peer] < ops[peer].size() && ops[peer][at[peer]].recv_from == static_cast<int>(r) &&
              !done[peer].second) {
            send_done = true;
            done[peer].second = true; // the matching receive completes with it
            progress = true;
          }
        }
      }
      if (!recv_done && op.recv_from < 0) recv_done = true;
      if (send_done && recv_done) {
        ++at[r];
        done[r] = {false, false};
        progress = true;
      }
    }
  }
  for (std::size_t r = 0; r < views.size(); ++r) {
    if (at[r] < ops[r].size()) return false;
  }
  return true;
}

// Every rank's steps of one phase: each message covered in order, sender and receiver
// agreeing chunk by chunk, each step within `max_memory`, and no deadlock.
inline std::string check_views(const std::vector<RankView> &views, Index max_memory,
                               std::size_t es) {
  const int comm_size = static_cast<int>(views.size());
  std::vector<Chunks> sends(views.size());
  std::vector<Chunks> recvs(views.size());
  for (int r = 0; r < comm_size; ++r) {
    const RankView &v = views[static_cast<std::size_t>(r)];
    if (v.choice.strategy == Strategy::all_at_once) continue;
    // Coverage: the ranges of each message tile it exactly.
    std::map<int, Index> send_next;
    std::map<int, Index> recv_next;
    for (const RankStep &s : v.choice.steps) {
      if (s.send >= 0) {
        const Peer &p = v.plan.sends[static_cast<std::size_t>(s.send)];
        if (s.send_offset != send_next[s.send])
          return "rank " + std::to_string(r) + ": send to " + std::to_string(p.rank) +
                 " out of order";
        send_next[s.send] += s.send_count;
        cut(s.send_offset, s.send_count, v.choice.chunk_elements,
            sends[static_cast<std::size_t>(r)][p.rank]);
      }
      if (s.recv >= 0) {
        const Peer &p = v.plan.recvs[static_cast<std::size_t>(s.recv)];
        if (s.recv_offset != recv_next[s.recv])
          return "rank " + std::to_string(r) + ": receive from " + std::to_string(p.rank) +
                 " out of order";
        recv_next[s.recv] += s.recv_count;
        cut(s.recv_offset, s.recv_count, v.choice.chunk_elements,
            recvs[static_cast<std::size_t>(r)][p.rank]);
      }
    }
    for (std::size_t i = 0; i < v.plan.sends.size(); ++i) {
      if (send_next[static_cast<int>(i)] != v.plan.sends[i].elements)
        return "rank " + std::to_string(r) + ": message to " +
               std::to_string(v.plan.sends[i].rank) + " covered " +
               std::to_string(send_next[static_cast<int>(i)]) + " of " +
               std::to_string(v.plan.sends[i].elements);
    }
    for (std::size_t i = 0; i < v.plan.recvs.size(); ++i) {
      if (recv_next[static_cast<int>(i)] != v.plan.recvs[i].elements)
        return "rank " + std::to_string(r) + ": message from " +
               std::to_string(v.plan.recvs[i].rank) + " covered " +
               std::to_string(recv_next[static_cast<int>(i)]) + " of " +
               std::to_string(v.plan.recvs[i].elements);
    }
    const Index cap_elements = max_memory / static_cast<Index>(es);
    for (const RankStep &s : v.choice.steps) {
      const Index chunk = v.choice.chunk_elements > 0 ? v.choice.chunk_elements : INT64_MAX;
      if (max_memory > 0 &&
          std::min(s.send_count, chunk) + std::min(s.recv_count, chunk) > cap_elements)
        return "rank " + std::to_string(r) + ": a step buffers more than max_memory";
    }
  }
  if (views.front().choice.strategy == Strategy::all_at_once) return {};
  // Pairwise agreement: what r sends to q, chunk by chunk, is what q receives from r.
  for (int r = 0; r < comm_size; ++r) {
    for (const auto &[q, chunks] : sends[static_cast<std::size_t>(r)]) {
      if (recvs[static_cast<std::size_t>(q)][r] != chunks)
        return "rank " + std::to_string(r) + " and rank " + std::to_string(q) +
               " disagree on their messages";
    }
  }
  if (!simulate(views)) return "the stepwise exchange deadlocks";
  return {};
}

} // namespace redist::test
