#include "comm_pool.hpp"

#include "api_internal.hpp"
#include "nodes.hpp"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

namespace redist {

/// The spares of one communicator.
class CommPool {
public:
  CommPool() = default;
  CommPool(const CommPool &) = delete;
  CommPool &operator=(const CommPool &) = delete;
  ~CommPool() { close(); }

  /// The spare of the largest id, out of the pool (id 0: none) -- the same spare on every
  /// process that holds the same spares, whatever order their plans were destroyed in -- and
  /// the largest id seen. Out of the pool until it is used or given back, so that nothing frees
  /// it meanwhile (free_spare_comms from another thread).
  std::tuple<long long, MPI_Comm, long long> reserve() {
    std::lock_guard lock(mutex_);
    const auto newest =
        std::max_element(spares_.begin(), spares_.end(),
                         [](const auto &x, const auto &y) { return x.first < y.first; });
    if (newest == spares_.end()) return {0, MPI_COMM_NULL, made_};
    const auto [id, comm] = *newest;
    spares_.erase(newest);
    return {id, comm, made_};
  }

  /// `id` is the largest seen (a duplicate made with the id every process agreed).
  void note_made(long long id) {
    std::lock_guard lock(mutex_);
    made_ = std::max(made_, id);
  }

  /// Keeps `comm` as a spare; false where the pool is closed or full.
  bool give_back(long long id, MPI_Comm comm) {
    std::lock_guard lock(mutex_);
    if (closed_ || spares_.size() >= kSpares) return false;
    spares_.emplace_back(id, comm);
    return true;
  }

  /// Its communicator is being freed (or MPI finalized): the spares go, and no more come.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    free_spares();
  }

  void free_spares() {
    std::vector<std::pair<long long, MPI_Comm>> spares;
    {
      std::lock_guard lock(mutex_);
      spares.swap(spares_);
    }
    int finalized = 0;
    MPI_Finalized(&finalized);
    for (auto &[id, comm] : spares) {
      if (finalized == 0) MPI_Comm_free(&comm);
    }
  }

private:
  std::mutex mutex_;
  std::vector<std::pair<long long, MPI_Comm>> spares_;
  long long made_ = 0;
  bool closed_ = false;
};

namespace {

using PoolRef = std::shared_ptr<CommPool>;

/// Every pool that may hold spares, for free_spare_comms().
struct Pools {
  std::mutex mutex;
  std::vector<std::weak_ptr<CommPool>> pools;
};
Pools &pools() {
  static Pools all;
  return all;
}

int delete_pool(MPI_Comm, int, void *value, void *) {
  auto *ref = static_cast<PoolRef *>(value);
  (*ref)->close(); // plans made on the communicator still hold the pool: they free theirs
  delete ref;      // NOLINT(cppcoreguidelines-owning-memory): the attribute
  return MPI_SUCCESS;
}

int pool_key() {
  static std::once_flag once;
  static int key = MPI_KEYVAL_INVALID;
  std::call_once(once, [] {
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_pool, &key, nullptr) != MPI_SUCCESS) {
      key = MPI_KEYVAL_INVALID;
    }
  });
  return key;
}

/// The pool kept with `comm`, made where there is none; null where MPI refuses the attribute
/// (then plans duplicate every time and free at destruction).
PoolRef pool_of(MPI_Comm comm) {
  const int key = pool_key();
  if (key == MPI_KEYVAL_INVALID) return nullptr;
  void *value = nullptr;
  int found = 0;
  if (MPI_Comm_get_attr(comm, key, &value, &found) != MPI_SUCCESS) return nullptr;
  if (found != 0) return *static_cast<PoolRef *>(value);
  auto ref = std::make_unique<PoolRef>(std::make_shared<CommPool>());
  {
    std::lock_guard lock(pools().mutex);
    std::erase_if(pools().pools, [](const std::weak_ptr<CommPool> &p) { return p.expired(); });
    pools().pools.push_back(*ref);
  }
  if (MPI_Comm_set_attr(comm, key, ref.get()) != MPI_SUCCESS) return nullptr;
  return *ref.release(); // comm owns the reference now: delete_pool drops it
}

} // namespace

PlanComm acquire_plan_comm(const char *call, MPI_Comm comm) {
  learn_node_ids(comm);
  PlanComm out;
  out.pool = pool_of(comm);
  auto [offered, spare, made] =
      out.pool ? out.pool->reserve() : std::tuple<long long, MPI_Comm, long long>{};
  // The maxima of the offered id, of its negation, and of the largest id seen.
  long long words[3] = {offered, -offered, made};
  const int rc = MPI_Allreduce(MPI_IN_PLACE, words, 3, MPI_LONG_LONG, MPI_MAX, comm);
  if (rc == MPI_SUCCESS && offered > 0 && words[0] == offered && -words[1] == offered) {
    out.handle = spare;
    out.id = offered;
    try {
      share_node_ids(comm, out.handle); // what a duplicate made now would inherit
    } catch (const Error &) {
      // It keeps what it inherited when it was made: the same nodes, unless a test split
      // them since (REDIST_TEST_NODES); and no process is left waiting for this one.
    }
    return out;
  }
  if (spare != MPI_COMM_NULL && !out.pool->give_back(offered, spare)) MPI_Comm_free(&spare);
  check_mpi(rc, call, "MPI_Allreduce");
  out.handle = duplicate_comm(call, comm);
  out.id = words[2] + 1;
  if (out.pool) out.pool->note_made(out.id);
  return out;
}

void release_plan_comm(PlanComm &c, bool reusable) {
  if (c.handle != MPI_COMM_NULL && !(reusable && c.pool && c.pool->give_back(c.id, c.handle))) {
    MPI_Comm_free(&c.handle);
  }
  c = PlanComm{};
}

void free_spare_comms() {
  std::vector<PoolRef> alive;
  {
    std::lock_guard lock(pools().mutex);
    for (const std::weak_ptr<CommPool> &p : pools().pools) {
      if (PoolRef pool = p.lock()) alive.push_back(std::move(pool));
    }
  }
  for (const PoolRef &pool : alive) {
    pool->free_spares();
  }
}

} // namespace redist
