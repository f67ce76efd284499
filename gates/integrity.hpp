#pragma once

// The integrity rules: evidence, never a port's own word, that the candidate
// did the work it claims, inside the window the timer sees, on the inputs it
// was given. The table and one file per family of rules live in
// gates/integrity/; this header gathers them for the gates.

#include "gates/integrity/candidate_bench.hpp"
#include "gates/integrity/foreign_rules.hpp"
#include "gates/integrity/harness_rules.hpp"
#include "gates/integrity/kernel_rules.hpp"
#include "gates/integrity/output_rules.hpp"
#include "gates/integrity/overlap_rules.hpp"
#include "gates/integrity/rule_table.hpp"
#include "gates/integrity/test_rules.hpp"
#include "gates/integrity/trace_rules.hpp"
