// CESTAC run scopes and the instability log (harness/cestac/monitor.cc): the rounding mode a run
// sets and restores on its own thread only, kind names, sites counted per (kind, address), the
// caller's log saved across a run.
#include <gtest/gtest.h>

#include <atomic>
#include <cfenv>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "stabfuzz/stoch.h"

namespace stabfuzz {
namespace {

using cestac::Kind;
using D = Stoch<double>;
// A run of CADNA's up-or-down rounding (rounding_test.cc compares the two roundings), which
// switches to round toward +inf.
cestac::Config updown() {
  cestac::Config c;
  c.rounding = cestac::Rounding::updown;
  return c;
}

// The SSE rounding-control field of the calling thread: 0 nearest, 0x4000 toward +inf.
uint32_t rounding_field() { return cestac::get_mxcsr() & cestac::kMxcsrRoundingMask; }

// Round to nearest, computed where the compiler cannot fold it.
double third() {
  volatile double one = 1.0, three = 3.0;
  return one / three;
}

TEST(Stoch, NearnessRunKeepsRoundToNearest) {
  ASSERT_EQ(rounding_field(), 0u);
  const double nearest = third();
  {
    cestac::Run run(1, 1);  // the default: stochastic rounding to nearness
    EXPECT_EQ(rounding_field(), 0u);
    EXPECT_EQ(third(), nearest);
  }
  {
    const uint32_t saved = cestac::get_mxcsr();
    cestac::set_mxcsr((saved & ~cestac::kMxcsrRoundingMask) | cestac::kMxcsrRoundUp);
    {
      cestac::Run run(1, 1);  // whatever the caller's mode
      EXPECT_EQ(rounding_field(), 0u);
    }
    EXPECT_EQ(rounding_field(), cestac::kMxcsrRoundUp);  // restored
    cestac::set_mxcsr(saved);
  }
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

TEST(Stoch, UpdownRunRoundsUpwardOnlyInsideAndRestoresTheMode) {
  ASSERT_EQ(rounding_field(), 0u);
  const double nearest = third();
  {
    cestac::Run run(1, 1, updown());
    EXPECT_EQ(rounding_field(), cestac::kMxcsrRoundUp);  // CADNA's mode: one instruction per op
    EXPECT_GT(third(), nearest);                         // plain double code sees it too
    {
      cestac::NearestScope rn;  // what libm calls and slow paths run in
      EXPECT_EQ(rounding_field(), 0u);
      EXPECT_EQ(third(), nearest);
    }
    EXPECT_EQ(rounding_field(), cestac::kMxcsrRoundUp);
    {
      cestac::Run inner(2, 2, updown());  // runs nest
      EXPECT_EQ(rounding_field(), cestac::kMxcsrRoundUp);
    }
    EXPECT_EQ(rounding_field(), cestac::kMxcsrRoundUp);
  }
  EXPECT_EQ(rounding_field(), 0u);
  EXPECT_EQ(third(), nearest);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

TEST(Stoch, AnExceptionLeavingARunRestoresTheMode) {
  try {
    cestac::Run run(1, 1);
    D x = D(1.0) / D(3.0);
    if (x.mean() > 0) throw std::runtime_error("operator failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(rounding_field(), 0u);
  EXPECT_EQ(third(), 1.0 / 3.0);
}

TEST(Stoch, OtherThreadsKeepRoundToNearestDuringARun) {
  std::atomic<int> phase{0};
  uint32_t seen = 99;
  double other = 0;
  std::thread t([&] {
    while (phase.load() != 1) std::this_thread::yield();
    seen = rounding_field();
    other = third();
    phase.store(2);
  });
  {
    cestac::Run run(1, 1);
    phase.store(1);
    while (phase.load() != 2) std::this_thread::yield();
  }
  t.join();
  EXPECT_EQ(seen, 0u);
  EXPECT_EQ(other, 1.0 / 3.0);
}

TEST(Monitor, EveryKindHasItsOwnName) {
  std::set<std::string> names;
  for (int k = 0; k < cestac::kKindCount; ++k) {
    const std::string n(cestac::kind_name(static_cast<Kind>(k)));
    EXPECT_NE(n, "?") << k;
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_EQ(cestac::kind_name(Kind::cancellation), "cancellation");
  EXPECT_EQ(cestac::kind_name(Kind::underflow), "underflow");
  EXPECT_EQ(cestac::kind_name(Kind::kCount), "?");
}

// One site per (kind, address), counted; the counts per kind and their total.
TEST(Monitor, SitesAreCountedPerKindAndAddress) {
  cestac::Run run(1, 1);
  cestac::record_at(Kind::cancellation, 0x1000);
  cestac::record_at(Kind::cancellation, 0x2000);
  cestac::record_at(Kind::cancellation, 0x1000);
  cestac::record_at(Kind::overflow, 0x1000);
  const cestac::Log& log = run.log();
  EXPECT_EQ(log.counts[static_cast<int>(Kind::cancellation)], 3u);
  EXPECT_EQ(log.counts[static_cast<int>(Kind::overflow)], 1u);
  EXPECT_EQ(log.total(), 4u);
  ASSERT_EQ(log.sites.size(), 3u);
  EXPECT_EQ(log.sites[0].kind, Kind::cancellation);
  EXPECT_EQ(log.sites[0].address, 0x1000u);
  EXPECT_EQ(log.sites[0].count, 2u);
  EXPECT_EQ(log.sites[1].address, 0x2000u);
  EXPECT_EQ(log.sites[1].count, 1u);
  EXPECT_EQ(log.sites[2].kind, Kind::overflow);
  EXPECT_EQ(log.sites[2].address, 0x1000u);
  EXPECT_FALSE(log.self_validation_failed());
}

// A run starts with an empty log and gives the caller's back when it ends: nested runs (an
// operator evaluated inside another's run) do not mix their sites.
TEST(Monitor, ARunSavesAndRestoresTheCallersLog) {
  cestac::Run outer(1, 1);
  cestac::record_at(Kind::underflow, 0x10);
  {
    cestac::Run inner(2, 2);
    EXPECT_EQ(inner.log().total(), 0u);
    EXPECT_TRUE(inner.log().sites.empty());
    cestac::record_at(Kind::unstable_division, 0x20);
    EXPECT_EQ(inner.log().total(), 1u);
    EXPECT_TRUE(inner.log().self_validation_failed());
  }
  ASSERT_EQ(outer.log().sites.size(), 1u);
  EXPECT_EQ(outer.log().sites[0].kind, Kind::underflow);
  EXPECT_EQ(outer.log().total(), 1u);
  EXPECT_FALSE(outer.log().self_validation_failed());
}

// Each thread has its own log.
TEST(Monitor, ThreadsKeepTheirOwnLogs) {
  cestac::Run run(1, 1);
  cestac::record_at(Kind::overflow, 0x30);
  uint64_t other_total = 99;
  std::thread t([&] {
    cestac::Run r(1, 2);
    cestac::record_at(Kind::cancellation, 0x40);
    cestac::record_at(Kind::cancellation, 0x40);
    other_total = r.log().total();
  });
  t.join();
  EXPECT_EQ(other_total, 2u);
  EXPECT_EQ(run.log().total(), 1u);
  EXPECT_EQ(run.log().counts[static_cast<int>(Kind::cancellation)], 0u);
}

}  // namespace
}  // namespace stabfuzz
