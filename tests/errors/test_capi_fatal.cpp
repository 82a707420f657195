// C API error cases that crashed or hung the library when they were written (see the report
// in the commit that added them). They live in their own executable, and each runs as its own
// ctest entry with a short timeout, so that a crash or a hang here cannot hide the results of
// the other error tests. Expected behaviour is the same as for every other bad argument: a
// status on every rank, the message, *plan NULL, and a valid plan works right after.

#include "capi_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace capitest;

// The grid shape is validated (nprow*npcol must not exceed the communicator's size), but the
// cross-rank fingerprint of the layouts read ranks[0 .. nprow*npcol) before that check: with a
// huge shape, far past the caller's array.
TEST(CApiFatal, GridLargerThanCommunicator) {
  const int p = mpitest::world_size();
  create_case(
      "a is 100000 x 100000 everywhere (ranks has P entries)",
      [](CArgs &x, int) {
        x.a.nprow = 100000;
        x.a.npcol = 100000;
        x.a.rsrc = 0;
        x.a.csrc = 0;
      },
      create_invalid(-1, "a->nprow*npcol", 10000000000LL,
                     "grid has more positions than the communicator has processes (" +
                         std::to_string(p) + ")"));
}

// A NULL output pointer is detected before the ranks agree on the verdict: the rank that
// passed it returned at once while the others waited for it.
TEST(CApiFatal, NullPlanPointerOnOneRank) {
  const int bad = errtest::last_rank();
  create_case(
      "plan = NULL on the last rank only",
      [=](CArgs &x, int rank) {
        if (rank == bad) x.null_plan_pointer = true;
      },
      create_invalid(bad, "plan", 0, "NULL output pointer"));
}

} // namespace
