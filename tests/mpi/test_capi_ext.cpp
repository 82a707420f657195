// The C API on layouts with first blocks and row-major local arrays (redist_layout_ext):
// redist_plan_create_ext, redist_plan_create_op_ext and redist_plan_create_batch_ext, executed
// blocking and split, with schedules and memory caps, sides now and then replicated over the
// process rows or columns (single plans and batches), against an element oracle written here:
// the owner and local offset of every global element come from the IMB/MB formulas and the
// storage order directly (no function of src/). Errors: a status on every rank, no plan.

#include "harness.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <redist.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace mpitest {
namespace {

using Bytes = std::vector<unsigned char>;

// One dimension: the first block of imb elements on src, then blocks of mb from src + 1; src -1:
// replicated, every process holds every index at its global index.
struct Dim {
  std::int64_t ext = 0, imb = 1, mb = 1; // imb: the effective first block (>= 1)
  int np = 1, src = 0;
  [[nodiscard]] bool held_by(std::int64_t g, int p) const { return src < 0 || owner(g) == p; }
  [[nodiscard]] int owner(std::int64_t g) const {
    if (g < imb) return src;
    return static_cast<int>(((g - imb) / mb + src + 1) % np);
  }
  [[nodiscard]] std::int64_t local(std::int64_t g) const {
    if (src < 0 || g < imb) return g;
    const std::int64_t after = g - imb;
    const std::int64_t block = after / mb; // blocks after the first, the k-th on src + 1 + k
    return (owner(g) == src ? imb : 0) + (block / np) * mb + after % mb;
  }
  [[nodiscard]] std::int64_t count(int p) const {
    std::int64_t c = 0;
    for (std::int64_t g = 0; g < ext; ++g)
      c += held_by(g, p) ? 1 : 0;
    return c;
  }
};

// One side: the layout, its window start and this rank's local array.
struct Side {
  Dim rows, cols;
  std::int64_t imb_field = 0, inb_field = 0; // as passed (0: the block size)
  int order = REDIST_ORDER_COLUMN_MAJOR;
  int nprow = 1, npcol = 1;
  std::vector<int> ranks; // column-major over the grid
  std::int64_t i = 0, j = 0;
  std::vector<std::int64_t> lld_extra; // per grid position
  // This rank:
  bool member = false;
  int pr = -1, pc = -1;
  std::int64_t locr = 0, locc = 0, lld = 1, elems = 0;

  void locate(int rank) {
    member = false;
    for (int p = 0; p < nprow * npcol; ++p) {
      if (ranks[static_cast<std::size_t>(p)] == rank) {
        member = true;
        pr = p % nprow;
        pc = p / nprow;
      }
    }
    locr = member ? rows.count(pr) : 0;
    locc = member ? cols.count(pc) : 0;
    const bool rm = order == REDIST_ORDER_ROW_MAJOR;
    lld = member ? std::max<std::int64_t>(1, rm ? locc : locr) +
                       lld_extra[static_cast<std::size_t>(pr + pc * nprow)]
                 : 1;
    elems = member ? lld * (rm ? locr : locc) + 5 : 5; // 5 guard elements
  }
  // Local offset of global (gi, gj) on its owner.
  [[nodiscard]] std::int64_t offset(std::int64_t gi, std::int64_t gj) const {
    const std::int64_t r = rows.local(gi), c = cols.local(gj);
    return order == REDIST_ORDER_ROW_MAJOR ? r * lld + c : r + c * lld;
  }
  [[nodiscard]] bool owns(std::int64_t gi, std::int64_t gj) const {
    return member && rows.held_by(gi, pr) && cols.held_by(gj, pc);
  }
  [[nodiscard]] redist_layout_ext layout() const {
    return {{rows.ext, cols.ext, rows.mb, cols.mb, nprow, npcol, rows.src, cols.src, ranks.data(),
             i, j, lld},
            imb_field,
            inb_field,
            order};
  }
  [[nodiscard]] std::string describe() const {
    std::string r = std::to_string(rows.ext) + "x" + std::to_string(cols.ext) + " imb " +
                    std::to_string(imb_field) + " inb " + std::to_string(inb_field) + " mb " +
                    std::to_string(rows.mb) + " nb " + std::to_string(cols.mb) + " grid " +
                    std::to_string(nprow) + "x" + std::to_string(npcol) + " src (" +
                    std::to_string(rows.src) + "," + std::to_string(cols.src) + ") at (" +
                    std::to_string(i) + "," + std::to_string(j) + ") " +
                    (order == REDIST_ORDER_ROW_MAJOR ? "row-major" : "column-major") + " ranks";
    for (int x : ranks)
      r += " " + std::to_string(x);
    return r;
  }
};

// One operation: a copy (op -1) or B := alpha op(A) + beta B.
struct Op {
  int op = -1;
  int type = REDIST_DOUBLE;
  int region = REDIST_REGION_FULL;
  bool unit_diag = false;
  std::int64_t m = 0, n = 0;
  double alpha[2] = {1, 0}, beta[2] = {0, 0};
  Side a, b;
  [[nodiscard]] std::string describe() const {
    return "op " + std::to_string(op) + " type " + std::to_string(type) + " region " +
           std::to_string(region) + (unit_diag ? " unit" : "") + " " + std::to_string(m) + "x" +
           std::to_string(n) + " alpha (" + std::to_string(alpha[0]) + "," +
           std::to_string(alpha[1]) + ") beta (" + std::to_string(beta[0]) + "," +
           std::to_string(beta[1]) + ")\n  A: " + a.describe() + "\n  B: " + b.describe();
  }
};

int type_bytes(int type) {
  switch (type) {
  case REDIST_FLOAT:
  case REDIST_INT32:
    return 4;
  case REDIST_COMPLEX_DOUBLE:
    return 16;
  default:
    return 8;
  }
}
bool is_complex(int type) {
  return type == REDIST_COMPLEX_FLOAT || type == REDIST_COMPLEX_DOUBLE;
}
bool is_integer(int type) {
  return type == REDIST_INT32 || type == REDIST_INT64;
}

// Values as (re, im) in double; each type stores them exactly (small integers and halves).
void put(Bytes &buf, int type, std::int64_t p, double re, double im) {
  unsigned char *at = buf.data() + p * type_bytes(type);
  switch (type) {
  case REDIST_FLOAT: {
    const auto v = static_cast<float>(re);
    std::memcpy(at, &v, sizeof v);
    break;
  }
  case REDIST_DOUBLE:
    std::memcpy(at, &re, sizeof re);
    break;
  case REDIST_COMPLEX_FLOAT: {
    const float v[2] = {static_cast<float>(re), static_cast<float>(im)};
    std::memcpy(at, v, sizeof v);
    break;
  }
  case REDIST_COMPLEX_DOUBLE: {
    const double v[2] = {re, im};
    std::memcpy(at, v, sizeof v);
    break;
  }
  case REDIST_INT32: {
    const auto v = static_cast<std::int32_t>(re);
    std::memcpy(at, &v, sizeof v);
    break;
  }
  default: {
    const auto v = static_cast<std::int64_t>(re);
    std::memcpy(at, &v, sizeof v);
  }
  }
}

// A's value at global (gi, gj) and B's sentinel at buffer position p.
std::complex<double> a_value(const Op &o, std::int64_t gi, std::int64_t gj, int salt) {
  const double re = static_cast<double>(1 + gi + gj * o.a.rows.ext + salt * 10000);
  return {re, is_complex(o.type) ? -re - 0.5 : 0.0};
}
std::complex<double> b_value(const Op &o, std::int64_t p, int salt) {
  const double re = -static_cast<double>(1 + p + salt * 10000);
  return {re, is_complex(o.type) ? 0.25 - re : 0.0};
}

void fill(const Op &o, Bytes &a, Bytes &b, int salt) {
  a.assign(static_cast<std::size_t>(o.a.elems * type_bytes(o.type)), 0);
  b.assign(static_cast<std::size_t>(o.b.elems * type_bytes(o.type)), 0);
  for (std::int64_t p = 0; p < o.a.elems; ++p)
    put(a, o.type, p, -7777777, 0); // never read
  for (std::int64_t gi = 0; gi < o.a.rows.ext; ++gi) {
    for (std::int64_t gj = 0; gj < o.a.cols.ext; ++gj) {
      if (!o.a.owns(gi, gj)) continue;
      const std::complex<double> v = a_value(o, gi, gj, salt);
      put(a, o.type, o.a.offset(gi, gj), v.real(), v.imag());
    }
  }
  for (std::int64_t p = 0; p < o.b.elems; ++p) {
    const std::complex<double> v = b_value(o, p, salt);
    put(b, o.type, p, v.real(), v.imag());
  }
}

bool in_op_trapezoid(int region, std::int64_t i, std::int64_t j) {
  return region == REDIST_REGION_UPPER ? i <= j : region == REDIST_REGION_LOWER ? i >= j : true;
}

// What this rank's B buffer must hold after one execution.
Bytes oracle(const Op &o, const Bytes &b_before, int salt) {
  Bytes out = b_before;
  const Region copy_region = o.region == REDIST_REGION_UPPER   ? Region::Upper
                             : o.region == REDIST_REGION_LOWER ? Region::Lower
                                                               : Region::Full;
  for (std::int64_t i = 0; i < o.m; ++i) {
    for (std::int64_t j = 0; j < o.n; ++j) {
      const std::int64_t gi = o.b.i + i, gj = o.b.j + j;
      if (!o.b.owns(gi, gj)) continue;
      const bool in = o.op == -1 ? in_region(copy_region, o.unit_diag, o.m, o.n, i, j)
                                 : in_op_trapezoid(o.region, i, j);
      if (!in) continue;
      const bool transposed = o.op == REDIST_OP_T || o.op == REDIST_OP_C;
      std::complex<double> x = transposed ? a_value(o, o.a.i + j, o.a.j + i, salt)
                                          : a_value(o, o.a.i + i, o.a.j + j, salt);
      if (o.op == REDIST_OP_C) x = std::conj(x);
      const std::int64_t p = o.b.offset(gi, gj);
      std::complex<double> v = x;
      if (o.op != -1) {
        const std::complex<double> alpha(o.alpha[0], o.alpha[1]), beta(o.beta[0], o.beta[1]);
        v = alpha * x;
        if (beta != 0.0) v += beta * b_value(o, p, salt);
      }
      put(out, o.type, p, v.real(), v.imag());
    }
  }
  return out;
}

// One side, random: first blocks from 1 to beyond mb and beyond the matrix, either order; with
// `replicated`, now and then replicated over the process rows or columns (rsrc / csrc -1).
Side draw_side(Rng &rng, int np, std::int64_t wm, std::int64_t wn, bool replicated) {
  Side s;
  const int count = static_cast<int>(rng.uniform(1, np));
  random_shape(rng, count, s.nprow, s.npcol);
  std::vector<int> pool(static_cast<std::size_t>(np));
  std::iota(pool.begin(), pool.end(), 0);
  rng.shuffle(pool);
  s.ranks.assign(pool.begin(), pool.begin() + count);
  const auto dim = [&](Dim &d, std::int64_t &field, std::int64_t w, int procs) {
    d.np = procs;
    d.src = static_cast<int>(rng.uniform(0, procs - 1));
    d.ext = w + rng.uniform(0, 6);
    d.mb = rng.uniform(1, rng.coin(0.2) ? d.ext + 3 : 5);
    const int pick = static_cast<int>(rng.uniform(0, 5));
    field = pick == 0   ? 0 // the block size
            : pick == 1 ? d.mb
            : pick == 2 ? d.ext + rng.uniform(1, 4)       // beyond the matrix
            : pick == 3 ? d.mb + rng.uniform(1, 2 * d.mb) // beyond the block
                        : rng.uniform(1, d.mb);           // below the block
    d.imb = field == 0 ? d.mb : field;
  };
  dim(s.rows, s.imb_field, wm, s.nprow);
  dim(s.cols, s.inb_field, wn, s.npcol);
  s.i = rng.uniform(0, s.rows.ext - wm);
  s.j = rng.uniform(0, s.cols.ext - wn);
  s.order = rng.coin(0.5) ? REDIST_ORDER_ROW_MAJOR : REDIST_ORDER_COLUMN_MAJOR;
  for (int p = 0; p < count; ++p)
    s.lld_extra.push_back(rng.coin(0.3) ? rng.uniform(1, 3) : 0);
  if (replicated) {
    for (Dim *d : {&s.rows, &s.cols})
      if (rng.coin(0.12)) d->src = -1;
  }
  return s;
}

void draw_scalar(Rng &rng, int type, double *v, bool is_beta) {
  static const double kReal[] = {0, 1, -1, 2, 0.5, 3};
  v[0] = kReal[rng.uniform(0, 5)];
  v[1] = is_complex(type) && rng.coin(0.4) ? static_cast<double>(rng.uniform(-2, 2)) : 0.0;
  if (is_integer(type)) {
    v[0] = is_beta ? 0 : 1;
    v[1] = 0;
  }
}

Op draw_op(Rng &rng, int np, bool op_only, bool replicated = false) {
  Op o;
  o.op = op_only || rng.coin(0.5) ? static_cast<int>(rng.uniform(0, 2)) : -1;
  o.type = static_cast<int>(rng.uniform(0, 5));
  const std::int64_t largest = rng.coin(0.1) ? 90 : 24; // now and then many blocks
  o.m = rng.coin(0.05) ? 0 : rng.uniform(1, largest);
  o.n = rng.coin(0.05) ? 0 : rng.uniform(1, largest);
  const int r = static_cast<int>(rng.uniform(0, 3));
  o.region = r == 3 ? REDIST_REGION_FULL : r;
  o.unit_diag = o.op == -1 && o.region != REDIST_REGION_FULL && rng.coin(0.5);
  const bool transposed = o.op == REDIST_OP_T || o.op == REDIST_OP_C;
  o.a = draw_side(rng, np, transposed ? o.n : o.m, transposed ? o.m : o.n, replicated);
  o.b = draw_side(rng, np, o.m, o.n, replicated);
  if (o.op != -1) {
    draw_scalar(rng, o.type, o.alpha, false);
    draw_scalar(rng, o.type, o.beta, true);
  }
  o.a.locate(world_rank());
  o.b.locate(world_rank());
  return o;
}

// The scalar of `type` behind alpha or beta.
Bytes scalar(int type, const double *v) {
  Bytes out(static_cast<std::size_t>(type_bytes(type)));
  put(out, type, 0, v[0], v[1]);
  return out;
}

std::string compare(const Op &o, const Bytes &got, const Bytes &want) {
  const auto bytes = static_cast<std::size_t>(type_bytes(o.type));
  for (std::size_t p = 0; p * bytes < got.size(); ++p) {
    if (std::memcmp(got.data() + p * bytes, want.data() + p * bytes, bytes) != 0)
      return "rank " + std::to_string(world_rank()) + ": B position " + std::to_string(p) +
             " differs from the oracle";
  }
  return "";
}

int all_ok(const std::string &fail, const std::string &what) {
  const int bad = on_any_rank(!fail.empty());
  if (!fail.empty()) ADD_FAILURE() << what << "\n" << fail;
  return bad;
}

enum class Mode { blocking, split };

// One plan of one operation: created, executed twice (blocking or split), destroyed.
std::string run_single(const Op &o, const redist_options *options, Mode mode, int salt,
                       bool &refused, std::int64_t &steps) {
  const redist_layout_ext la = o.a.layout(), lb = o.b.layout();
  redist_plan plan = nullptr;
  const int st =
      o.op == -1
          ? redist_plan_create_ext(MPI_COMM_WORLD, o.m, o.n, static_cast<redist_type>(o.type), &la,
                                   &lb, static_cast<redist_region>(o.region), o.unit_diag ? 1 : 0,
                                   options, &plan)
          : redist_plan_create_op_ext(MPI_COMM_WORLD, static_cast<redist_op>(o.op), o.m, o.n,
                                      static_cast<redist_type>(o.type), &la, &lb,
                                      static_cast<redist_region>(o.region), options, &plan);
  refused = false;
  if (st != REDIST_SUCCESS) {
    // A schedule or cap that cannot be honoured on these layouts (only all-at-once applies
    // where a first block larger than the block lies in the window; a cap below what that
    // needs): refused on every rank, as documented.
    const std::string message = redist_last_error();
    const bool limited =
        options != nullptr && (options->schedule != REDIST_SCHEDULE_AUTO ||
                               options->max_memory != 0 || options->max_concurrent != 0);
    refused =
        limited &&
        (st == REDIST_ERR_REMOTE ||
         (st == REDIST_ERR_ARGUMENT && message.find("argument options: ") != std::string::npos));
    if (refused) return "";
    return "create: " + std::to_string(st) + " " + message;
  }
  std::string fail;
  // Both rounds on every rank (each execution is collective), whatever one rank found.
  for (int round = 0; round < 2; ++round) {
    Bytes a, b;
    fill(o, a, b, salt + round);
    const Bytes want = oracle(o, b, salt + round);
    const Bytes alpha = scalar(o.type, o.alpha), beta = scalar(o.type, o.beta);
    int rc = 0;
    if (mode == Mode::blocking) {
      rc = o.op == -1 ? redist_plan_execute(plan, a.data(), b.data())
                      : redist_plan_execute_op(plan, alpha.data(), a.data(), beta.data(), b.data());
    } else {
      rc = o.op == -1
               ? redist_plan_execute_begin(plan, a.data(), b.data())
               : redist_plan_execute_op_begin(plan, alpha.data(), a.data(), beta.data(), b.data());
      if (rc == REDIST_SUCCESS) rc = redist_plan_execute_end(plan);
    }
    if (!fail.empty()) continue;
    if (rc != REDIST_SUCCESS)
      fail = "execute: " + std::to_string(rc) + " " + redist_last_error();
    else
      fail = compare(o, b, want);
  }
  redist_plan_info info{};
  if (fail.empty() && redist_plan_get_info(plan, &info) != REDIST_SUCCESS)
    fail = std::string("get_info: ") + redist_last_error();
  steps = info.steps;
  redist_plan_destroy(&plan);
  return fail;
}

redist_options draw_options(Rng &rng) {
  redist_options o;
  redist_options_init(&o);
  static const int kSchedules[] = {REDIST_SCHEDULE_AUTO, REDIST_SCHEDULE_ALL_AT_ONCE,
                                   REDIST_SCHEDULE_CATERPILLAR, REDIST_SCHEDULE_STEPWISE,
                                   REDIST_SCHEDULE_GREEDY};
  o.schedule = kSchedules[rng.uniform(0, 4)];
  if (o.schedule != REDIST_SCHEDULE_ALL_AT_ONCE && rng.coin(0.4))
    o.max_memory = rng.uniform(64, 2048);
  if (o.schedule == REDIST_SCHEDULE_GREEDY && rng.coin(0.3))
    o.max_concurrent = static_cast<int>(rng.uniform(1, 3));
  return o;
}

TEST(CApiExt, RandomCopiesAndOps) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("CApiExt.RandomCopiesAndOps", 913000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0, run = 0, refused_count = 0, stepped = 0;
  for (int index = 0; index < options().cases; ++index) {
    const Op o = draw_op(rng, np, false, true);
    const bool with_options = rng.coin(0.5);
    const redist_options opts = draw_options(rng);
    const Mode mode = rng.coin(0.5) ? Mode::split : Mode::blocking;
    if (options().only_case >= 0 && options().only_case != index) continue;
    const std::string what = "case " + std::to_string(index) + " (seed " + std::to_string(seed) +
                             ", " + (mode == Mode::split ? "split" : "blocking") +
                             (with_options ? ", schedule " + std::to_string(opts.schedule) +
                                                 " cap " + std::to_string(opts.max_memory)
                                           : std::string()) +
                             "): " + o.describe();
    if (options().verbose) print0(what + "\n");
    watchdog_arm(what);
    bool refused = false;
    std::int64_t steps = 0;
    const std::string fail =
        run_single(o, with_options ? &opts : nullptr, mode, index % 7, refused, steps);
    stepped += steps > 1 ? 1 : 0;
    watchdog_disarm();
    ++run;
    refused_count += refused ? 1 : 0;
    failed += all_ok(fail, what);
  }
  print0("[  CASES   ] " + std::to_string(run) + " first-block / row-major plans on " +
         std::to_string(np) + " ranks, " + std::to_string(stepped) +
         " in several steps on rank 0, " + std::to_string(refused_count) + " schedules refused, " +
         std::to_string(failed) + " failed\n");
  EXPECT_EQ(failed, 0);
  EXPECT_LT(refused_count, run / 2 + 1);
}

// The old entries and the new ones with imb = 0 (the block size) and column-major local arrays
// make the same plan: the same result and the same information.
TEST(CApiExt, OldLayoutsAsExt) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("CApiExt.OldLayoutsAsExt", 914000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  const int cases = std::max(1, options().cases / 10);
  for (int index = 0; index < cases; ++index) {
    Op o = draw_op(rng, np, false);
    for (Side *s : {&o.a, &o.b}) {
      s->imb_field = s->inb_field = 0;
      s->rows.imb = s->rows.mb;
      s->cols.imb = s->cols.mb;
      s->order = REDIST_ORDER_COLUMN_MAJOR;
      s->locate(world_rank());
    }
    const std::string what = "case " + std::to_string(index) + ": " + o.describe();
    watchdog_arm(what);
    const redist_layout_ext xa = o.a.layout(), xb = o.b.layout();
    redist_plan old_plan = nullptr, new_plan = nullptr;
    std::string fail;
    int st1 = 0, st2 = 0;
    if (o.op == -1) {
      st1 = redist_plan_create(MPI_COMM_WORLD, o.m, o.n, static_cast<redist_type>(o.type),
                               &xa.layout, &xb.layout, static_cast<redist_region>(o.region),
                               o.unit_diag ? 1 : 0, &old_plan);
      st2 = redist_plan_create_ext(MPI_COMM_WORLD, o.m, o.n, static_cast<redist_type>(o.type), &xa,
                                   &xb, static_cast<redist_region>(o.region), o.unit_diag ? 1 : 0,
                                   nullptr, &new_plan);
    } else {
      st1 = redist_plan_create_op(MPI_COMM_WORLD, static_cast<redist_op>(o.op), o.m, o.n,
                                  static_cast<redist_type>(o.type), &xa.layout, &xb.layout,
                                  static_cast<redist_region>(o.region), nullptr, &old_plan);
      st2 = redist_plan_create_op_ext(MPI_COMM_WORLD, static_cast<redist_op>(o.op), o.m, o.n,
                                      static_cast<redist_type>(o.type), &xa, &xb,
                                      static_cast<redist_region>(o.region), nullptr, &new_plan);
    }
    if (st1 != REDIST_SUCCESS || st2 != REDIST_SUCCESS) {
      fail = "create: " + std::to_string(st1) + " / " + std::to_string(st2) + " " +
             redist_last_error();
    } else {
      redist_plan_info i1{}, i2{};
      redist_plan_get_info(old_plan, &i1);
      redist_plan_get_info(new_plan, &i2);
      if (i1.bytes_sent != i2.bytes_sent || i1.bytes_received != i2.bytes_received ||
          i1.bytes_local != i2.bytes_local || i1.schedule != i2.schedule || i1.steps != i2.steps)
        fail = "rank " + std::to_string(world_rank()) + ": the plans' information differs";
      Bytes a, b1, b2;
      fill(o, a, b1, 3);
      b2 = b1;
      const Bytes want = oracle(o, b1, 3);
      const Bytes alpha = scalar(o.type, o.alpha), beta = scalar(o.type, o.beta);
      for (auto [plan, b] : {std::pair{old_plan, &b1}, std::pair{new_plan, &b2}}) {
        const int rc = o.op == -1 ? redist_plan_execute(plan, a.data(), b->data())
                                  : redist_plan_execute_op(plan, alpha.data(), a.data(),
                                                           beta.data(), b->data());
        if (rc != REDIST_SUCCESS) fail += std::string(" execute: ") + redist_last_error();
      }
      if (fail.empty()) fail = compare(o, b1, want);
      if (fail.empty()) fail = compare(o, b2, want);
    }
    redist_plan_destroy(&old_plan);
    redist_plan_destroy(&new_plan);
    watchdog_disarm();
    failed += all_ok(fail, what);
  }
  EXPECT_EQ(failed, 0);
}

TEST(CApiExt, RandomBatches) {
  const int np = world_size();
  const std::uint64_t seed =
      shared_seed("CApiExt.RandomBatches", 915000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  const int cases = std::max(1, options().cases / 4);
  for (int index = 0; index < cases; ++index) {
    const int count = static_cast<int>(rng.uniform(1, 3));
    std::vector<Op> ops;
    for (int k = 0; k < count; ++k)
      ops.push_back(draw_op(rng, np, true, true));
    const bool split = rng.coin(0.5);
    std::string what = "batch case " + std::to_string(index) + (split ? " (split)" : "");
    for (const Op &o : ops)
      what += "\n " + o.describe();
    if (options().verbose) print0(what + "\n");
    watchdog_arm(what);
    std::vector<redist_layout_ext> layouts;
    layouts.reserve(2 * ops.size());
    std::vector<redist_batch_op_ext> c_ops;
    for (const Op &o : ops) {
      layouts.push_back(o.a.layout());
      layouts.push_back(o.b.layout());
      c_ops.push_back({static_cast<redist_op>(o.op), o.m, o.n, static_cast<redist_type>(o.type),
                       &layouts[layouts.size() - 2], &layouts.back(),
                       static_cast<redist_region>(o.region)});
    }
    redist_plan plan = nullptr;
    std::string fail;
    if (redist_plan_create_batch_ext(MPI_COMM_WORLD, count, c_ops.data(), nullptr, &plan) !=
        REDIST_SUCCESS) {
      fail = std::string("create: ") + redist_last_error();
    } else {
      std::vector<Bytes> a(ops.size()), b(ops.size()), want(ops.size()), alphas, betas;
      std::vector<const void *> pa, palpha, pbeta;
      std::vector<void *> pb;
      for (std::size_t k = 0; k < ops.size(); ++k) {
        fill(ops[k], a[k], b[k], static_cast<int>(k));
        want[k] = oracle(ops[k], b[k], static_cast<int>(k));
        alphas.push_back(scalar(ops[k].type, ops[k].alpha));
        betas.push_back(scalar(ops[k].type, ops[k].beta));
      }
      for (std::size_t k = 0; k < ops.size(); ++k) {
        pa.push_back(a[k].data());
        pb.push_back(b[k].data());
        palpha.push_back(alphas[k].data());
        pbeta.push_back(betas[k].data());
      }
      int rc = split ? redist_plan_execute_batch_begin(plan, palpha.data(), pa.data(), pbeta.data(),
                                                       pb.data())
                     : redist_plan_execute_batch(plan, palpha.data(), pa.data(), pbeta.data(),
                                                 pb.data());
      if (split && rc == REDIST_SUCCESS) rc = redist_plan_execute_end(plan);
      if (rc != REDIST_SUCCESS) fail = std::string("execute: ") + redist_last_error();
      for (std::size_t k = 0; k < ops.size() && fail.empty(); ++k) {
        fail = compare(ops[k], b[k], want[k]);
        if (!fail.empty()) fail = "ops[" + std::to_string(k) + "]: " + fail;
      }
    }
    redist_plan_destroy(&plan);
    watchdog_disarm();
    failed += all_ok(fail, what);
  }
  EXPECT_EQ(failed, 0);
}

// Bad first blocks, orders and leading dimensions: the documented status on every rank, the
// message naming the call and the field, no plan.
TEST(CApiExt, Errors) {
  const int np = world_size();
  const int me = world_rank();
  const int bad = np - 1;
  Rng rng(916000ULL);
  Op o;
  o.m = 5;
  o.n = 4;
  // A 1 x np grid, B np x 1, both on every rank.
  o.a = draw_side(rng, 1, o.m, o.n, false);
  o.b = o.a;
  o.a.nprow = 1;
  o.a.npcol = np;
  o.b.nprow = np;
  o.b.npcol = 1;
  for (Side *s : {&o.a, &o.b}) {
    s->ranks.resize(static_cast<std::size_t>(np));
    std::iota(s->ranks.begin(), s->ranks.end(), 0);
    s->lld_extra.assign(static_cast<std::size_t>(np), 0);
    s->rows = {8, 3, 2, s->nprow, 0};
    s->cols = {9, 2, 4, s->npcol, 0};
    s->imb_field = 3;
    s->inb_field = 2;
    s->i = 1;
    s->j = 2;
    s->order = REDIST_ORDER_ROW_MAJOR;
    s->locate(me);
  }
  struct Mutation {
    const char *what;
    bool everywhere;
    int expected_bad; // status on the bad rank(s)
    std::string message;
    void (*apply)(redist_layout_ext &);
  };
  const std::vector<Mutation> mutations = {
      {"b->imb = -1", true, REDIST_ERR_ARGUMENT,
       "redist_plan_create_ext: argument b->imb = -1: first block size must be >= 1",
       [](redist_layout_ext &l) { l.imb = -1; }},
      {"b->inb = 2^53", true, REDIST_ERR_ARGUMENT,
       "redist_plan_create_ext: argument b->inb = 9007199254740992: must be below 2^53",
       [](redist_layout_ext &l) { l.inb = std::int64_t{1} << 53; }},
      {"b->order = 5", false, REDIST_ERR_ARGUMENT,
       "redist_plan_create_ext: argument b->order = 5: unknown redist_order",
       [](redist_layout_ext &l) { l.order = 5; }},
      {"b->layout.lld too small (row-major)", false, REDIST_ERR_ARGUMENT,
       "redist_plan_create_ext: argument b->layout.lld = 0: must be >= max(1, local columns)",
       [](redist_layout_ext &l) { l.layout.lld = 0; }},
      {"b->imb differs", false, REDIST_ERR_MISMATCH,
       "redist_plan_create_ext: processes passed different",
       [](redist_layout_ext &l) { l.imb = 1; }},
      {"b->order differs", false, REDIST_ERR_MISMATCH,
       "redist_plan_create_ext: processes passed different",
       [](redist_layout_ext &l) { l.order = REDIST_ORDER_COLUMN_MAJOR; }},
  };
  for (const Mutation &mu : mutations) {
    if (np == 1 && mu.expected_bad == REDIST_ERR_MISMATCH) continue;
    const redist_layout_ext la = o.a.layout();
    redist_layout_ext lb = o.b.layout();
    const bool here = mu.everywhere || me == bad;
    if (here) mu.apply(lb);
    watchdog_arm(mu.what);
    redist_plan plan = reinterpret_cast<redist_plan>(&lb); // must become NULL
    const int st = redist_plan_create_ext(MPI_COMM_WORLD, o.m, o.n, REDIST_DOUBLE, &la, &lb,
                                          REDIST_REGION_FULL, 0, nullptr, &plan);
    watchdog_disarm();
    const std::string message = redist_last_error();
    if (mu.expected_bad == REDIST_ERR_MISMATCH) {
      EXPECT_EQ(st, REDIST_ERR_MISMATCH) << mu.what << ": " << message;
      EXPECT_EQ(message.rfind(mu.message, 0), 0U) << mu.what << ": " << message;
    } else if (here) {
      EXPECT_EQ(st, mu.expected_bad) << mu.what << ": " << message;
      EXPECT_EQ(message.rfind(mu.message, 0), 0U) << mu.what << ": " << message;
    } else {
      EXPECT_EQ(st, REDIST_ERR_REMOTE) << mu.what << ": " << message;
      EXPECT_NE(message.find("invalid on rank " + std::to_string(bad)), std::string::npos)
          << mu.what << ": " << message;
    }
    EXPECT_EQ(plan, nullptr) << mu.what;
  }
  // Executing: a NULL B on rank 0, which holds part of B's window (rows 1-2 of the first block):
  // an error on every rank, every B untouched.
  {
    const redist_layout_ext la = o.a.layout(), lb = o.b.layout();
    redist_plan plan = nullptr;
    ASSERT_EQ(redist_plan_create_ext(MPI_COMM_WORLD, o.m, o.n, REDIST_DOUBLE, &la, &lb,
                                     REDIST_REGION_FULL, 0, nullptr, &plan),
              REDIST_SUCCESS)
        << redist_last_error();
    Bytes a, b;
    fill(o, a, b, 1);
    const Bytes before = b;
    const int st = redist_plan_execute(plan, a.data(), me == 0 ? nullptr : b.data());
    const std::string message = redist_last_error();
    EXPECT_EQ(st, me == 0 ? REDIST_ERR_ARGUMENT : REDIST_ERR_REMOTE) << message;
    if (me == 0) {
      EXPECT_EQ(message.rfind("redist_plan_execute: argument b = 0: NULL local array", 0), 0U)
          << message;
    }
    EXPECT_EQ(b, before) << "B was modified";
    redist_plan_destroy(&plan);
  }
  // The same in a batch names the operation; the op entry names itself.
  {
    const redist_layout_ext la = o.a.layout();
    redist_layout_ext lb = o.b.layout();
    const redist_layout_ext good = lb;
    if (me == bad) lb.imb = -2;
    const redist_batch_op_ext ops[2] = {
        {REDIST_OP_N, o.m, o.n, REDIST_DOUBLE, &la, &good, REDIST_REGION_FULL},
        {REDIST_OP_N, o.m, o.n, REDIST_DOUBLE, &la, &lb, REDIST_REGION_FULL}};
    redist_plan plan = nullptr;
    const int st = redist_plan_create_batch_ext(MPI_COMM_WORLD, 2, ops, nullptr, &plan);
    const std::string message = redist_last_error();
    EXPECT_EQ(st, me == bad ? REDIST_ERR_ARGUMENT : REDIST_ERR_REMOTE) << message;
    const std::string want = me == bad
                                 ? "redist_plan_create_batch_ext: argument ops[1].b->imb = -2"
                                 : "redist_plan_create_batch_ext: ops[1]: an argument is invalid";
    EXPECT_EQ(message.rfind(want, 0), 0U) << message;
    EXPECT_EQ(plan, nullptr);
    const int st_op =
        redist_plan_create_op_ext(MPI_COMM_WORLD, REDIST_OP_N, o.m, o.n, REDIST_DOUBLE, &la,
                                  nullptr, REDIST_REGION_FULL, nullptr, &plan);
    EXPECT_EQ(st_op, REDIST_ERR_ARGUMENT);
    EXPECT_EQ(std::string(redist_last_error()).rfind("redist_plan_create_op_ext: argument b", 0),
              0U)
        << redist_last_error();
  }
}

} // namespace
} // namespace mpitest
