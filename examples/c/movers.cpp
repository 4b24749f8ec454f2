// The harness's `movers` scenario (harness/scenarios/movers.toml) rebuilt through the
// C API from C++17, through its C++ layer (ecs_runtime.hpp): the same world as
// movers.c and `cargo run --release -- --scenario movers --threads 4`, the
// same checksum.
//
//     target/capi-examples/movers_cpp [ticks [threads]]
//
// What a system throws comes back from `Engine::tick` on this thread (the
// layer catches it on the worker). Build with -ffp-contract=off (no fused
// multiply-add) so the floats round exactly like Rust's.

#include "ecs_runtime.hpp"
#include "example_args.hpp"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

namespace {

// harness/scenarios/movers.toml, [movers]
constexpr uint32_t kCount = 1000;
constexpr uint32_t kSpawnPerTick = 10;
constexpr float kSpeed = 20.0f;
constexpr float kMinX = 0.0f;
constexpr float kMaxX = 100.0f;

struct Position {
    float x, y;
};
struct Velocity {
    float x, y;
};


int run(uint64_t ticks, uint32_t threads) {
    ecs::Engine engine(threads, 1.0 / 60.0);
    const auto position = engine.component<Position>("Position");
    const auto velocity = engine.component<Velocity>("Velocity");

    for (uint32_t i = 0; i < kCount; ++i) {
        engine.spawn(position.with({static_cast<float>(i % 100), static_cast<float>(i / 100)}),
                     velocity.with({(static_cast<float>(i % 7) - 3.0f) * kSpeed,
                                    (static_cast<float>(i % 5) - 2.0f) * kSpeed}));
    }

    // Reads Velocity, writes Position, a chunk of rows at a time.
    engine.add_system(ecs::System("movement").reads(velocity).writes(position).run(
        [=](ecs::SystemContext& ctx) {
            const float dt = static_cast<float>(ctx.tick().step);
            ctx.each_chunk(
                [dt](size_t len, const ecs::Entity*, Position* p, const Velocity* v) {
                    for (size_t i = 0; i < len; ++i) {
                        p[i].x += v[i].x * dt;
                        p[i].y += v[i].y * dt;
                    }
                },
                position, velocity);
        }));

    // Reads Position; despawns the entities outside [kMinX, kMaxX] in the
    // view's order, then spawns kSpawnPerTick new ones.
    engine.add_system(ecs::System("spawner").reads(position).commands().run(
        [=](ecs::SystemContext& ctx) {
            ecs::Commands commands = ctx.commands();
            ctx.each(
                [&](ecs::Entity entity, const Position& p) {
                    if (p.x < kMinX || p.x > kMaxX) {
                        commands.despawn(entity);
                    }
                },
                position);
            const uint64_t t = ctx.tick().number;
            for (uint32_t k = 0; k < kSpawnPerTick; ++k) {
                const ecs::Entity e = commands.spawn();
                commands.insert(e, position,
                                Position{static_cast<float>(k % 100) + 0.5f,
                                         static_cast<float>(t % 50)});
                commands.insert(e, velocity,
                                Velocity{(static_cast<float>((t + k) % 7) - 3.0f) * kSpeed,
                                         (static_cast<float>((3 * t + k) % 5) - 2.0f) * kSpeed});
            }
        }));
    engine.build();
    engine.run(ticks);

    std::printf("scenario `movers` (C++): %" PRIu64 " ticks on %" PRIu32 " threads\n",
                engine.ticks(), threads);
    std::printf("checksum          0x%016" PRIx64 "\n",
                engine.checksum({position.id, velocity.id}));
    std::printf("entities alive    %zu\n", engine.entity_count());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc > 3) {
            throw std::invalid_argument("too many arguments");
        }
        const uint64_t ticks = argc > 1 ? example::parse_count(argv[1], "ticks", 0) : 100;
        const uint64_t threads =
            argc > 2 ? example::parse_count(argv[2], "threads", 1, ECS_THREADS_MAX) : 4;
        if (ecs_api_version() >> 16 != ECS_API_VERSION_MAJOR) {
            throw std::runtime_error("linked with an incompatible C API version");
        }
        return run(ticks, static_cast<uint32_t>(threads));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "movers_cpp: %s\nusage: %s [ticks [threads]]\n", e.what(), argv[0]);
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "movers_cpp: %s\n", e.what());
        return 1;
    }
}
