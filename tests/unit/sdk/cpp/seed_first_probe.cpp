// A bench with a port whose static initialiser reads stdin, where kport
// writes the round's secret seed: the helper must have read it first.
// Prints what each got (seed_first_test.sh checks it).
#include "kport/check_record.hpp"

#include <cstdio>
#include <unistd.h>

namespace {

struct port_global {
  char buf[64];
  long got = ::read(0, buf, sizeof buf);
};
port_global port;

} // namespace

int main() {
  std::printf("port read %ld bytes, helper seed %llu\n", port.got,
              static_cast<unsigned long long>(kport::bench::round_seed()));
  return 0;
}
