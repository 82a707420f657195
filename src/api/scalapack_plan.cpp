// Plans of the C API from ScaLAPACK descriptors: redist_plan_create_scalapack.

#include "front_end.hpp"
#include "scalapack_call.hpp"

#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace redist::scalapack {
namespace {

/// The fields of a plan from descriptors (redist_plan_create_scalapack) for the sides whose
/// grid holds this process (`rank` of ICTXT); throws the first bad argument.
void describe_descriptors(const redist_int *desca, redist_int ia, redist_int ja,
                          const redist_int *descb, redist_int ib, redist_int jb, int rank,
                          front_end::CallArgs &args) {
  static const char *call = "redist_plan_create";
  for (const auto &[name, desc, i, j, fields, position] :
       {std::tuple{'A', desca, ia, ja, &args.fields.a, &args.a},
        std::tuple{'B', descb, ib, jb, &args.fields.b, &args.b}}) {
    const std::string arg = std::string("desc") + static_cast<char>(std::tolower(name));
    if (desc == nullptr) throw_argument(call, arg, 0, "NULL descriptor");
    const std::string field = std::string("DESC") + name + "(";
    if (desc[CTXT_] != -1 && !blacs::context_handle_valid(desc[CTXT_]))
      throw_argument(call, field + "CTXT_)", desc[CTXT_],
                     "not a BLACS context (use -1 on processes outside the grid)");
    const blacs::GridInfo g = blacs::grid_info(desc[CTXT_]);
    if (!g.member()) continue;
    const Descriptor d = read_descriptor(desc);
    if (d.dtype != kBlockCyclic2D && d.dtype != kBlockCyclic2DInb)
      throw Error(REDIST_ERR_ARGUMENT,
                  std::string(call) + ": " + field + "DTYPE_) = " + std::to_string(d.dtype) +
                      " on rank " + std::to_string(rank) +
                      " of ICTXT: descriptor type must be 1 (9 integers) or 2 (11 integers, "
                      "PBLAS's BLOCK_CYCLIC_2D_INB)");
    // IMB_ and INB_ (11 integers) become redist_layout_ext's imb, inb, where 0 would mean "the
    // block size": checked here.
    for (const auto &[entry, value] : {std::pair{"IMB_)", d.imb}, std::pair{"INB_)", d.inb}}) {
      if (d.dtype == kBlockCyclic2DInb && value < 1)
        throw_argument(call, field + entry, value, "first block size must be >= 1");
    }
    *fields = {d.m, d.n, d.mb, d.nb, d.rsrc, d.csrc, i, j, g.nprow, g.npcol, d.imb, d.inb, 0};
    *position = {true, g.myrow, g.mycol, d.lld};
  }
}

/// Throws REDIST_ERR_MISMATCH naming the first field of A or B whose processes disagree.
void throw_if_sides_differ(front_end::CallFields<front_end::Range> &ranges) {
  static const char *call = "redist_plan_create";
  front_end::each_field(
      [&](front_end::Arg arg, const char *field, const front_end::Range &r) {
        using front_end::Arg;
        const bool on_a = arg == Arg::desca || arg == Arg::ia || arg == Arg::ja;
        const bool on_b = arg == Arg::descb || arg == Arg::ib || arg == Arg::jb;
        if (!(on_a || on_b) || !r.differs()) return;
        const char name = on_a ? 'A' : 'B';
        const bool index = arg == Arg::ia || arg == Arg::ja || arg == Arg::ib || arg == Arg::jb;
        const std::string what = index ? std::string(field) + name
                                 : field[std::strlen(field) - 1] == '_'
                                     ? std::string("DESC") + name + "(" + field + ")"
                                     : std::string(field);
        throw Error(REDIST_ERR_MISMATCH, std::string(call) + ": processes of " + name +
                                             "'s grid disagree on " + what + " (values from " +
                                             std::to_string(r.min) + " to " +
                                             std::to_string(r.max) + ")");
      },
      ranges);
}

/// A plan of the C API (redist.h) from ScaLAPACK descriptors: the descriptor checks and the
/// agreement of the front end, then redist_plan_create_opt on ICTXT's communicator with the
/// layouts every process now knows (its checks name the layout fields, "b->mb"; with first
/// blocks, redist_plan_create_ext's "b->layout.mb").
int plan_from_descriptors(redist_int m, redist_int n, int type, const redist_int *desca,
                          redist_int ia, redist_int ja, const redist_int *descb, redist_int ib,
                          redist_int jb, redist_int ictxt, int region, int unit_diag,
                          const redist_options *options, redist_plan *plan) {
  static const char *call = "redist_plan_create";
  MPI_Comm comm = MPI_COMM_NULL;
  redist_layout_ext layouts[2]{};
  std::vector<int> ranks[2];
  bool first_blocks = false;
  const int status = c_barrier(call, [&] {
    if (plan == nullptr) throw_argument(call, "plan", 0, "NULL output pointer");
    *plan = nullptr;
    // Without a valid ICTXT there is no communicator to agree over: a local error.
    if (!blacs::context_handle_valid(ictxt))
      throw_argument(call, "ictxt", ictxt, "not a BLACS context of this process");
    const blacs::GridInfo ig = blacs::grid_info(ictxt);
    if (!ig.member())
      throw_argument(call, "ictxt", ictxt, "this process is not in the grid of ICTXT");
    comm = context_comm(ictxt);
    const CommPosition where = comm_position(call, comm);
    front_end::CallArgs args;
    args.routine = call;
    args.index_base = 1;
    args.fields.m = m;
    args.fields.n = n;
    args.fields.uplo = static_cast<unsigned char>(region == REDIST_REGION_UPPER   ? 'U'
                                                  : region == REDIST_REGION_LOWER ? 'L'
                                                                                  : ' ');
    args.fields.diag = static_cast<unsigned char>(args.fields.uplo == ' ' ? ' '
                                                  : unit_diag != 0        ? 'U'
                                                                          : 'N');
    std::optional<Error> local;
    try {
      describe_descriptors(desca, ia, ja, descb, ib, jb, where.rank, args);
    } catch (const Error &e) {
      local = e;
    }
    // The lowest failing rank is named: the order is reversed.
    const front_end::Agreement agreed = front_end::agree(
        comm, args, local ? front_end::error_word(1, where.size - 1 - where.rank) : 0, {});
    if (local) throw *local;
    if (agreed.error != 0)
      throw remote_argument_error(call, where.size - 1 - agreed.error_rank(), -1, " of ICTXT");
    front_end::CallFields<front_end::Range> ranges = agreed.fields;
    for (const auto &[name, side] : {std::pair{'A', &ranges.a}, std::pair{'B', &ranges.b}}) {
      if (!side->m.present)
        throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": no process of ICTXT is in " + name +
                                             "'s grid (DESC" + name + "(CTXT_) = -1 everywhere)");
    }
    throw_if_sides_differ(ranges);
    Transfer t;
    const front_end::Gathered missing = front_end::gather_transfer(comm, args, agreed, t);
    if (missing.status == REDIST_ERR_NO_MEMORY)
      throw Error(REDIST_ERR_NO_MEMORY, std::string(call) + ": out of memory while planning" +
                                            (missing.here ? "" : " on another process"));
    if (missing.status != REDIST_SUCCESS)
      throw Error(REDIST_ERR_ARGUMENT, std::string(call) + ": position (" +
                                           std::to_string(missing.row) + ", " +
                                           std::to_string(missing.col) + ") of " + missing.side +
                                           "'s grid is not a process of ICTXT");
    // A replicated dimension (RSRC_ / CSRC_ = -1) stays so in the layout (gather_transfer left
    // its source process 0).
    const Replication replicated[2] = {front_end::replication_of(agreed.fields.a),
                                       front_end::replication_of(agreed.fields.b)};
    for (int s = 0; s < 2; ++s) {
      const Layout &l = s == 0 ? t.src : t.dst;
      const front_end::Position &p = s == 0 ? args.a : args.b;
      ranks[s] = l.grid.ranks;
      layouts[s] = {redist_layout{l.rows.extent, l.cols.extent, l.rows.block, l.cols.block,
                                  l.grid.nprow, l.grid.npcol, replicated[s].rows ? -1 : l.rows.src,
                                  replicated[s].cols ? -1 : l.cols.src, ranks[s].data(), l.i, l.j,
                                  p.member ? p.lld : 1},
                    l.rows.first(), l.cols.first(), REDIST_ORDER_COLUMN_MAJOR};
      first_blocks = first_blocks || !l.rows.uniform() || !l.cols.uniform();
    }
  });
  if (status != REDIST_SUCCESS) return status;
  const auto region_value = static_cast<redist_region>(region);
  // Descriptors with first blocks of their own (11 integers) make layouts of redist_layout_ext;
  // the others the layouts of redist_plan_create, as before.
  if (first_blocks)
    return redist_plan_create_ext(comm, m, n, static_cast<redist_type>(type), &layouts[0],
                                  &layouts[1], region_value, unit_diag, options, plan);
  return options == nullptr
             ? redist_plan_create(comm, m, n, static_cast<redist_type>(type), &layouts[0].layout,
                                  &layouts[1].layout, region_value, unit_diag, plan)
             : redist_plan_create_opt(comm, m, n, static_cast<redist_type>(type),
                                      &layouts[0].layout, &layouts[1].layout, region_value,
                                      unit_diag, options, plan);
}

} // namespace
} // namespace redist::scalapack

extern "C" int redist_plan_create_scalapack(redist_int m, redist_int n, int type,
                                            const redist_int *desca, redist_int ia, redist_int ja,
                                            const redist_int *descb, redist_int ib, redist_int jb,
                                            redist_int ictxt, int region, int unit_diag,
                                            const redist_options *options, redist_plan *plan) {
  return redist::scalapack::plan_from_descriptors(m, n, type, desca, ia, ja, descb, ib, jb, ictxt,
                                                  region, unit_diag, options, plan);
}
