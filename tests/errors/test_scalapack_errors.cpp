// Error cases of redist's ScaLAPACK-style entries (redist_p?gemr2d_, redist_p?trmr2d_,
// redist_Cp?gemr2d, redist_Cp?trmr2d).
//
// Every case starts from the valid redistribution of error_support.hpp, spoils one argument
// on one process or on every process, calls the routine on every process, and checks on every
// process:
//   - the call returned (a hang is caught by the ctest timeout);
//   - redist_scalapack_last_status(): REDIST_ERR_ARGUMENT where the bad value was passed,
//     REDIST_ERR_REMOTE elsewhere, REDIST_ERR_MISMATCH on all when processes disagree;
//   - stderr: exactly one line, "{ redist } PDGEMR2D: argument <k> (<name>) = <value>: ..."
//     where the bad value was seen, "... argument <k> is invalid on another process (process
//     <p> of ICTXT); nothing was copied" elsewhere;
//   - B's local buffer (LLD padding rows and a guard zone included) and A's are unchanged,
//     byte for byte;
//   - right after, the valid call succeeds, prints nothing and produces the oracle's B.
// Processes outside a grid pass DESCx(CTXT_) = -1 and garbage in the rest of the descriptor.

#include "../common/scalapack_decls.h"
#include "error_support.hpp"

#include <redist.h>
#include <redist_scalapack.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

static_assert(sizeof(redist_int) == sizeof(int), "the tests use the LP64 BLACS integer");

namespace {

using errtest::Data;
using errtest::Scenario;
using mpitest::GridSpec;
using mpitest::MatSpec;
using mpitest::world_rank;
using mpitest::world_size;

enum class Routine { Gemr, Trmr };
enum class Entry { Fortran, C };

enum Field { DTYPE_ = 0, CTXT_, M_, N_, MB_, NB_, RSRC_, CSRC_, LLD_ };
const char *const kFieldName[9] = {"DTYPE_", "CTXT_", "M_",    "N_",  "MB_",
                                   "NB_",    "RSRC_", "CSRC_", "LLD_"};

std::string desc_name(char side, Field f) {
  return std::string("DESC") + side + "(" + kFieldName[f] + ")";
}

/// Argument positions (1-based, as in the messages).
struct Positions {
  int uplo, diag, m, n, a, ia, ja, desca, b, ib, jb, descb, ictxt;
  [[nodiscard]] int desc(char side) const { return side == 'A' ? desca : descb; }
  [[nodiscard]] int i(char side) const { return side == 'A' ? ia : ib; }
  [[nodiscard]] int j(char side) const { return side == 'A' ? ja : jb; }
  [[nodiscard]] int data(char side) const { return side == 'A' ? a : b; }
};

Positions positions(Routine r) {
  if (r == Routine::Gemr) return {0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
}

// ---- contexts --------------------------------------------------------------------------------

/// The BLACS context of a grid, created on first use (collectively: every rank runs the same
/// tests in the same order, so every rank creates the same grids in the same order) and kept
/// until Cblacs_exit at the end of the program.
int context(const GridSpec &g) {
  static std::map<std::string, int> handles;
  const std::string key = g.describe();
  const auto it = handles.find(key);
  if (it != handles.end()) return it->second;
  std::string error;
  const int handle = mpitest::create_context(g, error);
  EXPECT_TRUE(error.empty()) << error;
  handles.emplace(key, handle);
  return handle;
}

// ---- one call's arguments --------------------------------------------------------------------

struct Args {
  redist_int m = 0, n = 0;
  const void *a = nullptr;
  redist_int ia = 1, ja = 1;
  redist_int desca[9] = {};
  void *b = nullptr;
  redist_int ib = 1, jb = 1;
  redist_int descb[9] = {};
  redist_int ictxt = -1;
  char uplo = 'U', diag = 'N';
  bool null_uplo = false; ///< pass UPLO as a NULL pointer

  redist_int *desc(char side) { return side == 'A' ? desca : descb; }
  redist_int &i(char side) { return side == 'A' ? ia : ib; }
  redist_int &j(char side) { return side == 'A' ? ja : jb; }
  void set_data_null(char side) {
    if (side == 'A')
      a = nullptr;
    else
      b = nullptr;
  }
};

void fill_desc(redist_int *d, const MatSpec &s) {
  const int ctxt = context(s.grid);
  const mpitest::LocalBuf lb = mpitest::local_buf(s, world_rank());
  if (!lb.member) {
    // Outside the grid: only CTXT_ = -1 counts; the rest must not be looked at.
    const redist_int garbage[9] = {0, -1, -5, -7, 0, -1, -9, 99, 0};
    std::copy(garbage, garbage + 9, d);
    return;
  }
  const std::array<int, 9> values = mpitest::descriptor(s, ctxt, lb);
  std::copy(values.begin(), values.end(), d);
}

Args make_args(const Scenario &s, const void *a, void *b) {
  Args x;
  x.m = static_cast<redist_int>(s.m);
  x.n = static_cast<redist_int>(s.n);
  x.a = a;
  x.b = b;
  x.ia = static_cast<redist_int>(s.a.ia);
  x.ja = static_cast<redist_int>(s.a.ja);
  x.ib = static_cast<redist_int>(s.b.ia);
  x.jb = static_cast<redist_int>(s.b.ja);
  fill_desc(x.desca, s.a);
  fill_desc(x.descb, s.b);
  x.ictxt = context(s.ictxt);
  return x;
}

// ---- the entry points, by element type ---------------------------------------------------------

template <class T> struct Entries;
#define ERRTEST_ENTRIES(T, x, X, P)                                                                \
  template <> struct Entries<T> {                                                                  \
    using Ptr = P;                                                                                 \
    static constexpr char letter = X;                                                              \
    static void call(Routine r, Entry e, Args &g) {                                                \
      const auto *a = static_cast<const P *>(g.a);                                                 \
      auto *b = static_cast<P *>(g.b);                                                             \
      const char uplo_text[2] = {g.uplo, '\0'};                                                    \
      const char *uplo = g.null_uplo ? nullptr : uplo_text;                                        \
      const char diag[2] = {g.diag, '\0'};                                                         \
      if (e == Entry::Fortran && r == Routine::Gemr) {                                             \
        redist_p##x##gemr2d_(&g.m, &g.n, a, &g.ia, &g.ja, g.desca, b, &g.ib, &g.jb, g.descb,       \
                             &g.ictxt);                                                            \
      } else if (e == Entry::Fortran) {                                                            \
        redist_p##x##trmr2d_(g.null_uplo ? nullptr : &g.uplo, &g.diag, &g.m, &g.n, a, &g.ia,       \
                             &g.ja, g.desca, b, &g.ib, &g.jb, g.descb, &g.ictxt);                  \
      } else if (r == Routine::Gemr) {                                                             \
        redist_Cp##x##gemr2d(g.m, g.n, const_cast<P *>(a), g.ia, g.ja, g.desca, b, g.ib, g.jb,     \
                             g.descb, g.ictxt);                                                    \
      } else {                                                                                     \
        redist_Cp##x##trmr2d(uplo, diag, g.m, g.n, const_cast<P *>(a), g.ia, g.ja, g.desca, b,     \
                             g.ib, g.jb, g.descb, g.ictxt);                                        \
      }                                                                                            \
    }                                                                                              \
  };
ERRTEST_ENTRIES(float, s, 'S', float)
ERRTEST_ENTRIES(double, d, 'D', double)
ERRTEST_ENTRIES(std::complex<float>, c, 'C', void)
ERRTEST_ENTRIES(std::complex<double>, z, 'Z', void)
ERRTEST_ENTRIES(redist_int, i, 'I', redist_int)
#undef ERRTEST_ENTRIES

std::string routine_name(Routine r, Entry e, char letter) {
  return std::string(e == Entry::C ? "CP" : "P") + letter +
         (r == Routine::Gemr ? "GEMR2D" : "TRMR2D");
}

// ---- expectations ------------------------------------------------------------------------------

/// What one process must see.
struct Expect {
  int status = REDIST_SUCCESS;
  std::string text;                ///< stderr must be exactly this (exact) or start with it
  bool exact = true;               ///< "" + exact: nothing printed
  std::string also;                ///< and must contain this
  std::vector<std::string> any_of; ///< if not empty: stderr must equal one of these instead
};
using ExpectFn = std::function<Expect(const std::string &routine, int rank)>;
using MutateFn = std::function<void(Args &, int rank)>;

struct Case {
  std::string label;
  MutateFn mutate;
  ExpectFn expect;
};

ExpectFn succeeds() {
  return [](const std::string &, int) { return Expect{}; };
}

/// The argument at `pos` is invalid on the ranks `bad` (every rank when empty); `value` as
/// the message prints it.
ExpectFn invalid(std::vector<int> bad, int pos, const std::string &name, const std::string &value,
                 const std::string &reason) {
  return [=](const std::string &routine, int rank) {
    Expect e;
    if (bad.empty() || std::find(bad.begin(), bad.end(), rank) != bad.end()) {
      e.status = REDIST_ERR_ARGUMENT;
      e.exact = false;
      e.text = "{ redist } " + routine + ": argument " + std::to_string(pos) + " (" + name +
               ") = " + value + ": " + reason;
      e.also = "; nothing was copied";
    } else {
      // The position of a process in the standard ICTXT (1 x P, row-major) is its rank.
      e.status = REDIST_ERR_REMOTE;
      e.text = "{ redist } " + routine + ": argument " + std::to_string(pos) +
               " is invalid on another process (process " +
               std::to_string(*std::max_element(bad.begin(), bad.end())) +
               " of ICTXT); nothing was copied\n";
    }
    return e;
  };
}

ExpectFn invalid(std::vector<int> bad, int pos, const std::string &name, long long value,
                 const std::string &reason) {
  return invalid(std::move(bad), pos, name, std::to_string(value), reason);
}

ExpectFn mismatch(int pos, long long low, long long high) {
  return [=](const std::string &routine, int) {
    Expect e;
    e.status = REDIST_ERR_MISMATCH;
    e.text = "{ redist } " + routine + ": argument " + std::to_string(pos) +
             " differs between processes (values from " + std::to_string(low) + " to " +
             std::to_string(high) + "); nothing was copied\n";
    return e;
  };
}

std::string label(char side, const std::string &what) {
  return std::string(side == 'A' ? "[DESCA side] " : "[DESCB side] ") + what;
}

void check_text(const std::string &text, const Expect &want, const std::string &where) {
  if (!want.any_of.empty()) {
    std::string options;
    for (const std::string &o : want.any_of)
      options += "  " + o;
    const bool one_of =
        std::find(want.any_of.begin(), want.any_of.end(), text) != want.any_of.end();
    EXPECT_TRUE(one_of) << where << "stderr should be one of\n" << options << "got\n  " << text;
    return;
  }
  if (want.text.empty()) {
    EXPECT_EQ(text, "") << where << "expected no output on stderr";
    return;
  }
  EXPECT_EQ(errtest::count_lines(text), 1u) << where << "expected one line on stderr, got:\n"
                                            << text;
  if (want.exact) {
    EXPECT_EQ(text, want.text) << where;
  } else {
    EXPECT_TRUE(errtest::starts_with(text, want.text))
        << where << "stderr should start with\n  " << want.text << "\ngot\n  " << text;
  }
  if (!want.also.empty()) {
    EXPECT_NE(text.find(want.also), std::string::npos)
        << where << "stderr should contain \"" << want.also << "\", got\n  " << text;
  }
}

/// The standard valid call: succeeds, prints nothing, B as the oracle says.
template <class T> void valid_call_works(Routine r, Entry e, const std::string &where) {
  const Scenario s = errtest::standard_scenario();
  Data<T> d(s, 5, 6);
  Args x = make_args(s, d.a.data(), d.b.data());
  errtest::StderrCapture capture;
  Entries<T>::call(r, e, x);
  const std::string text = capture.finish();
  EXPECT_EQ(redist_scalapack_last_status(), REDIST_SUCCESS)
      << where << "the valid call right after failed; stderr:\n"
      << text;
  EXPECT_EQ(text, "") << where << "the valid call right after printed something";
  mpitest::CopySpec c;
  c.region = r == Routine::Gemr ? mpitest::Region::Full : mpitest::Region::Upper;
  c.m = s.m;
  c.n = s.n;
  std::string report;
  const std::int64_t wrong = mpitest::check_b(c, s.a, s.b, d.lb, d.b.data(), 5, 6, report);
  EXPECT_EQ(wrong, 0) << where << "the valid call right after produced a wrong B:\n" << report;
}

/// Run one error case of `bad` (a scenario that `c.mutate` spoils further), then the valid call.
template <class T> void run_case(Routine r, Entry e, const Scenario &bad, const Case &c) {
  const int rank = world_rank();
  const std::string routine = routine_name(r, e, Entries<T>::letter);
  const std::string where = "[" + routine + "] " + c.label + ": ";
  Data<T> d(bad, 1, 2);
  Args x = make_args(bad, d.a.data(), d.b.data());
  if (c.mutate) c.mutate(x, rank);
  const std::vector<T> a_before = d.a;
  const std::vector<T> b_before = d.b;
  const long long calls_before = redist_scalapack_call_count();

  errtest::StderrCapture capture;
  Entries<T>::call(r, e, x);
  const std::string text = capture.finish();
  const int status = redist_scalapack_last_status();
  if (mpitest::options().verbose) {
    std::printf("[rank %d] %sstatus %d, stderr: %s%s", rank, where.c_str(), status, text.c_str(),
                text.empty() || text.back() != '\n' ? "\n" : "");
    std::fflush(stdout);
  }

  EXPECT_EQ(redist_scalapack_call_count(), calls_before + 1) << where;
  const Expect want = c.expect(routine, rank);
  EXPECT_EQ(status, want.status) << where << "status " << redist_status_name(status)
                                 << ", expected " << redist_status_name(want.status)
                                 << "; stderr:\n"
                                 << text;
  check_text(text, want, where);
  if (want.status == REDIST_SUCCESS && x.m > 0 && x.n > 0) {
    // A valid call (e.g. garbage in a non-member's descriptor): B as the oracle says.
    mpitest::CopySpec cs;
    cs.region = r == Routine::Gemr ? mpitest::Region::Full
                : x.uplo == 'U'    ? mpitest::Region::Upper
                                   : mpitest::Region::Lower;
    cs.unit_diag = r == Routine::Trmr && x.diag == 'U';
    cs.m = x.m;
    cs.n = x.n;
    std::string report;
    EXPECT_EQ(mpitest::check_b(cs, bad.a, bad.b, d.lb, d.b.data(), 1, 2, report), 0)
        << where << "wrong B:\n"
        << report;
  } else {
    EXPECT_EQ(errtest::byte_diff(b_before, d.b), "") << where << "B was modified";
  }
  EXPECT_EQ(errtest::byte_diff(a_before, d.a), "") << where << "A was modified";

  valid_call_works<T>(r, e, where);
}

// ---- the cases ---------------------------------------------------------------------------------

class ScalapackErrors : public testing::TestWithParam<Routine> {
protected:
  [[nodiscard]] Routine routine() const { return GetParam(); }
  [[nodiscard]] Positions pos() const { return positions(GetParam()); }
  void run(const Case &c) {
    run_case<double>(routine(), Entry::Fortran, errtest::standard_scenario(), c);
  }
  void run(const Scenario &bad, const Case &c) {
    run_case<double>(routine(), Entry::Fortran, bad, c);
  }
  static const MatSpec &spec(const Scenario &s, char side) { return side == 'A' ? s.a : s.b; }
};

const char kSides[2] = {'A', 'B'};

TEST_P(ScalapackErrors, DescriptorTypeNeitherOneNorTwo) {
  const int bad = errtest::last_rank();
  const char *reason =
      "descriptor type must be 1 (9 integers) or 2 (11 integers, PBLAS's BLOCK_CYCLIC_2D_INB)";
  for (const char side : kSides) {
    run({label(side, "DTYPE_ = 3 on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[DTYPE_] = 3;
         },
         invalid({bad}, pos().desc(side), desc_name(side, DTYPE_), 3, reason)});
    run({label(side, "DTYPE_ = 0 everywhere"), [=](Args &x, int) { x.desc(side)[DTYPE_] = 0; },
         invalid({}, pos().desc(side), desc_name(side, DTYPE_), 0, reason)});
  }
}

TEST_P(ScalapackErrors, ContextHandleGarbage) {
  const int bad = errtest::last_rank();
  for (const char side : kSides) {
    run({label(side, "CTXT_ = 12345 on the last process (a member)"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[CTXT_] = 12345;
         },
         invalid({bad}, pos().desc(side), desc_name(side, CTXT_), 12345, "not a BLACS context")});
    run({label(side, "CTXT_ = -7 everywhere"), [=](Args &x, int) { x.desc(side)[CTXT_] = -7; },
         invalid({}, pos().desc(side), desc_name(side, CTXT_), -7, "not a BLACS context")});
  }
}

TEST_P(ScalapackErrors, ContextHandleAlreadyFreed) {
  // A context created and freed by every process: its handle is stale.
  int stale = -1;
  Cblacs_get(-1, 0, &stale);
  Cblacs_gridinit(&stale, "R", 1, world_size());
  Cblacs_gridexit(stale);
  const int bad = errtest::last_rank();
  for (const char side : kSides) {
    run({label(side, "CTXT_ = a freed context's handle (" + std::to_string(stale) +
                         ") on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[CTXT_] = stale;
         },
         invalid({bad}, pos().desc(side), desc_name(side, CTXT_), stale, "not a BLACS context")});
  }
}

TEST_P(ScalapackErrors, MemberPassesCtxtMinusOne) {
  // The last process is in the grid but passes CTXT_ = -1 (as if it were not): its grid
  // position is then empty, which every process must detect (here: a status on every
  // process, one line each, nothing copied; the wording is not pinned).
  const int bad = errtest::last_rank();
  for (const char side : kSides) {
    run({label(side, "CTXT_ = -1 on the last process, which is in the grid"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[CTXT_] = -1;
         },
         [](const std::string &routine, int) {
           Expect e;
           e.status = REDIST_ERR_ARGUMENT;
           e.exact = false;
           e.text = "{ redist } " + routine + ": argument ";
           e.also = "nothing was copied";
           return e;
         }});
  }
}

TEST_P(ScalapackErrors, NoProcessInTheGrid) {
  // CTXT_ = -1 everywhere: a valid value on each process, but then the matrix lives nowhere.
  for (const char side : kSides) {
    const int p = pos().desc(side);
    run({label(side, "CTXT_ = -1 on every process"),
         [=](Args &x, int) { x.desc(side)[CTXT_] = -1; },
         [=](const std::string &routine, int) {
           Expect e;
           e.status = REDIST_ERR_ARGUMENT;
           e.text = "{ redist } " + routine + ": argument " + std::to_string(p) + " (DESC" + side +
                    "(CTXT_)): no process of ICTXT is in the grid of DESC" + side +
                    "; nothing was copied\n";
           return e;
         }});
  }
}

TEST_P(ScalapackErrors, GlobalExtentNegative) {
  const int bad = errtest::last_rank();
  for (const char side : kSides) {
    run({label(side, "M_ = -1 on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[M_] = -1;
         },
         invalid({bad}, pos().desc(side), desc_name(side, M_), -1, "must be >= 0")});
    run({label(side, "N_ = -3 everywhere"), [=](Args &x, int) { x.desc(side)[N_] = -3; },
         invalid({}, pos().desc(side), desc_name(side, N_), -3, "must be >= 0")});
  }
}

TEST_P(ScalapackErrors, BlockSizeNotPositive) {
  const int bad = errtest::last_rank();
  for (const char side : kSides) {
    run({label(side, "MB_ = 0 everywhere"), [=](Args &x, int) { x.desc(side)[MB_] = 0; },
         invalid({}, pos().desc(side), desc_name(side, MB_), 0, "block size must be >= 1")});
    run({label(side, "MB_ = 0 on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[MB_] = 0;
         },
         invalid({bad}, pos().desc(side), desc_name(side, MB_), 0, "block size must be >= 1")});
    run({label(side, "NB_ = -1 on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[NB_] = -1;
         },
         invalid({bad}, pos().desc(side), desc_name(side, NB_), -1, "block size must be >= 1")});
  }
}

TEST_P(ScalapackErrors, SourceProcessOutOfRange) {
  const int bad = errtest::last_rank();
  const Scenario s = errtest::standard_scenario();
  for (const char side : kSides) {
    const int nprow = spec(s, side).grid.nprow;
    const int npcol = spec(s, side).grid.npcol;
    run({label(side, "RSRC_ = nprow on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[RSRC_] = nprow;
         },
         invalid({bad}, pos().desc(side), desc_name(side, RSRC_), nprow,
                 "must be -1 (replicated) or in [0, " + std::to_string(nprow) + ") (grid rows)")});
    // -1 is a matrix replicated over the process columns; below it nothing.
    run({label(side, "CSRC_ = -2 everywhere"), [=](Args &x, int) { x.desc(side)[CSRC_] = -2; },
         invalid({}, pos().desc(side), desc_name(side, CSRC_), -2,
                 "must be -1 (replicated) or in [0, " + std::to_string(npcol) +
                     ") (grid columns)")});
  }
}

TEST_P(ScalapackErrors, LeadingDimensionTooSmallOnOneProcess) {
  const int bad = errtest::last_rank();
  const Scenario s = errtest::standard_scenario();
  for (const char side : kSides) {
    const mpitest::LocalBuf lb = mpitest::local_buf(spec(s, side), bad);
    const std::int64_t need = std::max<std::int64_t>(1, lb.locr);
    const auto lld = static_cast<redist_int>(need - 1);
    run({label(side, "LLD_ = local rows - 1 on the last process only"),
         [=](Args &x, int rank) {
           if (rank == bad) x.desc(side)[LLD_] = lld;
         },
         invalid({bad}, pos().desc(side), desc_name(side, LLD_), lld,
                 "must be >= max(1, local rows) = " + std::to_string(need))});
  }
}

TEST_P(ScalapackErrors, WindowOutsideTheMatrix) {
  const int bad = errtest::last_rank();
  const Scenario s = errtest::standard_scenario();
  for (const char side : kSides) {
    const MatSpec &ms = spec(s, side);
    const std::string i_name = side == 'A' ? "IA" : "IB";
    const std::string j_name = side == 'A' ? "JA" : "JB";
    const std::string rows = "rows " + i_name + ".." + i_name + "+M-1 (M = " + std::to_string(s.m) +
                             ") must lie in 1.." + std::to_string(ms.mg);
    const std::string cols = "columns " + j_name + ".." + j_name +
                             "+N-1 (N = " + std::to_string(s.n) + ") must lie in 1.." +
                             std::to_string(ms.ng);
    run({label(side, i_name + " = 0 everywhere"), [=](Args &x, int) { x.i(side) = 0; },
         invalid({}, pos().i(side), i_name, 0, rows)});
    const auto i_high = static_cast<redist_int>(ms.mg - s.m + 2);
    run({label(side, i_name + "+M-1 = M_+1 on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) x.i(side) = i_high;
         },
         invalid({bad}, pos().i(side), i_name, i_high, rows)});
    const auto j_high = static_cast<redist_int>(ms.ng - s.n + 2);
    run({label(side, j_name + "+N-1 = N_+1 on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) x.j(side) = j_high;
         },
         invalid({bad}, pos().j(side), j_name, j_high, cols)});
    run({label(side, j_name + " = -4 everywhere"), [=](Args &x, int) { x.j(side) = -4; },
         invalid({}, pos().j(side), j_name, -4, cols)});
  }
}

TEST_P(ScalapackErrors, NullLocalArrayOnAnOwner) {
  const Scenario s = errtest::standard_scenario();
  for (const char side : kSides) {
    const int bad = errtest::window_holder(spec(s, side), s.m, s.n);
    run({label(side, std::string("NULL ") + side + " on process " + std::to_string(bad) +
                         ", which holds part of the window"),
         [=](Args &x, int rank) {
           if (rank == bad) x.set_data_null(side);
         },
         invalid({bad}, pos().data(side), std::string(1, side), 0,
                 "NULL local array on a process that holds part of the matrix")});
  }
}

TEST_P(ScalapackErrors, WindowExtentNegative) {
  const int bad = errtest::last_rank();
  run({"M = -1 everywhere", [](Args &x, int) { x.m = -1; },
       invalid({}, pos().m, "M", -1, "must be >= 0")});
  run({"M = -1 on the last process",
       [=](Args &x, int rank) {
         if (rank == bad) x.m = -1;
       },
       invalid({bad}, pos().m, "M", -1, "must be >= 0")});
  run({"N = -2 everywhere", [](Args &x, int) { x.n = -2; },
       invalid({}, pos().n, "N", -2, "must be >= 0")});
  run({"N = -1 on process 0",
       [](Args &x, int rank) {
         if (rank == 0) x.n = -1;
       },
       invalid({0}, pos().n, "N", -1, "must be >= 0")});
}

TEST_P(ScalapackErrors, BadArgumentOnAProcessOutsideBothGrids) {
  // A and B live on processes 0..P-2; the last process is only in ICTXT. M and N still count
  // there.
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  errtest::Scenario s = errtest::standard_scenario();
  s.a = errtest::subset_a();
  s.b = errtest::subset_b();
  const int out = errtest::last_rank();
  run(s, {"M = -1 on the last process, outside both grids",
          [=](Args &x, int rank) {
            if (rank == out) x.m = -1;
          },
          invalid({out}, pos().m, "M", -1, "must be >= 0")});
  run(s, {"N + 1 on the last process, outside both grids",
          [=](Args &x, int rank) {
            if (rank == out) ++x.n;
          },
          mismatch(pos().n, s.n, s.n + 1)});
  run(s, {"valid: the last process passes garbage descriptors and NULL arrays",
          [=](Args &x, int rank) {
            if (rank != out) return;
            x.a = nullptr;
            x.b = nullptr;
            x.ia = x.ja = x.ib = x.jb = -3;
          },
          succeeds()});
}

TEST_P(ScalapackErrors, TwoProcessesWithDifferentBadArguments) {
  // Process 0 passes M = -1, the last process DESCA(MB_) = 0. Each reports its own; the others
  // must name an invalid argument together with a process on which THAT argument is invalid.
  if (world_size() < 3) GTEST_SKIP() << "needs three processes";
  const int last = errtest::last_rank();
  const Positions p = pos();
  run({"M = -1 on process 0 and DESCA(MB_) = 0 on the last process",
       [=](Args &x, int rank) {
         if (rank == 0) x.m = -1;
         if (rank == last) x.desca[MB_] = 0;
       },
       [=](const std::string &routine, int rank) {
         if (rank == 0) return invalid({0}, p.m, "M", -1, "must be >= 0")(routine, rank);
         if (rank == last) {
           return invalid({last}, p.desca, "DESCA(MB_)", 0, "block size must be >= 1")(routine,
                                                                                       rank);
         }
         Expect e;
         e.status = REDIST_ERR_REMOTE;
         for (const auto &[position, process] : {std::pair{p.m, 0}, std::pair{p.desca, last}}) {
           e.any_of.push_back("{ redist } " + routine + ": argument " + std::to_string(position) +
                              " is invalid on another process (process " + std::to_string(process) +
                              " of ICTXT); nothing was copied\n");
         }
         return e;
       }});
}

TEST_P(ScalapackErrors, ArgumentsDifferBetweenProcesses) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int bad = errtest::last_rank();
  const Scenario s = errtest::standard_scenario();
  run({"M + 1 on the last process",
       [=](Args &x, int rank) {
         if (rank == bad) ++x.m;
       },
       mismatch(pos().m, s.m, s.m + 1)});
  run({"N + 1 on the last process",
       [=](Args &x, int rank) {
         if (rank == bad) ++x.n;
       },
       mismatch(pos().n, s.n, s.n + 1)});
  for (const char side : kSides) {
    const MatSpec &ms = spec(s, side);
    // A larger block on one process may change its local rows: keep its LLD_ valid.
    int pr = 0;
    int pc = 0;
    static_cast<void>(ms.grid.find(bad, pr, pc));
    const std::int64_t rows_then = mpitest::numroc(ms.mg, ms.mb + 1, pr, ms.rsrc, ms.grid.nprow);
    run({label(side, "MB_ + 1 on the last process"),
         [=](Args &x, int rank) {
           if (rank != bad) return;
           ++x.desc(side)[MB_];
           x.desc(side)[LLD_] = std::max(x.desc(side)[LLD_], static_cast<redist_int>(rows_then));
         },
         mismatch(pos().desc(side), ms.mb, ms.mb + 1)});
    // Another source process (in whichever grid dimension has more than one process).
    const bool along_cols = ms.grid.npcol > 1;
    const Field src_field = along_cols ? CSRC_ : RSRC_;
    const int src = along_cols ? ms.csrc : ms.rsrc;
    const int other = (src + 1) % (along_cols ? ms.grid.npcol : ms.grid.nprow);
    run({label(side, std::string(kFieldName[src_field]) + " differs on the last process"),
         [=](Args &x, int rank) {
           if (rank != bad) return;
           x.desc(side)[src_field] = other;
           x.desc(side)[LLD_] += static_cast<redist_int>(ms.mb); // local rows may grow
         },
         mismatch(pos().desc(side), std::min(src, other), std::max(src, other))});
    run({label(side, std::string(side == 'A' ? "IA" : "IB") + " + 1 on the last process"),
         [=](Args &x, int rank) {
           if (rank == bad) ++x.i(side);
         },
         mismatch(pos().i(side), ms.ia, ms.ia + 1)});
  }
}

/// One call with `variable` = `value` on the processes `on` (every process when empty), unset
/// elsewhere: the status and stderr line `expect` gives, B untouched unless it succeeds; then,
/// with the variable unset again, the valid call works.
void environment_case(const char *variable, const char *value, const std::vector<int> &on,
                      const ExpectFn &expect) {
  const int rank = world_rank();
  const Scenario s = errtest::standard_scenario();
  const std::string where = std::string("[PDGEMR2D] ") + variable + " = '" + value + "'" +
                            (on.empty() ? " everywhere" : " on the last process") + ": ";
  Data<double> d(s, 1, 2);
  Args x = make_args(s, d.a.data(), d.b.data());
  const std::vector<double> b_before = d.b;
  if (on.empty() || std::find(on.begin(), on.end(), rank) != on.end()) setenv(variable, value, 1);
  redist_scalapack_clear_cache(); // the entries read the environment again at their next call
  errtest::StderrCapture capture;
  Entries<double>::call(Routine::Gemr, Entry::Fortran, x);
  const std::string text = capture.finish();
  unsetenv(variable);
  redist_scalapack_clear_cache();
  const int status = redist_scalapack_last_status();
  const Expect want = expect("PDGEMR2D", rank);
  EXPECT_EQ(status, want.status) << where << "status " << redist_status_name(status)
                                 << ", expected " << redist_status_name(want.status)
                                 << "; stderr:\n"
                                 << text;
  check_text(text, want, where);
  if (want.status == REDIST_SUCCESS) {
    mpitest::CopySpec cs;
    cs.m = x.m;
    cs.n = x.n;
    std::string report;
    EXPECT_EQ(mpitest::check_b(cs, s.a, s.b, d.lb, d.b.data(), 1, 2, report), 0)
        << where << "wrong B:\n"
        << report;
  } else {
    EXPECT_EQ(errtest::byte_diff(b_before, d.b), "") << where << "B was modified";
  }
  valid_call_works<double>(Routine::Gemr, Entry::Fortran, where);
}

/// A bad value of an environment variable on the processes `bad` (every process when empty).
ExpectFn bad_environment(std::vector<int> bad, const char *variable, const char *value,
                         const std::string &reason) {
  return [=](const std::string &routine, int rank) {
    Expect e;
    if (bad.empty() || std::find(bad.begin(), bad.end(), rank) != bad.end()) {
      e.status = REDIST_ERR_ARGUMENT;
      e.text = "{ redist } " + routine + ": environment variable " + variable + " = '" + value +
               "': " + reason + "; nothing was copied\n";
    } else {
      e.status = REDIST_ERR_REMOTE;
      e.text = "{ redist } " + routine +
               ": the REDIST_* environment is invalid on another process (process " +
               std::to_string(*std::max_element(bad.begin(), bad.end())) +
               " of ICTXT); nothing was copied\n";
    }
    return e;
  };
}

// Every environment variable the entries read, through the one reader (environment.hpp): unset
// or empty is the default; garbage, a negative number, a number out of range or past 64 bits,
// blanks or a suffix are refused on every process, naming the variable, the value and the
// reason, and nothing is copied. Before, REDIST_PLAN_CACHE_SIZE and REDIST_COMM_CACHE_SIZE
// fell back to their defaults silently and blanks before a number were accepted.
TEST(ScalapackEnvironment, EveryVariableOneRule) {
  const std::vector<int> everywhere;
  const std::vector<int> last{errtest::last_rank()};
  const std::string count = "must be an integer >= 0 (0 = no limit)";
  const std::string bytes = "must be a number of bytes >= 0 (0 = no cap)";
  const std::string size = "must be an integer >= 1";
  struct Bad {
    const char *variable, *value;
    std::string reason;
  };
  const std::vector<Bad> cases = {
      {"REDIST_SCHEDULE", "fastest", "unknown schedule (known: "},
      {"REDIST_SCHEDULE", " auto", "unknown schedule (known: "},
      {"REDIST_MAX_CONCURRENT", "many", count},
      {"REDIST_MAX_CONCURRENT", "-1", count + "; out of range [0, 2147483647]"},
      {"REDIST_MAX_CONCURRENT", "2147483648", count + "; out of range [0, 2147483647]"},
      {"REDIST_MAX_CONCURRENT", " 4", count},
      {"REDIST_MAX_MEMORY", "1e9", bytes},
      {"REDIST_MAX_MEMORY", "-8", bytes + "; out of range [0, 9223372036854775807]"},
      {"REDIST_MAX_MEMORY", "9223372036854775808",
       bytes + "; out of range [0, 9223372036854775807]"},
      {"REDIST_MAX_MEMORY", " 4096", bytes},
      {"REDIST_PLAN_CACHE_SIZE", "lots", size},
      {"REDIST_PLAN_CACHE_SIZE", "0", size + "; out of range [1, 4096]"},
      {"REDIST_PLAN_CACHE_SIZE", "-3", size + "; out of range [1, 4096]"},
      {"REDIST_PLAN_CACHE_SIZE", "4097", size + "; out of range [1, 4096]"},
      {"REDIST_PLAN_CACHE_SIZE", "99999999999999999999", size + "; out of range [1, 4096]"},
      {"REDIST_PLAN_CACHE_SIZE", "16 ", size},
      {"REDIST_COMM_CACHE_SIZE", "eight", size},
      {"REDIST_COMM_CACHE_SIZE", "-1", size + "; out of range [1, 4096]"},
      {"REDIST_COMM_CACHE_SIZE", "18446744073709551617", size + "; out of range [1, 4096]"},
      {"REDIST_SINGLE_COPY", "sometimes", "unknown (known: "},
      {"REDIST_SINGLE_COPY", "-1", "unknown (known: "},
      {"REDIST_PROGRESS", "always", "unknown (known: none, thread)"},
      // This program's MPI_Init gives MPI_THREAD_SINGLE.
      {"REDIST_PROGRESS", "thread",
       "needs MPI initialised with MPI_THREAD_MULTIPLE (MPI_Init_thread)"},
  };
  for (const Bad &c : cases) {
    for (const std::vector<int> *on : {&everywhere, &last}) {
      ExpectFn expect = bad_environment(*on, c.variable, c.value, c.reason);
      if (c.reason.back() == ' ') { // the list of names follows: compare the start only
        expect = [inner = expect](const std::string &routine, int rank) {
          Expect e = inner(routine, rank);
          if (e.status == REDIST_ERR_ARGUMENT) {
            e.text = e.text.substr(0, e.text.find("; nothing was copied"));
            e.exact = false;
            e.also = "; nothing was copied";
          }
          return e;
        };
      }
      environment_case(c.variable, c.value, *on, expect);
    }
  }
  // Empty is unset: the default, for every variable; so are valid values.
  for (const char *variable :
       {"REDIST_SCHEDULE", "REDIST_MAX_CONCURRENT", "REDIST_MAX_MEMORY", "REDIST_PLAN_CACHE_SIZE",
        "REDIST_COMM_CACHE_SIZE", "REDIST_SINGLE_COPY", "REDIST_PROGRESS"}) {
    environment_case(variable, "", everywhere, succeeds());
  }
  for (const auto &[variable, value] :
       {std::pair{"REDIST_PLAN_CACHE_SIZE", "1"}, std::pair{"REDIST_COMM_CACHE_SIZE", "4096"},
        std::pair{"REDIST_MAX_CONCURRENT", "+2"}, std::pair{"REDIST_SINGLE_COPY", "never"},
        std::pair{"REDIST_PROGRESS", "none"}}) {
    environment_case(variable, value, everywhere, succeeds());
  }
}

// REDIST_MAX_MEMORY above 2^53, different by one between processes: a double cannot tell
// 2^53 from 2^53 + 1, so the old agreement (doubles through an absolute-maximum combine) let
// the processes go on with different caps; the 64-bit agreement refuses it everywhere.
TEST(ScalapackEnvironment, MaxMemoryAbove2To53DifferingByOne) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int rank = world_rank();
  const Scenario s = errtest::standard_scenario();
  for (const auto &[low, high] : {std::pair{"9007199254740992", "9007199254740993"},
                                  std::pair{"9223372036854775806", "9223372036854775807"}}) {
    const std::string where = std::string("[PDGEMR2D] REDIST_MAX_MEMORY = ") + high +
                              " on the last process, " + low + " elsewhere: ";
    Data<double> d(s, 1, 2);
    Args x = make_args(s, d.a.data(), d.b.data());
    const std::vector<double> b_before = d.b;
    setenv("REDIST_MAX_MEMORY", rank == errtest::last_rank() ? high : low, 1);
    redist_scalapack_clear_cache(); // the entries read the environment again at their next call
    errtest::StderrCapture capture;
    Entries<double>::call(Routine::Gemr, Entry::Fortran, x);
    const std::string text = capture.finish();
    unsetenv("REDIST_MAX_MEMORY");
    redist_scalapack_clear_cache();
    EXPECT_EQ(redist_scalapack_last_status(), REDIST_ERR_MISMATCH) << where << text;
    EXPECT_EQ(text, "{ redist } PDGEMR2D: REDIST_SCHEDULE, REDIST_MAX_CONCURRENT or "
                    "REDIST_MAX_MEMORY differ between processes; nothing was copied\n")
        << where;
    EXPECT_EQ(errtest::byte_diff(b_before, d.b), "") << where << "B was modified";
    valid_call_works<double>(Routine::Gemr, Entry::Fortran, where);
  }
}

/// A process of the grid of DESC<side> is outside ICTXT (a 1 x (P-1) grid of processes
/// 0..P-2). The excluded process calls too, with ICTXT = -1, and must fail by itself; the
/// others find the hole in the grid.
TEST_P(ScalapackErrors, IctxtMissesAProcessOfTheGrid) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int out = errtest::last_rank();
  std::vector<int> inside;
  for (int r = 0; r < out; ++r)
    inside.push_back(r);
  for (const char side : kSides) {
    Scenario s = errtest::standard_scenario();
    s.ictxt = errtest::map_grid(1, out, inside);
    if (side == 'B') s.a = errtest::subset_a(); // only B's grid holds the excluded process
    const MatSpec &ms = spec(s, side);
    int pr = 0;
    int pc = 0;
    static_cast<void>(ms.grid.find(out, pr, pc));
    const int ictxt_pos = pos().ictxt;
    run(s, {label(side,
                  "ICTXT over processes 0..P-2, DESC" + std::string(1, side) + "'s grid over all"),
            nullptr, [=](const std::string &routine, int rank) {
              Expect e;
              e.status = REDIST_ERR_ARGUMENT;
              if (rank == out) {
                e.exact = false;
                e.text = "{ redist } " + routine + ": argument " + std::to_string(ictxt_pos) +
                         " (ICTXT) = -1: this process is in the grid of DESC" + side +
                         " but not in ICTXT";
              } else {
                e.text = "{ redist } " + routine + ": argument " + std::to_string(ictxt_pos) +
                         " (ICTXT): the process at (" + std::to_string(pr) + ", " +
                         std::to_string(pc) + ") of the grid of DESC" + side +
                         " is not in ICTXT (or passed DESC" + side +
                         "(CTXT_) = -1); nothing was copied\n";
              }
              return e;
            }});
  }
}

TEST_P(ScalapackErrors, EmptyWindowDoesNothing) {
  run({"M = 0", [](Args &x, int) { x.m = 0; }, succeeds()});
  run({"N = 0", [](Args &x, int) { x.n = 0; }, succeeds()});
  run({"M = N = 0 with NULL A and B everywhere",
       [](Args &x, int) {
         x.m = 0;
         x.n = 0;
         x.a = nullptr;
         x.b = nullptr;
       },
       succeeds()});
}

/// Not an error: on processes outside A's grid, DESCA holds garbage but CTXT_ = -1 and A is
/// NULL; the call must succeed (the runner's valid call then checks the library still works).
TEST_P(ScalapackErrors, NonMembersArgumentsAreNotLookedAt) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  Scenario s = errtest::standard_scenario();
  s.a = errtest::subset_a();
  const int out = errtest::last_rank();
  run(s, {"A on processes 0..P-2; the last passes DESCA garbage, CTXT_ = -1, A = NULL",
          [=](Args &x, int rank) {
            if (rank == out) x.a = nullptr;
          },
          succeeds()});
}

INSTANTIATE_TEST_SUITE_P(, ScalapackErrors, testing::Values(Routine::Gemr, Routine::Trmr),
                         [](const testing::TestParamInfo<Routine> &p) {
                           return std::string(p.param == Routine::Gemr ? "pdgemr2d" : "pdtrmr2d");
                         });

// ---- UPLO and DIAG (PxTRMR2D only) -------------------------------------------------------------

void run_trmr(const Case &c) {
  run_case<double>(Routine::Trmr, Entry::Fortran, errtest::standard_scenario(), c);
}

TEST(ScalapackTrmrErrors, UploInvalid) {
  const int bad = errtest::last_rank();
  run_trmr({"UPLO = 'X' everywhere", [](Args &x, int) { x.uplo = 'X'; },
            invalid({}, 1, "UPLO", "'X'", "must be 'U' or 'L'")});
  run_trmr({"UPLO = 'x' on the last process",
            [=](Args &x, int rank) {
              if (rank == bad) x.uplo = 'x';
            },
            invalid({bad}, 1, "UPLO", "'X'", "must be 'U' or 'L'")});
}

TEST(ScalapackTrmrErrors, UploNullPointer) {
  for (const Entry e : {Entry::Fortran, Entry::C}) {
    run_case<double>(Routine::Trmr, e, errtest::standard_scenario(),
                     {"UPLO = NULL everywhere", [](Args &x, int) { x.null_uplo = true; },
                      invalid({}, 1, "UPLO", "' '", "must be 'U' or 'L'")});
  }
}

TEST(ScalapackTrmrErrors, DiagInvalid) {
  const int bad = errtest::last_rank();
  run_trmr({"DIAG = 'Q' on the last process",
            [=](Args &x, int rank) {
              if (rank == bad) x.diag = 'Q';
            },
            invalid({bad}, 2, "DIAG", "'Q'", "must be 'U' or 'N'")});
  run_trmr({"DIAG = ' ' everywhere", [](Args &x, int) { x.diag = ' '; },
            invalid({}, 2, "DIAG", "' '", "must be 'U' or 'N'")});
}

TEST(ScalapackTrmrErrors, UploOrDiagDifferBetweenProcesses) {
  if (world_size() < 2) GTEST_SKIP() << "needs two processes";
  const int bad = errtest::last_rank();
  run_trmr({"UPLO = 'L' on the last process, 'U' elsewhere",
            [=](Args &x, int rank) {
              if (rank == bad) x.uplo = 'L';
            },
            mismatch(1, 'L', 'U')});
  run_trmr({"DIAG = 'U' on the last process, 'N' elsewhere",
            [=](Args &x, int rank) {
              if (rank == bad) x.diag = 'U';
            },
            mismatch(2, 'N', 'U')});
}

// ---- every element type and both calling conventions -------------------------------------------

template <class T> void every_entry() {
  const Scenario s = errtest::standard_scenario();
  const int bad = errtest::last_rank();
  const int holder = errtest::window_holder(s.b, s.m, s.n);
  for (const Entry e : {Entry::Fortran, Entry::C}) {
    for (const Routine r : {Routine::Gemr, Routine::Trmr}) {
      const Positions p = positions(r);
      run_case<T>(r, e, s,
                  {"DESCA(MB_) = 0 on the last process",
                   [=](Args &x, int rank) {
                     if (rank == bad) x.desca[MB_] = 0;
                   },
                   invalid({bad}, p.desca, "DESCA(MB_)", 0, "block size must be >= 1")});
      run_case<T>(r, e, s,
                  {"NULL B on a holder of B's window",
                   [=](Args &x, int rank) {
                     if (rank == holder) x.b = nullptr;
                   },
                   invalid({holder}, p.b, "B", 0,
                           "NULL local array on a process that holds part of the matrix")});
      run_case<T>(r, e, s, {"M = 0", [](Args &x, int) { x.m = 0; }, succeeds()});
    }
  }
}

TEST(ScalapackErrorsEveryEntry, Real4) {
  every_entry<float>();
}
TEST(ScalapackErrorsEveryEntry, Real8) {
  every_entry<double>();
}
TEST(ScalapackErrorsEveryEntry, Complex8) {
  every_entry<std::complex<float>>();
}
TEST(ScalapackErrorsEveryEntry, Complex16) {
  every_entry<std::complex<double>>();
}
TEST(ScalapackErrorsEveryEntry, Integer) {
  every_entry<redist_int>();
}

} // namespace
