// Some of what the C++ layer refuses at compile time (the refusals that
// keep boxed and pointer types out of byte copies): each case, chosen with
// -DREFUSAL=N, must fail to compile with its static_assert's message
// (`bash .ci/capi` compiles every case with -fsyntax-only and checks the
// message). With no REFUSAL defined, the file compiles: the cases' set-up
// is valid on its own.
#include "ecs_runtime.hpp"

#include <string>

namespace {

struct Position {
    float x, y;
};

[[maybe_unused]] void refusals(ecs::Engine& engine) {
    auto position = engine.component<Position>("Position");
    auto name = engine.component<std::string>("Name");
    (void)position;
    (void)name;
#if REFUSAL == 1
    // expect: leave it out of the checksum
    engine.checksum(position, name);
#elif REFUSAL == 2
    // expect: a savable component is saved as bytes: T must be trivially copyable
    engine.component<std::string>("Saved", ecs::savable);
#elif REFUSAL == 3
    // expect: a pointer means nothing when loaded
    engine.component<Position*>("Pointer", ecs::savable);
#elif REFUSAL == 4
    // expect: a boxed component (not trivially copyable) has none
    engine.add_system(ecs::System("chunks").writes(name).run([&](ecs::SystemContext& ctx) {
        ctx.each_chunk([](std::size_t, const ecs::Entity*, std::string*) {}, name);
    }));
#elif REFUSAL == 5
    // expect: a resource is copied by the engine as bytes
    engine.resource<std::string>("Text");
#endif
}

}  // namespace
