#include "agreement.hpp"

#include "error.hpp"
#include "nodes.hpp"
#include "progress.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>

namespace redist {
namespace {

// A waiting rank yields its processor at every idle call, and enters MPI at every
// kIdlesBeforeProbe-th: in Open MPI the probe polls every transport and yields again, which
// made a cached 32 x 32 call at 4 ranks on 2 cores take 26-37 us, against 20-21 us without it
// (redist_bench --small).
constexpr int kIdlesBeforeProbe = 32;

struct Waiting {
  MPI_Comm comm = MPI_COMM_NULL;
  int idles = 0;
};

void wait_in_mpi(void *context) {
  auto &waiting = *static_cast<Waiting *>(context);
  if (++waiting.idles == kIdlesBeforeProbe) {
    waiting.idles = 0;
    drive_progress(waiting.comm);
  }
  sched_yield();
}

} // namespace

bool NodeAgreement::possible(const std::vector<int> &node_ids) {
  return node_ids.size() >= 2 && node_ids.size() <= static_cast<std::size_t>(kMaxRanks) &&
         std::all_of(node_ids.begin(), node_ids.end(),
                     [&](int id) { return id == node_ids.front(); });
}

int NodeAgreement::share(MPI_Comm comm) {
  // The steps of offer() to confirm(), with a broadcast and a reduction of their own.
  int rank = 0;
  int size = 0;
  int rc = MPI_Comm_rank(comm, &rank);
  if (rc == MPI_SUCCESS) {
    rc = MPI_Comm_size(comm, &size);
  }
  if (rc != MPI_SUCCESS) {
    return rc;
  }
  single_copy::LinesAddress where = offer(rank, size);
  rc = MPI_Bcast(&where, static_cast<int>(sizeof where), MPI_BYTE, 0, comm);
  take(rc == MPI_SUCCESS ? where : single_copy::LinesAddress{});
  long long missing_anywhere = missing();
  const int agreed =
      MPI_Allreduce(MPI_IN_PLACE, &missing_anywhere, 1, MPI_LONG_LONG, MPI_MAX, comm);
  confirm(rc == MPI_SUCCESS && agreed == MPI_SUCCESS ? missing_anywhere : 1);
  return rc != MPI_SUCCESS ? rc : agreed;
}

single_copy::LinesAddress NodeAgreement::offer(int rank, int size) {
  rank_ = rank;
  size_ = size;
  if (rank == 0 && pending_lines_.create(size)) {
    return pending_lines_.address();
  }
  return {};
}

void NodeAgreement::take(const single_copy::LinesAddress &where) {
  pending_ = true;
  if (rank_ != 0 && where.pid > 0) {
    static_cast<void>(pending_lines_.attach(where, size_));
  }
}

void NodeAgreement::confirm(long long missing_anywhere) {
  if (missing_anywhere == 0) {
    lines_ = std::move(pending_lines_);
  }
  pending_lines_ = {};
  pending_ = false;
}

int NodeAgreement::max(MPI_Comm comm, long long *words, int count) {
  // More words than a line holds: through MPI (count is the same on every rank).
  if (lines_.empty() || count > single_copy::SharedLines::kMaxWords) {
    return MPI_Allreduce(MPI_IN_PLACE, words, count, MPI_LONG_LONG, MPI_MAX, comm);
  }
  Waiting waiting{comm};
  lines_.max(rank_, words, count, wait_in_mpi, &waiting);
  return MPI_SUCCESS;
}

namespace {

// The agreement kept with a communicator, and the REDIST_TEST_NODES split it was made under.
struct Kept {
  int split = 1;
  NodeAgreement agreement;
};

// kept_agreement() runs at every cached ScaLAPACK call, and MPI_Comm_get_attr takes Open MPI's
// attribute lock and a hash lookup (a twentieth of a cached 32 x 32 call at 2 ranks): each
// thread remembers its last answer until any kept agreement is deleted.
std::atomic<std::uint64_t> kept_deletions{0};
struct LastKept {
  MPI_Comm comm = MPI_COMM_NULL;
  Kept *kept = nullptr;
  std::uint64_t deletions = 0;
};
thread_local LastKept last_kept;

int delete_kept(MPI_Comm, int, void *value, void *) {
  kept_deletions.fetch_add(1, std::memory_order_acq_rel);
  delete static_cast<Kept *>(value); // NOLINT(cppcoreguidelines-owning-memory): the attribute
  return MPI_SUCCESS;
}

int kept_key() {
  static std::once_flag once;
  static int key = MPI_KEYVAL_INVALID;
  std::call_once(once, [] {
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_kept, &key, nullptr) != MPI_SUCCESS) {
      key = MPI_KEYVAL_INVALID;
    }
  });
  return key;
}

} // namespace

NodeAgreement *kept_agreement(MPI_Comm comm) {
  LastKept &last = last_kept;
  const std::uint64_t deletions = kept_deletions.load(std::memory_order_acquire);
  if (last.kept == nullptr || last.comm != comm || last.deletions != deletions) {
    const int key = kept_key();
    void *value = nullptr;
    int found = 0;
    if (key == MPI_KEYVAL_INVALID || MPI_Comm_get_attr(comm, key, &value, &found) != MPI_SUCCESS ||
        found == 0) {
      return nullptr;
    }
    last = LastKept{comm, static_cast<Kept *>(value), deletions};
  }
  return last.kept->split == NodeMap::test_split() ? &last.kept->agreement : nullptr;
}

int keep_agreement(MPI_Comm comm) {
  const int key = kept_key();
  if (key == MPI_KEYVAL_INVALID) {
    return MPI_ERR_KEYVAL;
  }
  try {
    auto kept = std::make_unique<Kept>();
    kept->split = NodeMap::test_split();
    if (NodeAgreement::possible(node_ids(comm))) {
      if (const int rc = kept->agreement.share(comm); rc != MPI_SUCCESS) {
        return rc;
      }
    }
    const int set = MPI_Comm_set_attr(comm, key, kept.get());
    if (set == MPI_SUCCESS) {
      static_cast<void>(kept.release()); // comm owns it now: delete_kept frees it
    }
    return set;
  } catch (const Error &) {
    return MPI_ERR_OTHER; // node_ids(): an MPI call failed
  } catch (const std::bad_alloc &) {
    return MPI_ERR_NO_MEM;
  }
}

} // namespace redist
