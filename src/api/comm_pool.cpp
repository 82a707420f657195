#include "comm_pool.hpp"

#include "api_internal.hpp"
#include "front_end.hpp"
#include "nodes.hpp"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

namespace redist {

namespace {
constexpr std::size_t kSpares = 4; ///< kept per communicator
} // namespace

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

CommOffer::CommOffer(MPI_Comm comm) : comm_(comm), pool_(pool_of(comm)) {
  if (pool_) std::tie(offered_, spare_, made_) = pool_->reserve();
}

CommOffer::~CommOffer() {
  PlanComm unused{spare_, pool_, offered_};
  release_plan_comm(unused, true);
}

std::array<long long, 3> CommOffer::words() const {
  return {offered_, -offered_, made_};
}

PlanComm CommOffer::settle(const char *call, const std::array<long long, 3> &agreed) {
  learn_node_ids(comm_);
  PlanComm out;
  out.pool = pool_;
  if (offered_ > 0 && agreed[0] == offered_ && -agreed[1] == offered_) {
    out.handle = std::exchange(spare_, MPI_COMM_NULL);
    out.id = offered_;
    try {
      share_node_ids(comm_, out.handle); // what a duplicate made now would inherit
    } catch (const Error &) {
      // It keeps what it inherited when it was made: the same nodes, unless a test split
      // them since (REDIST_TEST_NODES); and no process is left waiting for this one.
    }
    return out;
  }
  out.handle = duplicate_comm(call, comm_);
  out.id = agreed[2] + 1;
  if (pool_) pool_->note_made(out.id);
  return out;
}

PlanComm acquire_plan_comm(const char *call, MPI_Comm comm) {
  CommOffer offer(comm);
  std::array<long long, 3> words = offer.words();
  check_mpi(front_end::reduce(comm, words.data(), static_cast<int>(words.size())), call,
            "MPI_Allreduce");
  return offer.settle(call, words);
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
