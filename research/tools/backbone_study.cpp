// backbone_study: Jeannot & Wagner 2004's Sec. 5.1 simulations of GGP and OGGP
// (docs/studies/backbone.md), printing CSV, one row per instance: the graph's size, the lower
// bound, the costs of GGP, OGGP and all-at-once (fluid model) in the backbone model (backbone.hpp),
// steps and the seconds each scheduler took. Run by scripts/backbone_study.py, which summarises and
// plots.
//
//   backbone_study ratios [--graphs N] [--seed S] [--max-weight W] [--beta B] [--k-max K]
//       The same N random graphs for every k = 1..K, setup beta (elements).
//   backbone_study beta [--graphs N] [--seed S] [--max-weight W] [--betas B1,B2,...]
//       [--scale F]
//       N random graphs, each with its own random k in 1..min(senders, receivers), for every
//       beta; volumes are weight * F elements and the setup beta * F elements, so beta may
//       have a fraction (beta * F must be whole); the beta column is beta * F.
//   backbone_study timing [--repeats R] [--seed S] [--sizes N1,N2,...]
//       Processor seconds per GGP / OGGP call on complete N x N graphs (the largest of the paper's
//       setting is 20 x 20 = 400 messages), weights up to 20 and 10000, beta = 1.
//
// Graphs as in Sec. 5.1, "a random number of nodes (up to 40) and a random number of edges (up
// to 400)": n uniform in 2..40 split uniformly into senders 1..n-1 and receivers n - senders,
// m uniform in 1..min(400, senders * receivers) distinct pairs, weights uniform in 1..W.
// Seeded (std::mt19937_64); the same seed gives the same graphs with the same standard library.

#include "backbone.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using redist::Index;
using redist::Schedule;
using redist::VolumeGraph;

class Options {
public:
  Options(int argc, char **argv) {
    for (int i = 2; i < argc; i += 2) {
      const std::string name = argv[i];
      if (name.rfind("--", 0) != 0) {
        throw std::invalid_argument("argument '" + name + "': expected an option --NAME VALUE");
      }
      if (i + 1 >= argc) {
        throw std::invalid_argument("option " + name + ": missing its value");
      }
      values_[name] = argv[i + 1];
    }
  }

  Index integer(const std::string &name, Index fallback, Index least) {
    const std::string text = take(name);
    if (text.empty()) {
      return fallback;
    }
    return checked_integer(name, text, least);
  }

  double real(const std::string &name, double fallback) {
    const std::string text = take(name);
    return text.empty() ? fallback : checked_real(name, text);
  }

  std::vector<double> reals(const std::string &name, const std::vector<double> &fallback) {
    const std::string text = take(name);
    if (text.empty()) {
      return fallback;
    }
    std::vector<double> out;
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');) {
      out.push_back(checked_real(name, item));
    }
    return out;
  }

  std::vector<Index> integers(const std::string &name, const std::vector<Index> &fallback) {
    std::vector<Index> out;
    for (const double v : reals(name, {})) {
      if (v != std::floor(v) || v < 1) {
        throw std::invalid_argument("option " + name + ": " + std::to_string(v) +
                                    " is not a whole number >= 1");
      }
      out.push_back(static_cast<Index>(v));
    }
    return out.empty() ? fallback : out;
  }

  /// Throws on an option nobody asked for.
  void finish() const {
    if (!values_.empty()) {
      throw std::invalid_argument("option " + values_.begin()->first + ": unknown for this study");
    }
  }

private:
  std::map<std::string, std::string> values_;

  std::string take(const std::string &name) {
    const auto it = values_.find(name);
    if (it == values_.end()) {
      return {};
    }
    std::string text = it->second;
    values_.erase(it);
    return text;
  }

  static Index checked_integer(const std::string &name, const std::string &text, Index least) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(text, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used != text.size() || used == 0 || v < least) {
      throw std::invalid_argument("option " + name + " = '" + text +
                                  "': expected a whole number >= " + std::to_string(least));
    }
    return v;
  }

  static double checked_real(const std::string &name, const std::string &text) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used != text.size() || used == 0 || !(v >= 0) || !std::isfinite(v)) {
      throw std::invalid_argument("option " + name + " = '" + text +
                                  "': expected a finite number >= 0");
    }
    return v;
  }
};

struct Rng {
  std::mt19937_64 engine;
  Index uniform(Index lo, Index hi) { return std::uniform_int_distribution<Index>(lo, hi)(engine); }
};

VolumeGraph paper_graph(Rng &rng, Index max_weight) {
  const Index nodes = rng.uniform(2, 40);
  const Index senders = rng.uniform(1, nodes - 1);
  const Index receivers = nodes - senders;
  const Index pairs = senders * receivers;
  const Index messages = rng.uniform(1, std::min<Index>(400, pairs));
  std::vector<Index> pair(static_cast<std::size_t>(pairs));
  for (Index p = 0; p < pairs; ++p) {
    pair[static_cast<std::size_t>(p)] = p;
  }
  VolumeGraph g{static_cast<int>(senders), static_cast<int>(receivers), {}};
  for (Index i = 0; i < messages; ++i) { // the first `messages` of a random permutation
    std::swap(pair[static_cast<std::size_t>(i)],
              pair[static_cast<std::size_t>(rng.uniform(i, pairs - 1))]);
    const Index p = pair[static_cast<std::size_t>(i)];
    g.messages.push_back({static_cast<int>(p / receivers), static_cast<int>(p % receivers),
                          rng.uniform(1, max_weight)});
  }
  g.normalize();
  return g;
}

/// Processor seconds `work` took (std::clock): unlike wall time, not inflated by the other
/// programs sharing the machine.
double seconds_of(const std::function<void()> &work) {
  const std::clock_t start = std::clock();
  work();
  return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

constexpr const char *kInstanceHeader =
    "senders,receivers,messages,max_degree,total,max_node,k,beta,lower_bound,ggp_cost,oggp_cost,"
    "all_at_once_cost,ggp_steps,oggp_steps,bound_steps,ggp_seconds,oggp_seconds";

/// One CSV row: the instance, the lower bound, GGP, OGGP and all-at-once in the backbone model
/// (costs in elements), steps, and the seconds each scheduler took.
void print_instance(const VolumeGraph &g, int k, Index beta_elements) {
  const auto beta = static_cast<double>(beta_elements);
  Schedule ggp;
  Schedule oggp;
  const double ggp_seconds = seconds_of([&] { ggp = redist::schedule_ggp(g, k, beta_elements); });
  const double oggp_seconds =
      seconds_of([&] { oggp = redist::schedule_oggp(g, k, beta_elements); });
  const Index streams = redist::backbone_streams(g, k);
  const auto messages = static_cast<Index>(g.messages.size());
  const Index bound_steps = std::max<Index>(g.max_degree(), (messages + streams - 1) / streams);
  std::printf("%d,%d,%lld,%d,%lld,%lld,%d,%lld,%.17g,%.17g,%.17g,%.17g,%zu,%zu,%lld,%.6g,%.6g\n",
              g.senders, g.receivers, static_cast<long long>(messages), g.max_degree(),
              static_cast<long long>(g.total()), static_cast<long long>(g.max_node_volume()), k,
              static_cast<long long>(beta_elements), redist::backbone_lower_bound(g, k, beta),
              redist::backbone_schedule_cost(g, ggp, k, beta),
              redist::backbone_schedule_cost(g, oggp, k, beta),
              redist::backbone_all_at_once_cost(g, k, beta), ggp.steps.size(), oggp.steps.size(),
              static_cast<long long>(bound_steps), ggp_seconds, oggp_seconds);
}

void ratios(Options &options) {
  const Index graphs = options.integer("--graphs", 1000, 1);
  const auto seed = static_cast<std::uint64_t>(options.integer("--seed", 1, 0));
  const Index max_weight = options.integer("--max-weight", 20, 1);
  const Index beta = options.integer("--beta", 1, 1);
  const Index k_max = options.integer("--k-max", 20, 1);
  options.finish();
  Rng rng{std::mt19937_64(seed)};
  std::vector<VolumeGraph> instances;
  for (Index i = 0; i < graphs; ++i) {
    instances.push_back(paper_graph(rng, max_weight));
  }
  std::printf("graph,%s\n", kInstanceHeader);
  for (Index k = 1; k <= k_max; ++k) {
    for (std::size_t i = 0; i < instances.size(); ++i) {
      std::printf("%zu,", i);
      print_instance(instances[i], static_cast<int>(k), beta);
    }
  }
}

void beta_sweep(Options &options) {
  const Index graphs = options.integer("--graphs", 1000, 1);
  const auto seed = static_cast<std::uint64_t>(options.integer("--seed", 1, 0));
  const Index max_weight = options.integer("--max-weight", 20, 1);
  const Index scale = options.integer("--scale", 10, 1);
  const std::vector<double> betas =
      options.reals("--betas", {0.1, 0.2, 0.5, 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 100});
  options.finish();
  std::vector<Index> beta_elements;
  for (const double beta : betas) {
    const double elements = beta * static_cast<double>(scale);
    if (elements < 1 || std::abs(elements - std::round(elements)) > 1e-9) {
      throw std::invalid_argument("option --betas: " + std::to_string(beta) + " * --scale " +
                                  std::to_string(scale) + " is not a whole number >= 1");
    }
    beta_elements.push_back(static_cast<Index>(std::llround(elements)));
  }
  Rng rng{std::mt19937_64(seed)};
  std::vector<std::pair<VolumeGraph, int>> instances;
  for (Index i = 0; i < graphs; ++i) {
    VolumeGraph g = paper_graph(rng, max_weight);
    for (redist::Message &m : g.messages) {
      m.volume *= scale;
    }
    const int k = static_cast<int>(rng.uniform(1, std::min(g.senders, g.receivers)));
    instances.emplace_back(std::move(g), k);
  }
  std::printf("graph,%s\n", kInstanceHeader);
  for (const Index beta : beta_elements) {
    for (std::size_t i = 0; i < instances.size(); ++i) {
      std::printf("%zu,", i);
      print_instance(instances[i].first, instances[i].second, beta);
    }
  }
}

void timing(Options &options) {
  const Index repeats = options.integer("--repeats", 3, 1);
  const auto seed = static_cast<std::uint64_t>(options.integer("--seed", 1, 0));
  const std::vector<Index> sizes = options.integers("--sizes", {20, 40, 64, 100});
  options.finish();
  Rng rng{std::mt19937_64(seed)};
  std::printf("senders,receivers,messages,max_weight,k,ggp_seconds,oggp_seconds,ggp_steps,"
              "oggp_steps\n");
  for (const Index n : sizes) {
    for (const Index max_weight : {Index{20}, Index{10000}}) {
      VolumeGraph g{static_cast<int>(n), static_cast<int>(n), {}};
      for (int p = 0; p < g.senders; ++p) {
        for (int q = 0; q < g.receivers; ++q) {
          g.messages.push_back({p, q, rng.uniform(1, max_weight)});
        }
      }
      for (const Index k : {Index{1}, std::max<Index>(1, n / 4), n}) {
        // Fastest of the repeats: the least disturbed (caches, frequency) by other work.
        double fastest[2] = {std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::infinity()};
        std::size_t steps[2] = {0, 0};
        for (Index r = 0; r < repeats; ++r) {
          for (int o = 0; o < 2; ++o) {
            Schedule s;
            fastest[o] = std::min(fastest[o], seconds_of([&] {
                                    s = o == 0 ? redist::schedule_ggp(g, static_cast<int>(k), 1)
                                               : redist::schedule_oggp(g, static_cast<int>(k), 1);
                                  }));
            steps[o] = s.steps.size();
          }
        }
        std::printf("%lld,%lld,%zu,%lld,%lld,%.6f,%.6f,%zu,%zu\n", static_cast<long long>(n),
                    static_cast<long long>(n), g.messages.size(),
                    static_cast<long long>(max_weight), static_cast<long long>(k), fastest[0],
                    fastest[1], steps[0], steps[1]);
        std::fflush(stdout);
      }
    }
  }
}

constexpr const char *kUsage = "usage: backbone_study ratios|beta|timing [--OPTION VALUE ...] (see "
                               "research/tools/backbone_study.cpp)\n";

} // namespace

int main(int argc, char **argv) {
  const std::string study = argc > 1 ? argv[1] : "";
  try {
    Options options(argc, argv);
    if (study == "ratios") {
      ratios(options);
    } else if (study == "beta") {
      beta_sweep(options);
    } else if (study == "timing") {
      timing(options);
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "backbone_study: %s\n", e.what());
    return 2;
  }
  return 0;
}
