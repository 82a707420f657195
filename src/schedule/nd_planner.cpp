#include "nd_planner.hpp"

#include "schedule_cyclic.hpp"
#include "schedule_matching.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

namespace redist {

int NdScheduleGrids::src_node(const Coords &a) const {
  int node = 0;
  for (int d = ndims - 1; d >= 0; --d) {
    const auto du = static_cast<std::size_t>(d);
    node = node * src_extent[du] + a[static_cast<std::size_t>(perm[du])];
  }
  return node;
}

int NdScheduleGrids::dst_node(const Coords &b) const {
  int node = 0;
  for (int d = ndims - 1; d >= 0; --d) {
    const auto du = static_cast<std::size_t>(d);
    node = node * dst_extent[du] + b[du];
  }
  return node;
}

NdScheduleGrids nd_schedule_grids(const NdTransfer &t) {
  NdScheduleGrids g;
  g.ndims = t.ndims();
  const GridView src = grid_of(t.src);
  const GridView dst = grid_of(t.dst);
  for (int d = 0; d < g.ndims; ++d) {
    const auto du = static_cast<std::size_t>(d);
    g.perm[du] = t.perm_at(d);
    g.src_extent[du] = src.extents[static_cast<std::size_t>(g.perm[du])];
    g.dst_extent[du] = dst.extents[du];
  }
  // Every number's coordinates, counted up with B's dimension 0 fastest.
  const auto ranks_by_node = [&](const GridView &grid, bool source) {
    std::vector<int> out(grid.positions());
    Coords c{};
    for (int &rank : out) {
      rank = grid.rank_at(c);
      for (int d = 0; d < g.ndims; ++d) {
        const auto du = static_cast<std::size_t>(d);
        const auto along = static_cast<std::size_t>(source ? g.perm[du] : d);
        if (++c[along] < (source ? g.src_extent : g.dst_extent)[du]) {
          break;
        }
        c[along] = 0;
      }
    }
    return out;
  };
  g.src_ranks = ranks_by_node(src, true);
  g.dst_ranks = ranks_by_node(dst, false);
  return g;
}

namespace {

// The graph of one dimension of B: A's processes along perm[d] to B's along d.
VolumeGraph dimension_graph(const NdTransfer &t, const NdScheduleGrids &grids, int d) {
  VolumeGraph g;
  g.senders = grids.src_extent[static_cast<std::size_t>(d)];
  g.receivers = grids.dst_extent[static_cast<std::size_t>(d)];
  for (const DimVolume &v : dim_volumes(t.dim(d))) {
    g.messages.push_back({v.src, v.dst, v.volume});
  }
  return g;
}

// The product of the graph of B's dimensions [0, d) (`prefix`) and of dimension d.
VolumeGraph product_graph(const VolumeGraph &prefix, const VolumeGraph &dimension) {
  VolumeGraph g;
  g.senders = prefix.senders * dimension.senders;
  g.receivers = prefix.receivers * dimension.receivers;
  g.messages.reserve(prefix.messages.size() * dimension.messages.size());
  for (const Message &outer : dimension.messages) {
    for (const Message &inner : prefix.messages) {
      g.messages.push_back({inner.src + outer.src * prefix.senders,
                            inner.dst + outer.dst * prefix.receivers, inner.volume * outer.volume});
    }
  }
  g.normalize();
  return g;
}

// Whether a schedule sends some message in more than one step (then it is no factor of a
// product, whose pieces are whole messages).
bool splits_messages(const Schedule &s) {
  std::vector<std::pair<int, int>> pairs;
  for (const Step &step : s.steps) {
    for (const Piece &p : step.pieces) {
      pairs.emplace_back(p.src, p.dst);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return std::adjacent_find(pairs.begin(), pairs.end()) != pairs.end();
}

// Direct schedules (on the whole graph) of stepwise and greedy are tried up to this many
// sender-receiver position pairs, as for 2-D plans.
constexpr Index kDirectPairs = 4096;

// One transfer's schedule building: its numbering, graphs and node levels, made once for every
// strategy tried.
class NdScheduler {
public:
  NdScheduler(const NdTransfer &t, const ScheduleOptions &o)
      : t_(t), grids_(nd_schedule_grids(t)),
        levels_(node_levels(grids_.src_ranks, grids_.dst_ranks, o)) {}

  [[nodiscard]] const NdScheduleGrids &grids() const { return grids_; }
  // The graphs on first need: all at once is planned without them.
  [[nodiscard]] const VolumeGraph &graph() const {
    if (prefixes_.empty()) {
      for (int d = 0; d < grids_.ndims; ++d) {
        dims_.push_back(dimension_graph(t_, grids_, d));
        prefixes_.push_back(d == 0 ? dims_[0] : product_graph(prefixes_.back(), dims_.back()));
      }
    }
    return prefixes_.back();
  }
  // Sender-receiver position pairs, with or without data.
  [[nodiscard]] Index position_pairs() const {
    return static_cast<Index>(grids_.src_ranks.size()) *
           static_cast<Index>(grids_.dst_ranks.size());
  }
  [[nodiscard]] const std::optional<NodeLevels> &levels() const { return levels_; }

  [[nodiscard]] ScheduleStats stats(const ScheduleOptions &o, const Schedule &s,
                                    std::size_t element_bytes) const {
    return levels_ ? schedule_stats(s, o.model, *levels_, element_bytes)
                   : schedule_stats(s, o.model, element_bytes);
  }

  [[nodiscard]] Schedule without_self(const Schedule &s, bool keep_empty_steps) const {
    return redist::without_self(s, grids_.src_ranks, grids_.dst_ranks, keep_empty_steps);
  }

  // The whole graph without the messages a rank sends to itself (copied locally, no step).
  [[nodiscard]] VolumeGraph remote_graph() const {
    VolumeGraph remote = graph();
    std::erase_if(remote.messages, [&](const Message &m) {
      return grids_.src_ranks[static_cast<std::size_t>(m.src)] ==
             grids_.dst_ranks[static_cast<std::size_t>(m.dst)];
    });
    return remote;
  }

  // The whole schedule of explicit strategy o.strategy (not all-at-once), limits applied.
  std::string build(const ScheduleOptions &o, std::size_t element_bytes, Schedule &out,
                    std::string &how) const {
    Index chunk = 0;
    if (std::string why = check_options(o, element_bytes, chunk); !why.empty()) {
      return why;
    }
    const Strategy s = o.strategy;
    const bool caterpillar = s == Strategy::caterpillar;
    Schedule whole;
    if (s == Strategy::ggp || s == Strategy::oggp) {
      // Jeannot & Wagner on the whole graph, as for 2-D plans.
      const Index setup = step_setup_elements(o, levels_ ? o.inter : o.model, element_bytes);
      const VolumeGraph remote = remote_graph();
      whole = s == Strategy::ggp ? schedule_ggp(remote, o.max_concurrent, setup)
                                 : schedule_oggp(remote, o.max_concurrent, setup);
      how = std::string(strategy_name(s)) + " on the " + std::to_string(grids_.ndims) +
            "-d graph, k = " +
            (o.max_concurrent > 0 ? std::to_string(o.max_concurrent) : "unlimited") +
            ", step setup = " + std::to_string(setup) + " elements";
    } else {
      whole = product(o, element_bytes, how);
      if ((s == Strategy::stepwise || s == Strategy::greedy) && position_pairs() <= kDirectPairs) {
        const VolumeGraph remote = remote_graph();
        Schedule direct =
            s == Strategy::stepwise ? schedule_stepwise(remote) : schedule_greedy(remote);
        if (stats(o, direct, element_bytes).seconds <
            stats(o, without_self(whole, false), element_bytes).seconds) {
          whole = std::move(direct);
          how = std::string(strategy_name(s)) + " on the " + std::to_string(grids_.ndims) +
                "-d graph";
        }
      }
    }
    whole = without_self(whole, caterpillar);
    assign_offsets(whole);
    out = cut_pieces(limit_concurrency(whole, o.max_concurrent), chunk);
    how = std::string(strategy_name(s)) + ", " + how;
    return {};
  }

private:
  // The 1-D schedule of strategy s along B's dimension d: planner.hpp's dimension_schedule
  // where both sides are block-cyclic, else (GEN_BLOCK) the strategy on the dimension's
  // graph, stepwise matchings standing for the closed forms.
  Schedule dimension(Strategy s, int d, const CostModel &model, std::size_t element_bytes,
                     std::string &how) const {
    static_cast<void>(graph()); // makes dims_
    const VolumeGraph &g = dims_[static_cast<std::size_t>(d)];
    const DimTransfer dt = t_.dim(d);
    if (!dt.src.gen_block && !dt.dst.gen_block) {
      const Transfer1D t1{dt.src.cyclic, dt.dst.cyclic, dt.src_start, dt.dst_start, dt.length};
      Schedule one = dimension_schedule(s, t1, model, element_bytes, how);
      if (!splits_messages(one)) {
        return one;
      }
    }
    return graph_schedule(s, g, how);
  }

  // The product of the 1-D schedules, folded over B's dimensions (step (a, b) of the product
  // of [0, d) and d pairs every piece of a with every piece of b).
  Schedule product(const ScheduleOptions &o, std::size_t element_bytes, std::string &how) const {
    const bool caterpillar = o.strategy == Strategy::caterpillar;
    std::string one;
    Schedule out = dimension(o.strategy, 0, o.model, element_bytes, one);
    how = "dimension 0: " + one;
    for (int d = 1; d < grids_.ndims; ++d) {
      const auto du = static_cast<std::size_t>(d);
      const Schedule next = dimension(o.strategy, d, o.model, element_bytes, one);
      out = product_schedule(prefixes_[du], out, next, prefixes_[du - 1].senders,
                             prefixes_[du - 1].receivers, caterpillar);
      how += " x dimension " + std::to_string(d) + ": " + one;
    }
    return out;
  }

  const NdTransfer &t_;
  NdScheduleGrids grids_;
  std::optional<NodeLevels> levels_;
  mutable std::vector<VolumeGraph> dims_;     // by B's dimension
  mutable std::vector<VolumeGraph> prefixes_; // [d]: the product of dimensions 0..d
};

// The rank's steps of a whole schedule: the pieces it sends (its sender number) and receives
// (its receiver number), as indices into its plan's sends and receives.
std::vector<RankStep> rank_steps(const NdScheduleGrids &grids, const NdTransfer &t,
                                 const NdRankPlan &plan, const Schedule &s) {
  Coords at{};
  const int src_node = plan.in_src && grid_of(t.src).find(plan.rank, at) ? grids.src_node(at) : -1;
  const int dst_node = plan.in_dst && grid_of(t.dst).find(plan.rank, at) ? grids.dst_node(at) : -1;
  // (peer's number, index in the plan), sorted for lookups.
  const auto index = [](const std::vector<NdPeer> &peers, const auto &node_of) {
    std::vector<std::pair<int, int>> out;
    out.reserve(peers.size());
    for (std::size_t i = 0; i < peers.size(); ++i) {
      out.emplace_back(node_of(peers[i].grid), static_cast<int>(i));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto sends = index(plan.sends, [&](const Coords &c) { return grids.dst_node(c); });
  const auto recvs = index(plan.recvs, [&](const Coords &c) { return grids.src_node(c); });
  const auto find = [](const std::vector<std::pair<int, int>> &by_node, int node) {
    const auto it = std::lower_bound(by_node.begin(), by_node.end(), std::pair{node, -1});
    return it != by_node.end() && it->first == node ? it->second : -1;
  };
  std::vector<RankStep> steps;
  for (const Step &step : s.steps) {
    RankStep mine;
    for (const Piece &p : step.pieces) {
      if (p.src == src_node) {
        mine.send = find(sends, p.dst);
        mine.send_offset = p.offset;
        mine.send_count = p.volume;
      }
      if (p.dst == dst_node) {
        mine.recv = find(recvs, p.src);
        mine.recv_offset = p.offset;
        mine.recv_count = p.volume;
      }
    }
    if (mine.send >= 0 || mine.recv >= 0) {
      steps.push_back(mine);
    }
  }
  return steps;
}

Index window_elements(const NdTransfer &t) {
  Index elements = 1;
  for (int d = 0; d < t.ndims(); ++d) {
    elements *= t.dst.window(d);
  }
  return elements;
}

// Communicator size implied by the grids: one more than the largest rank in either.
int nd_comm_size(const NdTransfer &t) {
  int size = 0;
  for (const NdLayout *l : {&t.src, &t.dst}) {
    size =
        std::max(size, l->ranks.empty() ? static_cast<int>(grid_of(*l).positions())
                                        : *std::max_element(l->ranks.begin(), l->ranks.end()) + 1);
  }
  return size;
}

// One dimension of an N-d intermediate layout.
struct NdMidDimension {
  NdDimension dim;
  bool intermediate = false;
};

// The choices along dimension `a` of an intermediate layout on t.src's grid (`source`, a being
// A's dimension) or on t.dst's (a being B's): the end's own distribution of the window (a
// GEN_BLOCK's extents cut to it), and where both ends are block-cyclic along it
// mid_dimensions' choices.
std::vector<NdMidDimension> nd_mid_dimensions(const NdTransfer &t, bool source, int a) {
  int d = a;
  for (int e = 0; source && e < t.ndims(); ++e) {
    d = t.perm_at(e) == a ? e : d;
  }
  const DimTransfer dt = t.dim(d);
  const DimDistribution &own = source ? dt.src : dt.dst;
  const Index start = source ? dt.src_start : dt.dst_start;
  if (own.gen_block) {
    NdDimension dim;
    dim.kind = Distribution::gen_block;
    dim.extent = dt.length;
    dim.nprocs = own.nprocs();
    for (std::size_t c = 0; c + 1 < own.bounds.size(); ++c) {
      const Index lo = std::max(own.bounds[c], start);
      const Index hi = std::min(own.bounds[c + 1], start + dt.length);
      dim.gen_block.push_back(std::max<Index>(0, hi - lo));
    }
    return {{dim, false}};
  }
  std::vector<BlockCyclic> intermediates;
  if (!dt.src.gen_block && !dt.dst.gen_block) {
    intermediates = multiphase_intermediates(
        Transfer1D{dt.src.cyclic, dt.dst.cyclic, dt.src_start, dt.dst_start, dt.length});
  }
  std::vector<NdMidDimension> out;
  for (const MidDimension &m : mid_dimensions(dt.length, own.cyclic, start, intermediates)) {
    NdDimension dim;
    dim.kind = Distribution::cyclic;
    dim.extent = m.layout.extent;
    dim.darg = m.layout.block;
    dim.nprocs = m.layout.nprocs;
    dim.first_process = m.layout.src;
    out.push_back({dim, m.intermediate});
  }
  return out;
}

// Bytes of the largest intermediate array of `mid` over its grid.
Index nd_mid_bytes_max(const NdLayout &mid, std::size_t element_bytes) {
  auto bytes = static_cast<Index>(element_bytes);
  for (const NdDimension &dim : mid.dims) {
    const DimDistribution resolved = resolve(dim);
    Index widest = 0;
    for (int p = 0; p < dim.nprocs; ++p) {
      widest = std::max(widest, resolved.local_extent(p));
    }
    bytes *= widest;
  }
  return bytes;
}

// A dimension of an intermediate layout as choice.detail names it.
std::string dimension_name(const NdDimension &dim) {
  if (dim.kind == Distribution::gen_block) return "GEN_BLOCK";
  return dim.nprocs == 1 ? "*" : "CYCLIC(" + std::to_string(dim.darg) + ")";
}

} // namespace

std::vector<NdMidLayout> nd_mid_layouts(const NdTransfer &t) {
  std::vector<NdMidLayout> out;
  const int n = t.ndims();
  for (const bool source : {true, false}) {
    const NdLayout &end = source ? t.src : t.dst;
    std::vector<std::vector<NdMidDimension>> choices;
    std::size_t combinations = 1;
    std::size_t widest = 1;
    for (int a = 0; a < n; ++a) {
      choices.push_back(nd_mid_dimensions(t, source, a));
      combinations *= choices.back().size();
      widest = std::max(widest, choices.back().size());
    }
    const auto add = [&](const std::vector<std::size_t> &pick) {
      NdMidLayout mid{{}, source};
      mid.layout.ranks = end.ranks;
      mid.layout.order = end.order;
      bool intermediate = false;
      for (std::size_t a = 0; a < choices.size(); ++a) {
        mid.layout.dims.push_back(choices[a][pick[a]].dim);
        intermediate = intermediate || choices[a][pick[a]].intermediate;
      }
      if (intermediate) {
        out.push_back(std::move(mid));
      }
    };
    std::vector<std::size_t> pick(choices.size(), 0);
    if (combinations <= kNdMidCombinations) {
      for (std::size_t k = 0; k < combinations; ++k) {
        std::size_t rest = k;
        for (std::size_t a = 0; a < choices.size(); ++a) {
          pick[a] = rest % choices[a].size();
          rest /= choices[a].size();
        }
        add(pick);
      }
    } else {
      for (std::size_t i = 1; i < widest; ++i) {
        for (std::size_t a = 0; a < choices.size(); ++a) {
          pick[a] = std::min(i, choices[a].size() - 1);
        }
        add(pick);
      }
    }
  }
  return out;
}

std::array<NdTransfer, 2> nd_two_phases(const NdTransfer &t, const NdMidLayout &mid) {
  if (mid.on_source) {
    return {NdTransfer{t.src, mid.layout, {}}, NdTransfer{mid.layout, t.dst, t.perm}};
  }
  return {NdTransfer{t.src, mid.layout, t.perm}, NdTransfer{mid.layout, t.dst, {}}};
}

ScheduleInputs nd_all_at_once_estimate(const NdTransfer &t, const CostModel &model,
                                       std::size_t element_bytes) {
  // Per dimension of B: the volumes between A's processes along perm[d] and B's along d, and
  // each process's degree and total.
  struct DimTotals {
    std::vector<DimVolume> volumes; // by (src, dst)
    std::vector<Index> send_messages, sent, recv_messages, received;
    [[nodiscard]] Index volume(int src, int dst) const {
      const auto it = std::lower_bound(volumes.begin(), volumes.end(), std::pair{src, dst},
                                       [](const DimVolume &v, auto key) {
                                         return std::pair{v.src, v.dst} < key;
                                       });
      return it != volumes.end() && it->src == src && it->dst == dst ? it->volume : 0;
    }
  };
  const int n = t.ndims();
  std::vector<DimTotals> dims(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    const DimTransfer dt = t.dim(d);
    DimTotals &dim = dims[static_cast<std::size_t>(d)];
    dim.volumes = dim_volumes(dt);
    std::sort(dim.volumes.begin(), dim.volumes.end(), [](const DimVolume &x, const DimVolume &y) {
      return std::pair{x.src, x.dst} < std::pair{y.src, y.dst};
    });
    dim.send_messages.assign(static_cast<std::size_t>(dt.src.nprocs()), 0);
    dim.sent.assign(static_cast<std::size_t>(dt.src.nprocs()), 0);
    dim.recv_messages.assign(static_cast<std::size_t>(dt.dst.nprocs()), 0);
    dim.received.assign(static_cast<std::size_t>(dt.dst.nprocs()), 0);
    for (const DimVolume &v : dim.volumes) {
      ++dim.send_messages[static_cast<std::size_t>(v.src)];
      dim.sent[static_cast<std::size_t>(v.src)] += v.volume;
      ++dim.recv_messages[static_cast<std::size_t>(v.dst)];
      dim.received[static_cast<std::size_t>(v.dst)] += v.volume;
    }
  }
  const GridView src = grid_of(t.src);
  const GridView dst = grid_of(t.dst);
  // The elements a rank at A's coordinates a and B's b keeps.
  const auto kept = [&](const Coords &a, const Coords &b) {
    Index elements = 1;
    for (int d = 0; d < n; ++d) {
      const auto du = static_cast<std::size_t>(d);
      elements *= dims[du].volume(a[static_cast<std::size_t>(t.perm_at(d))], b[du]);
    }
    return elements;
  };
  const auto comm_size = static_cast<std::size_t>(nd_comm_size(t));
  std::vector<AllAtOnceTotals> ranks(comm_size);
  // Every rank's position on each grid (none: positions()), in one pass over each grid.
  const auto positions_of_ranks = [&](const GridView &grid) {
    std::vector<std::size_t> out(comm_size, grid.positions());
    for (std::size_t p = 0; p < grid.positions(); ++p) {
      out[static_cast<std::size_t>(grid.rank_at(grid.coords(p)))] = p;
    }
    return out;
  };
  const std::vector<std::size_t> src_position = positions_of_ranks(src);
  const std::vector<std::size_t> dst_position = positions_of_ranks(dst);
  for (std::size_t p = 0; p < src.positions(); ++p) {
    const Coords a = src.coords(p);
    const int rank = src.rank_at(a);
    const std::size_t q = dst_position[static_cast<std::size_t>(rank)];
    const Index self = q < dst.positions() ? kept(a, dst.coords(q)) : 0;
    Index messages = 1;
    Index elements = 1;
    for (int d = 0; d < n; ++d) {
      const auto at = static_cast<std::size_t>(a[static_cast<std::size_t>(t.perm_at(d))]);
      messages *= dims[static_cast<std::size_t>(d)].send_messages[at];
      elements *= dims[static_cast<std::size_t>(d)].sent[at];
    }
    AllAtOnceTotals &r = ranks[static_cast<std::size_t>(rank)];
    r.sent_messages += messages - (self > 0 ? 1 : 0);
    r.sent += elements - self;
  }
  for (std::size_t p = 0; p < dst.positions(); ++p) {
    const Coords b = dst.coords(p);
    const int rank = dst.rank_at(b);
    const std::size_t q = src_position[static_cast<std::size_t>(rank)];
    const Index self = q < src.positions() ? kept(src.coords(q), b) : 0;
    Index messages = 1;
    Index elements = 1;
    for (int d = 0; d < n; ++d) {
      const auto at = static_cast<std::size_t>(b[static_cast<std::size_t>(d)]);
      messages *= dims[static_cast<std::size_t>(d)].recv_messages[at];
      elements *= dims[static_cast<std::size_t>(d)].received[at];
    }
    AllAtOnceTotals &r = ranks[static_cast<std::size_t>(rank)];
    r.received_messages += messages - (self > 0 ? 1 : 0);
    r.received += elements - self;
  }
  return all_at_once_maxima(ranks, model, element_bytes);
}

VolumeGraph nd_volume_graph(const NdTransfer &t) {
  const NdScheduleGrids grids = nd_schedule_grids(t);
  VolumeGraph g = dimension_graph(t, grids, 0);
  for (int d = 1; d < grids.ndims; ++d) {
    g = product_graph(g, dimension_graph(t, grids, d));
  }
  return g;
}

namespace {

// The one-phase decision for an N-d transfer (options.strategy is not multiphase).
std::string choose_nd_one_phase(const NdTransfer &t, const NdRankPlan &plan,
                                const ScheduleOptions &options, const ScheduleInputs &inputs,
                                std::size_t element_bytes, ScheduleChoice &choice) {
  const NdScheduler scheduler(t, options);
  const auto build = [&](const ScheduleOptions &o, ScheduleChoice &c) -> std::string {
    c.strategy = o.strategy;
    if (o.strategy == Strategy::all_at_once) {
      // With two levels, every message in one step loads every rank port and node link
      // (costed on the graph up to kDirectPairs position pairs; beyond, the one-level inputs).
      const double seconds =
          scheduler.levels() && scheduler.position_pairs() <= kDirectPairs
              ? scheduler
                    .stats(o,
                           scheduler.without_self(schedule_all_at_once(scheduler.graph()), false),
                           element_bytes)
                    .seconds
              : inputs.all_at_once_seconds;
      return all_at_once_choice(o, inputs, window_elements(t), seconds, c);
    }
    Schedule whole;
    if (std::string why = scheduler.build(o, element_bytes, whole, c.detail); !why.empty()) {
      return why;
    }
    static_cast<void>(check_options(o, element_bytes, c.chunk_elements));
    c.stats = scheduler.stats(o, whole, element_bytes);
    c.steps = rank_steps(scheduler.grids(), t, plan, whole);
    return {};
  };
  return choose_one_phase(options, inputs, element_bytes, build, choice);
}

// The two-phase part of the decision (choose_two_phase's in planner.cpp, for N-d transfers):
// the intermediate layout of nd_mid_layouts the model finds cheapest, each phase chosen as
// `automatic` would under the options' limits, the intermediate array counted against
// max_memory. False when none applies or fits, or none is predicted faster than `bound`
// seconds (a candidate is dropped as soon as its first phase alone reaches the bound or the
// best candidate's time).
bool choose_nd_two_phase(const NdTransfer &t, const NdRankPlan &plan,
                         const ScheduleOptions &options, std::size_t element_bytes,
                         ScheduleChoice &choice, double bound) {
  if (window_elements(t) == 0) {
    return false;
  }
  const int comm_size = std::max(nd_comm_size(t), plan.rank + 1);
  std::shared_ptr<NdTwoPhase> best;
  const auto seconds = [](const NdTwoPhase &p) {
    return p.choices[0].stats.seconds + p.choices[1].stats.seconds;
  };
  for (NdMidLayout &mid : nd_mid_layouts(t)) {
    ScheduleOptions phase_options;
    if (!two_phase_options(options, nd_mid_bytes_max(mid.layout, element_bytes), element_bytes,
                           phase_options)) {
      continue;
    }
    auto two = std::make_shared<NdTwoPhase>();
    two->transfers = nd_two_phases(t, mid);
    const double to_beat = best ? std::min(bound, seconds(*best)) : bound;
    bool feasible = true;
    for (std::size_t phase = 0; phase < 2 && feasible; ++phase) {
      const NdTransfer &pt = two->transfers[phase];
      two->plans[phase] = make_nd_rank_plan(pt, plan.rank, comm_size);
      feasible = choose_nd_one_phase(pt, two->plans[phase], phase_options,
                                     nd_all_at_once_estimate(pt, options.model, element_bytes),
                                     element_bytes, two->choices[phase])
                     .empty() &&
                 two->choices[phase].stats.seconds < to_beat;
    }
    if (feasible && seconds(*two) < to_beat) {
      two->mid = std::move(mid.layout);
      two->on_source = mid.on_source;
      two->phase_options = phase_options;
      two->phase_options.node_of_rank = {}; // O(ranks): not kept by an executing plan
      best = std::move(two);
    }
  }
  if (!best) {
    return false;
  }
  Coords at{};
  if (grid_of(best->mid).find(plan.rank, at)) {
    best->mid_strides = local_strides(best->mid, at);
    best->mid_elements = 1;
    for (const Index count : local_counts(best->mid, at)) {
      best->mid_elements *= count;
    }
  }
  choice = ScheduleChoice{};
  choice.strategy = Strategy::multiphase;
  choice.detail = "two phases through ";
  for (std::size_t a = 0; a < best->mid.dims.size(); ++a) {
    choice.detail += (a == 0 ? "" : " x ") + dimension_name(best->mid.dims[a]);
  }
  choice.detail += std::string(" on the ") + (best->on_source ? "source" : "destination") +
                   " grid: " + std::string(strategy_name(best->choices[0].strategy)) + " then " +
                   std::string(strategy_name(best->choices[1].strategy));
  choice.stats = two_phase_stats(best->choices);
  choice.nd_phases = std::move(best);
  return true;
}

} // namespace

std::string choose_nd_schedule(const NdTransfer &t, const NdRankPlan &plan,
                               const ScheduleOptions &options, const ScheduleInputs &inputs,
                               std::size_t element_bytes, ScheduleChoice &choice) {
  return choose_phases(
      options, element_bytes,
      [&](const ScheduleOptions &o, ScheduleChoice &c) {
        return choose_nd_one_phase(t, plan, o, inputs, element_bytes, c);
      },
      [&](double bound, ScheduleChoice &c) {
        return choose_nd_two_phase(t, plan, options, element_bytes, c, bound);
      },
      [](const ScheduleChoice &one) { return one.stats.seconds; }, kNoIntermediateLayout, choice);
}

std::string nd_global_schedule(const NdTransfer &t, const ScheduleOptions &options,
                               std::size_t element_bytes, Schedule &out, std::string &how) {
  const NdScheduler scheduler(t, options);
  if (options.strategy == Strategy::all_at_once) {
    Index chunk = 0;
    if (std::string why = check_options(options, element_bytes, chunk); !why.empty()) {
      return why;
    }
    out = scheduler.without_self(schedule_all_at_once(scheduler.graph()), false);
    how = "all messages at once";
    return {};
  }
  if (options.strategy == Strategy::automatic || options.strategy == Strategy::multiphase) {
    return "nd_global_schedule: an explicit strategy, not " +
           std::string(strategy_name(options.strategy));
  }
  return scheduler.build(options, element_bytes, out, how);
}

} // namespace redist
