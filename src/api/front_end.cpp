#include "front_end.hpp"
#include "nd_planner.hpp"
#include "single_copy.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <tuple>

namespace redist::front_end {
namespace {

constexpr long long kRankRange = 1LL << 24;

template <class Value> class LruCache {
public:
  explicit LruCache(std::size_t capacity) : capacity_(capacity) {}
  std::shared_ptr<Value> find(const Key &key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().second;
      }
    }
    return nullptr;
  }
  void insert(const Key &key, std::shared_ptr<Value> value) {
    entries_.remove_if([&](const auto &e) { return e.first == key; });
    entries_.emplace_front(key, std::move(value));
    while (entries_.size() > capacity_)
      entries_.pop_back();
  }
  void clear() { entries_.clear(); }
  void erase(const Key &key) {
    entries_.remove_if([&](const auto &e) { return e.first == key; });
  }
  void set_capacity(std::size_t capacity) {
    capacity_ = capacity;
    while (entries_.size() > capacity_)
      entries_.pop_back();
  }

private:
  std::size_t capacity_;
  std::list<std::pair<Key, std::shared_ptr<Value>>> entries_;
};

struct Caches {
  std::mutex mutex;
  long long generation = 0; // of the last entry built here
  LruCache<CachedPlan> plans{kDefaultPlanCache};
  LruCache<OwnedComm> comms{kDefaultCommCache};
};

Caches &caches() {
  static auto *instance = new Caches; // never destroyed: MPI may be finalized before exit
  return *instance;
}

/// -x, wrapping for LLONG_MIN (a garbage argument may hold it) instead of overflowing.
long long negated(long long x) {
  return static_cast<long long>(0ULL - static_cast<unsigned long long>(x));
}

/// Serialises a CallFields<long long> as (x, -x) pairs for a max-reduction: the maxima give
/// max(x) and -min(x); a process that does not contribute a field sends LLONG_MIN twice.
void put(std::vector<long long> &v, long long x, bool contributes) {
  v.push_back(contributes ? x : LLONG_MIN);
  v.push_back(contributes ? negated(x) : LLONG_MIN);
}

/// Side fields come from the members of that side's grid only.
bool contributes(const CallArgs &call, Arg arg) {
  if (call.whole_layouts) return true;
  switch (arg) {
  case Arg::desca:
  case Arg::ia:
  case Arg::ja:
    return call.a.member;
  case Arg::descb:
  case Arg::ib:
  case Arg::jb:
    return call.b.member;
  default:
    return true;
  }
}

/// Whether every process holds an entry of the same build (a miss contributes generation 0).
bool same_everywhere(const Range &generation, const Range &creator) {
  return generation.min == generation.max && creator.min == creator.max && generation.min > 0;
}

Range range_at(std::span<const long long> v, std::size_t &at) {
  Range r;
  r.present = v[at] != LLONG_MIN;
  r.max = v[at];
  r.min = r.present ? negated(v[at + 1]) : LLONG_MIN; // no process contributed: both LLONG_MIN
  at += 2;
  return r;
}

/// Every field of a description (CallFields), for the reduction; `from(arg)`:
/// whether this process contributes the field.
template <class Fields, class From>
void put_fields(std::vector<long long> &v, const Fields &values, From &&from) {
  Fields copy = values;
  each_field([&](Arg arg, const char *, long long x) { put(v, x, from(arg)); }, copy);
}

/// The agreed ranges of every field, read back from where put_fields() put them.
template <class Ranges>
void get_fields(const std::vector<long long> &v, std::size_t &at, Ranges &out) {
  each_field([&](Arg, const char *, Range &r) { r = range_at(v, at); }, out);
}

/// A call's fields, for agree(): side fields from their grid's members only, nothing from a
/// process with an error (`ok` false).
void put_call(std::vector<long long> &v, const CallArgs &call, bool ok) {
  put_fields(v, call.fields, [&](Arg arg) { return ok && contributes(call, arg); });
}

/// A batch's error words: the operation in the priority, above the single calls' priority 1.
constexpr long long kBatchOps = 1LL << 31;

} // namespace

OwnedComm::~OwnedComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

long long error_word(long long priority, int order) {
  return priority * kRankRange + order + 1;
}

long long Agreement::error_priority() const {
  return error / kRankRange;
}

int error_order(long long word) {
  return static_cast<int>(word % kRankRange - 1);
}

long long Agreement::error_rank() const {
  return error_order(error);
}

int reduce(MPI_Comm comm, long long *words, int count) {
  return collective::agree_max(comm, {words, static_cast<std::size_t>(count)});
}

namespace {

/// After a collective of planning: only two failures on this process leave it without the
/// others' result (collective.hpp).
void agreed_or_throw(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    throw Error(REDIST_ERR_MPI, std::string("redist: ") + what + " failed twice while planning");
  }
}

} // namespace

void Key::too_long() {
  throw Error(REDIST_ERR_INTERNAL, "redist: plan cache key too long");
}

bool Key::operator==(const Key &other) const {
  return hash == other.hash && size == other.size &&
         std::equal(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(size),
                    other.values.begin());
}

CacheLookup look_up(const CallArgs &call, std::span<const long long> identity,
                    std::span<const long long> comm_identity) {
  CacheLookup out;
  out.comm_key.push(comm_identity);
  Key &k = out.plan_key;
  k.push(comm_identity);
  k.push(identity);
  k.push(static_cast<long long>(call.element_size));
  k.push(call.index_base);
  k.push(static_cast<long long>(call.options.strategy));
  k.push(call.options.max_concurrent);
  k.push(call.options.max_memory);
  // A plan keeps the REDIST_SINGLE_COPY mode it was made under: a call under another mode
  // must not reuse it (this process's key; a mismatch between processes misses everywhere).
  k.push(static_cast<long long>(call.single_copy_mode));
  CallFields<long long> fields = call.fields;
  each_field([&](Arg, const char *, long long x) { k.push(x); }, fields);
  for (const Position *p : {&call.a, &call.b}) {
    k.push(p->member ? 1 : 0);
    if (p->member) k.push({{p->row, p->col, p->lld}});
  }
  std::lock_guard lock(caches().mutex);
  out.plan = caches().plans.find(out.plan_key);
  out.comm = caches().comms.find(out.comm_key);
  return out;
}

Agreement agree(MPI_Comm comm, const CallArgs &call, long long error, const CacheLookup &cache,
                std::span<long long> extra) {
  std::vector<long long> v;
  v.reserve(96);
  v.push_back(error);
  {
    std::lock_guard lock(caches().mutex);
    v.push_back(caches().generation);
  }
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  v.push_back(-static_cast<long long>(world_rank)); // the maximum gives the lowest
  put_call(v, call, error == 0);
  // A cache hit counts only if every process found an entry with the same build id.
  put(v, cache.plan ? cache.plan->id.generation : 0, true);
  put(v, cache.plan ? cache.plan->id.creator : 0, true);
  put(v, cache.comm ? cache.comm->id.generation : 0, true);
  put(v, cache.comm ? cache.comm->id.creator : 0, true);
  const std::size_t extra_at = v.size();
  v.insert(v.end(), extra.begin(), extra.end());
  agreed_or_throw(reduce(comm, v.data(), static_cast<int>(v.size())),
                  "MPI_Iallreduce (the arguments)");
  std::copy(v.begin() + static_cast<std::ptrdiff_t>(extra_at), v.end(), extra.begin());

  Agreement out;
  out.error = v[0];
  std::size_t at = 3;
  get_fields(v, at, out.fields);
  Range ids[4];
  for (Range &r : ids)
    r = range_at(v, at);
  out.plan_hit = same_everywhere(ids[0], ids[1]);
  out.comm_hit = same_everywhere(ids[2], ids[3]);
  out.new_id = BuildId{v[1] + 1, -v[2]};
  return out;
}

long long batch_error_word(long long op, int order) {
  return error_word(2 + kBatchOps - (op + 1), order);
}

long long batch_error_op(long long word) {
  return kBatchOps - (word / kRankRange - 2) - 1;
}

bool agree_hit(MPI_Comm comm, long long error, const CacheLookup &cache,
               collective::Confirmation &confirmation) {
  std::array<long long, 5> v{};
  v[0] = error;
  const BuildId id = cache.plan ? cache.plan->id : BuildId{0, 0};
  v[1] = id.generation;
  v[2] = negated(id.generation);
  v[3] = id.creator;
  v[4] = negated(id.creator);
  if (collective::agree_max(comm, v, &confirmation) != MPI_SUCCESS) return false;
  std::size_t at = 1;
  const Range generation = range_at(v, at);
  const Range creator = range_at(v, at);
  return v[0] == 0 && same_everywhere(generation, creator);
}

Replication replication_of(const SideFields<Range> &side) {
  return {side.rsrc.max == -1, side.csrc.max == -1};
}

Gathered gather_transfer(MPI_Comm comm, const CallArgs &call, const Agreement &agreed,
                         Transfer &t) {
  Gathered out;
  int size = 0;
  MPI_Comm_size(comm, &size);
  const CallFields<Range> &f = agreed.fields;
  const long long mine[4] = {call.a.member ? call.a.row : -1, call.a.member ? call.a.col : -1,
                             call.b.member ? call.b.row : -1, call.b.member ? call.b.col : -1};
  std::vector<long long> coords;
  t = Transfer{};
  const auto positions = [](const SideFields<Range> &s) {
    return s.nprow.present ? static_cast<std::size_t>(s.nprow.max * s.npcol.max) : 0;
  };
  int failed = 0;
  try {
    coords.resize(4 * static_cast<std::size_t>(size));
    t.src.grid.ranks.assign(positions(f.a), -1);
    t.dst.grid.ranks.assign(positions(f.b), -1);
  } catch (const std::bad_alloc &) {
    failed = 1;
  }
  out.here = failed != 0;
  // Only where planning starts: a cache hit never gets here.
  agreed_or_throw(collective::agree_max(comm, std::span<int>(&failed, 1)),
                  "MPI_Iallreduce (out of memory)");
  if (failed != 0) {
    out.status = REDIST_ERR_NO_MEMORY;
    return out;
  }
  agreed_or_throw(collective::gather(comm, std::span<const long long>(mine), coords),
                  "MPI_Iallgather (the grids)");

  t.m = f.m.max;
  t.n = f.n.max;
  const bool trapezoid = call.fields.uplo != ' ';
  t.region.kind = !trapezoid                ? Region::Kind::full
                  : call.fields.uplo == 'U' ? Region::Kind::upper
                                            : Region::Kind::lower;
  t.region.unit_diag = trapezoid && call.fields.diag == 'U';
  if (call.fields.operation != kCopy) {
    t.region.diagonal = Region::Diagonal::top_left; // PxTRADD's trapezoid
  }
  if (call.fields.operation == kOperationTransposed) {
    t.perm = {1, 0};
  }
  for (const auto &[name, s, offset, layout] : {std::tuple{'A', &f.a, std::size_t{0}, &t.src},
                                                std::tuple{'B', &f.b, std::size_t{2}, &t.dst}}) {
    const int nprow = static_cast<int>(s->nprow.max);
    const int npcol = static_cast<int>(s->npcol.max);
    const Replication replicated = replication_of(*s);
    layout->rows = {s->m.max, s->mb.max, nprow, replicated.rows ? 0 : static_cast<int>(s->rsrc.max),
                    s->imb.max};
    layout->cols = {s->n.max, s->nb.max, npcol, replicated.cols ? 0 : static_cast<int>(s->csrc.max),
                    s->inb.max};
    layout->row_major = s->order.max != 0;
    layout->i = s->i.max - call.index_base;
    layout->j = s->j.max - call.index_base;
    layout->grid.nprow = nprow;
    layout->grid.npcol = npcol;
    for (int p = 0; p < size; ++p) {
      const long long pr = coords[4 * static_cast<std::size_t>(p) + offset];
      const long long pc = coords[4 * static_cast<std::size_t>(p) + offset + 1];
      if (pr >= 0 && pr < nprow && pc >= 0 && pc < npcol)
        layout->grid.ranks[static_cast<std::size_t>(pr) + static_cast<std::size_t>(pc) * nprow] = p;
    }
    for (int pc = 0; pc < npcol; ++pc) {
      for (int pr = 0; pr < nprow; ++pr) {
        if (layout->grid.rank_at(pr, pc) < 0) {
          out.status = REDIST_ERR_ARGUMENT;
          out.side = name;
          out.row = pr;
          out.col = pc;
          return out;
        }
      }
    }
  }
  return out;
}

Built build_plan(MPI_Comm comm, int rank, int size, const CallArgs &call, Transfer &t,
                 const Agreement &agreed, CacheLookup &lookup) {
  Built out;
  {
    std::lock_guard lock(caches().mutex);
    caches().generation = std::max(caches().generation, agreed.new_id.generation);
  }
  if (!agreed.comm_hit) {
    MPI_Comm dup = MPI_COMM_NULL;
    if (collective::duplicate(comm, &dup) != MPI_SUCCESS) {
      out.status = REDIST_ERR_MPI;
      return out;
    }
    lookup.comm = std::make_shared<OwnedComm>(dup, agreed.new_id);
    std::lock_guard lock(caches().mutex);
    caches().comms.insert(lookup.comm_key, lookup.comm);
  }
  ReplicaParts parts;
  Planned planned = plan_replicated_everywhere(
      comm, rank, size, lookup.comm->comm, t, replication_of(agreed.fields.a),
      replication_of(agreed.fields.b), call.options, call.element_size,
      call.a.member ? call.a.lld : 1, call.b.member ? call.b.lld : 1, false, parts);
  if (planned.status != REDIST_SUCCESS) {
    out.status = planned.status;
    out.here = planned.here;
    out.why = planned.why;
    return out;
  }
  auto built = std::make_shared<CachedPlan>();
  built->id = agreed.new_id;
  built->comm = lookup.comm;
  built->executor = std::move(planned.executor);
  out.plan = std::move(built);
  std::lock_guard lock(caches().mutex);
  caches().plans.insert(lookup.plan_key, out.plan);
  lookup.plan = out.plan;
  return out;
}

namespace {

/// The failures of planning, agreed in one reduction (every process takes the same branch):
/// out of memory anywhere, then a schedule option that cannot be honoured (out.why). In the
/// same reduction: whether any process's messages could take a single-copy way, and whether
/// every process's part lets executions carry the caller's check; then the ways of the
/// messages (Executor::decide_ways).
void agree_planned(MPI_Comm comm, int rank, int size, bool out_of_memory, Planned &out) {
  // The lowest rank with each kind of failure.
  const int order = lowest_first(rank, size) + 1;
  long long words[4] = {out_of_memory ? order : 0, out.why.empty() ? 0 : order,
                        out.executor && out.executor->may_read_peers() ? 1 : 0,
                        out.executor && out.executor->deferrable() ? 0 : 1};
  agreed_or_throw(collective::agree_max(comm, std::span<long long>(words)),
                  "MPI_Iallreduce (the plan)");
  for (const auto &[status, word, here] :
       {std::tuple{REDIST_ERR_NO_MEMORY, words[0], out_of_memory},
        std::tuple{REDIST_ERR_ARGUMENT, words[1], !out.why.empty()}}) {
    if (word != 0) {
      out.status = status;
      out.here = here;
      out.first = lowest_first(static_cast<int>(word - 1), size);
      out.executor.reset();
      return;
    }
  }
  out.executor->decide_ways(words[2] != 0, words[3] == 0);
}

// The busiest process's all-at-once buffer and time over `comm` (one reduction), for the memory
// cap and the prediction; `plan` is null where planning ran out of memory. False on every
// process when some process did (inputs then unset).
bool busiest_inputs(MPI_Comm comm, const RankPlan *plan, const CostModel &model,
                    std::size_t element_size, ScheduleInputs &inputs) {
  double global[3] = {0.0, 0.0, plan == nullptr ? 1.0 : 0.0};
  if (plan != nullptr) {
    const ScheduleInputs local = all_at_once_local(*plan, model, element_size);
    global[0] = static_cast<double>(local.all_at_once_buffer_max);
    global[1] = local.all_at_once_seconds;
  }
  agreed_or_throw(collective::agree_max(comm, std::span<double>(global)),
                  "MPI_Iallreduce (the busiest process)");
  inputs = ScheduleInputs{static_cast<Index>(global[0]), global[1]};
  return global[2] == 0.0;
}

// The half of planning every kind of plan shares, after its rank plan is made (or ran out of
// memory here): the busiest process's inputs where `inputs_needed` (one reduction, on every
// process), then the schedule and the executor. Running out of memory sets `out_of_memory`,
// which agree_planned then makes known everywhere.
template <class Choose, class Build>
void schedule_and_build(MPI_Comm comm, const RankPlan *plan, bool inputs_needed,
                        const ScheduleOptions &options, const std::vector<int> &nodes,
                        std::size_t element_size, bool &out_of_memory, Planned &out,
                        Choose &&choose, Build &&build) {
  ScheduleInputs inputs;
  const bool planned_everywhere =
      !inputs_needed ||
      busiest_inputs(comm, out_of_memory ? nullptr : plan, options.model, element_size, inputs);
  if (out_of_memory || !planned_everywhere) return;
  try {
    ScheduleChoice choice;
    // The two-level cost model applies where the ranks are on several nodes.
    ScheduleOptions with_nodes = options;
    with_nodes.node_of_rank = nodes;
    out.why = choose(with_nodes, inputs, choice);
    if (out.why.empty()) out.executor = build(std::move(choice));
  } catch (const std::bad_alloc &) {
    out_of_memory = true;
  }
}

} // namespace

Planned plan_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm, const Transfer &t,
                        const ScheduleOptions &options, std::size_t element_size, Index lld_a,
                        Index lld_b, bool predict) {
  Planned out;
  // Planning (and the executor's buffers) may run out of memory on some processes only:
  // every process learns it before any data moves.
  bool out_of_memory = false;
  // Which ranks share a node (collective over comm, on every process before anything can fail
  // on some only; kept with comm, whose duplicate exec_comm has the same ranks); the executor
  // and its phases keep one node per peer.
  const std::vector<int> nodes = node_ids(comm);
  RankPlan rank_plan;
  try {
    rank_plan = make_rank_plan(t, rank, size);
  } catch (const std::bad_alloc &) {
    out_of_memory = true;
  }
  schedule_and_build(
      comm, &rank_plan, options.max_memory != 0 || predict, options, nodes, element_size,
      out_of_memory, out,
      [&](const ScheduleOptions &with_nodes, const ScheduleInputs &inputs, ScheduleChoice &choice) {
        return choose_schedule(t, rank_plan, with_nodes, inputs, element_size, choice);
      },
      [&](ScheduleChoice &&choice) {
        return make_executor(exec_comm, nodes, std::move(rank_plan), element_size, lld_a, lld_b,
                             std::move(choice));
      });
  agree_planned(comm, rank, size, out_of_memory, out);
  return out;
}

Planned plan_nd_everywhere(MPI_Comm comm, int rank, int size, const NdTransfer &t,
                           const ScheduleOptions &options, std::size_t element_size) {
  Planned out;
  const std::vector<int> nodes = node_ids(comm); // collective: before anything can fail
  bool out_of_memory = false;
  NdRankPlan rank_plan;
  RankPlan skeleton; // its peers' ranks and element counts
  try {
    rank_plan = make_nd_rank_plan(t, rank, size);
    skeleton = nd_skeleton(rank_plan);
  } catch (const std::bad_alloc &) {
    out_of_memory = true;
  }
  // Always the busiest process's inputs: an N-d plan reports its predicted time.
  schedule_and_build(
      comm, &skeleton, true, options, nodes, element_size, out_of_memory, out,
      [&](const ScheduleOptions &with_nodes, const ScheduleInputs &inputs, ScheduleChoice &choice) {
        return choose_nd_schedule(t, rank_plan, with_nodes, inputs, element_size, choice);
      },
      [&](ScheduleChoice &&choice) {
        Strides src{};
        Strides dst{};
        Coords c{};
        if (grid_of(t.src).find(rank, c)) src = local_strides(t.src, c);
        if (grid_of(t.dst).find(rank, c)) dst = local_strides(t.dst, c);
        return make_executor(comm, nodes, std::move(rank_plan), element_size, src, dst,
                             std::move(choice));
      });
  agree_planned(comm, rank, size, out_of_memory, out);
  return out;
}

namespace {

/// The executor of a batch whose operations `operations()` makes (on this process, where
/// running out of memory is agreed), all at once on `exec_comm`.
/// `operations(arrays)` returns them and says where they find their arrays.
template <class Operations>
Planned batch_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm,
                         Operations &&operations) {
  Planned out;
  const std::vector<int> nodes = node_ids(comm); // collective: before anything can fail
  bool out_of_memory = false;
  try {
    BatchArrays arrays;
    std::vector<Pieces> ops = operations(arrays);
    out.executor = std::make_unique<OnePhase>(exec_comm, nodes, std::move(ops), std::move(arrays));
  } catch (const std::bad_alloc &) {
    out_of_memory = true;
  }
  agree_planned(comm, rank, size, out_of_memory, out);
  return out;
}

/// Appends the parts of `t` (replica_parts(t, a, b, local reads): a plan with replicated sides)
/// to `operations`, each part the plan of one batch operation.
void append_parts(std::vector<Pieces> &operations, const Transfer &t, Replication a, Replication b,
                  const ReplicaParts &parts, std::size_t element_size, Index lld_a, Index lld_b,
                  int rank, int size) {
  Transfer part = t;
  for (int k = 0; k < parts.total(); ++k) {
    const std::array<int, 2> at = make_part(part, a, b, parts, k);
    RankPlan plan = make_rank_plan(part, rank, size);
    keep_destinations(plan, part, rank, at);
    operations.emplace_back(std::move(plan), element_size, lld_a, lld_b);
  }
}

} // namespace

Planned plan_batch_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm,
                              std::span<BatchMember> ops) {
  return batch_everywhere(comm, rank, size, exec_comm, [&](BatchArrays &arrays) {
    std::vector<Pieces> operations;
    operations.reserve(ops.size());
    for (std::size_t k = 0; k < ops.size(); ++k) {
      BatchMember &op = ops[k];
      const std::size_t before = operations.size();
      if (op.transfer != nullptr && (op.replicated_a.any() || op.replicated_b.any())) {
        append_parts(operations, *op.transfer, op.replicated_a, op.replicated_b,
                     replica_parts(*op.transfer, op.replicated_a, op.replicated_b, true),
                     op.element_size, op.lld_a, op.lld_b, rank, size);
      } else if (op.transfer != nullptr) {
        operations.emplace_back(make_rank_plan(*op.transfer, rank, size), op.element_size, op.lld_a,
                                op.lld_b);
      } else {
        if (!op.grid)
          op.grid =
              std::make_shared<const GridRankPlan>(make_grid_rank_plan(*op.grid_transfer, rank));
        operations.emplace_back(op.grid, op.element_size);
      }
      op.operations = static_cast<int>(operations.size() - before);
      arrays.of.insert(arrays.of.end(), operations.size() - before, k);
    }
    return operations;
  });
}

Planned plan_parts_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm,
                              const Transfer &t, Replication a, Replication b,
                              const ReplicaParts &parts, std::size_t element_size, Index lld_a,
                              Index lld_b) {
  return batch_everywhere(comm, rank, size, exec_comm, [&](BatchArrays &arrays) {
    arrays.shared = true;
    std::vector<Pieces> operations;
    operations.reserve(static_cast<std::size_t>(parts.total()));
    append_parts(operations, t, a, b, parts, element_size, lld_a, lld_b, rank, size);
    return operations;
  });
}

Planned plan_replicated_everywhere(MPI_Comm comm, int rank, int size, MPI_Comm exec_comm,
                                   Transfer &t, Replication a, Replication b,
                                   const ScheduleOptions &options, std::size_t element_size,
                                   Index lld_a, Index lld_b, bool predict, ReplicaParts &parts) {
  // Parts run as one batch, all at once: only then is a replicated A read locally.
  const bool all_at_once =
      (options.strategy == Strategy::automatic || options.strategy == Strategy::all_at_once) &&
      options.max_concurrent == 0 && options.max_memory == 0;
  parts = replica_parts(t, a, b, all_at_once);
  if (parts.total() == 1) {
    make_part(t, a, b, parts, 0);
    return plan_everywhere(comm, rank, size, exec_comm, t, options, element_size, lld_a, lld_b,
                           predict);
  }
  if (!all_at_once) {
    Planned out;
    out.status = REDIST_ERR_ARGUMENT;
    out.here = true;
    out.why = "a destination replicated over process rows or columns (RSRC_ or CSRC_ = -1) is "
              "written all at once: schedule auto or all-at-once, no limit of concurrent "
              "transfers, no memory cap";
    return out;
  }
  return plan_parts_everywhere(comm, rank, size, exec_comm, t, a, b, parts, element_size, lld_a,
                               lld_b);
}

Planned plan_grid_everywhere(MPI_Comm comm, int rank, int size, const GridTransfer *t,
                             std::shared_ptr<const GridRankPlan> &plan, std::size_t element_size) {
  Planned out;
  const std::vector<int> nodes = node_ids(comm); // collective: before anything can fail
  bool out_of_memory = false;
  try {
    if (!plan) plan = std::make_shared<const GridRankPlan>(make_grid_rank_plan(*t, rank));
    out.executor = std::make_unique<OnePhase>(comm, nodes, plan, element_size);
  } catch (const std::bad_alloc &) {
    out_of_memory = true;
  }
  agree_planned(comm, rank, size, out_of_memory, out);
  return out;
}

void set_cache_capacity(std::size_t plans, std::size_t comms) {
  std::lock_guard lock(caches().mutex);
  caches().plans.set_capacity(plans);
  caches().comms.set_capacity(comms);
}

void drop(const CacheLookup &lookup) {
  std::lock_guard lock(caches().mutex);
  caches().plans.erase(lookup.plan_key);
  caches().comms.erase(lookup.comm_key);
}

void clear_cache() {
  {
    std::lock_guard lock(caches().mutex);
    caches().plans.clear();
    caches().comms.clear();
  }
}

} // namespace redist::front_end
