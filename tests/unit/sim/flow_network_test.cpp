// Max-min fair flow model on hand-built networks; expected rates and finish times are worked
// out by hand in the comments.
#include "toposweep/sim/flow_network.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace toposweep::sim {
namespace {

std::vector<FinishedFlow> run_to_next(FlowNetwork& net, double* when) {
  std::vector<FinishedFlow> done;
  *when = net.next_finish_time();
  net.advance_to(*when, done);
  return done;
}

TEST(FlowNetwork, TwoFlowsOnOneLinkShareItEqually) {
  // One 10 B/s arc, two 100 B flows: 5 B/s each, both finish at 100/5 = 20 s.
  FlowNetwork net({10.0});
  const ArcId path[] = {0};
  const FlowId a = net.start(path, 100, 1);
  const FlowId b = net.start(path, 100, 2);
  EXPECT_DOUBLE_EQ(net.rate(a), 5.0);
  EXPECT_DOUBLE_EQ(net.rate(b), 5.0);
  double t = 0;
  auto done = run_to_next(net, &t);
  EXPECT_DOUBLE_EQ(t, 20.0);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(net.active_count(), 0u);
  EXPECT_DOUBLE_EQ(net.arc_bytes()[0], 200.0);
  EXPECT_EQ(net.next_finish_time(), FlowNetwork::kNever);
}

TEST(FlowNetwork, SurvivorSpeedsUpWhenTheOtherFinishes) {
  // 10 B/s arc, flows of 100 B and 50 B: 5 B/s each until the short one ends at 50/5 = 10 s;
  // the long one has 50 B left, now alone at 10 B/s: ends at 10 + 5 = 15 s.
  FlowNetwork net({10.0});
  const ArcId path[] = {0};
  net.start(path, 100, 7);
  net.start(path, 50, 8);
  double t = 0;
  auto first = run_to_next(net, &t);
  EXPECT_DOUBLE_EQ(t, 10.0);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].tag, 8u);
  auto second = run_to_next(net, &t);
  EXPECT_DOUBLE_EQ(t, 15.0);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].tag, 7u);
}

TEST(FlowNetwork, ThreeLinkMaxMinExample) {
  // Arcs a0 = 10, a1 = 4, a2 = 6 B/s. Flows: f1 {a0,a1}, f2 {a1}, f3 {a0,a2}, f4 {a2}.
  // Fair shares: a0 10/2 = 5, a1 4/2 = 2, a2 6/2 = 3. a1 saturates first: f1 = f2 = 2.
  // Then a0 offers 8/1 = 8 to f3, a2 offers 6/2 = 3: a2 saturates: f3 = f4 = 3.
  // a0 ends with 5 of 10 B/s used: not every arc must be full under max-min fairness.
  FlowNetwork net({10.0, 4.0, 6.0});
  const ArcId p1[] = {0, 1}, p2[] = {1}, p3[] = {0, 2}, p4[] = {2};
  const FlowId f1 = net.start(p1, 1e9, 1), f2 = net.start(p2, 1e9, 2);
  const FlowId f3 = net.start(p3, 1e9, 3), f4 = net.start(p4, 1e9, 4);
  EXPECT_DOUBLE_EQ(net.rate(f1), 2.0);
  EXPECT_DOUBLE_EQ(net.rate(f2), 2.0);
  EXPECT_DOUBLE_EQ(net.rate(f3), 3.0);
  EXPECT_DOUBLE_EQ(net.rate(f4), 3.0);
}

TEST(FlowNetwork, ThreeLinkExampleReallocatesAfterAFinish) {
  // Same arcs; f2 carries only 20 B so it ends at 20/2 = 10 s. Then f1 is alone on a1 (4 B/s)
  // and shares a0 with f3 (3 B/s, held by a2): f1 gets min(4, 10 - 3) = 4 B/s.
  FlowNetwork net({10.0, 4.0, 6.0});
  const ArcId p1[] = {0, 1}, p2[] = {1}, p3[] = {0, 2}, p4[] = {2};
  const FlowId f1 = net.start(p1, 1e9, 1);
  net.start(p2, 20, 2);
  const FlowId f3 = net.start(p3, 1e9, 3);
  net.start(p4, 1e9, 4);
  double t = 0;
  auto done = run_to_next(net, &t);
  EXPECT_DOUBLE_EQ(t, 10.0);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].tag, 2u);
  EXPECT_DOUBLE_EQ(net.rate(f1), 4.0);
  EXPECT_DOUBLE_EQ(net.rate(f3), 3.0);
}

TEST(FlowNetwork, FlowsThatShareNoArcRunAtFullRate) {
  // A 4-node ring built with NetworkBuilder: arcs are sorted by (src, dst), so 0->1 is arc 0.
  NetworkBuilder b(4);
  for (VertexId v = 0; v < 4; ++v) b.add_arc(v, (v + 1) % 4, 25e9);
  const Network ring = std::move(b).build();
  FlowNetwork net(ring);
  std::vector<FlowId> ids;
  for (ArcId a = 0; a < 4; ++a) {
    const ArcId path[] = {a};
    ids.push_back(net.start(path, 1e9, a));
  }
  for (FlowId id : ids) EXPECT_DOUBLE_EQ(net.rate(id), 25e9);
  double t = 0;
  auto done = run_to_next(net, &t);
  EXPECT_DOUBLE_EQ(t, 1e9 / 25e9);
  EXPECT_EQ(done.size(), 4u);
}

TEST(FlowNetwork, EmptyFlowsFinishImmediately) {
  FlowNetwork net({1.0});
  net.start({}, 100, 5);
  const ArcId path[] = {0};
  net.start(path, 0, 6);
  double t = -1;
  auto done = run_to_next(net, &t);
  EXPECT_EQ(t, 0.0);
  EXPECT_EQ(done.size(), 2u);
}

TEST(FlowNetwork, LaterStartSharesFromItsStartTime) {
  // 10 B/s arc. Flow A (100 B) alone from 0 to 4 s moves 40 B. Flow B (30 B) starts at 4 s:
  // both at 5 B/s; B ends at 4 + 30/5 = 10 s, when A has 60 - 30 = 30 B left, alone at
  // 10 B/s: A ends at 13 s.
  FlowNetwork net({10.0});
  const ArcId path[] = {0};
  net.start(path, 100, 1);
  std::vector<FinishedFlow> done;
  net.advance_to(4.0, done);
  EXPECT_TRUE(done.empty());
  net.start(path, 30, 2);
  double t = 0;
  auto d1 = run_to_next(net, &t);
  EXPECT_DOUBLE_EQ(t, 10.0);
  EXPECT_EQ(d1.at(0).tag, 2u);
  auto d2 = run_to_next(net, &t);
  EXPECT_DOUBLE_EQ(t, 13.0);
  EXPECT_EQ(d2.at(0).tag, 1u);
}

TEST(FlowNetwork, WeightedFlowGetsThatManyShares) {
  // 12 B/s arc; a weight-2 flow (standing for two flows) and a weight-1 flow: 8 and 4 B/s.
  // A second arc of 5 B/s carries only the weight-2 flow and caps it: then 5 and 7 B/s.
  FlowNetwork net({12.0, 100.0});
  const ArcId shared[] = {0}, both[] = {0, 1};
  const FlowId a = net.start(both, 1e9, 1, 2.0);
  const FlowId b = net.start(shared, 1e9, 2);
  EXPECT_DOUBLE_EQ(net.rate(a), 8.0);
  EXPECT_DOUBLE_EQ(net.rate(b), 4.0);
  FlowNetwork capped({12.0, 5.0});
  const FlowId c = capped.start(both, 1e9, 1, 2.0);
  const FlowId d = capped.start(shared, 1e9, 2);
  EXPECT_DOUBLE_EQ(capped.rate(c), 5.0);
  EXPECT_DOUBLE_EQ(capped.rate(d), 7.0);
}

TEST(FlowNetwork, ZeroCapacityIsRejected) {
  EXPECT_ANY_THROW(FlowNetwork({1.0, 0.0}));
}

}  // namespace
}  // namespace toposweep::sim
