#include "base/ring_buffer.h"

#include <gtest/gtest.h>

#include <vector>

namespace roceqos {
namespace {

std::vector<int> NewestFirst(const RingBuffer<int>& ring) {
  std::vector<int> out;
  ring.VisitNewestFirst([&](int v) {
    out.push_back(v);
    return true;
  });
  return out;
}

TEST(RingBufferTest, StartsEmpty) {
  RingBuffer<int> ring(3);
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.size(), 0u);
  EXPECT_EQ(ring.capacity(), 3u);
  EXPECT_TRUE(NewestFirst(ring).empty());
}

TEST(RingBufferTest, KeepsInsertionOrderBelowCapacity) {
  RingBuffer<int> ring(3);
  ring.Push(1);
  ring.Push(2);
  EXPECT_EQ(ring.size(), 2u);
  EXPECT_FALSE(ring.full());
  EXPECT_EQ(ring.Newest(), 2);
  EXPECT_EQ(ring.FromNewest(1), 1);
  EXPECT_EQ(NewestFirst(ring), (std::vector<int>{2, 1}));
}

TEST(RingBufferTest, OverwritesOldestWhenFull) {
  RingBuffer<int> ring(3);
  for (int i = 1; i <= 7; ++i) ring.Push(i);
  EXPECT_TRUE(ring.full());
  EXPECT_EQ(ring.size(), 3u);
  EXPECT_EQ(NewestFirst(ring), (std::vector<int>{7, 6, 5}));
}

TEST(RingBufferTest, NewestIsMutableInPlace) {
  RingBuffer<int> ring(2);
  ring.Push(1);
  ring.Newest() += 10;
  EXPECT_EQ(ring.FromNewest(0), 11);
}

TEST(RingBufferTest, VisitStopsWhenVisitorReturnsFalse) {
  RingBuffer<int> ring(4);
  for (int i = 1; i <= 4; ++i) ring.Push(i);
  std::vector<int> seen;
  ring.VisitNewestFirst([&](int v) {
    seen.push_back(v);
    return v > 3;
  });
  EXPECT_EQ(seen, (std::vector<int>{4, 3}));
}

TEST(RingBufferTest, ClearForgetsElementsAndRestartsOrder) {
  RingBuffer<int> ring(2);
  ring.Push(1);
  ring.Push(2);
  ring.Push(3);
  ring.Clear();
  EXPECT_TRUE(ring.empty());
  ring.Push(9);
  EXPECT_EQ(NewestFirst(ring), (std::vector<int>{9}));
}

TEST(RingBufferTest, ZeroCapacityIsTreatedAsOne) {
  RingBuffer<int> ring(0);
  ring.Push(1);
  ring.Push(2);
  EXPECT_EQ(ring.capacity(), 1u);
  EXPECT_EQ(NewestFirst(ring), (std::vector<int>{2}));
}

}  // namespace
}  // namespace roceqos
