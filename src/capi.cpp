// The extern "C" API of redist.h. Every body runs inside c_barrier().

#include "api_internal.hpp"

#include <algorithm>
#include <vector>

namespace redist {

void validate_layout(const std::string &call, const std::string &name, const redist_layout &l,
                     Index window_m, Index window_n, int comm_size, int rank) {
  const auto arg = [&](const char *field) { return name + "->" + field; };
  if (l.m < 0) throw_argument(call, arg("m"), l.m, "global rows must be >= 0");
  if (l.n < 0) throw_argument(call, arg("n"), l.n, "global columns must be >= 0");
  if (l.mb < 1) throw_argument(call, arg("mb"), l.mb, "block size must be >= 1");
  if (l.nb < 1) throw_argument(call, arg("nb"), l.nb, "block size must be >= 1");
  if (l.nprow < 1) throw_argument(call, arg("nprow"), l.nprow, "grid rows must be >= 1");
  if (l.npcol < 1) throw_argument(call, arg("npcol"), l.npcol, "grid columns must be >= 1");
  if (static_cast<long long>(l.nprow) * l.npcol > comm_size) {
    throw_argument(call, arg("nprow*npcol"), static_cast<long long>(l.nprow) * l.npcol,
                   "grid has more positions than the communicator has processes (" +
                       std::to_string(comm_size) + ")");
  }
  if (l.rsrc < 0 || l.rsrc >= l.nprow)
    throw_argument(call, arg("rsrc"), l.rsrc, "must be in [0, nprow)");
  if (l.csrc < 0 || l.csrc >= l.npcol)
    throw_argument(call, arg("csrc"), l.csrc, "must be in [0, npcol)");
  if (l.ranks == nullptr) throw_argument(call, arg("ranks"), 0, "NULL rank map");
  const std::size_t positions = static_cast<std::size_t>(l.nprow) * l.npcol;
  std::vector<int> seen(l.ranks, l.ranks + positions);
  for (std::size_t idx = 0; idx < positions; ++idx) {
    if (seen[idx] < 0 || seen[idx] >= comm_size) {
      throw_argument(call, arg("ranks[") + std::to_string(idx) + "]", seen[idx],
                     "not a rank of the communicator");
    }
  }
  std::sort(seen.begin(), seen.end());
  const auto dup = std::adjacent_find(seen.begin(), seen.end());
  if (dup != seen.end()) {
    throw_argument(call, arg("ranks"), *dup, "rank appears twice in the grid");
  }
  if (l.i < 0 || l.i > l.m - window_m) {
    throw_argument(call, arg("i"), l.i,
                   "window rows [i, i+" + std::to_string(window_m) + ") outside the " +
                       std::to_string(l.m) + " rows of the matrix");
  }
  if (l.j < 0 || l.j > l.n - window_n) {
    throw_argument(call, arg("j"), l.j,
                   "window columns [j, j+" + std::to_string(window_n) + ") outside the " +
                       std::to_string(l.n) + " columns of the matrix");
  }
  const Layout layout = to_layout(l);
  int pr = 0;
  int pc = 0;
  if (layout.grid.find(rank, pr, pc)) {
    const Index local_rows = layout.rows.local_extent(pr);
    if (l.lld < std::max<Index>(1, local_rows)) {
      throw_argument(
          call, arg("lld"), l.lld,
          "must be >= max(1, local rows) = " + std::to_string(std::max<Index>(1, local_rows)) +
              " on rank " + std::to_string(rank));
    }
  }
}

Layout to_layout(const redist_layout &l) {
  Layout out;
  out.rows = {l.m, l.mb, l.nprow, l.rsrc};
  out.cols = {l.n, l.nb, l.npcol, l.csrc};
  out.grid.nprow = l.nprow;
  out.grid.npcol = l.npcol;
  out.grid.ranks.assign(l.ranks, l.ranks + static_cast<std::size_t>(l.nprow) * l.npcol);
  out.i = l.i;
  out.j = l.j;
  return out;
}

void agree_impl(MPI_Comm comm, const std::string &call, std::uint64_t fingerprint,
                const char *mismatch_what, const Error *local_error) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Max-reduce [first failing rank (negated, so the lowest wins), hash, -hash].
  const auto hash = static_cast<std::int64_t>(fingerprint >> 2);
  std::int64_t v[3] = {local_error ? -static_cast<std::int64_t>(rank) : INT64_MIN, hash, -hash};
  const int rc = MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT64_T, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, call + ": MPI_Allreduce failed while checking arguments");
  }
  if (local_error != nullptr) {
    throw *local_error;
  }
  if (v[0] != INT64_MIN) {
    throw Error(REDIST_ERR_REMOTE, call + ": an argument is invalid on rank " +
                                       std::to_string(-v[0]) + " (see its message)");
  }
  if (v[1] != -v[2]) {
    throw Error(REDIST_ERR_MISMATCH, call + ": processes passed different " + mismatch_what);
  }
}

namespace {

std::uint64_t fingerprint_of(Index m, Index n, int type, int region, int unit_diag,
                             const redist_layout &a, const redist_layout &b) {
  Fingerprint f;
  f.add(m).add(n).add(type).add(region).add(unit_diag != 0);
  for (const redist_layout *l : {&a, &b}) {
    f.add(l->m).add(l->n).add(l->mb).add(l->nb).add(l->nprow).add(l->npcol);
    f.add(l->rsrc).add(l->csrc).add(l->i).add(l->j);
    if (l->ranks != nullptr && l->nprow > 0 && l->npcol > 0) {
      for (long long idx = 0; idx < static_cast<long long>(l->nprow) * l->npcol; ++idx) {
        f.add(l->ranks[idx]);
      }
    }
  }
  return f.value();
}

void check_mpi(int code, const char *call, const char *what) {
  if (code != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, std::string(call) + ": " + what + " failed");
  }
}

} // namespace
} // namespace redist

using namespace redist;

extern "C" int redist_plan_create(MPI_Comm comm, int64_t m, int64_t n, redist_type type_arg,
                                  const redist_layout *a, const redist_layout *b,
                                  redist_region region_arg, int unit_diag, redist_plan *plan) {
  static const char *call = "redist_plan_create";
  const int type = enum_value(type_arg);
  const int region = enum_value(region_arg);
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    if (comm == MPI_COMM_NULL) throw_argument(call, "comm", 0, "MPI_COMM_NULL");
    int size = 0;
    int rank = 0;
    check_mpi(MPI_Comm_size(comm, &size), call, "MPI_Comm_size");
    check_mpi(MPI_Comm_rank(comm, &rank), call, "MPI_Comm_rank");
    agree(comm, call, "m, n, type, region, unit_diag or layouts (all but lld must agree)", [&] {
      if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
      if (m < 0) throw_argument(call, "m", m, "must be >= 0");
      if (n < 0) throw_argument(call, "n", n, "must be >= 0");
      if (type_size(type) == 0) throw_argument(call, "type", type, "unknown redist_type");
      if (region != REDIST_REGION_FULL && region != REDIST_REGION_UPPER &&
          region != REDIST_REGION_LOWER)
        throw_argument(call, "region", region, "unknown redist_region");
      if (a == nullptr) throw_argument(call, "a", 0, "NULL layout");
      if (b == nullptr) throw_argument(call, "b", 0, "NULL layout");
      validate_layout(call, "a", *a, m, n, size, rank);
      validate_layout(call, "b", *b, m, n, size, rank);
      return fingerprint_of(m, n, type, region, unit_diag, *a, *b);
    });
    Transfer t;
    t.src = to_layout(*a);
    t.dst = to_layout(*b);
    t.m = m;
    t.n = n;
    t.region.kind = region == REDIST_REGION_UPPER   ? Region::Kind::upper
                    : region == REDIST_REGION_LOWER ? Region::Kind::lower
                                                    : Region::Kind::full;
    t.region.unit_diag = unit_diag != 0;

    auto result = std::make_unique<redist_plan_s>();
    check_mpi(MPI_Comm_dup(comm, &result->comm), call, "MPI_Comm_dup");
    std::unique_ptr<redist_plan_s, void (*)(redist_plan_s *)> guard(
        result.get(), [](redist_plan_s *p) { MPI_Comm_free(&p->comm); });
    check_mpi(MPI_Comm_set_errhandler(result->comm, MPI_ERRORS_RETURN), call,
              "MPI_Comm_set_errhandler");
    // Planning can fail locally (memory); agree before anyone relies on the plan.
    agree(result->comm, call, "", [&] {
      try {
        result->executor =
            std::make_unique<Executor>(result->comm, make_rank_plan(t, rank, size),
                                       static_cast<std::size_t>(type_size(type)), a->lld, b->lld);
      } catch (const std::bad_alloc &) {
        throw Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": out of memory while planning");
      }
      return std::uint64_t{0};
    });
    static_cast<void>(guard.release()); // the plan owns the communicator now
    *plan = result.release();
  });
}

extern "C" int redist_plan_execute(redist_plan plan, const void *a, void *b) {
  static const char *call = "redist_plan_execute";
  return c_barrier(call, [&] {
    if (plan == nullptr || !plan->executor) throw_argument(call, "plan", 0, "NULL plan");
    const RankPlan &rp = plan->executor->plan();
    agree(plan->comm, call, "", [&] {
      if (a == nullptr && (!rp.sends.empty() || rp.self.elements > 0))
        throw_argument(call, "a", 0, "NULL local array but this rank owns source elements");
      if (b == nullptr && (!rp.recvs.empty() || rp.self.elements > 0))
        throw_argument(call, "b", 0, "NULL local array but this rank owns destination elements");
      return std::uint64_t{0};
    });
    plan->executor->execute(a, b);
  });
}

extern "C" int redist_plan_destroy(redist_plan *plan) {
  return c_barrier("redist_plan_destroy", [&] {
    if (plan == nullptr || *plan == nullptr) {
      return;
    }
    (*plan)->executor.reset();
    MPI_Comm_free(&(*plan)->comm);
    delete *plan;
    *plan = nullptr;
  });
}

extern "C" int redist_plan_get_info(redist_plan plan, redist_plan_info *info) {
  static const char *call = "redist_plan_get_info";
  return c_barrier(call, [&] {
    if (plan == nullptr || !plan->executor) throw_argument(call, "plan", 0, "NULL plan");
    if (info == nullptr) throw_argument(call, "info", 0, "NULL output pointer");
    const RankPlan &rp = plan->executor->plan();
    const auto es = static_cast<int64_t>(plan->executor->element_size());
    info->send_peers = static_cast<int64_t>(rp.sends.size());
    info->recv_peers = static_cast<int64_t>(rp.recvs.size());
    info->bytes_sent = rp.elements_sent() * es;
    info->bytes_received = rp.elements_received() * es;
    info->bytes_local = rp.self.elements * es;
  });
}
