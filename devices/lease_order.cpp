#include "devices/lease_order.hpp"

#include <algorithm>

namespace kport::devices {

namespace {

std::int64_t ns(lease_order::clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

/// Adds `d` to the time of phase `p` (an ended run's time stops).
void charge(lease_times& t, lease_phase p, std::int64_t d) {
  switch (p) {
  case lease_phase::queued:
    t.queued_ns += d;
    break;
  case lease_phase::starting:
  case lease_phase::released: // on the CPU, as in start-up
    t.starting_ns += d;
    break;
  case lease_phase::waiting:
    t.waiting_ns += d;
    break;
  case lease_phase::leased:
    t.leased_ns += d;
    break;
  case lease_phase::ended:
    break;
  }
}

void add(lease_times& into, const lease_times& t) {
  into.queued_ns += t.queued_ns;
  into.starting_ns += t.starting_ns;
  into.waiting_ns += t.waiting_ns;
  into.leased_ns += t.leased_ns;
}

} // namespace

void lease_order::enter(entry& e, lease_phase p, clock::time_point now) {
  charge(e.times, e.phase, ns(now - e.since));
  e.phase = p;
  e.since = now;
}

void lease_order::admit(std::uint64_t run, std::string pair, int seq,
                        clock::time_point now, bool quiet) {
  entry e;
  e.pair = std::move(pair);
  e.seq = seq;
  e.quiet = quiet;
  e.arrival = arrivals_++;
  e.since = now;
  runs_[run] = std::move(e);
}

int lease_order::alive() const {
  return static_cast<int>(
      std::count_if(runs_.begin(), runs_.end(), [](auto& kv) {
        return kv.second.phase != lease_phase::queued;
      }));
}

bool lease_order::busy_beside(std::uint64_t run) const {
  return std::any_of(runs_.begin(), runs_.end(), [run](auto& kv) {
    return kv.first != run && (kv.second.phase == lease_phase::starting ||
                               kv.second.phase == lease_phase::released);
  });
}

bool lease_order::quiet_pending() const {
  return std::any_of(runs_.begin(), runs_.end(), [](auto& kv) {
    return kv.second.quiet && (kv.second.phase == lease_phase::waiting ||
                               kv.second.phase == lease_phase::leased);
  });
}

std::vector<std::uint64_t> lease_order::to_start(clock::time_point now) {
  // Starting now would either run beside a measurement or put it off.
  if (quiet_pending())
    return {};
  std::vector<std::pair<std::uint64_t, std::uint64_t>> queued; // arrival, run
  for (auto& [id, e] : runs_)
    if (e.phase == lease_phase::queued)
      queued.emplace_back(e.arrival, id);
  std::sort(queued.begin(), queued.end());
  std::vector<std::uint64_t> out;
  for (auto& [arrival, id] : queued) {
    if (alive() >= startup_limit_)
      break;
    enter(runs_[id], lease_phase::starting, now);
    out.push_back(id);
  }
  return out;
}

void lease_order::wait(std::uint64_t run, int conn, clock::time_point now) {
  auto it = runs_.find(run);
  if (it == runs_.end())
    return;
  auto& e = it->second;
  conns_[conn] = run;
  e.waiting.push_back(conn);
  if (e.phase == lease_phase::starting || e.phase == lease_phase::released)
    enter(e, lease_phase::waiting, now);
}

void lease_order::release(int conn, clock::time_point now) {
  auto c = conns_.find(conn);
  if (c == conns_.end())
    return;
  auto it = runs_.find(c->second);
  conns_.erase(c);
  if (it == runs_.end())
    return;
  auto& e = it->second;
  std::erase(e.waiting, conn);
  std::erase(e.holding, conn);
  if (e.phase == lease_phase::leased && e.holding.empty())
    enter(e, e.waiting.empty() ? lease_phase::released : lease_phase::waiting,
          now);
  else if (e.phase == lease_phase::waiting && e.waiting.empty())
    enter(e, lease_phase::released, now);
}

lease_times lease_order::end(std::uint64_t run, clock::time_point now) {
  auto it = runs_.find(run);
  if (it == runs_.end())
    return {};
  auto& e = it->second;
  enter(e, lease_phase::ended, now);
  for (int conn : e.waiting)
    conns_.erase(conn);
  for (int conn : e.holding)
    conns_.erase(conn);
  auto t = e.times;
  add(ended_total_, t);
  last_end_ = now;
  runs_.erase(it);
  return t;
}

bool lease_order::settling(clock::time_point now) const {
  return last_end_ && now - *last_end_ < settle_;
}

lease_order::clock::duration
lease_order::settle_left(clock::time_point now) const {
  if (!settling(now) || holder())
    return {};
  for (auto& [id, e] : runs_)
    if (e.quiet && may_hold(id, e, true))
      return *last_end_ + settle_ - now;
  return {};
}

bool lease_order::may_hold(std::uint64_t run, const entry& e,
                           bool settled) const {
  return e.phase == lease_phase::waiting && eligible(run, e) &&
         !(e.quiet && (busy_beside(run) || !settled));
}

bool lease_order::eligible(std::uint64_t run, const entry& e) const {
  for (auto& [id, other] : runs_)
    // A run that gave the lease back no longer holds its successors up.
    if (id != run && other.pair == e.pair &&
        other.phase != lease_phase::released &&
        (other.seq < e.seq ||
         (other.seq == e.seq && other.arrival < e.arrival)))
      return false;
  return true;
}

std::vector<int> lease_order::grants(clock::time_point now) {
  auto h = holder();
  if (h) {
    auto& e = runs_[*h];
    auto out = std::move(e.waiting);
    e.waiting.clear();
    e.holding.insert(e.holding.end(), out.begin(), out.end());
    return out;
  }
  const entry* best = nullptr;
  std::uint64_t best_id = 0;
  auto settled = !settling(now);
  for (auto& [id, e] : runs_)
    if ((!best || e.arrival < best->arrival) && may_hold(id, e, settled)) {
      best = &e;
      best_id = id;
    }
  if (!best)
    return {};
  auto& e = runs_[best_id];
  enter(e, lease_phase::leased, now);
  auto out = std::move(e.waiting);
  e.waiting.clear();
  e.holding = out;
  return out;
}

std::optional<std::uint64_t> lease_order::holder() const {
  for (auto& [id, e] : runs_)
    if (e.phase == lease_phase::leased)
      return id;
  return std::nullopt;
}

std::optional<lease_phase> lease_order::phase(std::uint64_t run) const {
  auto it = runs_.find(run);
  if (it == runs_.end())
    return std::nullopt;
  return it->second.phase;
}

lease_times lease_order::times(std::uint64_t run, clock::time_point now) const {
  auto it = runs_.find(run);
  if (it == runs_.end())
    return {};
  auto t = it->second.times;
  charge(t, it->second.phase, ns(now - it->second.since));
  return t;
}

lease_counts lease_order::counts(clock::time_point now) const {
  lease_counts c;
  c.total = ended_total_;
  for (auto& [id, e] : runs_) {
    switch (e.phase) {
    case lease_phase::queued:
      ++c.queued;
      break;
    case lease_phase::starting:
    case lease_phase::released:
      ++c.starting;
      break;
    case lease_phase::waiting:
      ++c.waiting;
      break;
    case lease_phase::leased:
      ++c.leased;
      break;
    case lease_phase::ended:
      break;
    }
    add(c.total, times(id, now));
  }
  return c;
}

} // namespace kport::devices
