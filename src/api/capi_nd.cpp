// N-d plans of the C API: redist_nd_plan_create and redist_nd_plan_create_perm.

#include "capi_internal.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

using namespace redist;

namespace {

// A redist_darray as an NdLayout; the pointers read are checked here, the values by
// check_nd_transfer (but the grid's size, bounding what `ranks` is read for). `arg`: "a" or
// "b".
NdLayout to_nd_layout(const char *call, const char *arg, const redist_darray &d, int comm_size) {
  const auto field = [&](const char *name) { return std::string(arg) + "->" + name; };
  if (d.ndims < 1 || d.ndims > kMaxDims)
    throw_argument(call, field("ndims"), d.ndims, "must be 1..7");
  if (d.gsizes == nullptr) throw_argument(call, field("gsizes"), 0, "NULL pointer");
  if (d.distribs == nullptr) throw_argument(call, field("distribs"), 0, "NULL pointer");
  if (d.psizes == nullptr) throw_argument(call, field("psizes"), 0, "NULL pointer");
  if ((d.starts == nullptr) != (d.subsizes == nullptr))
    throw_argument(call, field("starts"), 0,
                   "starts and subsizes must both be given or both be NULL");
  NdLayout l;
  const auto n = static_cast<std::size_t>(d.ndims);
  l.dims.resize(n);
  std::size_t positions = 1;
  for (std::size_t k = 0; k < n; ++k) {
    NdDimension &dim = l.dims[k];
    dim.extent = d.gsizes[k];
    dim.nprocs = d.psizes[k];
    // Bounded by the communicator before anything it sizes is read (GEN_BLOCK's extents).
    if (dim.nprocs >= 1) {
      if (static_cast<std::size_t>(dim.nprocs) > static_cast<std::size_t>(comm_size) / positions)
        throw_argument(call, field("psizes"), dim.nprocs,
                       "the grid has more positions than the communicator's " +
                           std::to_string(comm_size) + " ranks");
      positions *= static_cast<std::size_t>(dim.nprocs);
    }
    dim.darg =
        d.dargs == nullptr || d.dargs[k] == MPI_DISTRIBUTE_DFLT_DARG ? kDefaultDistArg : d.dargs[k];
    const std::string name = field("distribs") + "[" + std::to_string(k) + "]";
    switch (d.distribs[k]) {
    case MPI_DISTRIBUTE_BLOCK:
      dim.kind = Distribution::block;
      break;
    case MPI_DISTRIBUTE_CYCLIC:
      dim.kind = Distribution::cyclic;
      break;
    case MPI_DISTRIBUTE_NONE:
      dim.kind = Distribution::none;
      break;
    case REDIST_DISTRIBUTE_GEN_BLOCK: {
      dim.kind = Distribution::gen_block;
      const std::string blocks = field("gen_blocks") + "[" + std::to_string(k) + "]";
      if (d.gen_blocks == nullptr || d.gen_blocks[k] == nullptr)
        throw_argument(call, blocks, 0, "NULL for a GEN_BLOCK dimension");
      if (dim.nprocs < 1)
        throw_argument(call, field("psizes") + "[" + std::to_string(k) + "]", dim.nprocs,
                       "must be >= 1");
      dim.gen_block.assign(d.gen_blocks[k], d.gen_blocks[k] + dim.nprocs);
      break;
    }
    default:
      throw_argument(call, name, d.distribs[k],
                     "not MPI_DISTRIBUTE_BLOCK, _CYCLIC, _NONE or REDIST_DISTRIBUTE_GEN_BLOCK");
    }
  }
  if (d.order == MPI_ORDER_C) {
    l.order = StorageOrder::c;
  } else if (d.order == MPI_ORDER_FORTRAN) {
    l.order = StorageOrder::fortran;
  } else {
    throw_argument(call, field("order"), d.order, "not MPI_ORDER_C or MPI_ORDER_FORTRAN");
  }
  if (d.ranks != nullptr) l.ranks.assign(d.ranks, d.ranks + positions);
  if (d.starts != nullptr) {
    l.starts.assign(d.starts, d.starts + n);
    l.subsizes.assign(d.subsizes, d.subsizes + n);
  }
  if (d.local_extents != nullptr) l.local_extents.assign(d.local_extents, d.local_extents + n);
  return l;
}

// Everything of a layout every process must agree on (all but local_extents).
void add_nd_layout(Fingerprint &f, const NdLayout &l) {
  f.add(l.ndims()).add(static_cast<std::int64_t>(l.order));
  for (const NdDimension &d : l.dims) {
    f.add(static_cast<std::int64_t>(d.kind)).add(d.extent).add(d.darg).add(d.nprocs);
    for (const Index g : d.gen_block)
      f.add(g);
  }
  f.add(static_cast<std::int64_t>(l.ranks.size()));
  for (const int r : l.ranks)
    f.add(r);
  for (const Index x : l.starts)
    f.add(x);
  for (const Index x : l.subsizes)
    f.add(x);
}

int create_nd_plan(const char *call, MPI_Comm comm, int type, const redist_darray *a,
                   const redist_darray *b, const int *perm, const redist_options *options,
                   redist_plan *plan) {
  return c_barrier(call, [&] {
    if (plan != nullptr) *plan = nullptr;
    const CommPosition position = comm_position(call, comm);
    auto t = std::make_shared<NdTransfer>();
    ScheduleOptions schedule_opts;
    agree(comm, call, "type, options, perm or layouts (all but local_extents must agree)", [&] {
      if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
      if (type_size(type) == 0) throw_argument(call, "type", type, "unknown redist_type");
      if (a == nullptr) throw_argument(call, "a", 0, "NULL layout");
      if (b == nullptr) throw_argument(call, "b", 0, "NULL layout");
      redist_options defaults;
      redist_options_init(&defaults);
      schedule_opts = schedule_options(call, options != nullptr ? *options : defaults);
      t->src = to_nd_layout(call, "a", *a, position.size);
      t->dst = to_nd_layout(call, "b", *b, position.size);
      if (perm != nullptr) {
        if (t->dst.ndims() != t->src.ndims())
          throw_argument(call, "b->ndims", t->dst.ndims(), "differs from a->ndims");
        t->perm.assign(perm, perm + t->dst.ndims());
      }
      if (const std::string why = check_nd_transfer(*t, position.size, position.rank); !why.empty())
        throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": " + why);
      Fingerprint f;
      f.add(type);
      add_nd_layout(f, t->src);
      add_nd_layout(f, t->dst);
      for (const int p : t->perm)
        f.add(p);
      f.add(static_cast<std::int64_t>(schedule_opts.strategy))
          .add(schedule_opts.max_concurrent)
          .add(schedule_opts.max_memory);
      // The cost model decides the automatic schedule: it must agree too.
      f.add(std::bit_cast<std::int64_t>(schedule_opts.model.alpha))
          .add(std::bit_cast<std::int64_t>(schedule_opts.model.beta));
      return f.value();
    });
    auto result = std::make_unique<redist_plan_s>();
    result->comm = PlanComm(call, comm);
    front_end::Planned planned = front_end::plan_nd_everywhere(
        result->comm.handle, position.rank, position.size, *t, schedule_opts, type_size(type));
    throw_if_failed(call, planned);
    result->executor = std::move(planned.executor);
    result->options = schedule_opts;
    result->type = type;
    result->nd = std::move(t);
    result->rank = position.rank;
    result->size = position.size;
    *plan = result.release();
  });
}

} // namespace

extern "C" int redist_nd_plan_create(MPI_Comm comm, redist_type type, const redist_darray *a,
                                     const redist_darray *b, const redist_options *options,
                                     redist_plan *plan) {
  return create_nd_plan("redist_nd_plan_create", comm, enum_value(type), a, b, nullptr, options,
                        plan);
}

extern "C" int redist_nd_plan_create_perm(MPI_Comm comm, redist_type type, const redist_darray *a,
                                          const redist_darray *b, const int *perm,
                                          const redist_options *options, redist_plan *plan) {
  return create_nd_plan("redist_nd_plan_create_perm", comm, enum_value(type), a, b, perm, options,
                        plan);
}
