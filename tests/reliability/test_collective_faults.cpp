// MPI errors in the library's collective, communicator and attribute calls (mpi_faults.hpp's
// collective faults, interposed by mpi_coll_faults.cpp): "an MPI call fails on one process,
// returning an error with or without having done its work".
//
// Each scenario is a sequence of library calls (phases: plan creation, executions, ScaLAPACK
// entry calls). For each phase, a counting run first arms a fault with a skip beyond reach on
// every process around that phase's call, which counts the calls selected (the positions) on
// each process. Then, for each position k of the calls of process F (F = 0, then F = the last
// process), and each mode that applies to the call at k (done always; not_done for nonblocking
// posts and attribute calls only, as a blocking collective that does nothing leaves its peers
// inside MPI), the scenario runs again with the k-th call failing on F only. Checked on every
// process, under the harness's watchdog (a hang prints the case and its replay variable):
//   - plan creation: success or error alike on every process (a plan on some processes and
//     none on others is a failure; the very same status with REDIST_COLL_FAULT_STRICT_STATUS);
//     a plan exactly where the status is success;
//   - executions and ScaLAPACK entry calls: a process that returns success has B equal to the
//     oracle, and wherever a B differs from the oracle, every process returns an error;
//   - the calls after the faulty one, with nothing armed, succeed everywhere with the oracle's
//     B (a new plan if the creation failed; the same plan executed again otherwise);
//   - no nonblocking collective request is left, and as many communicators live as before.
// A failing case is reported (every process prints what it saw) and the sweep goes on; a hang
// or crash ends the process, naming the case.
//
// Environment:
//   REDIST_COLL_FAULT_CASE=glob[,glob...]     run only the cases whose id matches (fnmatch);
//                                             ids are scenario/phase/position/mode/pRANK,
//                                             e.g. capi/create/3/done/p0, scalapack/*/p1
//   REDIST_COLL_FAULT_EXCLUDE=glob[,glob...]  skip these (known hangs or crashes)
//   REDIST_COLL_FAULT_VERBOSE=1               print every case on process 0 before it runs,
//                                             and each phase's calls
//   REDIST_COLL_FAULT_STRICT_STATUS=1         a plan creation must return the very same
//                                             status everywhere (default: success everywhere
//                                             or an error everywhere)
// tests/reliability/collective_fault_sweep.sh runs the whole sweep, excluding each case that
// hangs or crashes and starting again, and lists every failure.
//
// The library is given a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN (user_comm()): a
// fault on a call on the caller's communicator calls its error handler as MPI would, and the
// default MPI_ERRORS_ARE_FATAL would end the job; and a collective the library leaves unmatched
// never matches one of the test's own on MPI_COMM_WORLD. MPI_COMM_WORLD gets MPI_ERRORS_RETURN
// too, for BLACS's communicators, which the ScaLAPACK entries' duplicates copy.

#include "../common/scalapack_decls.h"
#include "../errors/capi_support.hpp"
#include "mpi_faults.hpp"

#include <redist.h>
#include <redist_ring.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using capitest::CArgs;
using errtest::Data;
using errtest::Scenario;
using mpitest::world_rank;
using mpitest::world_size;

long long sum_everywhere(long long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

// ---- case selection and crash reports ----------------------------------------------------------

std::vector<std::string> globs(const char *variable) {
  std::vector<std::string> out;
  const char *env = std::getenv(variable);
  if (env == nullptr) return out;
  std::string all = env;
  std::size_t start = 0;
  while (start <= all.size()) {
    const std::size_t comma = all.find(',', start);
    const std::string one =
        all.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!one.empty()) out.push_back(one);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool matches_any(const std::vector<std::string> &patterns, const std::string &id) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string &p) { return fnmatch(p.c_str(), id.c_str(), 0) == 0; });
}

bool wanted(const std::string &id) {
  static const std::vector<std::string> only = globs("REDIST_COLL_FAULT_CASE");
  static const std::vector<std::string> exclude = globs("REDIST_COLL_FAULT_EXCLUDE");
  if (!only.empty() && !matches_any(only, id)) return false;
  return !matches_any(exclude, id);
}

/// REDIST_COLL_FAULT_STRICT_STATUS=1: a plan creation must return the very same status on
/// every process (by default: success everywhere or an error everywhere, whichever error).
bool strict_status() {
  const char *env = std::getenv("REDIST_COLL_FAULT_STRICT_STATUS");
  return env != nullptr && std::string(env) != "0";
}

int min_status(int v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return v;
}
int max_status(int v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

bool verbose() {
  const char *env = std::getenv("REDIST_COLL_FAULT_VERBOSE");
  return env != nullptr && std::string(env) != "0";
}

/// The case running, for the crash handler (written before each case, read in the handler).
char current_case[512] = "(none)";

extern "C" void crashed(int sig) {
  char line[700];
  const int n =
      std::snprintf(line, sizeof line, "[rank %d] CRASH: signal %d in REDIST_COLL_FAULT_CASE=%s\n",
                    world_rank(), sig, current_case);
  if (n > 0) static_cast<void>(write(STDOUT_FILENO, line, static_cast<std::size_t>(n)));
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_crash_reports() {
  static bool done = false;
  if (done) return;
  done = true;
  for (const int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL})
    std::signal(sig, crashed);
}

// ---- one run of a scenario ---------------------------------------------------------------------

constexpr long long kBeyondReach = 1LL << 40;

/// The communicator the scenarios pass to the library: a duplicate of MPI_COMM_WORLD with
/// MPI_ERRORS_RETURN, made anew for each run (the library keeps what it learns of a
/// communicator's nodes as an attribute, and each run must make the same calls), so that a
/// collective the library leaves unmatched on it never matches one of the test's own on
/// MPI_COMM_WORLD (the hang then shows inside the library). Made and freed through PMPI: not
/// counted among the library's communicators.
MPI_Comm current_user_comm = MPI_COMM_NULL;
MPI_Comm user_comm() {
  return current_user_comm;
}

/// One run of a scenario: which phase carries the fault, on which process, at which position
/// and in which mode (or a counting run: every process counts, nothing fails). The scenario
/// makes its library calls through call() and reports their outcomes to check_*().
class FaultRun {
public:
  FaultRun(std::string scenario, std::vector<std::string> phases, int target)
      : scenario_(std::move(scenario)), phases_(std::move(phases)), target_(target) {}

  // The run's fault.
  bool counting = true;
  int faulty = -1;
  long long position = 0;
  faults::CollMode mode = faults::CollMode::done;
  std::string position_name; ///< "MPI_Allreduce #2 (position 4)"

  [[nodiscard]] std::string id() const {
    const std::string base = scenario_ + "/" + phases_[static_cast<std::size_t>(target_)] + "/";
    if (counting) return base + "count";
    return base + std::to_string(position) + "/" + mode_name(mode) + "/p" + std::to_string(faulty);
  }
  [[nodiscard]] std::string title() const {
    if (counting) return "[" + id() + "] counting run, nothing fails";
    return "[" + id() + "] " + position_name + " in " + phases_[static_cast<std::size_t>(target_)] +
           " of " + scenario_ + ", " + mode_name(mode) + ", on process " + std::to_string(faulty);
  }
  static const char *mode_name(faults::CollMode m) {
    return m == faults::CollMode::done ? "done" : "not_done";
  }

  /// Library call `fn` of phase `phase` (an index of the phases; -1: a call of no phase, never
  /// armed), armed when this run's fault belongs there on this process.
  template <class F> auto call(int phase, const std::string &what, F &&fn) {
    const bool arm = phase == target_ && (counting || world_rank() == faulty);
    if (phase == target_) target_called_ = true;
    mpitest::watchdog_arm(title() + ": " + what + "\n  replay: REDIST_COLL_FAULT_CASE=" + id());
    if (arm) {
      faults::CollFault f;
      f.mode = mode;
      f.skip = counting ? kBeyondReach : position;
      f.count = 1;
      faults::arm_collectives(f);
    }
    auto result = fn();
    if (arm) {
      faults::disarm_collectives();
      if (counting) log_ = faults::collectives_log();
    }
    mpitest::watchdog_arm(title() + ": the test's checks after " + what +
                          " (a peer may still be inside the library)\n  replay: "
                          "REDIST_COLL_FAULT_CASE=" +
                          id());
    return result;
  }

  /// A plan creation of phase `phase` returned `status` (and `plan`). Returns whether every
  /// process has a plan.
  bool check_create(int phase, const std::string &what, int status, bool plan,
                    const std::string &message) {
    const bool ok = status == REDIST_SUCCESS;
    if (ok != plan) {
      problem(what + ": status " + redist_status_name(status) + " but " +
              (plan ? "a plan" : "no plan") + " returned");
    }
    const long long successes = sum_everywhere(ok ? 1 : 0);
    const bool everywhere = successes == world_size();
    if (successes != 0 && !everywhere) {
      problem(what + ": success on " + std::to_string(successes) + " of " +
              std::to_string(world_size()) + " processes; here " + redist_status_name(status) +
              (ok ? "" : ": " + message) + " (a plan on some processes, none on others)");
    }
    if (strict_status()) {
      const int lowest = min_status(status);
      const int highest = max_status(status);
      if (lowest != status || highest != status) {
        problem(what + ": the status differs between processes; here " +
                redist_status_name(status));
      }
    }
    if (phase == target_) {
      outcome(successes);
    } else if (!ok) {
      problem(what + " (nothing armed): " + redist_status_name(status) + ": " + message);
    }
    return everywhere;
  }

  /// An execution (or ScaLAPACK entry call) of phase `phase` returned `status`, and `wrong`
  /// elements of this process's B differ from the oracle.
  void check_execute(int phase, const std::string &what, int status, long long wrong,
                     const std::string &message, const std::string &report) {
    const bool ok = status == REDIST_SUCCESS;
    if (ok && wrong != 0) {
      problem(what + ": success with a wrong B (" + std::to_string(wrong) + " elements):\n" +
              report);
    }
    const long long successes = sum_everywhere(ok ? 1 : 0);
    const long long wrong_somewhere = sum_everywhere(wrong != 0 ? 1 : 0);
    if (wrong_somewhere != 0 && successes != 0) {
      problem(what + ": B wrong on " + std::to_string(wrong_somewhere) + " process(es) while " +
              std::to_string(successes) + " returned success; here " + redist_status_name(status) +
              (wrong != 0 ? ", B wrong" : ", B right"));
    }
    if (phase == target_) {
      outcome(successes);
    } else if (!ok || wrong != 0) {
      problem(what + " (nothing armed): " + redist_status_name(status) + " " + message +
              (wrong != 0 ? ", B wrong:\n" + report : ""));
    }
  }

  /// Communicators live now: the run must end with as many.
  void baseline() { comms_ = faults::live_communicators(); }
  /// As many communicators live as at baseline(); then a new baseline (the scenario frees
  /// communicators of its own, made before baseline()).
  void check_communicators(const std::string &when) {
    const long long comms = faults::live_communicators();
    if (comms != comms_) {
      problem("communicators " + when + ": " + std::to_string(comms_) + " before, " +
              std::to_string(comms) + " after (" +
              (comms > comms_ ? "leaked" : "freed one not made here") + ")");
    }
    comms_ = -1;
  }

  void problem(const std::string &text) { problems_.push_back(text); }

  /// After the scenario: what it left behind. Returns the number of processes that saw a
  /// problem; prints them.
  long long finish() {
    if (!counting) {
      // The fault must have fired (the positions come from the counting run).
      const long long fired = faults::collectives_injected() - injected_before_;
      if (world_rank() == faulty && fired != 1) {
        problem("the fault fired " + std::to_string(fired) + " times, not once");
      }
    }
    if (!target_called_) problem("the phase's call was never made");
    const long long requests = faults::live_collective_requests();
    if (requests != 0) {
      problem(std::to_string(requests) + " nonblocking collective request(s) left");
    }
    const long long comms = faults::live_communicators();
    if (comms_ >= 0 && comms != comms_) {
      problem("communicators: " + std::to_string(comms_) + " before, " + std::to_string(comms) +
              " after (" + (comms > comms_ ? "leaked" : "freed one not made here") + ")");
    }
    const long long bad = sum_everywhere(problems_.empty() ? 0 : 1);
    if (!problems_.empty()) {
      std::string text;
      for (const std::string &p : problems_)
        text += "\n    " + p;
      ADD_FAILURE() << "[rank " << world_rank() << "] " << title() << ":" << text
                    << "\n  replay: REDIST_COLL_FAULT_CASE=" << id();
    }
    PMPI_Comm_free(&current_user_comm);
    mpitest::watchdog_disarm();
    return bad;
  }

  void start() {
    std::snprintf(current_case, sizeof current_case, "%s", id().c_str());
    PMPI_Comm_dup(MPI_COMM_WORLD, &current_user_comm);
    MPI_Comm_set_errhandler(current_user_comm, MPI_ERRORS_RETURN);
    injected_before_ = faults::collectives_injected();
    comms_ = faults::live_communicators();
    mpitest::watchdog_arm(title() + ": setting up\n  replay: REDIST_COLL_FAULT_CASE=" + id());
  }

  [[nodiscard]] const std::vector<unsigned> &log() const { return log_; }
  /// The target phase's outcome on every process: 1 success everywhere, -1 error everywhere,
  /// 0 mixed.
  [[nodiscard]] int everywhere() const { return everywhere_; }

private:
  void outcome(long long successes) {
    everywhere_ = successes == world_size() ? 1 : successes == 0 ? -1 : 0;
  }

  std::string scenario_;
  std::vector<std::string> phases_;
  int target_;
  std::vector<unsigned> log_;
  std::vector<std::string> problems_;
  long long injected_before_ = 0;
  long long comms_ = 0;
  bool target_called_ = false;
  int everywhere_ = 0;
};

using ScenarioFn = std::function<void(FaultRun &)>;

struct Tally {
  long long positions = 0, runs = 0, errors_everywhere = 0, success_everywhere = 0, mixed = 0;
  std::vector<std::string> failed;
};

/// Every position of every phase of `scenario` failing once, on process 0 and on the last.
void sweep(const std::string &scenario, const std::vector<std::string> &phases,
           const ScenarioFn &fn) {
  install_crash_reports();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Tally tally;
  const int last = world_size() - 1;
  for (int phase = 0; phase < static_cast<int>(phases.size()); ++phase) {
    FaultRun count(scenario, phases, phase);
    count.start();
    fn(count);
    if (count.finish() != 0) tally.failed.push_back(count.id());
    for (const int faulty : {0, last}) {
      // The calls the faulty process makes in this phase (every process sweeps them).
      std::vector<unsigned> log = count.log();
      long long n = static_cast<long long>(log.size());
      MPI_Bcast(&n, 1, MPI_LONG_LONG, faulty, MPI_COMM_WORLD);
      log.resize(static_cast<std::size_t>(n));
      MPI_Bcast(log.data(), static_cast<int>(n), MPI_UNSIGNED, faulty, MPI_COMM_WORLD);
      tally.positions += n;
      if (verbose()) {
        std::string calls;
        for (const unsigned call : log)
          calls += std::string(" ") + faults::coll_call_name(call);
        mpitest::print0("  " + scenario + "/" + phases[static_cast<std::size_t>(phase)] +
                        " on process " + std::to_string(faulty) + ":" + calls + "\n");
      }
      for (long long k = 0; k < n; ++k) {
        const unsigned call = log[static_cast<std::size_t>(k)];
        long long occurrence = 0;
        for (long long j = 0; j <= k; ++j)
          occurrence += log[static_cast<std::size_t>(j)] == call ? 1 : 0;
        std::vector<faults::CollMode> modes = {faults::CollMode::done};
        if (faults::not_done_applies(call)) modes.push_back(faults::CollMode::not_done);
        for (const faults::CollMode mode : modes) {
          FaultRun run(scenario, phases, phase);
          run.counting = false;
          run.faulty = faulty;
          run.position = k;
          run.mode = mode;
          run.position_name = std::string(faults::coll_call_name(call)) + " #" +
                              std::to_string(occurrence) + " (position " + std::to_string(k) + ")";
          if (!wanted(run.id())) continue;
          if (verbose()) mpitest::print0("  " + run.title() + "\n");
          run.start();
          fn(run);
          if (run.finish() != 0) tally.failed.push_back(run.id() + " (" + run.position_name + ")");
          ++tally.runs;
          if (run.everywhere() > 0) ++tally.success_everywhere;
          if (run.everywhere() < 0) ++tally.errors_everywhere;
          if (run.everywhere() == 0) ++tally.mixed;
        }
      }
    }
  }
  std::string summary = "  " + scenario + ": positions " + std::to_string(tally.positions) +
                        ", runs " + std::to_string(tally.runs) + ", errors-everywhere " +
                        std::to_string(tally.errors_everywhere) + ", success-everywhere " +
                        std::to_string(tally.success_everywhere) + ", mixed " +
                        std::to_string(tally.mixed) + ", failing cases " +
                        std::to_string(tally.failed.size()) + "\n";
  for (const std::string &f : tally.failed)
    summary += "    FAILED " + f + "\n";
  mpitest::print0(summary);
}

// ---- the fault layer itself --------------------------------------------------------------------

/// Every byte of `bytes` at `p` is 0x5A.
bool scrambled(const void *p, std::size_t bytes) {
  const auto *c = static_cast<const unsigned char *>(p);
  return std::all_of(c, c + bytes, [](unsigned char b) { return b == 0x5A; });
}

faults::CollFault fail_next(unsigned calls, faults::CollMode mode) {
  faults::CollFault f;
  f.calls = calls;
  f.mode = mode;
  f.skip = 0;
  f.count = 1;
  return f;
}

TEST(CollectiveFaultLayer, EachCallFailsAsItsModeSays) {
  // Every process arms the same fault, so that no peer is left waiting.
  MPI_Comm comm = MPI_COMM_NULL;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const long long comms = faults::live_communicators();
  const long long injected = faults::collectives_injected();
  const int p = world_size();
  using faults::CollMode;

  // Blocking collectives, done: the work done, the receive buffer garbage.
  double x[3] = {1, 2, 3};
  faults::arm_collectives(fail_next(faults::allreduce, CollMode::done));
  EXPECT_EQ(MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE, MPI_SUM, comm), MPI_ERR_OTHER);
  faults::disarm_collectives();
  EXPECT_TRUE(scrambled(x, sizeof x));
  std::vector<int> all(static_cast<std::size_t>(p), -1);
  int mine = world_rank();
  faults::arm_collectives(fail_next(faults::allgather, CollMode::done));
  EXPECT_EQ(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm), MPI_ERR_OTHER);
  faults::disarm_collectives();
  EXPECT_TRUE(scrambled(all.data(), all.size() * sizeof(int)));
  // Not selected (another kind armed): let through, counted only if selected.
  faults::arm_collectives(fail_next(faults::barrier, CollMode::done));
  EXPECT_EQ(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm), MPI_SUCCESS);
  EXPECT_EQ(faults::collectives_matched(), 0);
  EXPECT_EQ(MPI_Barrier(comm), MPI_ERR_OTHER);
  EXPECT_EQ(MPI_Barrier(comm), MPI_SUCCESS); // count 1
  EXPECT_EQ(faults::collectives_matched(), 2);
  faults::disarm_collectives();
  for (int k = 0; k < p; ++k)
    EXPECT_EQ(all[static_cast<std::size_t>(k)], k);

  // Nonblocking, not_done: nothing posted.
  MPI_Request r = MPI_REQUEST_NULL;
  faults::arm_collectives(fail_next(faults::iallreduce, CollMode::not_done));
  EXPECT_EQ(MPI_Iallreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE, MPI_SUM, comm, &r), MPI_ERR_OTHER);
  faults::disarm_collectives();
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  EXPECT_EQ(faults::live_collective_requests(), 0);
  // Nonblocking, done: posted, completed, the wait fails (and each wait or test form).
  x[0] = x[1] = x[2] = 1;
  faults::arm_collectives(fail_next(faults::iallreduce, CollMode::done));
  EXPECT_EQ(MPI_Iallreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE, MPI_SUM, comm, &r), MPI_SUCCESS);
  faults::disarm_collectives();
  EXPECT_EQ(faults::live_collective_requests(), 1);
  EXPECT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  EXPECT_TRUE(scrambled(x, sizeof x));
  EXPECT_EQ(faults::live_collective_requests(), 0);
  std::vector<int> mix(static_cast<std::size_t>(p), -1);
  const std::vector<int> ones(static_cast<std::size_t>(p), world_rank());
  faults::arm_collectives(fail_next(faults::ialltoall, CollMode::done));
  EXPECT_EQ(MPI_Ialltoall(ones.data(), 1, MPI_INT, mix.data(), 1, MPI_INT, comm, &r), MPI_SUCCESS);
  faults::disarm_collectives();
  int flag = 0;
  int rc = MPI_SUCCESS;
  while (flag == 0 && rc == MPI_SUCCESS)
    rc = MPI_Testall(1, &r, &flag, MPI_STATUSES_IGNORE);
  EXPECT_EQ(rc, MPI_ERR_OTHER);
  EXPECT_TRUE(scrambled(mix.data(), mix.size() * sizeof(int)));
  MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  faults::arm_collectives(fail_next(faults::ibarrier, CollMode::done));
  EXPECT_EQ(MPI_Ibarrier(comm, &two[0]), MPI_SUCCESS);
  EXPECT_EQ(MPI_Iallgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm, &two[1]), MPI_SUCCESS);
  faults::disarm_collectives();
  EXPECT_EQ(faults::live_collective_requests(), 2);
  EXPECT_EQ(MPI_Waitall(2, two, MPI_STATUSES_IGNORE), MPI_ERR_OTHER); // the barrier's
  EXPECT_EQ(faults::live_collective_requests(), 0);
  for (int k = 0; k < p; ++k)
    EXPECT_EQ(all[static_cast<std::size_t>(k)], k);

  // Communicators: done makes and frees one; not_done makes none; idup fails at completion.
  MPI_Comm made = MPI_COMM_WORLD;
  faults::arm_collectives(fail_next(faults::comm_creations, CollMode::done));
  EXPECT_EQ(MPI_Comm_dup(comm, &made), MPI_ERR_OTHER);
  EXPECT_EQ(made, MPI_COMM_NULL);
  made = MPI_COMM_WORLD;
  EXPECT_EQ(MPI_Comm_split(comm, 0, 0, &made), MPI_SUCCESS); // count 1
  faults::disarm_collectives();
  EXPECT_EQ(faults::live_communicators(), comms + 1);
  EXPECT_EQ(MPI_Comm_free(&made), MPI_SUCCESS);
  EXPECT_EQ(faults::live_communicators(), comms);
  made = MPI_COMM_WORLD;
  faults::arm_collectives(fail_next(faults::comm_split_type, CollMode::not_done));
  EXPECT_EQ(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &made),
            MPI_ERR_OTHER);
  faults::disarm_collectives();
  EXPECT_EQ(made, MPI_COMM_NULL);
  faults::arm_collectives(fail_next(faults::comm_idup, CollMode::done));
  EXPECT_EQ(MPI_Comm_idup(comm, &made, &r), MPI_SUCCESS);
  faults::disarm_collectives();
  EXPECT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
  EXPECT_EQ(made, MPI_COMM_NULL);
  EXPECT_EQ(faults::live_communicators(), comms);
  EXPECT_EQ(faults::live_collective_requests(), 0);

  // Attributes.
  int key = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, nullptr);
  static int value = 7;
  faults::arm_collectives(fail_next(faults::comm_set_attr, CollMode::not_done));
  EXPECT_EQ(MPI_Comm_set_attr(comm, key, &value), MPI_ERR_OTHER);
  faults::disarm_collectives();
  void *got = nullptr;
  int found = 1;
  EXPECT_EQ(MPI_Comm_get_attr(comm, key, &got, &found), MPI_SUCCESS);
  EXPECT_EQ(found, 0);
  faults::arm_collectives(fail_next(faults::comm_set_attr, CollMode::done));
  EXPECT_EQ(MPI_Comm_set_attr(comm, key, &value), MPI_ERR_OTHER);
  faults::disarm_collectives();
  EXPECT_EQ(MPI_Comm_get_attr(comm, key, &got, &found), MPI_SUCCESS);
  EXPECT_EQ(found, 1);
  EXPECT_EQ(got, &value);
  faults::arm_collectives(fail_next(faults::comm_get_attr, CollMode::not_done));
  EXPECT_EQ(MPI_Comm_get_attr(comm, key, &got, &found), MPI_ERR_OTHER);
  faults::disarm_collectives();
  EXPECT_EQ(found, 0);
  faults::arm_collectives(fail_next(faults::comm_get_attr, CollMode::done));
  EXPECT_EQ(MPI_Comm_get_attr(comm, key, &got, &found), MPI_ERR_OTHER);
  faults::disarm_collectives();
  EXPECT_EQ(found, 1);
  EXPECT_NE(got, &value);
  MPI_Comm_delete_attr(comm, key);
  MPI_Comm_free_keyval(&key);

  EXPECT_EQ(faults::collectives_injected() - injected, 14);
  PMPI_Comm_free(&comm);
}

// ---- oracles -----------------------------------------------------------------------------------

/// Wrong elements of B (a copy of scenario s, salts a_salt / b_salt).
long long wrong_2d(const Scenario &s, const Data<double> &d, int a_salt, int b_salt,
                   std::string &report) {
  mpitest::CopySpec c;
  c.m = s.m;
  c.n = s.n;
  return mpitest::check_b(c, s.a, s.b, d.lb, d.b.data(), a_salt, b_salt, report);
}

/// A scenario a little larger than the standard one (a few dozen rows), on every process.
Scenario small_scenario() {
  const int p = world_size();
  int nprow = 1;
  while ((nprow + 1) * (nprow + 1) <= p && p % (nprow + 1) == 0)
    ++nprow;
  const int npcol = p / nprow;
  std::vector<int> reversed(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k)
    reversed[static_cast<std::size_t>(k)] = p - 1 - k;
  Scenario s;
  s.a = errtest::matrix(errtest::init_grid('C', nprow, npcol), 40, 30, 4, 3, 0, 0, 2, 1, 1);
  s.b = errtest::matrix(errtest::map_grid(npcol, nprow, reversed), 42, 33, 3, 5, npcol - 1, 0, 1, 2,
                        2);
  s.ictxt = errtest::init_grid('R', 1, p);
  s.m = 36;
  s.n = 27;
  return s;
}

std::string last_error() {
  return redist_last_error();
}

// ---- scenarios ---------------------------------------------------------------------------------

/// C API plan `create` (phase 0), executed twice (phases 1, 2) and once more with nothing armed.
/// `create` makes a plan with nothing armed when called with phase -1.
void plan_and_executions(FaultRun &run, const Scenario &s, int executions,
                         const std::function<int(int phase, redist_plan *)> &create) {
  run.baseline();
  redist_plan plan = nullptr;
  int status = run.call(0, "plan creation", [&] { return create(0, &plan); });
  const std::string message = last_error();
  if (!run.check_create(0, "plan creation", status, plan != nullptr, message)) {
    // No plan everywhere: destroy what exists, make the plan again with nothing armed.
    if (plan != nullptr) redist_plan_destroy(&plan);
    plan = nullptr;
    status = run.call(-1, "plan creation again", [&] { return create(-1, &plan); });
    if (!run.check_create(-1, "plan creation again (nothing armed)", status, plan != nullptr,
                          last_error())) {
      if (plan != nullptr) redist_plan_destroy(&plan);
      return;
    }
  }
  for (int e = 1; e <= executions + 1; ++e) {
    const int phase = e <= executions ? e : -1;
    const std::string what =
        e <= executions ? "execution " + std::to_string(e) : "execution again (nothing armed)";
    Data<double> d(s, 2 * e + 1, 2 * e + 2);
    const int rc =
        run.call(phase, what, [&] { return redist_plan_execute(plan, d.a.data(), d.b.data()); });
    const std::string msg = last_error();
    std::string report;
    const long long wrong = wrong_2d(s, d, 2 * e + 1, 2 * e + 2, report);
    run.check_execute(phase, what, rc, wrong, msg, report);
  }
  const int destroyed = redist_plan_destroy(&plan);
  if (destroyed != REDIST_SUCCESS) run.problem("redist_plan_destroy: " + last_error());
}

TEST(CollectiveFaults, CApiCreateAndTwoExecutions) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = small_scenario();
  sweep("capi", {"create", "execute1", "execute2"}, [&](FaultRun &run) {
    CArgs x(s);
    plan_and_executions(run, s, 2, [&](int, redist_plan *plan) {
      return redist_plan_create_opt(user_comm(), x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                                    REDIST_REGION_FULL, 0, &x.options, plan);
    });
  });
}

TEST(CollectiveFaults, StepwisePlan) {
  // A memory cap of 1 KiB each way: the messages in many steps and sub-steps.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = small_scenario();
  sweep("stepwise", {"create", "execute"}, [&](FaultRun &run) {
    CArgs x(s);
    x.options.schedule = REDIST_SCHEDULE_STEPWISE;
    x.options.max_memory = 1024;
    plan_and_executions(run, s, 1, [&](int phase, redist_plan *plan) {
      const int status = redist_plan_create_opt(user_comm(), x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                                                REDIST_REGION_FULL, 0, &x.options, plan);
      redist_plan_info info{};
      if ((phase != 0 || run.counting) && status == REDIST_SUCCESS &&
          (redist_plan_get_info(*plan, &info) != REDIST_SUCCESS ||
           info.schedule != REDIST_SCHEDULE_STEPWISE || info.steps < 2)) {
        run.problem("the plan made with nothing armed is not stepwise in several steps");
      }
      return status;
    });
  });
}

TEST(CollectiveFaults, TwoPhasePlan) {
  // As Faults.TwoPhasePlans forces one: block rows 2 -> 3 on a column of every process.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int p = world_size();
  std::vector<int> ranks(static_cast<std::size_t>(p));
  for (int k = 0; k < p; ++k)
    ranks[static_cast<std::size_t>(k)] = k;
  Scenario s;
  s.m = 37;
  s.n = 5;
  s.a.grid = errtest::map_grid(p, 1, ranks);
  s.a.mg = 40;
  s.a.ng = 6;
  s.a.mb = 2;
  s.a.nb = 2;
  s.a.ia = 2;
  s.a.ja = 1;
  s.a.lld_extra.assign(static_cast<std::size_t>(p), 1);
  s.b = s.a;
  s.b.mb = 3;
  s.b.ia = 1;
  s.b.ja = 2;
  sweep("twophase", {"create", "execute"}, [&](FaultRun &run) {
    CArgs x(s);
    x.options.schedule = REDIST_SCHEDULE_MULTIPHASE;
    plan_and_executions(run, s, 1, [&](int phase, redist_plan *plan) {
      const int status = redist_plan_create_opt(user_comm(), x.m, x.n, REDIST_DOUBLE, x.pa, x.pb,
                                                REDIST_REGION_FULL, 0, &x.options, plan);
      redist_plan_info info{};
      if ((phase != 0 || run.counting) && status == REDIST_SUCCESS &&
          (redist_plan_get_info(*plan, &info) != REDIST_SUCCESS ||
           info.schedule != REDIST_SCHEDULE_MULTIPHASE)) {
        run.problem("the plan made with nothing armed runs in one phase");
      }
      return status;
    });
  });
}

// N-d oracle (as in test_faults.cpp): which process coordinate owns global index g along a
// dimension and at which local index (MPI_Type_create_darray's definitions).
struct NdDim {
  int distrib;
  std::int64_t k; // CYCLIC's block
  int procs;
  [[nodiscard]] int owner(std::int64_t g, std::int64_t n) const {
    if (distrib == MPI_DISTRIBUTE_BLOCK) return static_cast<int>(g / ((n + procs - 1) / procs));
    if (distrib == MPI_DISTRIBUTE_CYCLIC) return static_cast<int>((g / k) % procs);
    return 0;
  }
  [[nodiscard]] std::int64_t local(std::int64_t g, std::int64_t n) const {
    if (distrib == MPI_DISTRIBUTE_BLOCK) return g % ((n + procs - 1) / procs);
    if (distrib == MPI_DISTRIBUTE_CYCLIC) return (g / (k * procs)) * k + g % k;
    return g;
  }
};

/// This process's local array of a 3-D layout (dense, C order, rank = row-major grid
/// position), each element holding its global linear index.
std::vector<double> nd_local(const std::array<NdDim, 3> &l, const std::array<std::int64_t, 3> &n,
                             int rank) {
  std::array<int, 3> c{};
  for (int d = 2, r = rank; d >= 0; --d) {
    c[static_cast<std::size_t>(d)] = r % l[static_cast<std::size_t>(d)].procs;
    r /= l[static_cast<std::size_t>(d)].procs;
  }
  std::array<std::int64_t, 3> ext{};
  for (std::size_t d = 0; d < 3; ++d)
    for (std::int64_t g = 0; g < n[d]; ++g)
      ext[d] += l[d].owner(g, n[d]) == c[d] ? 1 : 0;
  std::vector<double> out(static_cast<std::size_t>(ext[0] * ext[1] * ext[2]), -1.0);
  for (std::int64_t g0 = 0; g0 < n[0]; ++g0)
    for (std::int64_t g1 = 0; g1 < n[1]; ++g1)
      for (std::int64_t g2 = 0; g2 < n[2]; ++g2) {
        if (l[0].owner(g0, n[0]) != c[0] || l[1].owner(g1, n[1]) != c[1] ||
            l[2].owner(g2, n[2]) != c[2])
          continue;
        const std::int64_t at =
            (l[0].local(g0, n[0]) * ext[1] + l[1].local(g1, n[1])) * ext[2] + l[2].local(g2, n[2]);
        out[static_cast<std::size_t>(at)] = static_cast<double>((g0 * n[1] + g1) * n[2] + g2);
      }
  return out;
}

/// A 3-D layout as redist_darray (C order), with the arrays it points to.
struct NdDarray {
  std::array<int, 3> distribs{}, psizes{};
  std::array<std::int64_t, 3> dargs{};
  redist_darray view{};
  NdDarray(const std::array<std::int64_t, 3> &n, const std::array<NdDim, 3> &l) {
    for (std::size_t d = 0; d < 3; ++d) {
      distribs[d] = l[d].distrib;
      dargs[d] = l[d].distrib == MPI_DISTRIBUTE_CYCLIC ? l[d].k : MPI_DISTRIBUTE_DFLT_DARG;
      psizes[d] = l[d].procs;
    }
    view.ndims = 3;
    view.gsizes = n.data();
    view.distribs = distribs.data();
    view.dargs = dargs.data();
    view.psizes = psizes.data();
    view.order = MPI_ORDER_C;
  }
  NdDarray(const NdDarray &) = delete;
  NdDarray &operator=(const NdDarray &) = delete;
};

TEST(CollectiveFaults, NdPlan) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int p = world_size();
  // (CYCLIC(2), BLOCK, *) on p x 1 x 1 -> (*, BLOCK, CYCLIC(3)) on 1 x 1 x p.
  const std::array<std::int64_t, 3> n{14, 4, 9};
  const std::array<NdDim, 3> la{
      {{MPI_DISTRIBUTE_CYCLIC, 2, p}, {MPI_DISTRIBUTE_BLOCK, 0, 1}, {MPI_DISTRIBUTE_NONE, 0, 1}}};
  const std::array<NdDim, 3> lb{
      {{MPI_DISTRIBUTE_NONE, 0, 1}, {MPI_DISTRIBUTE_BLOCK, 0, 1}, {MPI_DISTRIBUTE_CYCLIC, 3, p}}};
  const NdDarray a_view(n, la);
  const NdDarray b_view(n, lb);
  const std::vector<double> a = nd_local(la, n, world_rank());
  const std::vector<double> want = nd_local(lb, n, world_rank());
  sweep("nd", {"create", "execute"}, [&](FaultRun &run) {
    run.baseline();
    const auto create = [&](redist_plan *plan) {
      return redist_nd_plan_create(user_comm(), REDIST_DOUBLE, &a_view.view, &b_view.view, nullptr,
                                   plan);
    };
    redist_plan plan = nullptr;
    int status = run.call(0, "plan creation", [&] { return create(&plan); });
    if (!run.check_create(0, "plan creation", status, plan != nullptr, last_error())) {
      if (plan != nullptr) redist_plan_destroy(&plan);
      plan = nullptr;
      status = run.call(-1, "plan creation again", [&] { return create(&plan); });
      if (!run.check_create(-1, "plan creation again (nothing armed)", status, plan != nullptr,
                            last_error())) {
        if (plan != nullptr) redist_plan_destroy(&plan);
        return;
      }
    }
    for (const int phase : {1, -1}) {
      const std::string what = phase == 1 ? "execution" : "execution again (nothing armed)";
      std::vector<double> b(want.size(), -2.0);
      const int rc =
          run.call(phase, what, [&] { return redist_plan_execute(plan, a.data(), b.data()); });
      const std::string msg = last_error();
      long long wrong = 0;
      std::string report;
      for (std::size_t e = 0; e < b.size(); ++e) {
        if (std::bit_cast<std::uint64_t>(b[e]) != std::bit_cast<std::uint64_t>(want[e])) {
          if (wrong < 4) {
            report += "    b[" + std::to_string(e) + "] = " + std::to_string(b[e]) + ", expected " +
                      std::to_string(want[e]) + "\n";
          }
          ++wrong;
        }
      }
      run.check_execute(phase, what, rc, wrong, msg, report);
    }
    if (redist_plan_destroy(&plan) != REDIST_SUCCESS) {
      run.problem("redist_plan_destroy: " + last_error());
    }
  });
}

TEST(CollectiveFaults, Batch) {
  // Two copies of the scenario in one batch plan.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const Scenario s = small_scenario();
  sweep("batch", {"create", "execute"}, [&](FaultRun &run) {
    run.baseline();
    CArgs x(s);
    std::array<redist_batch_op, 2> ops{};
    for (redist_batch_op &op : ops) {
      op.op = REDIST_OP_N;
      op.m = x.m;
      op.n = x.n;
      op.type = REDIST_DOUBLE;
      op.a = x.pa;
      op.b = x.pb;
      op.region = REDIST_REGION_FULL;
    }
    const auto create = [&](redist_plan *plan) {
      return redist_plan_create_batch(user_comm(), 2, ops.data(), nullptr, plan);
    };
    redist_plan plan = nullptr;
    int status = run.call(0, "plan creation", [&] { return create(&plan); });
    if (!run.check_create(0, "plan creation", status, plan != nullptr, last_error())) {
      if (plan != nullptr) redist_plan_destroy(&plan);
      plan = nullptr;
      status = run.call(-1, "plan creation again", [&] { return create(&plan); });
      if (!run.check_create(-1, "plan creation again (nothing armed)", status, plan != nullptr,
                            last_error())) {
        if (plan != nullptr) redist_plan_destroy(&plan);
        return;
      }
    }
    for (const int phase : {1, -1}) {
      const std::string what = phase == 1 ? "execution" : "execution again (nothing armed)";
      const int salt = phase == 1 ? 1 : 5;
      Data<double> d0(s, salt, salt + 1);
      Data<double> d1(s, salt + 2, salt + 3);
      const std::array<const void *, 2> a{d0.a.data(), d1.a.data()};
      const std::array<void *, 2> b{d0.b.data(), d1.b.data()};
      const int rc = run.call(phase, what, [&] {
        return redist_plan_execute_batch(plan, nullptr, a.data(), nullptr, b.data());
      });
      const std::string msg = last_error();
      std::string report;
      const long long wrong =
          wrong_2d(s, d0, salt, salt + 1, report) + wrong_2d(s, d1, salt + 2, salt + 3, report);
      run.check_execute(phase, what, rc, wrong, msg, report);
    }
    if (redist_plan_destroy(&plan) != REDIST_SUCCESS) {
      run.problem("redist_plan_destroy: " + last_error());
    }
  });
}

TEST(CollectiveFaults, ScalapackEntry) {
  // redist_pdgemr2d_: a first call (a miss: the plan is made and cached), a second call with
  // the same arguments (a hit), and a third with nothing armed. Each run has BLACS contexts of
  // its own (the library keeps what it learns of a communicator's nodes as an attribute of
  // it: each run must make the same calls), and empties the plan cache before and after (the
  // communicators the library made are counted before and after).
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); // before BLACS copies it
  const Scenario s = small_scenario();
  const int m = static_cast<int>(s.m);
  const int n = static_cast<int>(s.n);
  const auto ia = static_cast<int>(s.a.ia);
  const auto ja = static_cast<int>(s.a.ja);
  const auto ib = static_cast<int>(s.b.ia);
  const auto jb = static_cast<int>(s.b.ja);
  sweep("scalapack", {"call1", "call2"}, [&](FaultRun &run) {
    std::string error;
    const int ctxt_a = mpitest::create_context(s.a.grid, error);
    const int ctxt_b = mpitest::create_context(s.b.grid, error);
    const int ictxt = mpitest::create_context(s.ictxt, error);
    if (!error.empty()) run.problem("BLACS contexts: " + error);
    redist_scalapack_clear_cache();
    run.baseline();
    for (const int phase : {0, 1, -1}) {
      const std::string what = phase == 0   ? "first call (a miss)"
                               : phase == 1 ? "second call (a hit)"
                                            : "third call (nothing armed)";
      const int salt = 2 * (phase + 2) + 1;
      Data<double> d(s, salt, salt + 1);
      const std::array<int, 9> desca = mpitest::descriptor(s.a, ctxt_a, d.la);
      const std::array<int, 9> descb = mpitest::descriptor(s.b, ctxt_b, d.lb);
      errtest::StderrCapture capture;
      run.call(phase, what, [&] {
        redist_pdgemr2d_(&m, &n, d.a.data(), &ia, &ja, desca.data(), d.b.data(), &ib, &jb,
                         descb.data(), &ictxt);
        return 0;
      });
      const std::string printed = capture.finish();
      const int status = redist_scalapack_last_status();
      std::string report;
      const long long wrong = wrong_2d(s, d, salt, salt + 1, report);
      run.check_execute(phase, what, status, wrong, printed, report);
    }
    redist_scalapack_clear_cache();
    run.check_communicators("after the cache was emptied");
    mpitest::free_context(ctxt_a);
    mpitest::free_context(ctxt_b);
    mpitest::free_context(ictxt);
  });
}

// A ring rebalance (redist_ring.h) on a path where process 0 holds nearly every item: plan
// creation (its agreement and gathers, its own communicator) and an execution (the agreement
// after the exchange), each call failing in turn; the items checked where they belong.
TEST(CollectiveFaults, RingPlan) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  constexpr std::int64_t kTarget = 5;  // items per process after the rebalance
  constexpr std::int64_t kDoubles = 2; // per item
  const int me = world_rank();
  const int np = world_size();
  const auto load_of = [&](int r) { return r == 0 ? kTarget * np - (np - 1) : std::int64_t{1}; };
  const auto value = [](std::int64_t item, std::int64_t k, int salt) {
    return static_cast<double>(item * 16 + k) + 0.25 * salt;
  };
  std::int64_t first = 0;
  for (int r = 0; r < me; ++r)
    first += load_of(r);
  sweep("ring", {"create", "execute"}, [&](FaultRun &run) {
    run.baseline();
    redist_ring_plan plan = nullptr;
    const auto create = [&] {
      const double inf = INFINITY;
      return redist_ring_plan_create(user_comm(), REDIST_RING_BIDIRECTIONAL, REDIST_RING_NEIGHBOUR,
                                     load_of(me), kTarget, me == np - 1 ? inf : 1.0,
                                     me == 0 ? inf : 1.0, kDoubles * 8, 1, &plan);
    };
    int status = run.call(0, "ring plan creation", create);
    if (!run.check_create(0, "ring plan creation", status, plan != nullptr, last_error())) {
      if (plan != nullptr) redist_ring_plan_destroy(&plan);
      plan = nullptr;
      status = run.call(-1, "ring plan creation again", create);
      if (!run.check_create(-1, "ring plan creation again (nothing armed)", status, plan != nullptr,
                            last_error())) {
        if (plan != nullptr) redist_ring_plan_destroy(&plan);
        return;
      }
    }
    for (const int phase : {1, -1}) {
      const int salt = phase + 3;
      std::vector<double> in(static_cast<std::size_t>(load_of(me) * kDoubles));
      for (std::int64_t i = 0; i < load_of(me); ++i)
        for (std::int64_t k = 0; k < kDoubles; ++k)
          in[static_cast<std::size_t>(i * kDoubles + k)] = value(first + i, k, salt);
      std::vector<double> out(static_cast<std::size_t>(kTarget * kDoubles), -1.0);
      const std::string what = phase == 1 ? "execution" : "execution again (nothing armed)";
      const int rc = run.call(phase, what, [&] {
        return redist_ring_plan_execute(plan, in.data(), kDoubles * 8, out.data(), kDoubles * 8);
      });
      const std::string message = last_error();
      long long wrong = 0;
      for (std::int64_t j = 0; j < kTarget; ++j)
        for (std::int64_t k = 0; k < kDoubles; ++k)
          wrong +=
              out[static_cast<std::size_t>(j * kDoubles + k)] != value(me * kTarget + j, k, salt)
                  ? 1
                  : 0;
      run.check_execute(phase, what, rc, wrong, message,
                        std::to_string(wrong) + " items' values differ");
    }
    if (redist_ring_plan_destroy(&plan) != REDIST_SUCCESS)
      run.problem("redist_ring_plan_destroy: " + last_error());
  });
}

} // namespace
