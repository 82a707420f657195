#pragma once
// Where the microseconds of one ScaLAPACK-entry call go (the per-call breakdown).
// Compiled in only with the CMake option REDIST_CALL_TIMERS (a Release build for the
// benchmark); otherwise every function here is empty and inline, and costs nothing.
//
// A call is a sequence of laps: lap(part) adds the time since the previous lap to `part`.
// Laps count only between begin_call() and end_call() (the ScaLAPACK entry); at exit each
// process prints, for every part, the median over its calls to stderr.

#ifdef REDIST_CALL_TIMERS
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <unistd.h>
#include <vector>
#endif

namespace redist::call_timers {

enum Part : int {
  front,            ///< BLACS queries, REDIST_* environment, argument checks, plan lookup
  hit_agreement,    ///< front_end::agree_hit (or the full agreement on a miss)
  prepare,          ///< OnePhase::begin up to the posting (negotiation state, bookkeeping)
  post_receives,    ///< MPI_Irecv of every message
  pack,             ///< packing each sent message into its buffer
  post_sends,       ///< MPI_Isend of every message
  local_copy,       ///< the rank's own elements
  wait_receives,    ///< waiting for the receives (the transfer)
  unpack,           ///< unpacking each received message into B
  wait_sends,       ///< waiting for the sends
  settle_agreement, ///< the executor's reduction after the exchange
  finish,           ///< the rest: returning through the executor and the entry
  kParts
};

#ifdef REDIST_CALL_TIMERS

inline const char *const kNames[kParts] = {"front (BLACS, environment, checks, lookup)",
                                           "hit agreement (MPI_Allreduce)",
                                           "prepare",
                                           "post receives",
                                           "pack",
                                           "post sends",
                                           "local copy",
                                           "wait for receives (transfer)",
                                           "unpack",
                                           "wait for sends",
                                           "executor's agreement (MPI_Allreduce)",
                                           "finish"};

struct State {
  using Clock = std::chrono::steady_clock;
  bool open = false;
  long long laps = 0;
  Clock::time_point last{};
  std::array<double, kParts> current{};
  std::vector<std::array<double, kParts>> calls;
  ~State() {
    if (calls.empty()) return;
    std::fprintf(stderr, "redist call timers, pid %d: medians of %zu calls (us)\n",
                 static_cast<int>(getpid()), calls.size());
    double total = 0;
    std::vector<double> v(calls.size());
    for (int p = 0; p < kParts; ++p) {
      for (std::size_t i = 0; i < calls.size(); ++i)
        v[i] = calls[i][p];
      std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
      const double median = v[v.size() / 2] * 1e-3;
      total += median;
      std::fprintf(stderr, "  %-44s %8.3f\n", kNames[p], median);
    }
    std::fprintf(stderr, "  %-44s %8.3f\n", "sum of the medians", total);
    // Each lap reads the clock once: that much of every part is the timers' own.
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < 1000; ++i)
      last = Clock::now();
    std::fprintf(stderr, "  %-44s %8.3f (x %.0f laps per call)\n", "one clock read",
                 std::chrono::duration<double, std::micro>(last - start).count() / 1000,
                 static_cast<double>(laps) / static_cast<double>(calls.size()));
  }
};
inline State state;

inline void lap(Part part) {
  if (!state.open) return;
  const State::Clock::time_point now = State::Clock::now();
  state.current[part] += std::chrono::duration<double, std::nano>(now - state.last).count();
  state.last = now;
  ++state.laps;
}
inline void begin_call() {
  state.open = true;
  state.current = {};
  state.last = State::Clock::now();
}
inline void end_call() {
  if (!state.open) return;
  lap(finish);
  state.open = false;
  state.calls.push_back(state.current);
}

#else

inline void lap(Part) {}
inline void begin_call() {}
inline void end_call() {}

#endif

} // namespace redist::call_timers
