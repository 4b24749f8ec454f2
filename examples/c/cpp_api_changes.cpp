// The C++ layer's test program, continued (see cpp_api.cpp): change
// detection (`ecs::track_changes`, `ecs::Filter`, `SystemContext::each_where`,
// `SystemContext::removed`), and a restored state that sees the same changes.

#include "cpp_api_checks.hpp"

#include <algorithm>
#include <vector>

namespace cpp_api {

namespace {

struct Health {
    int points;
};

// What the watching system saw in one run, each list sorted.
struct Seen {
    std::vector<ecs::Entity> added, changed, removed;
    bool operator==(const Seen& other) const {
        return added == other.added && changed == other.changed && removed == other.removed;
    }
};

std::vector<ecs::Entity> sorted(std::vector<ecs::Entity> list) {
    std::sort(list.begin(), list.end());
    return list;
}

}  // namespace

void test_change_detection() {
    ecs::Engine engine(2);
    auto health = engine.component<Health>("Health", ecs::track_changes);
    auto position = engine.component<Position>("Position");
    ecs::Entity target = ECS_ENTITY_NULL;
    std::vector<Seen> runs;
    bool refusals_checked = false;
    engine.add_system(ecs::System("damage").writes(health).run([&](ecs::SystemContext& ctx) {
        if (target != ECS_ENTITY_NULL) {
            ctx.get(target, health).points -= 1;
        }
    }));
    engine.add_system(
        ecs::System("watch").reads(health).reads(position).run([&](ecs::SystemContext& ctx) {
            Seen seen;
            ctx.each_where(
                ecs::Filter().added(health),
                [&](ecs::Entity e, const Health&) { seen.added.push_back(e); }, health);
            ctx.each_where(
                ecs::Filter().changed(health),
                [&](ecs::Entity e, const Health&) { seen.changed.push_back(e); }, health);
            EXPECT(ctx.removed(health, [&](ecs::Entity e) { seen.removed.push_back(e); }) == 0);
            seen.added = sorted(seen.added);
            seen.changed = sorted(seen.changed);
            runs.push_back(seen);
            if (!refusals_checked) {
                refusals_checked = true;
                // Position keeps no change ticks.
                EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT,
                             ctx.each_where(ecs::Filter().changed(position),
                                            [](ecs::Entity, const Health&) {}, health));
                EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT,
                             ctx.removed(position, [](ecs::Entity) {}));
            }
        }));
    engine.build();
    ecs::Entity a = engine.spawn(health.with({10}));
    ecs::Entity b = engine.spawn(health.with({10}));
    engine.tick();
    ecs::State state;
    engine.save_state(state);

    auto two_ticks = [&] {
        target = a;
        ecs::Entity c = engine.spawn(health.with({5}));
        engine.remove(b, health);
        engine.tick();
        target = ECS_ENTITY_NULL;
        engine.tick();
        return c;
    };
    const ecs::Entity c = two_ticks();
    const std::vector<Seen> want = {
        {sorted({a, b}), sorted({a, b}), {}},
        {{c}, sorted({a, c}), {b}},
        {{}, {}, {}},
    };
    EXPECT(runs == want);
    EXPECT(engine.get(a, health).points == 9);

    // Back to after the first tick: the same two ticks see the same.
    engine.restore_state(state);
    runs.clear();
    EXPECT(two_ticks() == c);
    EXPECT(runs == std::vector<Seen>(want.begin() + 1, want.end()));
}

}  // namespace cpp_api
