// The C++ layer's test program, continued (see cpp_api.cpp): change
// detection (`ecs::track_changes`, `ecs::Filter`, `SystemContext::each_where`,
// `SystemContext::removed`), a restored state that sees the same changes,
// and exclusive systems (`System::run_exclusive`, `ecs::World`).

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
            EXPECT(ctx.has(target, health));
            ctx.get(target, health).points -= 1;
            EXPECT(ctx.try_get(target, health) != nullptr);
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
            std::size_t rows = 0;
            ctx.each_chunk_where(
                ecs::Filter().changed(health),
                [&](std::size_t len, const ecs::Entity*, const Health*) { rows += len; }, health);
            EXPECT(rows == seen.changed.size());
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

namespace cpp_api {

void test_exclusive_systems() {
    for (std::uint32_t threads : {1u, 4u}) {
        ecs::Engine engine(threads);
        auto position = engine.component<Position>("Position");
        auto spawned = engine.resource<int>("Spawned", 0);
        std::vector<std::size_t> counts;
        engine.add_system(ecs::System("move").writes(position).run([=](ecs::SystemContext& ctx) {
            ctx.each([](ecs::Entity, Position& p) { p.x += 1; }, position);
        }));
        engine.add_system(
            ecs::System("director").after("move").run_exclusive([&](ecs::World& world, const ecs_tick& tick) {
                EXPECT(tick.number == counts.size());
                ecs::Entity e = world.spawn(position.with({0, 0}));
                EXPECT(world.get(e, position).x == 0);  // applied at once
                world.set(spawned, world.get(spawned) + 1);
                EXPECT(ecs_engine_tick(world.raw()) == ECS_ERR_WRONG_STATE);
            }));
        engine.add_system(ecs::System("count").reads(position).after("director").run(
            [&](ecs::SystemContext& ctx) {
                std::size_t n = 0;
                ctx.each([&](ecs::Entity, const Position&) { ++n; }, position);
                counts.push_back(n);
            }));
        engine.run(3);
        EXPECT(counts == (std::vector<std::size_t>{1, 2, 3}));
        EXPECT(engine.get(spawned) == 3);
        EXPECT(engine.entity_count() == 3);
    }
    ecs::Engine engine;
    EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT,
                 engine.add_system(ecs::System("both")
                                       .run([](ecs::SystemContext&) {})
                                       .run_exclusive([](ecs::World&, const ecs_tick&) {})));
}

}  // namespace cpp_api
