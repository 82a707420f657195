// Batches (redist_plan_create_batch / redist_plan_execute_batch): random
// batches of 1 to 20 operations, each with its own element type (the four floating types and
// both integer types), op (N, T, C), region (full, upper, lower: PxTRADD's trapezoids), window,
// layouts on grids over some of the processes, and alpha, beta (0, 1, -1, other real values and
// complex ones; integers: 1 and 0), executed blocking and split, twice from different sources.
// Every local buffer of B (padding and guard zone included) is compared (a) with this file's
// element-by-element oracle, written apart from src/, and (b) byte for byte with the same
// operations run one at a time through redist_plan_create_op / redist_plan_execute_op. With
// beta = 0, B starts as NaN, which must not reach the result. The values are small integers
// (and halves) times small coefficients, so every result is exact and the oracle's order of
// operations cannot matter. Each execution posts one MPI_Isend per peer (counted by
// interposing MPI_Isend; the union of the operations' peers, computed here from the layouts):
// the data, or, where the receiver unpacks it from the sender's mapped buffer
// (REDIST_SINGLE_COPY=mapped, or auto for large batches), its address; the plan's creation
// sends the sender's identity to each peer (the negotiation of ways), unless no message of any
// process could be read in a single copy (small batches under auto): then no identity, and no
// message is ever mapped. Under REDIST_SINGLE_COPY=mapped some messages must go mapped
// where the ranks can read each other, and under auto some plans must skip the negotiation.
// Errors: a bad field of operation k on one process only (creation and execution), count <= 0,
// NULL ops, different counts, a batch plan executed as a single plan and the reverse: the same
// error on every process naming ops[k], B untouched, no hang, and the plan working afterwards.
// A failed completion in a batch execution is repaired, and so is a failed copy from a
// sender's mapped buffer.

#include "harness.hpp"
#include "mpi_faults.hpp"
#include "single_copy.hpp"

#include <redist.h>

#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace mpitest {
namespace {

// The executor's message tag (redist::Executor::kTag), and the offset of the single-copy
// ways' addresses (and the negotiation's identities) from it (transport.hpp's kAddressTag).
constexpr int kExecutorTag = 7411;
constexpr int kAddressTag = kExecutorTag + 16;

/// Whether every rank can read every other's memory (process_vm_readv, as the single-copy ways
/// do): without it no message can go mapped.
bool ranks_read_each_other() {
  static const bool readable = [] {
    static std::uint64_t word = 0;
    word = 0x5EC0'11C0ULL ^ static_cast<std::uint64_t>(getpid());
    const std::uint64_t mine[2] = {static_cast<std::uint64_t>(getpid()),
                                   reinterpret_cast<std::uintptr_t>(&word)};
    std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(world_size()));
    MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, MPI_COMM_WORLD);
    int ok = 1;
    for (int r = 0; r < world_size(); ++r) {
      const auto pid = static_cast<pid_t>(all[2 * static_cast<std::size_t>(r)]);
      std::uint64_t value = 0;
      iovec local{&value, sizeof value};
      // NOLINTNEXTLINE(performance-no-int-to-ptr): an address in rank r's process
      iovec remote{reinterpret_cast<void *>(all[2 * static_cast<std::size_t>(r) + 1]),
                   sizeof value};
      if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof value) ||
          value != (0x5EC0'11C0ULL ^ static_cast<std::uint64_t>(pid)))
        ok = 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); // every rank has read: the words may go
    return ok != 0;
  }();
  return readable;
}

/// Messages whose receiver unpacked them from the sender's mapped buffer (summed over ranks
/// and executions of the random cases).
long long mapped_messages = 0;
/// Plans with peers whose first execution sent no identity (summed over ranks).
long long plans_without_negotiation = 0;

std::string status(int st) {
  return std::string(redist_status_name(st)) + " (" + redist_last_error() + ")";
}

bool is_complex(int type) {
  return type == REDIST_COMPLEX_FLOAT || type == REDIST_COMPLEX_DOUBLE;
}
bool is_integer(int type) {
  return type == REDIST_INT32 || type == REDIST_INT64;
}
const char *type_name(int type) {
  static const char *names[] = {"float",          "double", "complex float",
                                "complex double", "int32",  "int64"};
  return names[type];
}

/// One operation of a batch.
struct OpCase {
  int type = REDIST_DOUBLE;
  int op = REDIST_OP_N;
  int region = REDIST_REGION_FULL;
  std::int64_t m = 0, n = 0;
  MatSpec a, b;
  double alpha[2] = {1, 0}, beta[2] = {0, 0}; // real, imaginary
  [[nodiscard]] std::string describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s op %c region %d m %lld n %lld alpha (%g,%g) beta (%g,%g)",
                  type_name(type), "NTC"[op], region, static_cast<long long>(m),
                  static_cast<long long>(n), alpha[0], alpha[1], beta[0], beta[1]);
    return std::string(buf) + "\n    A: " + a.describe() + "\n    B: " + b.describe();
  }
};

/// Coefficients every product of which is exact: 0, 1, -1, 2, -0.5, 3 and complex ones.
void draw_scalar(Rng &rng, int type, double *v) {
  static const double reals[] = {0, 1, -1, 2, -0.5, 3};
  static const double complexes[][2] = {{0, 1}, {1, 2}, {-2, 0.5}};
  v[1] = 0;
  if (is_complex(type) && rng.coin(0.4)) {
    const auto &c = complexes[rng.uniform(0, 2)];
    v[0] = c[0];
    v[1] = c[1];
  } else {
    v[0] = reals[rng.uniform(0, 5)];
  }
}

OpCase draw_op(Rng &rng, int np, bool copies) {
  OpCase c;
  c.type = static_cast<int>(rng.uniform(0, 5));
  c.op = static_cast<int>(rng.uniform(0, 2));
  c.region = static_cast<int>(rng.uniform(0, 2));
  c.m = rng.uniform(0, 30);
  c.n = rng.uniform(0, 30);
  if (rng.coin(0.1)) c.m = rng.uniform(31, 90);
  std::vector<int> pool(static_cast<std::size_t>(np));
  std::iota(pool.begin(), pool.end(), 0);
  const bool transposed = c.op != REDIST_OP_N;
  c.a = random_matrix(rng, random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), false),
                      transposed ? c.n : c.m, transposed ? c.m : c.n);
  c.b = random_matrix(rng, random_grid(rng, pool, static_cast<int>(rng.uniform(1, np)), false), c.m,
                      c.n);
  if (!copies && !is_integer(c.type)) {
    draw_scalar(rng, c.type, c.alpha);
    draw_scalar(rng, c.type, c.beta);
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Values: small integers (and halves), so alpha a + beta b is exact in every type.
std::int64_t a_value(std::int64_t gi, std::int64_t gj, int salt) {
  return 1 + (gi * 131 + gj * 31 + salt * 17) % 4001;
}
std::int64_t b_value(std::int64_t p, int salt) {
  return -(1 + (p * 7 + salt * 5) % 3001);
}

template <class T> T make(std::int64_t code) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    return {static_cast<R>(code), static_cast<R>(-static_cast<double>(code) - 0.5)};
  } else {
    return static_cast<T>(code);
  }
}
template <class T> T nan_of() {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    return {std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN()};
  } else {
    return std::numeric_limits<T>::quiet_NaN();
  }
}
template <class T> T scalar(const double *v) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    return {static_cast<R>(v[0]), static_cast<R>(v[1])};
  } else {
    return static_cast<T>(v[0]);
  }
}
template <class T> T conj_of(T x) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return std::conj(x);
  } else {
    return x;
  }
}

/// A local buffer of one operation's matrix, as bytes.
using Bytes = std::vector<std::byte>;

template <class T> void put(Bytes &buf, std::int64_t p, T v) {
  std::memcpy(buf.data() + static_cast<std::size_t>(p) * sizeof(T), &v, sizeof(T));
}
template <class T> T get(const Bytes &buf, std::int64_t p) {
  T v;
  std::memcpy(&v, buf.data() + static_cast<std::size_t>(p) * sizeof(T), sizeof(T));
  return v;
}

/// Owner (world rank) and local position of global element (gi, gj) of s.
int owner(const MatSpec &s, std::int64_t gi, std::int64_t gj) {
  const int pr = static_cast<int>((gi / s.mb + s.rsrc) % s.grid.nprow);
  const int pc = static_cast<int>((gj / s.nb + s.csrc) % s.grid.npcol);
  return s.grid.ranks[static_cast<std::size_t>(pr + pc * s.grid.nprow)];
}

bool in_trapezoid(int region, std::int64_t i, std::int64_t j) {
  return region == REDIST_REGION_FULL || (region == REDIST_REGION_UPPER ? i <= j : i >= j);
}

/// The element of A that element (i, j) of B's window combines with (window-relative).
void source_of(const OpCase &c, std::int64_t i, std::int64_t j, std::int64_t &gi,
               std::int64_t &gj) {
  const bool transposed = c.op != REDIST_OP_N;
  gi = c.a.ia - 1 + (transposed ? j : i);
  gj = c.a.ja - 1 + (transposed ? i : j);
}

/// This process's buffers of one operation.
struct Buffers {
  LocalBuf la, lb;
  Bytes a, b_initial, b;
};

template <class T> void fill(const OpCase &c, Buffers &x, int salt) {
  const int rank = world_rank();
  x.la = local_buf(c.a, rank);
  x.lb = local_buf(c.b, rank);
  x.a.assign(static_cast<std::size_t>(x.la.elems) * sizeof(T), std::byte{0});
  for (std::int64_t p = 0; p < x.la.elems; ++p) {
    std::int64_t code = 9000 + p % 7; // padding: never read
    if (x.la.member && p < x.la.lld * x.la.locc && p % x.la.lld < x.la.locr) {
      const std::int64_t gi =
          local_to_global(p % x.la.lld, c.a.mb, x.la.pr, c.a.rsrc, c.a.grid.nprow);
      const std::int64_t gj =
          local_to_global(p / x.la.lld, c.a.nb, x.la.pc, c.a.csrc, c.a.grid.npcol);
      code = a_value(gi, gj, salt);
    }
    put(x.a, p, make<T>(code));
  }
  const bool nan = c.beta[0] == 0 && c.beta[1] == 0 && !is_integer(c.type);
  x.b_initial.assign(static_cast<std::size_t>(x.lb.elems) * sizeof(T), std::byte{0});
  for (std::int64_t p = 0; p < x.lb.elems; ++p) {
    if (nan) {
      put(x.b_initial, p, nan_of<T>());
    } else {
      put(x.b_initial, p, make<T>(b_value(p, salt)));
    }
  }
  x.b = x.b_initial;
}

/// The oracle: B's whole local buffer after B := alpha op(A) + beta B on the trapezoid.
template <class T> Bytes oracle(const OpCase &c, const Buffers &x, int salt) {
  Bytes want = x.b_initial;
  const LocalBuf &lb = x.lb;
  if (!lb.member) return want;
  const T alpha = scalar<T>(c.alpha), beta = scalar<T>(c.beta), zero{};
  for (std::int64_t lj = 0; lj < lb.locc; ++lj) {
    for (std::int64_t li = 0; li < lb.locr; ++li) {
      const std::int64_t gi = local_to_global(li, c.b.mb, lb.pr, c.b.rsrc, c.b.grid.nprow);
      const std::int64_t gj = local_to_global(lj, c.b.nb, lb.pc, c.b.csrc, c.b.grid.npcol);
      const std::int64_t i = gi - (c.b.ia - 1), j = gj - (c.b.ja - 1);
      if (i < 0 || i >= c.m || j < 0 || j >= c.n || !in_trapezoid(c.region, i, j)) continue;
      std::int64_t ai = 0, aj = 0;
      source_of(c, i, j, ai, aj);
      T value = make<T>(a_value(ai, aj, salt));
      if (c.op == REDIST_OP_C) value = conj_of(value);
      const std::int64_t p = li + lj * lb.lld;
      const T old = get<T>(want, p);
      T result;
      if (beta == zero) {
        result = alpha == zero ? zero : alpha * value; // B is not read
      } else if (alpha == zero) {
        result = beta * old;
      } else {
        result = alpha * value + beta * old;
      }
      put(want, p, result);
    }
  }
  return want;
}

template <class F> void dispatch(int type, F &&f) {
  switch (type) {
  case REDIST_FLOAT:
    f(float{});
    break;
  case REDIST_DOUBLE:
    f(double{});
    break;
  case REDIST_COMPLEX_FLOAT:
    f(std::complex<float>{});
    break;
  case REDIST_COMPLEX_DOUBLE:
    f(std::complex<double>{});
    break;
  case REDIST_INT32:
    f(std::int32_t{});
    break;
  default:
    f(std::int64_t{});
    break;
  }
}

/// The ranks this process sends to in operation c, from the layouts.
std::set<int> send_peers(const OpCase &c) {
  std::set<int> peers;
  const int rank = world_rank();
  for (std::int64_t j = 0; j < c.n; ++j) {
    for (std::int64_t i = 0; i < c.m; ++i) {
      if (!in_trapezoid(c.region, i, j)) continue;
      std::int64_t ai = 0, aj = 0;
      source_of(c, i, j, ai, aj);
      if (owner(c.a, ai, aj) != rank) continue;
      const int to = owner(c.b, c.b.ia - 1 + i, c.b.ja - 1 + j);
      if (to != rank) peers.insert(to);
    }
  }
  return peers;
}

/// A batch on MPI_COMM_WORLD with this process's layouts, alpha and beta values.
struct Batch {
  std::vector<OpCase> ops;
  std::vector<redist_layout> la, lb;
  std::vector<redist_batch_op> desc;
  std::vector<std::array<std::byte, 16>> alpha, beta;
  std::vector<Buffers> buffers;

  explicit Batch(std::vector<OpCase> cases) : ops(std::move(cases)) {
    const int rank = world_rank();
    const std::size_t k = ops.size();
    la.resize(k);
    lb.resize(k);
    alpha.resize(k);
    beta.resize(k);
    buffers.resize(k);
    for (std::size_t i = 0; i < k; ++i) {
      const OpCase &c = ops[i];
      const LocalBuf a = local_buf(c.a, rank), b = local_buf(c.b, rank);
      la[i] = c_layout(c.a, c.a.grid.ranks.data(), a.member ? a.lld : 1);
      lb[i] = c_layout(c.b, c.b.grid.ranks.data(), b.member ? b.lld : 1);
      dispatch(c.type, [&](auto t) {
        using T = decltype(t);
        const T x = scalar<T>(c.alpha), y = scalar<T>(c.beta);
        std::memcpy(alpha[i].data(), &x, sizeof x);
        std::memcpy(beta[i].data(), &y, sizeof y);
      });
    }
    for (std::size_t i = 0; i < k; ++i) {
      const OpCase &c = ops[i];
      desc.push_back({static_cast<redist_op>(c.op), c.m, c.n, static_cast<redist_type>(c.type),
                      &la[i], &lb[i], static_cast<redist_region>(c.region)});
    }
  }
  void fill_all(int salt) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      dispatch(ops[i].type, [&](auto t) { fill<decltype(t)>(ops[i], buffers[i], salt); });
    }
  }
  [[nodiscard]] bool copies() const {
    for (const OpCase &c : ops) {
      if (c.alpha[0] != 1 || c.alpha[1] != 0 || c.beta[0] != 0 || c.beta[1] != 0) return false;
    }
    return true;
  }
  [[nodiscard]] std::string describe() const {
    std::string s = std::to_string(ops.size()) + " operations";
    for (std::size_t i = 0; i < ops.size(); ++i)
      s += "\n  ops[" + std::to_string(i) + "]: " + ops[i].describe();
    return s;
  }
};

struct Pointers {
  std::vector<const void *> alphas, a, betas;
  std::vector<void *> b;
};

/// The argument arrays of an execution; `nulls`: NULL for arrays this process has none of.
Pointers pointers(Batch &batch, bool nulls) {
  Pointers p;
  for (std::size_t i = 0; i < batch.ops.size(); ++i) {
    Buffers &x = batch.buffers[i];
    p.alphas.push_back(batch.alpha[i].data());
    p.betas.push_back(batch.beta[i].data());
    p.a.push_back(nulls && !x.la.member ? nullptr : x.a.data());
    p.b.push_back(nulls && !x.lb.member ? nullptr : x.b.data());
  }
  return p;
}

int run_everywhere(const std::string &what, const std::string &fail) {
  if (!fail.empty()) ADD_FAILURE() << what << "\n" << fail;
  const int bad = fail.empty() ? 0 : 1;
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

std::vector<OpCase> draw_batch(Rng &rng, int np, int max_ops) {
  const int count = static_cast<int>(rng.coin(0.3) ? rng.uniform(1, 3) : rng.uniform(1, max_ops));
  const bool copies = rng.coin(0.2);
  std::vector<OpCase> ops;
  for (int i = 0; i < count; ++i)
    ops.push_back(draw_op(rng, np, copies));
  return ops;
}

/// One random case: what failed here ("" if nothing).
std::string run_case(Batch &batch, int index) {
  std::string fail;
  const std::size_t k = batch.ops.size();
  std::set<int> peers;
  for (const OpCase &c : batch.ops) {
    const std::set<int> mine = send_peers(c);
    peers.insert(mine.begin(), mine.end());
  }
  const auto per_peer = static_cast<long long>(peers.size());
  // The plan's creation decides the ways: its identities, one per peer, or none (no process
  // may read another's).
  faults::Fault count_identities;
  count_identities.calls = faults::isend;
  count_identities.tags = {kAddressTag};
  count_identities.skip = LLONG_MAX; // never fails: counts
  faults::arm({count_identities});
  redist_plan plan = nullptr;
  int st = redist_plan_create_batch(MPI_COMM_WORLD, static_cast<int>(batch.desc.size()),
                                    batch.desc.data(), nullptr, &plan);
  const long long identities = faults::matched(0);
  faults::disarm();
  if (st != REDIST_SUCCESS) return "  redist_plan_create_batch: " + status(st) + "\n";
  const bool negotiated = identities != 0;
  if (negotiated && identities != per_peer)
    fail += "  redist_plan_create_batch: " + std::to_string(identities) +
            " identities sent, expected one per peer (" + std::to_string(per_peer) + ")\n";
  if (!negotiated && per_peer > 0) ++plans_without_negotiation;
  redist_plan_info info{};
  st = redist_plan_get_info(plan, &info);
  if (st != REDIST_SUCCESS || info.send_peers != static_cast<std::int64_t>(peers.size()))
    fail += "  get_info: send_peers " + std::to_string(info.send_peers) + ", expected " +
            std::to_string(peers.size()) + " (" + status(st) + ")\n";

  for (int salt = 1; salt <= 2; ++salt) {
    batch.fill_all(salt);
    const bool nulls = (index + salt) % 2 == 0;
    const bool defaults = batch.copies() && salt == 2; // alphas = betas = NULL
    Pointers p = pointers(batch, nulls);
    const bool split = (index + salt) % 3 == 0;
    faults::Fault count_data;
    count_data.calls = faults::isend;
    count_data.tags = {kExecutorTag};
    count_data.skip = LLONG_MAX; // never fails: counts
    faults::Fault count_addresses = count_data;
    count_addresses.tags = {kAddressTag};
    faults::arm({count_data, count_addresses});
    const void *const *alphas = defaults ? nullptr : p.alphas.data();
    const void *const *betas = defaults ? nullptr : p.betas.data();
    if (split) {
      st = redist_plan_execute_batch_begin(plan, alphas, p.a.data(), betas, p.b.data());
      if (st == REDIST_SUCCESS) st = redist_plan_execute_end(plan);
    } else {
      st = redist_plan_execute_batch(plan, alphas, p.a.data(), betas, p.b.data());
    }
    const long long data = faults::matched(0);
    // One address per mapped message.
    const long long addresses = faults::matched(1);
    faults::disarm();
    mapped_messages += addresses;
    const std::string run =
        std::string(split ? "begin/end" : "execute_batch") + " (salt " + std::to_string(salt) + ")";
    if (st != REDIST_SUCCESS) fail += "  " + run + ": " + status(st) + "\n";
    if (!negotiated && addresses != 0)
      fail += "  " + run + ": " + std::to_string(addresses) +
              " messages mapped by a plan that negotiated no way\n";
    if (data + addresses != static_cast<long long>(peers.size()) || addresses < 0)
      fail += "  " + run + ": " + std::to_string(data) + " MPI_Isend of data and " +
              std::to_string(addresses) + " of addresses, expected one per peer (" +
              std::to_string(peers.size()) + ")\n";
    for (std::size_t i = 0; i < k; ++i) {
      const OpCase &c = batch.ops[i];
      Buffers &x = batch.buffers[i];
      Bytes want;
      dispatch(c.type, [&](auto t) { want = oracle<decltype(t)>(c, x, salt); });
      if (want != x.b) {
        std::int64_t bad = 0;
        const std::size_t es =
            static_cast<std::size_t>(redist_type_size(static_cast<redist_type>(c.type)));
        for (std::size_t e = 0; e * es < want.size(); ++e)
          bad += std::memcmp(want.data() + e * es, x.b.data() + e * es, es) != 0 ? 1 : 0;
        fail += "  " + run + ": ops[" + std::to_string(i) + "]: " + std::to_string(bad) +
                " elements of B's buffer differ from the oracle\n";
      }
      // The same operation alone, from the same B.
      redist_plan single = nullptr;
      st = redist_plan_create_op(MPI_COMM_WORLD, static_cast<redist_op>(c.op), c.m, c.n,
                                 static_cast<redist_type>(c.type), &batch.la[i], &batch.lb[i],
                                 static_cast<redist_region>(c.region), nullptr, &single);
      if (st != REDIST_SUCCESS) {
        fail += "  redist_plan_create_op ops[" + std::to_string(i) + "]: " + status(st) + "\n";
        continue;
      }
      Bytes alone = x.b_initial;
      st = redist_plan_execute_op(single, batch.alpha[i].data(), x.a.data(), batch.beta[i].data(),
                                  alone.data());
      if (st != REDIST_SUCCESS)
        fail += "  redist_plan_execute_op ops[" + std::to_string(i) + "]: " + status(st) + "\n";
      if (alone != x.b)
        fail += "  " + run + ": ops[" + std::to_string(i) +
                "]: B differs from redist_plan_execute_op's\n";
      redist_plan_destroy(&single);
    }
  }
  redist_plan_destroy(&plan);
  return fail;
}

TEST(Batch, RandomBatchesAgainstOracleAndOneByOne) {
  const int np = world_size();
  const std::uint64_t seed = shared_seed("Batch.RandomBatchesAgainstOracleAndOneByOne",
                                         2009000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  for (int index = 0; index < options().cases; ++index) {
    Batch batch(draw_batch(rng, np, 20));
    if (options().only_case >= 0 && options().only_case != index) continue;
    const std::string what = "seed " + std::to_string(seed) + " np " + std::to_string(np) +
                             " case " + std::to_string(index) + ", " + batch.describe();
    watchdog_arm(what);
    failed += run_everywhere(what, run_case(batch, index));
    watchdog_disarm();
  }
  long long mapped = 0;
  MPI_Allreduce(&mapped_messages, &mapped, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  long long unnegotiated = 0;
  MPI_Allreduce(&plans_without_negotiation, &unnegotiated, 1, MPI_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  print0("[  CASES   ] " + std::to_string(options().cases) + " batches on " + std::to_string(np) +
         " ranks, " + std::to_string(failed) + " failed; " + std::to_string(mapped) +
         " messages unpacked from a mapped buffer; " + std::to_string(unnegotiated) +
         " plans (per rank with peers) without negotiation\n");
  EXPECT_EQ(failed, 0);
  const char *way = std::getenv("REDIST_SINGLE_COPY");
  if ((way == nullptr || *way == '\0') && np > 1 && options().only_case < 0 &&
      options().cases >= 20) {
    EXPECT_GT(unnegotiated, 0) << "no small batch skipped the negotiation under auto";
  }
  if (way != nullptr && std::string(way) == "mapped" && ranks_read_each_other() &&
      options().only_case < 0) {
    EXPECT_GT(mapped, 0) << "REDIST_SINGLE_COPY=mapped, yet no message went mapped";
  }
}

/// Whether the message names `what`.
bool names(const std::string &message, const std::string &what) {
  return message.find(what) != std::string::npos;
}

/// A creation error on `bad_rank` only (ARGUMENT there, naming `field`; REMOTE elsewhere naming
/// ops[k]), or the same error everywhere (bad_rank < 0); no plan anywhere.
std::string expect_create_error(Batch &batch, int count, const redist_batch_op *ops, int bad_rank,
                                int expected_status, const std::string &field,
                                const std::string &remote) {
  std::string fail;
  redist_plan plan = nullptr;
  const int st = redist_plan_create_batch(MPI_COMM_WORLD, count, ops, nullptr, &plan);
  const std::string message = redist_last_error();
  const bool here = bad_rank < 0 || bad_rank == world_rank();
  const int want = here ? expected_status : REDIST_ERR_REMOTE;
  if (st != want || !names(message, here ? field : remote))
    fail += "  expected " + std::string(redist_status_name(want)) + " naming " +
            (here ? field : remote) + ", got " + status(st) + "\n";
  if (plan != nullptr) {
    fail += "  a plan despite the error\n";
    redist_plan_destroy(&plan);
  }
  static_cast<void>(batch);
  return fail;
}

TEST(Batch, ErrorsNameTheOperationOnEveryProcess) {
  const int np = world_size();
  const std::uint64_t seed = shared_seed("Batch.ErrorsNameTheOperationOnEveryProcess",
                                         2010000ULL + static_cast<unsigned>(np));
  Rng rng(seed);
  int failed = 0;
  for (int index = 0; index < std::max(4, options().cases / 4); ++index) {
    std::vector<OpCase> cases = draw_batch(rng, np, 8);
    // A real operation owning data on every rank, for the execution errors: A and B on every
    // process.
    std::vector<int> all(static_cast<std::size_t>(np));
    std::iota(all.begin(), all.end(), 0);
    OpCase full;
    full.type = REDIST_INT32 + static_cast<int>(rng.uniform(0, 1)); // an integer type
    full.op = static_cast<int>(rng.uniform(0, 2));
    full.m = 16;
    full.n = 16;
    full.a = random_matrix(rng, random_grid(rng, all, np, false), 16, 16);
    full.b = random_matrix(rng, random_grid(rng, all, np, false), 16, 16);
    full.a.mb = full.a.nb = full.b.mb = full.b.nb = 1; // every process owns some of each window
    const auto at =
        static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(cases.size())));
    cases.insert(cases.begin() + static_cast<std::ptrdiff_t>(at), full);
    Batch batch(std::move(cases));
    const int bad_rank = static_cast<int>(rng.uniform(0, np - 1));
    const std::string k = "ops[" + std::to_string(at) + "]";
    const std::string what = "seed " + std::to_string(seed) + " case " + std::to_string(index) +
                             ", bad rank " + std::to_string(bad_rank) + ", " + k + ", " +
                             batch.describe();
    watchdog_arm(what);
    std::string fail;
    const int count = static_cast<int>(batch.desc.size());
    const bool bad_here = world_rank() == bad_rank;

    // A bad field of operation `at` on one process only.
    std::vector<redist_batch_op> ops = batch.desc;
    if (bad_here) ops[at].m = -1;
    fail += expect_create_error(batch, count, ops.data(), bad_rank, REDIST_ERR_ARGUMENT, k + ".m",
                                k + ": an argument is invalid on rank " + std::to_string(bad_rank));
    ops = batch.desc;
    redist_layout bad_layout = batch.lb[at];
    bad_layout.mb = 0;
    if (bad_here) ops[at].b = &bad_layout;
    fail += expect_create_error(batch, count, ops.data(), bad_rank, REDIST_ERR_ARGUMENT,
                                k + ".b->mb", k + ": an argument is invalid");
    ops = batch.desc;
    const int unknown_type = 17; // a C caller may pass any int
    if (bad_here) std::memcpy(&ops[at].type, &unknown_type, sizeof unknown_type);
    fail += expect_create_error(batch, count, ops.data(), bad_rank, REDIST_ERR_ARGUMENT,
                                k + ".type", k + ": an argument is invalid");
    // A valid but different region on one process: a mismatch everywhere, naming ops[k].
    ops = batch.desc;
    if (bad_here) ops[at].region = static_cast<redist_region>((batch.ops[at].region + 1) % 3);
    fail += expect_create_error(batch, count, ops.data(), -1, REDIST_ERR_MISMATCH, k + ":", "");
    // The batch's own arguments.
    fail += expect_create_error(batch, 0, batch.desc.data(), -1, REDIST_ERR_ARGUMENT, "count", "");
    fail += expect_create_error(batch, -3, batch.desc.data(), -1, REDIST_ERR_ARGUMENT, "count", "");
    fail += expect_create_error(batch, count, nullptr, -1, REDIST_ERR_ARGUMENT, "ops", "");
    fail += expect_create_error(
        batch, bad_here ? count - 1 : count, batch.desc.data(), count > 1 ? -1 : bad_rank,
        count > 1 ? REDIST_ERR_MISMATCH : REDIST_ERR_ARGUMENT, "count", "an argument is invalid");
    redist_options options;
    redist_options_init(&options);
    options.schedule = REDIST_SCHEDULE_STEPWISE;
    redist_plan plan = nullptr;
    int st = redist_plan_create_batch(MPI_COMM_WORLD, count, batch.desc.data(), &options, &plan);
    if (st != REDIST_ERR_ARGUMENT || !names(redist_last_error(), "options->schedule"))
      fail += "  a stepwise batch: " + status(st) + "\n";
    redist_plan_destroy(&plan);

    // Execution errors: B untouched everywhere, the same operation named, the plan working.
    st = redist_plan_create_batch(MPI_COMM_WORLD, count, batch.desc.data(), nullptr, &plan);
    if (st != REDIST_SUCCESS) fail += "  create: " + status(st) + "\n";
    for (int round = 0; plan != nullptr && round < 3; ++round) {
      // round 0: checked before the exchange (first execution); 1: carried by the exchange
      // (deferred); 2: an integer alpha other than 1.
      batch.fill_all(round + 1);
      Pointers p = pointers(batch, false);
      std::int64_t two[2] = {2, 0};
      if (bad_here && round < 2) p.a[at] = nullptr;
      if (bad_here && round == 2) p.alphas[at] = two;
      st = redist_plan_execute_batch(plan, p.alphas.data(), p.a.data(), p.betas.data(), p.b.data());
      const std::string field =
          round < 2 ? "a[" + std::to_string(at) + "]" : "alphas[" + std::to_string(at) + "]";
      const int want = bad_here ? REDIST_ERR_ARGUMENT : REDIST_ERR_REMOTE;
      const std::string named = bad_here ? field : k + ": an argument is invalid";
      if (st != want || !names(redist_last_error(), named))
        fail += "  execution round " + std::to_string(round) + ": expected " +
                redist_status_name(want) + " naming " + named + ", got " + status(st) + "\n";
      for (std::size_t i = 0; i < batch.ops.size(); ++i) {
        if (batch.buffers[i].b != batch.buffers[i].b_initial)
          fail += "  execution round " + std::to_string(round) + ": B of ops[" + std::to_string(i) +
                  "] changed\n";
      }
      // The plan works afterwards.
      p = pointers(batch, true);
      st = redist_plan_execute_batch(plan, p.alphas.data(), p.a.data(), p.betas.data(), p.b.data());
      if (st != REDIST_SUCCESS) fail += "  execution after the error: " + status(st) + "\n";
      for (std::size_t i = 0; i < batch.ops.size(); ++i) {
        Bytes want_b;
        dispatch(batch.ops[i].type, [&](auto t) {
          want_b = oracle<decltype(t)>(batch.ops[i], batch.buffers[i], round + 1);
        });
        if (want_b != batch.buffers[i].b)
          fail += "  execution after the error: ops[" + std::to_string(i) + "] wrong\n";
      }
    }
    // A batch plan is not a single plan, and a single plan not a batch.
    if (plan != nullptr) {
      std::vector<double> dummy(4);
      st = redist_plan_execute(plan, dummy.data(), dummy.data());
      if (st != REDIST_ERR_ARGUMENT || !names(redist_last_error(), "redist_plan_execute_batch"))
        fail += "  redist_plan_execute on a batch plan: " + status(st) + "\n";
    }
    redist_plan single = nullptr;
    st = redist_plan_create_op(MPI_COMM_WORLD, static_cast<redist_op>(batch.ops[at].op), 16, 16,
                               static_cast<redist_type>(batch.ops[at].type), &batch.la[at],
                               &batch.lb[at], REDIST_REGION_FULL, nullptr, &single);
    if (st == REDIST_SUCCESS) {
      Pointers p = pointers(batch, false);
      st = redist_plan_execute_batch(single, nullptr, p.a.data(), nullptr, p.b.data());
      if (st != REDIST_ERR_ARGUMENT || !names(redist_last_error(), "redist_plan_create_batch"))
        fail += "  redist_plan_execute_batch on a single plan: " + status(st) + "\n";
    } else {
      fail += "  redist_plan_create_op: " + status(st) + "\n";
    }
    redist_plan_destroy(&single);
    redist_plan_destroy(&plan);
    failed += run_everywhere(what, fail);
    watchdog_disarm();
  }
  EXPECT_EQ(failed, 0);
}

/// Random batches, each executed three times from different sources with a fault armed on one
/// process around the second execution (`arm`, `disarm`; `injected`: the failures this process
/// has injected so far). Every B must be the oracle's after every execution. Returns the
/// failures injected on all processes; `failed`: the cases that failed.
long long batches_with_a_fault(const char *test, std::uint64_t seed_base,
                               const std::function<void()> &arm,
                               const std::function<void()> &disarm,
                               const std::function<long long()> &injected_here, int &failed) {
  const int np = world_size();
  const std::uint64_t seed = shared_seed(test, seed_base + static_cast<unsigned>(np));
  Rng rng(seed);
  failed = 0;
  long long injected = 0;
  for (int index = 0; index < std::max(2, options().cases / 8); ++index) {
    Batch batch(draw_batch(rng, np, 10));
    const std::string what =
        "seed " + std::to_string(seed) + " case " + std::to_string(index) + ", " + batch.describe();
    watchdog_arm(what);
    std::string fail;
    redist_plan plan = nullptr;
    int st = redist_plan_create_batch(MPI_COMM_WORLD, static_cast<int>(batch.desc.size()),
                                      batch.desc.data(), nullptr, &plan);
    if (st != REDIST_SUCCESS) fail += "  create: " + status(st) + "\n";
    for (int salt = 1; plan != nullptr && salt <= 3; ++salt) {
      batch.fill_all(salt);
      Pointers p = pointers(batch, false);
      const long long before = injected_here();
      if (salt == 2) arm();
      st = redist_plan_execute_batch(plan, p.alphas.data(), p.a.data(), p.betas.data(), p.b.data());
      if (salt == 2) disarm();
      injected += injected_here() - before;
      if (st != REDIST_SUCCESS)
        fail += "  execute (salt " + std::to_string(salt) + "): " + status(st) + "\n";
      for (std::size_t i = 0; i < batch.ops.size(); ++i) {
        Bytes want;
        dispatch(batch.ops[i].type,
                 [&](auto t) { want = oracle<decltype(t)>(batch.ops[i], batch.buffers[i], salt); });
        if (want != batch.buffers[i].b)
          fail += "  salt " + std::to_string(salt) + ": ops[" + std::to_string(i) + "] wrong\n";
      }
    }
    redist_plan_destroy(&plan);
    failed += run_everywhere(what, fail);
    watchdog_disarm();
  }
  long long total = 0;
  MPI_Allreduce(&injected, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

// A receive of a batch's message (its data, or its address where it goes mapped) whose
// completion fails on rank 0 in the second execution: the executor's repair sends it again,
// every B is the oracle's, and the plan keeps working (a third execution).
TEST(Batch, FailedCompletionRepaired) {
  int failed = 0;
  const long long total = batches_with_a_fault(
      "Batch.FailedCompletionRepaired", 2011000ULL,
      [] {
        if (world_rank() != 0) return;
        faults::Fault f;
        f.calls = faults::wait_recv;
        f.tags = {kExecutorTag, kAddressTag};
        f.count = 1;
        faults::arm(f);
      },
      [] { faults::disarm(); }, [] { return faults::injected(); }, failed);
  print0("[  FAULTS  ] " + std::to_string(total) + " failed completions injected\n");
  EXPECT_GT(total, 0);
  EXPECT_EQ(failed, 0);
}

// A batch's message whose receiver cannot copy from the sender's mapped buffer on the last
// rank (single_copy::Injected::mapped: the mapping finds nothing, as for a vanished buffer) in
// the second execution: the repair sends it again through MPI, every element is combined once
// (beta != 0 in most operations: combined twice, the oracle would differ), every B is the
// oracle's, and the third execution works. Injected under REDIST_SINGLE_COPY=mapped
// (mpi_batch_mapped_np3); elsewhere these small batches are sent and nothing fires.
TEST(Batch, FailedMappedCopyRepaired) {
  namespace sc = redist::single_copy;
  int failed = 0;
  const long long total = batches_with_a_fault(
      "Batch.FailedMappedCopyRepaired", 2012000ULL,
      [] {
        if (world_rank() == world_size() - 1) sc::inject_failures(sc::Injected::mapped, 0, 1);
      },
      [] { sc::inject_failures(sc::Injected::mapped, 0, 0); },
      [] { return sc::injected_failures(sc::Injected::mapped); }, failed);
  print0("[  FAULTS  ] " + std::to_string(total) + " copies from a mapped buffer failed\n");
  EXPECT_EQ(failed, 0);
  const char *way = std::getenv("REDIST_SINGLE_COPY");
  if (way != nullptr && std::string(way) == "mapped" && ranks_read_each_other()) {
    EXPECT_GT(total, 0) << "REDIST_SINGLE_COPY=mapped, yet no copy from a mapped buffer failed";
  }
}

} // namespace
} // namespace mpitest
