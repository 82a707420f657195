#include "harness.hpp"

#include "../common/scalapack_decls.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <thread>

namespace mpitest {

Options &options() {
  static Options opts;
  return opts;
}

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

void print0(const std::string &s) {
  if (world_rank() == 0) {
    std::fprintf(stdout, "%s", s.c_str());
    std::fflush(stdout);
  }
}

int on_any_rank(bool here) {
  int mine = here ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

std::uint64_t shared_seed(const char *test_name, std::uint64_t fallback) {
  unsigned long long seed = options().seed_given ? options().seed : fallback;
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  print0(std::string("[  SEED    ] ") + test_name + ": seed " + std::to_string(seed) + " on " +
         std::to_string(world_size()) + " ranks (reproduce with --seed=" + std::to_string(seed) +
         " or REDIST_TEST_SEED=" + std::to_string(seed) + ")\n");
  return seed;
}

// ---------------------------------------------------------------------------------------------
namespace {
class Watchdog {
public:
  Watchdog() {
    if (const char *env = std::getenv("REDIST_TEST_CASE_TIMEOUT")) limit_ = std::atof(env);
    thread_ = std::thread([this] { loop(); });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;
  void arm(const std::string &what) {
    std::lock_guard lock(mutex_);
    what_ = what;
    start_ = std::chrono::steady_clock::now();
    armed_ = true;
  }
  void disarm() {
    std::lock_guard lock(mutex_);
    armed_ = false;
  }

private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(500));
      if (!armed_ || limit_ <= 0) continue;
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      if (elapsed > limit_) {
        std::fprintf(stdout,
                     "[rank %d] TIMEOUT: no progress for %.0f s (REDIST_TEST_CASE_TIMEOUT), "
                     "the calls below appear to hang:\n%s\n",
                     world_rank(), elapsed, what_.c_str());
        std::fflush(stdout);
        _exit(124);
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  bool armed_ = false;
  bool stop_ = false;
  double limit_ = 60;
  std::thread thread_;
};

Watchdog &watchdog() {
  static Watchdog w;
  return w;
}
} // namespace

void watchdog_arm(const std::string &what) {
  watchdog().arm(what);
}
void watchdog_disarm() {
  watchdog().disarm();
}

// ---------------------------------------------------------------------------------------------
std::int64_t Rng::uniform(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  // Rejection sampling on the raw 64-bit output: the same on every platform.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  std::uint64_t x = 0;
  do {
    x = eng_();
  } while (x >= limit);
  return lo + static_cast<std::int64_t>(x % span);
}

bool Rng::coin(double p) {
  return static_cast<double>(uniform(0, 999999)) < p * 1000000.0;
}

// ---------------------------------------------------------------------------------------------
bool GridSpec::find(int rank, int &pr, int &pc) const {
  for (int idx = 0; idx < size(); ++idx) {
    if (ranks[static_cast<std::size_t>(idx)] == rank) {
      pr = idx % nprow;
      pc = idx / nprow;
      return true;
    }
  }
  return false;
}

std::string GridSpec::describe() const {
  std::string s;
  switch (kind) {
  case GridKind::InitRow:
    s = "gridinit('R',";
    break;
  case GridKind::InitCol:
    s = "gridinit('C',";
    break;
  case GridKind::Map:
    s = "gridmap(";
    break;
  }
  s += std::to_string(nprow) + "x" + std::to_string(npcol) + ") ranks(col-major)=[";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    s += (i ? "," : "") + std::to_string(ranks[i]);
  return s + "]";
}

void random_shape(Rng &rng, int count, int &nprow, int &npcol) {
  std::vector<int> divisors;
  for (int d = 1; d <= count; ++d)
    if (count % d == 0) divisors.push_back(d);
  nprow = rng.pick(divisors);
  npcol = count / nprow;
}

GridSpec random_grid(Rng &rng, const std::vector<int> &pool, int count, bool allow_init) {
  GridSpec g;
  random_shape(rng, count, g.nprow, g.npcol);
  bool prefix = true;
  for (int r = 0; r < count; ++r)
    prefix = prefix && std::find(pool.begin(), pool.end(), r) != pool.end();
  g.ranks.assign(static_cast<std::size_t>(count), -1);
  if (allow_init && prefix && rng.coin(0.5)) {
    g.kind = rng.coin(0.5) ? GridKind::InitRow : GridKind::InitCol;
    for (int pr = 0; pr < g.nprow; ++pr) {
      for (int pc = 0; pc < g.npcol; ++pc) {
        g.ranks[static_cast<std::size_t>(pr + pc * g.nprow)] =
            g.kind == GridKind::InitRow ? pr * g.npcol + pc : pc * g.nprow + pr;
      }
    }
  } else {
    g.kind = GridKind::Map;
    std::vector<int> chosen = pool;
    rng.shuffle(chosen);
    std::copy(chosen.begin(), chosen.begin() + count, g.ranks.begin());
  }
  return g;
}

static bool g_blacs_used = false;
bool blacs_used() {
  return g_blacs_used;
}

int create_context(const GridSpec &g, std::string &error) {
  g_blacs_used = true;
  int ctxt = -1;
  Cblacs_get(-1, 0, &ctxt);
  switch (g.kind) {
  case GridKind::InitRow:
    Cblacs_gridinit(&ctxt, "R", g.nprow, g.npcol);
    break;
  case GridKind::InitCol:
    Cblacs_gridinit(&ctxt, "C", g.nprow, g.npcol);
    break;
  case GridKind::Map: {
    std::vector<int> map = g.ranks;
    Cblacs_gridmap(&ctxt, map.data(), g.nprow, g.nprow, g.npcol);
    break;
  }
  }
  int pr = -1, pc = -1;
  const bool member = g.find(world_rank(), pr, pc);
  int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  if (ctxt >= 0) Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
  const bool blacs_member = ctxt >= 0 && myrow >= 0 && myrow < nprow && mycol >= 0 && mycol < npcol;
  if (member != blacs_member ||
      (member && (nprow != g.nprow || npcol != g.npcol || myrow != pr || mycol != pc))) {
    error += "harness: BLACS placed rank " + std::to_string(world_rank()) + " at (" +
             std::to_string(myrow) + "," + std::to_string(mycol) + ") of " + std::to_string(nprow) +
             "x" + std::to_string(npcol) + " (ctxt " + std::to_string(ctxt) + "), expected " +
             (member ? "(" + std::to_string(pr) + "," + std::to_string(pc) + ")"
                     : std::string("outside")) +
             " of " + g.describe() + "\n";
  }
  return member ? ctxt : -1;
}

void free_context(int ctxt) {
  if (ctxt >= 0) Cblacs_gridexit(ctxt);
}

// ---------------------------------------------------------------------------------------------
std::int64_t numroc(std::int64_t n, std::int64_t nb, int p, int src, int np) {
  const std::int64_t dist = (p - src + np) % np;
  const std::int64_t blocks = n / nb;
  std::int64_t count = (blocks / np) * nb;
  const std::int64_t extra = blocks % np;
  if (dist < extra)
    count += nb;
  else if (dist == extra)
    count += n % nb;
  return count;
}

std::int64_t local_to_global(std::int64_t l, std::int64_t nb, int p, int src, int np) {
  const std::int64_t dist = (p - src + np) % np;
  return ((l / nb) * np + dist) * nb + l % nb;
}

std::int64_t MatSpec::lld(int pr, int pc) const {
  return std::max<std::int64_t>(1, locr(pr)) +
         lld_extra[static_cast<std::size_t>(pr + pc * grid.nprow)];
}

std::string MatSpec::describe() const {
  std::string s = grid.describe() + " M_=" + std::to_string(mg) + " N_=" + std::to_string(ng) +
                  " MB_=" + std::to_string(mb) + " NB_=" + std::to_string(nb) +
                  " RSRC_=" + std::to_string(rsrc) + " CSRC_=" + std::to_string(csrc) +
                  " I=" + std::to_string(ia) + " J=" + std::to_string(ja) + " LLD=[";
  for (int idx = 0; idx < grid.size(); ++idx) {
    s += (idx ? "," : "") + std::to_string(lld(idx % grid.nprow, idx / grid.nprow));
  }
  return s + "]";
}

static std::int64_t random_block(Rng &rng, std::int64_t extent) {
  const std::int64_t r = rng.uniform(0, 99);
  if (r < 15) return 1;
  if (r < 70) return rng.uniform(1, 8);
  if (r < 85) return rng.uniform(9, 24);
  return std::max<std::int64_t>(extent, 1) + rng.uniform(0, 5); // as large as the matrix or more
}

redist_layout c_layout(const MatSpec &s, const int *ranks, std::int64_t lld) {
  redist_layout l{};
  l.m = s.mg;
  l.n = s.ng;
  l.mb = s.mb;
  l.nb = s.nb;
  l.nprow = s.grid.nprow;
  l.npcol = s.grid.npcol;
  l.rsrc = s.rsrc;
  l.csrc = s.csrc;
  l.ranks = ranks;
  l.i = s.ia - 1;
  l.j = s.ja - 1;
  l.lld = lld;
  return l;
}

std::int64_t random_first_block(Rng &rng, std::int64_t block, std::int64_t extent) {
  switch (rng.uniform(0, 3)) {
  case 0:
    return rng.uniform(1, block);
  case 1:
    return block;
  case 2:
    return rng.uniform(block + 1, 3 * block + 2);
  default:
    return std::max<std::int64_t>(1, extent) + rng.uniform(0, 3);
  }
}

MatSpec random_matrix(Rng &rng, GridSpec grid, std::int64_t m, std::int64_t n) {
  MatSpec s;
  s.grid = std::move(grid);
  s.ia = rng.coin(0.4) ? 1 : 1 + rng.uniform(0, 12);
  s.ja = rng.coin(0.4) ? 1 : 1 + rng.uniform(0, 12);
  s.mg = s.ia - 1 + m + (rng.coin(0.5) ? 0 : rng.uniform(0, 10));
  s.ng = s.ja - 1 + n + (rng.coin(0.5) ? 0 : rng.uniform(0, 10));
  s.mb = random_block(rng, s.mg);
  s.nb = rng.coin(0.3) ? s.mb : random_block(rng, s.ng);
  s.rsrc = static_cast<int>(rng.uniform(0, s.grid.nprow - 1));
  s.csrc = static_cast<int>(rng.uniform(0, s.grid.npcol - 1));
  s.lld_extra.resize(static_cast<std::size_t>(s.grid.size()));
  for (auto &e : s.lld_extra)
    e = rng.coin(0.6) ? 0 : rng.uniform(1, 6);
  return s;
}

void random_window(Rng &rng, std::int64_t &m, std::int64_t &n) {
  const auto extent = [&rng]() -> std::int64_t {
    const std::int64_t r = rng.uniform(0, 99);
    if (r < 15) return rng.uniform(1, 4);
    if (r < 75) return rng.uniform(1, 24);
    if (r < 97) return rng.uniform(25, 60);
    return rng.uniform(61, 300); // now and then a larger window (longer messages)
  };
  m = extent();
  n = extent();
  const std::int64_t r = rng.uniform(0, 99);
  if (r < 3)
    m = 0;
  else if (r < 6)
    n = 0;
  else if (r < 7)
    m = n = 0;
}

// ---------------------------------------------------------------------------------------------
bool in_region(Region r, bool unit_diag, std::int64_t m, std::int64_t n, std::int64_t i,
               std::int64_t j) {
  switch (r) {
  case Region::Full:
    return true;
  case Region::Upper:
    return i < std::min(std::max<std::int64_t>(m - n, 0) + j + (unit_diag ? 0 : 1), m);
  case Region::Lower:
    return i >=
           std::max<std::int64_t>(0, j - std::max<std::int64_t>(n - m, 0) + (unit_diag ? 1 : 0));
  }
  return false;
}

std::int64_t region_count(Region r, bool unit_diag, std::int64_t m, std::int64_t n) {
  std::int64_t count = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      count += in_region(r, unit_diag, m, n, i, j) ? 1 : 0;
  return count;
}

std::array<int, 9> descriptor(const MatSpec &s, int ctxt, const LocalBuf &lb) {
  if (!lb.member) return {1, -1, 0, 0, 1, 1, 0, 0, 1};
  return {1,
          ctxt,
          static_cast<int>(s.mg),
          static_cast<int>(s.ng),
          static_cast<int>(s.mb),
          static_cast<int>(s.nb),
          s.rsrc,
          s.csrc,
          static_cast<int>(lb.lld)};
}

LocalBuf local_buf(const MatSpec &s, int rank) {
  LocalBuf lb;
  lb.member = s.grid.find(rank, lb.pr, lb.pc);
  if (lb.member) {
    lb.locr = s.locr(lb.pr);
    lb.locc = s.locc(lb.pc);
    lb.lld = s.lld(lb.pr, lb.pc);
    lb.elems = lb.lld * lb.locc + GuardElems;
  } else {
    lb.elems = GuardElems;
  }
  return lb;
}

std::int64_t expected_code(const CopySpec &c, const MatSpec &a, const MatSpec &b,
                           const LocalBuf &lb, std::int64_t p, int a_salt, int b_salt) {
  if (lb.member && p < lb.lld * lb.locc) {
    const std::int64_t li = p % lb.lld, lj = p / lb.lld;
    if (li < lb.locr) {
      const std::int64_t gi = local_to_global(li, b.mb, lb.pr, b.rsrc, b.grid.nprow);
      const std::int64_t gj = local_to_global(lj, b.nb, lb.pc, b.csrc, b.grid.npcol);
      const std::int64_t wi = gi - (b.ia - 1), wj = gj - (b.ja - 1);
      if (wi >= 0 && wi < c.m && wj >= 0 && wj < c.n &&
          in_region(c.region, c.unit_diag, c.m, c.n, wi, wj)) {
        return c.transposed ? a_code(a, a.ia - 1 + wj, a.ja - 1 + wi, a_salt)
                            : a_code(a, a.ia - 1 + wi, a.ja - 1 + wj, a_salt);
      }
    }
  }
  return sentinel_code(p, b_salt);
}

std::int64_t owned_region_count(const CopySpec &c, const MatSpec &s, const LocalBuf &lb) {
  if (!lb.member) return 0;
  std::int64_t count = 0;
  for (std::int64_t lj = 0; lj < lb.locc; ++lj) {
    const std::int64_t wj = local_to_global(lj, s.nb, lb.pc, s.csrc, s.grid.npcol) - (s.ja - 1);
    if (wj < 0 || wj >= c.n) continue;
    for (std::int64_t li = 0; li < lb.locr; ++li) {
      const std::int64_t wi = local_to_global(li, s.mb, lb.pr, s.rsrc, s.grid.nprow) - (s.ia - 1);
      if (wi >= 0 && wi < c.m && in_region(c.region, c.unit_diag, c.m, c.n, wi, wj)) ++count;
    }
  }
  return count;
}

std::string describe_code(std::int64_t code, const MatSpec &a) {
  if (code > 0) {
    const std::int64_t v = code - 1, salt = v / CodeSaltStride, rest = v % CodeSaltStride;
    if (a.mg <= 0) return "?";
    return "A(" + std::to_string(rest % a.mg) + "," + std::to_string(rest / a.mg) + ")" +
           (salt ? " salt " + std::to_string(salt) : "");
  }
  if (code <= -APaddingCode) return "A-padding@" + std::to_string(-code - APaddingCode);
  if (code < 0) {
    const std::int64_t v = -code - 1;
    return "sentinel@" + std::to_string(v % CodeSaltStride) + " salt " +
           std::to_string(v / CodeSaltStride);
  }
  return "zero";
}

// ---------------------------------------------------------------------------------------------
static std::string fmt(const char *f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string show(float v) {
  return fmt("%.9g", static_cast<double>(v));
}
std::string show(double v) {
  return fmt("%.17g", v);
}
std::string show(int v) {
  return std::to_string(v);
}
std::string show(long v) {
  return std::to_string(v);
}
std::string show(long long v) {
  return std::to_string(v);
}
std::string show(std::complex<float> v) {
  return "(" + show(v.real()) + "," + show(v.imag()) + ")";
}
std::string show(std::complex<double> v) {
  return "(" + show(v.real()) + "," + show(v.imag()) + ")";
}

} // namespace mpitest
