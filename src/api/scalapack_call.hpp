#pragma once
// Shared by the files of the ScaLAPACK-compatible entries (scalapack_api.cpp,
// scalapack_call.cpp, scalapack_plan.cpp), compiled into libredist and, with 64-bit
// redist_int, into libredist_ilp64.

#include "api_internal.hpp"
#include "blacs.hpp"

#include <mpi.h>

#include <cstddef>
#include <string>

namespace redist::scalapack {

// Hidden: each library keeps its own (their redist_int differs) and exports none of it.
#pragma GCC visibility push(hidden)

/// Where DTYPE_ and CTXT_ are in a descriptor of either type (0-based here); the other entries
/// are read through read_descriptor.
enum DescHead { DTYPE_ = 0, CTXT_ = 1 };
/// The descriptor types: ScaLAPACK's 9 integers (DTYPE_, CTXT_, M_, N_, MB_, NB_, RSRC_, CSRC_,
/// LLD_) and PBLAS's 11 (BLOCK_CYCLIC_2D_INB: DTYPE_, CTXT_, M_, N_, IMB_, INB_, MB_, NB_,
/// RSRC_, CSRC_, LLD_), whose first block row and column hold IMB_ rows and INB_ columns.
inline constexpr redist_int kBlockCyclic2D = 1;
inline constexpr redist_int kBlockCyclic2DInb = 2;

/// A descriptor's entries by name, of either type (a 9-integer one has IMB_ = MB_ and
/// INB_ = NB_); of another type, only dtype and ctxt are read.
struct Descriptor {
  redist_int dtype = kBlockCyclic2D, ctxt = -1, m = 0, n = 0, imb = 1, inb = 1, mb = 1, nb = 1,
             rsrc = 0, csrc = 0, lld = 1;
};
Descriptor read_descriptor(const redist_int *desc);
/// A descriptor of a process outside every grid: CTXT_ = -1.
inline constexpr redist_int kNoGrid[9] = {kBlockCyclic2D, -1, 0, 0, 1, 1, 0, 0, 1};

/// Argument positions of one routine (1-based, as PXERBLA counts them).
struct Positions {
  int uplo = 0, diag = 0, m = 0, n = 0, a = 0, ia = 0, ja = 0, desca = 0, b = 0, ib = 0, jb = 0,
      descb = 0, ictxt = 0, trans = 0, alpha = 0, beta = 0;
};
constexpr Positions kGemr{0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
constexpr Positions kTrmr{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
// PBLAS: C is "B"; the context is DESCC(CTXT_)'s.
constexpr Positions kTran{0, 0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 12, 0, 3, 8};
constexpr Positions kGeadd{0, 0, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 13, 1, 4, 9};
constexpr Positions kTradd{1, 0, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14, 14, 2, 5, 10};

/// One side (A or B) of a call as this process sees it.
struct Side {
  char name = 'A';
  const redist_int *desc = nullptr; // may be garbage on non-members (except CTXT_)
  redist_int i = 1;                 // 1-based window start
  redist_int j = 1;
  const void *data = nullptr;
  blacs::GridInfo grid;
  int pos_desc = 0, pos_i = 0, pos_j = 0, pos_data = 0;
  Descriptor d; // read from desc where this process is in the grid
};

/// One call of an entry as this process sees it.
struct Call {
  const char *routine = "";
  std::size_t element_size = 0;
  bool trapezoid = false;
  char uplo = ' ', diag = ' ';
  redist_int m = 0, n = 0, ictxt = -1;
  Side a, b;
  void *destination = nullptr; // == b.data, writable
  Positions pos;
  // PxTRAN, PxGEADD, PxTRADD: B := alpha op(A) + beta B (A's window is N x M for op T, C).
  const Operation *operation = nullptr;
  char trans = ' '; // 'N', 'T' or 'C' as given (' ': a copy)
  [[nodiscard]] bool transposed() const { return operation != nullptr && trans != 'N'; }
};

/// Print `message` on stderr, marked as redist's.
void report(const std::string &message);

/// The MPI communicator BLACS uses for a context (ranks in row-major grid order).
MPI_Comm context_comm(redist_int ctxt);

/// One call of an entry: its checks, agreement, planning and execution (scalapack_call.cpp);
/// a failure is reported, and its status returned.
int run_call(Call &c);

#pragma GCC visibility pop

} // namespace redist::scalapack
