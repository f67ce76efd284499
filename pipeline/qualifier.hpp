#pragma once

#include "messages/common_generated.h"
#include "messages/stage_table.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace kport::pipeline {

/// What routes a verdict beyond its literal: a gate's failure class (and the
/// integrity rule that fired, when the class is `integrity`), or the owner a
/// diagnosis names. Empty for most outcomes.
struct qualifier {
  msg::FailureClass failure = msg::FailureClass::none;
  msg::IntegrityRule rule = msg::IntegrityRule::none;
  msg::Owner owner = msg::Owner::unknown;

  bool empty() const noexcept;

  /// A gate that failed for `cls`.
  static qualifier of(msg::FailureClass cls);
  /// A gate that failed because integrity rule `r` fired.
  static qualifier of(msg::IntegrityRule r);
  /// A diagnosis that names `owner`.
  static qualifier of(msg::Owner owner);

  friend bool operator==(const qualifier&, const qualifier&) = default;
};

/// The qualifier's route-key text: the rule's literal, else the failure
/// class's, else the owner's; "" when empty.
std::string to_string(const qualifier& q);

/// The qualifier a route key's text names for a stage of `kind`: gates
/// qualify by integrity rule or failure class, agents by owner. None when
/// the text names nothing such a stage can say.
std::optional<qualifier> qualifier_named(messages::stage_kind kind,
                                         std::string_view text);

/// The names a stage of `kind` may qualify its verdicts with, for messages.
std::string qualifier_list(messages::stage_kind kind);

/// To and from the message struct that transitions and outcomes carry.
msg::Qualifier to_message(const qualifier& q);
qualifier from_message(const msg::Qualifier* q);

} // namespace kport::pipeline
