// Links ecs_runtime::ecs_runtime from C++ through the C++17 layer: moves
// one entity at 60 units a second for one simulated second and checks
// where it is. Prints `consumer_cpp: ok` and exits 0, or says what failed.
#include "ecs_runtime.hpp"

#include <cmath>
#include <cstdio>
#include <exception>

struct Position { float x, y; };
struct Velocity { float x, y; };

int main() {
    try {
        ecs::Engine engine(2, 1.0 / 60.0);
        auto position = engine.component<Position>("Position");
        auto velocity = engine.component<Velocity>("Velocity");
        ecs::Entity ship = engine.spawn(position.with({0, 0}), velocity.with({60, 0}));
        engine.add_system(ecs::System("movement").reads(velocity).writes(position).run(
            [=](ecs::SystemContext& ctx) {
                const float dt = static_cast<float>(ctx.tick().step);
                ctx.each([dt](ecs::Entity, Position& p, const Velocity& v) {
                    p.x += v.x * dt;
                    p.y += v.y * dt;
                }, position, velocity);
            }));
        engine.build();
        engine.run(60);
        const Position p = engine.get(ship, position);
        if (std::fabs(p.x - 60.0f) > 0.01f || p.y != 0.0f) {
            std::fprintf(stderr, "consumer_cpp: ship at (%f, %f), want (60, 0)\n", p.x, p.y);
            return 1;
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "consumer_cpp: %s\n", error.what());
        return 1;
    }
    std::printf("consumer_cpp: ok\n");
    return 0;
}
