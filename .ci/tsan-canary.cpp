// ThreadSanitizer's canary for .ci/tsan: a system bumps a counter from the
// chunks of a parallel walk (ctx.par_each_chunk on 4 threads). Built
// plain, the counter is an ordinary `long` and TSan must report the race;
// built with -DATOMIC it is a relaxed atomic and TSan must stay silent. A
// TSan set-up that misses the first, or flags the second, is not working.

#include "ecs_runtime.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <thread>

namespace {

struct Position {
    float x, y;
};

#ifdef ATOMIC
std::atomic<long> rows{0};
void add(std::size_t n) { rows.fetch_add(static_cast<long>(n), std::memory_order_relaxed); }
long total() { return rows.load(); }
#else
long rows = 0;
void add(std::size_t n) { rows += static_cast<long>(n); }
long total() { return rows; }
#endif

}  // namespace

int main() {
    ecs::Engine engine(4, 1.0 / 60.0);
    const auto position = engine.component<Position>("Position");
    for (int i = 0; i < 64 * 1024; ++i) {
        engine.spawn(position.with({static_cast<float>(i), 0.0f}));
    }
    engine.add_system(ecs::System("count").writes(position).run([=](ecs::SystemContext& ctx) {
        ctx.par_each_chunk(
            [](std::size_t len, const ecs::Entity*, Position* p) {
                for (std::size_t i = 0; i < len; ++i) {
                    p[i].y += 1.0f;
                }
                // A pause, so that the other workers take pieces too even
                // on a busy machine (one thread alone would not race).
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                add(len);
            },
            position);
    }));
    engine.build();
    engine.run(10);
    std::printf("rows = %ld\n", total());
    return 0;
}
