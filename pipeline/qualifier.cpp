#include "pipeline/qualifier.hpp"

namespace kport::pipeline {

bool qualifier::empty() const noexcept {
  return failure == msg::FailureClass::none &&
         rule == msg::IntegrityRule::none && owner == msg::Owner::unknown;
}

qualifier qualifier::of(msg::FailureClass cls) {
  qualifier q;
  q.failure = cls;
  return q;
}

qualifier qualifier::of(msg::IntegrityRule r) {
  qualifier q;
  q.failure = msg::FailureClass::integrity;
  q.rule = r;
  return q;
}

qualifier qualifier::of(msg::Owner owner) {
  qualifier q;
  q.owner = owner;
  return q;
}

std::string to_string(const qualifier& q) {
  if (q.rule != msg::IntegrityRule::none)
    return msg::EnumNameIntegrityRule(q.rule);
  if (q.failure != msg::FailureClass::none)
    return msg::EnumNameFailureClass(q.failure);
  if (q.owner != msg::Owner::unknown)
    return msg::EnumNameOwner(q.owner);
  return {};
}

std::optional<qualifier> qualifier_named(messages::stage_kind kind,
                                         std::string_view text) {
  if (kind == messages::stage_kind::agent) {
    for (auto o : {msg::Owner::kernel, msg::Owner::host})
      if (text == msg::EnumNameOwner(o))
        return qualifier::of(o);
    return std::nullopt;
  }
  for (auto r : msg::EnumValuesIntegrityRule())
    if (r != msg::IntegrityRule::none && text == msg::EnumNameIntegrityRule(r))
      return qualifier::of(r);
  // `integrity` alone names no rule: routes name the rule itself.
  for (auto c : {msg::FailureClass::kernel, msg::FailureClass::host,
                 msg::FailureClass::env})
    if (text == msg::EnumNameFailureClass(c))
      return qualifier::of(c);
  return std::nullopt;
}

std::string qualifier_list(messages::stage_kind kind) {
  if (kind == messages::stage_kind::agent)
    return "kernel, host (the diagnosis's owner)";
  std::string out = "kernel, host, env (the failure class) or an integrity "
                    "rule: ";
  bool first = true;
  for (auto r : msg::EnumValuesIntegrityRule())
    if (r != msg::IntegrityRule::none) {
      out += (first ? "" : ", ") + std::string{msg::EnumNameIntegrityRule(r)};
      first = false;
    }
  return out;
}

msg::Qualifier to_message(const qualifier& q) {
  return msg::Qualifier{q.failure, q.rule, q.owner};
}

qualifier from_message(const msg::Qualifier* q) {
  qualifier out;
  if (q) {
    out.failure = q->failure_class();
    out.rule = q->rule();
    out.owner = q->owner();
  }
  return out;
}

} // namespace kport::pipeline
