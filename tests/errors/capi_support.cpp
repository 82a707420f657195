#include "capi_support.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

namespace capitest {

using errtest::Data;
using mpitest::world_rank;

redist_layout CArgs::layout(const MatSpec &s, const std::vector<int> &ranks) {
  const mpitest::LocalBuf lb = mpitest::local_buf(s, world_rank());
  return mpitest::c_layout(s, ranks.data(), lb.member ? lb.lld : 1);
}

CExpectFn invalid(const char *call, int bad, const std::string &arg, long long value,
                  const std::string &reason) {
  return invalid(call, bad, arg, std::to_string(value), reason);
}

CExpectFn invalid(const char *call, int bad, const std::string &arg, const std::string &value,
                  const std::string &reason) {
  const std::string message =
      std::string(call) + ": argument " + arg + " = " + value + ": " + reason;
  const std::string remote = std::string(call) + ": an argument is invalid on rank " +
                             std::to_string(bad) + " (see its message)";
  return [=](int rank) {
    if (bad < 0 || rank == bad) return CExpect{REDIST_ERR_ARGUMENT, message};
    return CExpect{REDIST_ERR_REMOTE, remote};
  };
}

CExpectFn create_invalid(int bad, const std::string &arg, long long value,
                         const std::string &reason) {
  return invalid("redist_plan_create", bad, arg, value, reason);
}

CExpectFn create_opt_invalid(int bad, const std::string &arg, const std::string &value,
                             const std::string &reason) {
  return invalid("redist_plan_create_opt", bad, arg, value, reason);
}

CExpectFn create_mismatch(const char *call) {
  const std::string message = std::string(call) +
                              ": processes passed different m, n, type, region, "
                              "unit_diag, options or layouts (all but lld must agree)";
  return [=](int) { return CExpect{REDIST_ERR_MISMATCH, message}; };
}

bool everywhere(bool ok) {
  int v = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return v == 1;
}

void valid_plan_works(const std::string &where, redist_region region, int unit_diag) {
  const Scenario s = errtest::standard_scenario();
  CArgs x(s);
  redist_plan plan = nullptr;
  int status =
      capitest_plan_create(MPI_COMM_WORLD, x.m, x.n, x.type, x.pa, x.pb, region, unit_diag, &plan);
  EXPECT_EQ(status, REDIST_SUCCESS) << where << "valid create right after: " << redist_last_error();
  EXPECT_STREQ(redist_last_error(), "") << where;
  if (!everywhere(status == REDIST_SUCCESS && plan != nullptr)) return; // same on every rank
  Data<double> d(s, 3, 4);
  status = redist_plan_execute(plan, d.a.data(), d.b.data());
  EXPECT_EQ(status, REDIST_SUCCESS)
      << where << "valid execute right after: " << redist_last_error();
  mpitest::CopySpec c;
  c.region = region == REDIST_REGION_FULL    ? mpitest::Region::Full
             : region == REDIST_REGION_UPPER ? mpitest::Region::Upper
                                             : mpitest::Region::Lower;
  c.unit_diag = unit_diag != 0;
  c.m = s.m;
  c.n = s.n;
  std::string report;
  EXPECT_EQ(mpitest::check_b(c, s.a, s.b, d.lb, d.b.data(), 3, 4, report), 0)
      << where << "valid plan right after copied wrongly:\n"
      << report;
  EXPECT_EQ(redist_plan_destroy(&plan), REDIST_SUCCESS) << where << redist_last_error();
  EXPECT_EQ(plan, nullptr) << where;
}

void create_case(const std::string &label, const CMutateFn &mutate, const CExpectFn &expect) {
  create_case(errtest::standard_scenario(), label, mutate, expect);
}

void create_case(const Scenario &s, const std::string &label, const CMutateFn &mutate,
                 const CExpectFn &expect) {
  const int rank = world_rank();
  CArgs x(s);
  if (mutate) mutate(x, rank);
  const std::string where =
      std::string(x.with_options ? "[redist_plan_create_opt] " : "[redist_plan_create] ") + label +
      ": ";
  redist_plan plan = nullptr;
  redist_plan *out = x.null_plan_pointer ? nullptr : &plan;
  const int status = x.with_options
                         ? capitest_plan_create_opt(MPI_COMM_WORLD, x.m, x.n, x.type, x.pa, x.pb,
                                                    x.region, x.unit_diag, x.popt, out)
                         : capitest_plan_create(MPI_COMM_WORLD, x.m, x.n, x.type, x.pa, x.pb,
                                                x.region, x.unit_diag, out);
  const std::string message = redist_last_error();
  const CExpect want = expect(rank);
  EXPECT_EQ(status, want.status) << where << "status " << redist_status_name(status)
                                 << ", expected " << redist_status_name(want.status)
                                 << "; message: " << message;
  EXPECT_EQ(message, want.message) << where;
  if (want.status == REDIST_SUCCESS) {
    EXPECT_NE(plan, nullptr) << where << "a successful create must return a plan";
  } else {
    EXPECT_EQ(plan, nullptr) << where << "a failed create must leave *plan NULL";
  }
  // A plan is destroyed only if every rank has one (destroy is collective).
  if (everywhere(plan != nullptr)) redist_plan_destroy(&plan);
  valid_plan_works(where);
}

} // namespace capitest
