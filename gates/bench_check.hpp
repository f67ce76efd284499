#pragma once

// The KPORT_CHECK files bench helpers write (messages/bench_check.fbs): per
// config, digests of the last timed call's outputs and of every timed
// call's inputs before and after it.

#include "kport/error.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kport::gates {

/// A digest of one tensor, as a helper recorded it.
struct tensor_digest {
  std::vector<std::int64_t> shape;
  std::string dtype;
  std::int64_t numel = 0;
  double sum = 0, abs_sum = 0;
  std::int64_t nan = 0, inf = 0;
  std::vector<std::int64_t> sample_index;
  std::vector<double> sample;
  std::int64_t checksum = 0;
  /// Per-call digests: the sums and counts cover every stride-th element
  /// from offset (stride 0: every element).
  std::int64_t stride = 0, offset = 0;

  /// How many elements the sums and counts cover.
  std::int64_t summed() const {
    if (stride <= 1)
      return numel;
    return offset >= numel ? 0 : (numel - offset + stride - 1) / stride;
  }

  /// Whether values were digested (not for empty or complex tensors).
  bool has_values() const { return numel > 0 && !sample_index.empty(); }
};

/// One timed call's inputs, before and after it.
struct input_digests {
  int iteration = 0;
  std::vector<tensor_digest> before, after;
};

/// One timed call's outputs, right after it.
struct output_digests {
  int iteration = 0;
  std::vector<tensor_digest> outputs;
};

/// A change of the harness the helper saw (messages/bench_check.fbs
/// HarnessTamper): `what` is output or function.
struct harness_tamper {
  std::string what;
  std::string detail;
  int iteration = 0; ///< 0: a warm-up call
};

/// What a bench run recorded for one config.
struct config_check {
  std::string config;
  std::string bench;
  std::uint64_t seed = 0;
  std::vector<tensor_digest> outputs;
  std::vector<input_digests> inputs;
  std::vector<output_digests> calls;    ///< every timed call's outputs
  std::uint64_t round_seed = 0;         ///< KPORT_SEED as the helper read it
  std::vector<harness_tamper> tampered; ///< over every line of the config
  int line = 0;                         ///< where in the file, for the evidence
};

/// The check file of one bench run.
struct bench_checks {
  std::string path;
  bool present = false; ///< the run wrote the file
  /// Per config; when a config appears on several lines, the last wins.
  std::map<std::string, config_check> configs;
};

/// Reads a KPORT_CHECK file; a file that does not exist is `present =
/// false`, not an error. Each line must be a strict BenchCheck (schema
/// error naming path:line otherwise).
result<bench_checks> read_bench_checks(const std::string& path);

} // namespace kport::gates
