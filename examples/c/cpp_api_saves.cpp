// The C++ layer's test program, continued (see cpp_api.cpp): snapshots
// (`Engine::save`, `Engine::load`) and in-memory states (`ecs::State`,
// `Engine::save_state`, `Engine::restore_state`).

#include "cpp_api_checks.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace cpp_api {

namespace {

// An engine with Position and Velocity registered savable (after `extra`
// components, so ids differ between two such engines), a mover and a
// spawner (one entity per tick, through commands), built.
struct SavableWorld {
    ecs::Engine engine;
    ecs::Component<Position> position;
    ecs::Component<Velocity> velocity;

    SavableWorld(std::uint32_t threads, int extra) : engine(threads) {
        for (int i = 0; i < extra; ++i) {
            engine.component<Frozen>(("Extra" + std::to_string(i)).c_str(), ecs::savable);
        }
        position = engine.component<Position>("Position", ecs::savable);
        velocity = engine.component<Velocity>("Velocity", ecs::savable);
        auto p = position;
        auto v = velocity;
        engine.add_system(ecs::System("move").reads(v).writes(p).run([=](ecs::SystemContext& ctx) {
            ctx.each(
                [](ecs::Entity, Position& pos, const Velocity& vel) {
                    pos.x += vel.x;
                    pos.y += vel.y;
                },
                p, v);
        }));
        engine.add_system(ecs::System("spawn").commands().run([=](ecs::SystemContext& ctx) {
            ecs::Commands commands = ctx.commands();
            ecs::Entity e = commands.spawn();
            commands.insert(e, p, Position{float(ctx.tick().number), 0});
            commands.insert(e, v, Velocity{1, 0.5f});
        }));
        engine.build();
    }
    std::uint64_t checksum() const { return engine.checksum(position, velocity); }
};

// Every entity in `entities` with its Position, as bytes (for a bit-for-bit
// comparison); an entity that is not alive or has none gives no bytes.
std::vector<unsigned char> position_bytes(ecs::Engine& engine, ecs::Component<Position> position,
                                          const std::vector<ecs::Entity>& entities) {
    std::vector<unsigned char> out;
    for (ecs::Entity e : entities) {
        if (engine.is_alive(e) && engine.has(e, position)) {
            const Position& p = engine.get(e, position);
            const auto* bytes = reinterpret_cast<const unsigned char*>(&p);
            out.insert(out.end(), bytes, bytes + sizeof p);
        }
    }
    return out;
}

}  // namespace

void test_snapshot_round_trip(ecs_snapshot_format format) {
    SavableWorld world(2, 0);
    ecs::Engine& engine = world.engine;
    std::vector<ecs::Entity> entities;
    for (int i = 0; i < 50; ++i) {
        entities.push_back(engine.spawn(world.position.with({float(i) * 0.1f, -float(i)}),
                                        world.velocity.with({0.25f, float(i % 7)})));
    }
    engine.despawn(entities[3]);
    engine.set_parent(entities[5], entities[4]);
    engine.disable(entities[5]);  // the mover skips it
    engine.run(3);
    // 50 spawned, 1 despawned, 3 spawned by the spawner.
    EXPECT(engine.entity_count() == 52);
    const ecs::Entity last_spawned = engine.spawn();
    entities.push_back(last_spawned);

    const std::vector<std::uint8_t> bytes = engine.save(format);
    EXPECT(!bytes.empty());
    const std::uint64_t sum = world.checksum();
    const std::size_t count = engine.entity_count();
    const std::vector<unsigned char> values = position_bytes(engine, world.position, entities);
    EXPECT(count == 53);
    EXPECT(values.size() == 49 * sizeof(Position));
    // Where the saved engine goes on to: two ticks and a spawn.
    engine.run(2);
    const std::uint64_t sum_after = world.checksum();
    const std::size_t count_after = engine.entity_count();
    const ecs::Entity next_after = engine.spawn();

    // Change the world: despawn, spawn, overwrite, reparent, tick.
    engine.despawn(entities[0]);
    engine.despawn(last_spawned);
    const ecs::Entity fresh = engine.spawn(world.position.with({9, 9}));
    engine.get(entities[1], world.position) = Position{-1, -1};
    engine.remove(entities[2], world.velocity);
    engine.remove_parent(entities[5]);
    engine.enable(entities[5]);
    engine.run(4);
    EXPECT(engine.ticks() == 9);
    EXPECT(world.checksum() != sum);

    engine.load(format, bytes);
    EXPECT(engine.ticks() == 3);
    EXPECT(engine.entity_count() == count);
    EXPECT(world.checksum() == sum);
    const std::vector<unsigned char> loaded = position_bytes(engine, world.position, entities);
    EXPECT(loaded.size() == values.size());
    EXPECT(std::memcmp(loaded.data(), values.data(), values.size()) == 0);
    // Three ticks of (0.25, 0) from (0, 0), exact in float.
    EXPECT(engine.get(entities[0], world.position).x == 0.75f);
    EXPECT(engine.get(entities[0], world.position).y == 0.0f);
    EXPECT(engine.get(entities[1], world.position).y == 2.0f);
    // Disabled: the mover skipped it.
    EXPECT(engine.get(entities[5], world.position).x == float(5) * 0.1f);
    EXPECT(engine.has(entities[2], world.velocity));
    EXPECT(engine.is_alive(entities[0]) && engine.is_alive(last_spawned));
    EXPECT(!engine.is_alive(entities[3]) && !engine.is_alive(fresh));
    EXPECT(engine.parent(entities[5]) == entities[4]);
    EXPECT(engine.is_disabled(entities[5]));
    // Saved again at once: the same bytes.
    EXPECT(engine.save(format) == bytes);
    // It goes on as the saved engine did.
    engine.run(2);
    EXPECT(world.checksum() == sum_after);
    EXPECT(engine.entity_count() == count_after);
    EXPECT(engine.spawn() == next_after);

    // The bytes outlive their engine: loaded into another engine built the
    // same way (other ids), with the pointer-and-length overload.
    SavableWorld other(3, 2);
    EXPECT(other.position.id != world.position.id);
    other.engine.load(format, bytes.data(), bytes.size());
    EXPECT(other.checksum() == sum);
    EXPECT(other.engine.entity_count() == count);
    EXPECT(other.engine.ticks() == 3);
    const std::vector<unsigned char> other_values =
        position_bytes(other.engine, other.position, entities);
    EXPECT(other_values == values);
}

void test_snapshot_refusals() {
    // Not built yet: no systems' progress to save.
    {
        ecs::Engine engine;
        engine.component<Position>("Position", ecs::savable);
        EXPECT_ERROR(ECS_ERR_WRONG_STATE, engine.save(ECS_SNAPSHOT_POSTCARD));
    }

    SavableWorld world(1, 0);
    ecs::Engine& engine = world.engine;
    auto frozen = engine.component<Frozen>("Frozen");  // not savable
    const ecs::Entity e = engine.spawn(world.position.with({1.5f, 2.5f}));
    engine.tick();

    // A component that is not savable, with a value: refused, naming it.
    engine.insert(e, frozen, Frozen{});
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.save(ECS_SNAPSHOT_POSTCARD));
    ++checks;
    try {
        (void)engine.save(ECS_SNAPSHOT_JSON);
        fail(__FILE__, __LINE__, "save with a Frozen value did not throw");
    } catch (const ecs::Error& error) {
        EXPECT(std::string(error.what()).find("Frozen") != std::string::npos);
    }
    EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT, engine.save(42));
    // Without values it is no obstacle.
    engine.remove(e, frozen);
    const std::vector<std::uint8_t> good = engine.save(ECS_SNAPSHOT_JSON);
    EXPECT(good.size() > 2 && good.front() == '{');

    // Garbage, a cut snapshot, the other format, nothing: refused, the
    // engine unchanged and usable.
    engine.tick();
    const std::uint64_t sum = world.checksum();
    const std::size_t count = engine.entity_count();
    const std::vector<std::uint8_t> garbage{0x03, 0xff, 0x00, 0x42, 0x13, 0x37, 0x00};
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.load(ECS_SNAPSHOT_POSTCARD, garbage));
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.load(ECS_SNAPSHOT_JSON, garbage));
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.load(ECS_SNAPSHOT_JSON, good.data(), good.size() / 2));
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.load(ECS_SNAPSHOT_POSTCARD, good));
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.load(ECS_SNAPSHOT_POSTCARD, std::vector<std::uint8_t>{}));
    EXPECT_ERROR(ECS_ERR_NULL_POINTER, engine.load(ECS_SNAPSHOT_POSTCARD, nullptr, 8));
    EXPECT(world.checksum() == sum);
    EXPECT(engine.entity_count() == count);
    EXPECT(engine.ticks() == 2);
    EXPECT(engine.get(e, world.position).x == 1.5f);
    engine.tick();
    EXPECT(engine.ticks() == 3);
    EXPECT(engine.entity_count() == count + 1);
    // And the good snapshot still loads after the refusals.
    engine.load(ECS_SNAPSHOT_JSON, good);
    EXPECT(engine.ticks() == 1);
    EXPECT(engine.entity_count() == 2);
    EXPECT(engine.get(e, world.position).y == 2.5f);

    // A savable resource is saved and loaded with the world; one without
    // the tag makes both refuse.
    auto score = engine.resource<std::uint64_t>("score", 41, ecs::savable);
    const std::vector<std::uint8_t> with_score = engine.save(ECS_SNAPSHOT_POSTCARD);
    engine.set(score, std::uint64_t{7});
    engine.load(ECS_SNAPSHOT_POSTCARD, with_score);
    EXPECT(engine.get(score) == 41);
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.load(ECS_SNAPSHOT_JSON, good));  // no `score` there
    auto cache = engine.resource<std::uint32_t>("cache", 0);
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.save(ECS_SNAPSHOT_POSTCARD));
    EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.load(ECS_SNAPSHOT_POSTCARD, with_score));
    EXPECT(engine.get(cache) == 0 && engine.get(score) == 41);
}


// In-memory states: a world restored to a save runs the same ticks again,
// in this engine and in another built the same way; an empty state and an
// engine not built are refused.
void test_states() {
    SavableWorld world(2, 0);
    ecs::Engine& engine = world.engine;
    ecs::State state;
    EXPECT_ERROR(ECS_ERR_WRONG_STATE, state.ticks());
    EXPECT_ERROR(ECS_ERR_WRONG_STATE, engine.restore_state(state));
    engine.run(3);
    engine.save_state(state);
    EXPECT(state.ticks() == 3);
    const std::uint64_t at_save = world.checksum();
    const std::size_t count = engine.entity_count();
    engine.run(4);
    const std::uint64_t after = world.checksum();
    EXPECT(after != at_save);
    engine.restore_state(state);
    EXPECT(engine.ticks() == 3);
    EXPECT(world.checksum() == at_save);
    EXPECT(engine.entity_count() == count);
    engine.run(4);
    EXPECT(world.checksum() == after);

    // A moved state, into an engine built the same way on one thread.
    SavableWorld other(1, 0);
    ecs::State moved = std::move(state);
    other.engine.restore_state(moved);
    EXPECT(other.checksum() == at_save);
    other.engine.run(4);
    EXPECT(other.checksum() == after);

    ecs::Engine unbuilt;
    EXPECT_ERROR(ECS_ERR_WRONG_STATE, unbuilt.save_state(moved));
    EXPECT(moved.ticks() == 3);
}

}  // namespace cpp_api
