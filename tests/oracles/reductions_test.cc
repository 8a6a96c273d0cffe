// Reduction oracles and stable targets (being written).
#include <gtest/gtest.h>
TEST(Reductions, Placeholder) {}
