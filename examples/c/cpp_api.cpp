// The C++ layer (ecs_capi/include/ecs_runtime.hpp) as a test program: every
// wrapper against what the C API underneath must do. Stops at the first
// failed expectation (file, line, expression) with exit 1; on success prints
// the number of checks. Run by .ci/capi, under valgrind too.

#include "cpp_api_checks.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cpp_api {
std::atomic<unsigned long> checks{0};
}  // namespace cpp_api

using namespace cpp_api;

namespace {

void test_entities_and_components() {
    ecs::Engine engine;
    auto position = engine.component<Position>("Position");
    auto velocity = engine.component<Velocity>("Velocity");
    EXPECT(engine.lookup<Position>("Position").id == position.id);
    EXPECT_ERROR(ECS_ERR_DUPLICATE_NAME, engine.component<Position>("Position"));
    EXPECT_ERROR(ECS_ERR_UNKNOWN_COMPONENT, engine.lookup<Position>("Nothing"));
    // A type of another size or alignment is refused.
    EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT, engine.lookup<char>("Position"));
    EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT, engine.lookup<double>("Position"));
    // A plain pointer-sized component is no box; a C tag (size 0) is found
    // as an empty type.
    engine.component<std::uint64_t>("Id");
    EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT, engine.lookup<std::string>("Id"));
    EXPECT(engine.lookup<std::uint64_t>("Id").id != 0);
    struct Marker {};
    ecs_component_desc tag{};
    tag.struct_size = sizeof tag;
    tag.name = "CTag";
    tag.size = 0;
    tag.align = 1;
    ecs_component_id c_tag = 0;
    EXPECT(ecs_component_register(engine.raw(), &tag, &c_tag) == ECS_OK);
    EXPECT(engine.lookup<Marker>("CTag").id == c_tag);
    EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT, engine.lookup<char>("CTag"));

    ecs::Entity e = engine.spawn(position.with({1, 2}), velocity.with({3, 4}));
    EXPECT(engine.is_alive(e));
    EXPECT(engine.entity_count() == 1);
    EXPECT(engine.get(e, position).y == 2);
    engine.get(e, velocity).x = 5;
    EXPECT(engine.get(e, velocity).x == 5);
    EXPECT(engine.has(e, position));
    engine.remove(e, position);
    EXPECT(!engine.has(e, position));
    EXPECT(engine.try_get(e, position) == nullptr);
    EXPECT(engine.try_get(e, velocity) != nullptr);
    EXPECT_ERROR(ECS_ERR_MISSING_COMPONENT, engine.get(e, position));
    EXPECT_ERROR(ECS_ERR_MISSING_COMPONENT, engine.remove(e, position));

    engine.despawn(e);
    EXPECT(!engine.is_alive(e));
    EXPECT_ERROR(ECS_ERR_STALE_ENTITY, engine.get(e, velocity));
    EXPECT_ERROR(ECS_ERR_STALE_ENTITY, engine.try_get(e, velocity));
    EXPECT_ERROR(ECS_ERR_STALE_ENTITY, engine.despawn(e));
    EXPECT(!engine.is_alive(ecs::null_entity));
    EXPECT(engine.entities().empty());
    // In handle order: a slot reused (generation 2) sorts after the others.
    const ecs::Entity a = engine.spawn();
    const ecs::Entity b = engine.spawn();
    EXPECT((a >> 32) == 2 || (b >> 32) == 2);
    EXPECT((engine.entities() == std::vector<ecs::Entity>{std::min(a, b), std::max(a, b)}));

    // The message names the call and says what the library said.
    try {
        engine.get(e, velocity);
    } catch (const ecs::Error& error) {
        const std::string what = error.what();
        EXPECT(what.rfind("ecs_get failed: ECS_ERR_STALE_ENTITY: ", 0) == 0);
        EXPECT(what.size() > std::string("ecs_get failed: ECS_ERR_STALE_ENTITY: ").size());
    }
}

// 100 movers and a spawner on `threads` threads: the world's checksum.
std::uint64_t movers_checksum(std::uint32_t threads, std::size_t* alive) {
    ecs::Engine engine(threads, 0.5);
    auto position = engine.component<Position>("Position");
    auto velocity = engine.component<Velocity>("Velocity");
    auto frozen = engine.component<Frozen>("Frozen");
    for (int i = 0; i < 100; ++i) {
        ecs::Entity e = engine.spawn(position.with({float(i), 0}),
                                     velocity.with({1, float(i % 3)}));
        if (i % 10 == 0) {
            engine.insert(e, frozen, Frozen{});
        }
    }
    engine.add_system(ecs::System("movement").reads(velocity).reads(frozen).writes(position).run(
        [=](ecs::SystemContext& ctx) {
            const float dt = static_cast<float>(ctx.tick().step);
            ctx.each_filtered(
                [dt](ecs::Entity, Position& p, const Velocity& v) {
                    p.x += v.x * dt;
                    p.y += v.y * dt;
                },
                {}, {frozen.id}, position, velocity);
        }));
    engine.add_system(ecs::System("spawner").reads(position).commands().after("movement").run(
        [=](ecs::SystemContext& ctx) {
            ecs::Commands commands = ctx.commands();
            ctx.each(
                [&](ecs::Entity e, const Position& p) {
                    if (p.x > 60) {
                        commands.despawn(e);
                    }
                },
                position);
            ecs::Entity fresh = commands.spawn();
            commands.insert(fresh, position, Position{0, float(ctx.tick().number)});
            commands.insert(fresh, velocity, Velocity{2, 0});
        }));
    engine.build();
    engine.run(50);
    EXPECT(engine.ticks() == 50);
    *alive = engine.entity_count();
    return engine.checksum(position, velocity, frozen);
}

void test_systems_the_same_on_any_thread_count() {
    std::size_t alive_1 = 0, alive_4 = 0;
    const std::uint64_t one = movers_checksum(1, &alive_1);
    const std::uint64_t four = movers_checksum(4, &alive_4);
    EXPECT(one == four);
    EXPECT(alive_1 == alive_4);
    // 100 movers, 50 spawned, minus those past x = 60 (never the 10 frozen).
    EXPECT(alive_1 >= 60 && alive_1 < 150);
}

void test_chunks() {
    ecs::Engine engine(2);
    auto position = engine.component<Position>("Position");
    auto velocity = engine.component<Velocity>("Velocity");
    std::vector<ecs::Entity> spawned;
    for (int i = 0; i < 1000; ++i) {
        spawned.push_back(
            engine.spawn(position.with({0, 0}), velocity.with({float(i), 1})));
    }
    std::atomic<std::size_t> rows{0};
    engine.add_system(ecs::System("chunks").reads(velocity).writes(position).run(
        [&](ecs::SystemContext& ctx) {
            ctx.each_chunk(
                [&](std::size_t len, const ecs::Entity* entities, Position* p, Velocity* v) {
                    for (std::size_t i = 0; i < len; ++i) {
                        EXPECT(ctx.is_alive(entities[i]));
                        p[i].x += v[i].x;
                    }
                    rows += len;
                },
                position, velocity);
        }));
    engine.build();
    engine.tick();
    EXPECT(rows == 1000);
    for (int i = 0; i < 1000; ++i) {
        EXPECT(engine.get(spawned[i], position).x == float(i));
    }
    EXPECT_ERROR(ECS_ERR_WRONG_STATE, engine.add_system(ecs::System("late")));
}

void test_exceptions_come_back_on_the_ticking_thread() {
    ecs::Engine engine(2);
    auto position = engine.component<Position>("Position");
    for (int i = 0; i < 10; ++i) {
        engine.spawn(position.with({float(i), 0}));
    }
    std::atomic<int> visited{0};
    std::atomic<bool> throw_now{true};
    engine.add_system(ecs::System("thrower").writes(position).run([&](ecs::SystemContext& ctx) {
        ctx.each(
            [&](ecs::Entity, Position& p) {
                ++visited;
                if (throw_now && p.x >= 0) {
                    throw std::runtime_error("no position may be seen");
                }
                p.y += 1;
            },
            position);
    }));
    engine.build();
    ++checks;
    try {
        engine.tick();
        fail(__FILE__, __LINE__, "the tick did not rethrow");
    } catch (const std::runtime_error& e) {
        EXPECT(std::string(e.what()) == "no position may be seen");
    }
    // The walk stopped at the throw; the engine is usable.
    EXPECT(visited == 1);
    throw_now = false;
    engine.tick();
    EXPECT(visited == 11);
    EXPECT(engine.ticks() == 2);
}

void test_two_throws_in_one_tick() {
    ecs::Engine engine(2);
    auto a = engine.component<Position>("A");
    auto b = engine.component<Velocity>("B");
    std::atomic<int> b_runs{0};
    engine.add_system(ecs::System("sa").writes(a).run([](ecs::SystemContext& ctx) {
        if (ctx.tick().number == 1) {
            throw std::runtime_error("sa");
        }
    }));
    engine.add_system(ecs::System("sb").writes(b).run([&](ecs::SystemContext& ctx) {
        ++b_runs;
        if (ctx.tick().number == 1) {
            throw std::runtime_error("sb");
        }
    }));
    engine.build();
    engine.tick();
    ++checks;
    try {
        engine.tick();
        fail(__FILE__, __LINE__, "tick 1 did not rethrow");
    } catch (const std::runtime_error& e) {
        EXPECT(std::string(e.what()) == "sa");  // the first, in the order added
    }
    engine.tick();  // nothing left over from tick 1: no throw, both run
    EXPECT(b_runs == 3);
}

void test_system_errors() {
    ecs::Engine engine;
    auto position = engine.component<Position>("Position");
    engine.add_system(ecs::System("a").reads(position));
    EXPECT_ERROR(ECS_ERR_DUPLICATE_NAME, engine.add_system(ecs::System("a")));
    engine.add_system(ecs::System("b").before("nobody"));
    EXPECT_ERROR(ECS_ERR_SCHEDULE, engine.build());

    // An undeclared component inside a system: the C status as an
    // exception, rethrown by tick.
    ecs::Engine other;
    auto p = other.component<Position>("Position");
    auto v = other.component<Velocity>("Velocity");
    other.spawn(p.with({}), v.with({}));
    other.add_system(ecs::System("sneaky").reads(p).run([=](ecs::SystemContext& ctx) {
        ctx.each([](ecs::Entity, Velocity&) {}, v);
    }));
    other.build();
    EXPECT_ERROR(ECS_ERR_UNDECLARED, other.tick());
    EXPECT_ERROR(ECS_ERR_UNDECLARED, other.tick());  // every tick, not once
}

void test_hierarchy_and_disabled() {
    ecs::Engine engine;
    ecs::Entity root = engine.spawn();
    ecs::Entity a = engine.spawn();
    ecs::Entity b = engine.spawn();
    engine.set_parent(a, root);
    engine.set_parent(b, root);
    EXPECT(engine.parent(a) == root);
    EXPECT(engine.parent(root) == ecs::null_entity);
    EXPECT((engine.children(root) == std::vector<ecs::Entity>{a, b}));
    EXPECT(engine.remove_parent(b) == root);
    EXPECT(engine.children(root).size() == 1);
    EXPECT(engine.disable(a));
    EXPECT(!engine.disable(a));
    EXPECT(engine.is_disabled(a));
    EXPECT(engine.enable(a));
    ecs::Entity a1 = engine.spawn();
    engine.set_parent(a1, a);
    EXPECT(engine.disable_recursive(root) == 3);
    EXPECT(engine.is_disabled(a1));
    EXPECT(engine.enable_recursive(a) == 2);
    EXPECT(engine.is_disabled(root));
    EXPECT(engine.enable_recursive(root) == 1);
    EXPECT(engine.despawn_recursive(root) == 3);
    EXPECT(!engine.is_alive(a));
    EXPECT(engine.is_alive(b));
}

void test_subtree_commands() {
    ecs::Engine engine(2);
    ecs::Entity root = engine.spawn();
    ecs::Entity child = engine.spawn();
    engine.set_parent(child, root);
    int tick = 0;
    engine.add_system(ecs::System("toggle").commands().run([&](ecs::SystemContext& ctx) {
        ecs::Commands commands = ctx.commands();
        if (tick++ == 0) {
            commands.disable_recursive(root);
        } else {
            commands.enable_recursive(root);
        }
    }));
    engine.build();
    engine.tick();
    EXPECT(engine.is_disabled(root) && engine.is_disabled(child));
    engine.tick();
    EXPECT(!engine.is_disabled(root) && !engine.is_disabled(child));
}

void test_queue() {
    ecs::Queue<int> queue(4);
    EXPECT(!queue.try_pop().has_value());
    for (int i = 0; i < 4; ++i) {
        EXPECT(queue.try_push(i));
    }
    EXPECT(!queue.try_push(99));
    EXPECT(queue.size() == 4);
    EXPECT(queue.try_pop() == 0);
    EXPECT(queue.pop_timeout(0) == 1);

    // Four producers on other threads, through clones; nothing is lost.
    ecs::Queue<int> events;
    std::vector<std::thread> producers;
    for (int p = 0; p < 4; ++p) {
        producers.emplace_back([handle = events.clone(), p]() mutable {
            for (int i = 0; i < 1000; ++i) {
                handle.push(p * 1000 + i);
            }
        });
    }
    long long sum = 0;
    for (int n = 0; n < 4000; ++n) {
        std::optional<int> event = events.pop_timeout(10000);
        EXPECT(event.has_value());
        sum += *event;
    }
    for (std::thread& t : producers) {
        t.join();
    }
    EXPECT(sum == 3999LL * 4000 / 2);
    events.push(7);
    events.close();
    EXPECT_ERROR(ECS_ERR_QUEUE_CLOSED, events.push(8));
    EXPECT(events.try_pop() == 7);  // queued before the close: still delivered
    EXPECT_ERROR(ECS_ERR_QUEUE_CLOSED, events.try_pop());
}

void test_resources_conditions_and_startup() {
    for (std::uint32_t threads : {1u, 4u}) {
        ecs::Engine engine(threads);
        auto counter = engine.resource<std::uint64_t>("counter");
        auto paused = engine.resource<std::uint32_t>("paused", 0);
        EXPECT(engine.get(counter) == 0);
        std::vector<std::uint64_t> seen;
        int startups = 0;
        engine.add_system(ecs::System("setup").writes(counter).startup().run(
            [&](ecs::SystemContext& ctx) {
                ++startups;
                ctx.write(counter) += 100;
            }));
        engine.add_system(ecs::System("writer")
                              .writes(counter)
                              .reads(paused)
                              .run_if([&](const ecs::SystemContext& ctx) {
                                  return ctx.read(paused) == 0;
                              })
                              .run([&](ecs::SystemContext& ctx) { ctx.write(counter) += 1; }));
        engine.add_system(ecs::System("reader").reads(counter).run(
            [&](ecs::SystemContext& ctx) { seen.push_back(ctx.read(counter)); }));
        engine.run(3);
        EXPECT(startups == 1);
        EXPECT((seen == std::vector<std::uint64_t>{101, 102, 103}));
        EXPECT(engine.get(counter) == 103);
        engine.set(paused, std::uint32_t{1});
        engine.tick();  // the writer is skipped
        EXPECT(engine.get(counter) == 103);
        EXPECT(seen.size() == 4 && seen.back() == 103);
        EXPECT(startups == 1);
    }
    // Undeclared: a read-only resource written throws after the tick.
    ecs::Engine engine(2);
    auto flag = engine.resource<std::uint32_t>("flag", 7);
    engine.add_system(ecs::System("sneaky").reads(flag).run(
        [&](ecs::SystemContext& ctx) { ctx.write(flag) = 1; }));
    EXPECT_ERROR(ECS_ERR_UNDECLARED, engine.tick());
    EXPECT(engine.get(flag) == 7);
    EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT, engine.resource<std::uint32_t>("", 0));
    EXPECT_ERROR(ECS_ERR_DUPLICATE_NAME, engine.resource<std::uint32_t>("flag", 0));
}

struct Hit {
    std::uint32_t target;
    float damage;
};

void test_events() {
    std::vector<std::vector<std::uint32_t>> runs[2];
    for (std::uint32_t threads : {1u, 4u}) {
        ecs::Engine engine(threads);
        auto hits = engine.event<Hit>("hit");
        std::uint32_t tick = 0;
        auto& seen = runs[threads == 1 ? 0 : 1];
        // Added first, still runs after the senders.
        engine.add_system(ecs::System("score").reads(hits).run([&](ecs::SystemContext& ctx) {
            std::vector<std::uint32_t> targets;
            ecs_events_read counts = ctx.read(hits, [&](const Hit& hit) { targets.push_back(hit.target); });
            EXPECT(counts.read == targets.size() && counts.missed == 0);
            seen.push_back(targets);
        }));
        engine.add_system(ecs::System("left").sends(hits).run([&](ecs::SystemContext& ctx) {
            ctx.send(hits, Hit{tick * 10 + 1, 1.0f});
            ctx.send(hits, Hit{tick * 10 + 2, 1.0f});
        }));
        engine.add_system(ecs::System("right").sends(hits).run(
            [&](ecs::SystemContext& ctx) { ctx.send(hits, Hit{tick * 10 + 5, 1.0f}); }));
        engine.send(hits, Hit{7, 1.0f});
        for (tick = 0; tick < 3; ++tick) {
            engine.tick();
        }
        EXPECT(seen.size() == 3);
        EXPECT((seen[0] == std::vector<std::uint32_t>{7, 1, 2, 5}));
        EXPECT((seen[2] == std::vector<std::uint32_t>{21, 22, 25}));
        ecs_event_stats stats = engine.stats(hits);
        EXPECT(stats.sent == 10 && stats.missed == 0);
    }
    EXPECT(runs[0] == runs[1]);

    // A throw inside the read callback comes back after the tick; the
    // undeclared send throws ECS_ERR_UNDECLARED; the engine goes on.
    ecs::Engine engine(2);
    auto hits = engine.event<Hit>("hit");
    engine.add_system(ecs::System("picky").reads(hits).run([&](ecs::SystemContext& ctx) {
        ctx.read(hits, [](const Hit&) { throw std::runtime_error("bad hit"); });
    }));
    engine.send(hits, Hit{1, 1.0f});
    ++checks;
    try {
        engine.tick();
        fail(__FILE__, __LINE__, "the read callback's throw did not come back");
    } catch (const std::runtime_error& e) {
        EXPECT(std::string(e.what()) == "bad hit");
    }
    engine.tick();
    ecs::Engine other(1);
    auto foreign = other.event<Hit>("hit");
    EXPECT_ERROR(ECS_ERR_UNKNOWN_EVENT, engine.send(foreign, Hit{1, 1.0f}));
    EXPECT_ERROR(ECS_ERR_DUPLICATE_NAME, engine.event<Hit>("hit"));
    ecs::Engine sneaky(1);
    auto channel = sneaky.event<Hit>("hit");
    sneaky.add_system(ecs::System("sneaky").run(
        [&](ecs::SystemContext& ctx) { ctx.send(channel, Hit{1, 1.0f}); }));
    EXPECT_ERROR(ECS_ERR_UNDECLARED, sneaky.tick());
    EXPECT(sneaky.stats(channel).sent == 0);
}

void test_sets() {
    ecs::Engine engine(4);
    std::vector<std::string> order;
    std::mutex lock;
    bool open = true;
    int asked = 0;
    auto record = [&](const char* name) {
        return [&, name](ecs::SystemContext&) {
            std::lock_guard<std::mutex> guard(lock);
            order.push_back(name);
        };
    };
    engine.add_system(ecs::System("a").in_set("physics").run(record("a")));
    engine.add_system(ecs::System("b").in_set("physics").run(record("b")));
    engine.add_system(ecs::System("input").run(record("input")));
    engine.configure(ecs::Set("physics").after("input").run_if([&](const ecs::SystemContext&) {
        ++asked;
        return open;
    }));
    engine.tick();
    EXPECT(order.size() == 3 && order[0] == "input");
    EXPECT(asked == 1);
    open = false;
    engine.tick();
    EXPECT(order.size() == 4 && order[3] == "input" && asked == 2);
    EXPECT_ERROR(ECS_ERR_WRONG_STATE, engine.configure(ecs::Set("late")));

    // A throwing set condition skips the set and comes back after the tick.
    ecs::Engine throwing(2);
    throwing.add_system(ecs::System("member").in_set("s").run(record("member")));
    throwing.configure(ecs::Set("s").run_if([](const ecs::SystemContext&) -> bool {
        throw std::runtime_error("no verdict");
    }));
    ++checks;
    try {
        throwing.tick();
        fail(__FILE__, __LINE__, "the set condition's throw did not come back");
    } catch (const std::runtime_error& e) {
        EXPECT(std::string(e.what()) == "no verdict");
    }
    EXPECT(std::count(order.begin(), order.end(), "member") == 0);
    EXPECT_ERROR(ECS_ERR_SCHEDULE, engine.configure(ecs::Set("loop").before("loop")));
}

void test_par_each_chunk() {
    std::uint64_t sums[2] = {0, 0};
    for (std::uint32_t threads : {1u, 4u}) {
        ecs::Engine engine(threads);
        auto position = engine.component<Position>("Position");
        auto velocity = engine.component<Velocity>("Velocity");
        const std::size_t n = 2 * ECS_PAR_CHUNK_ROWS + 5;
        for (std::size_t i = 0; i < n; ++i) {
            engine.spawn(position.with({static_cast<float>(i), 0.0f}), velocity.with({1.0f, 2.0f}));
        }
        std::atomic<std::size_t> rows{0};
        engine.add_system(ecs::System("move").reads(velocity).writes(position).run(
            [&](ecs::SystemContext& ctx) {
                ctx.par_each_chunk(
                    [&](std::size_t len, const ecs::Entity*, Position* p, const Velocity* v) {
                        for (std::size_t i = 0; i < len; ++i) {
                            p[i].x += v[i].x;
                            p[i].y += v[i].y;
                        }
                        rows += len;
                    },
                    position, velocity);
            }));
        engine.run(2);
        EXPECT(rows == 2 * n);
        sums[threads == 1 ? 0 : 1] = engine.checksum({position.id, velocity.id});
    }
    EXPECT(sums[0] == sums[1]);

    // A throw inside stops the walk and comes back after the tick.
    ecs::Engine engine(2);
    auto position = engine.component<Position>("Position");
    engine.spawn(position.with({1.0f, 1.0f}));
    engine.add_system(ecs::System("bad").writes(position).run([&](ecs::SystemContext& ctx) {
        ctx.par_each_chunk([](std::size_t, const ecs::Entity*, Position*) { throw std::runtime_error("piece"); },
                           position);
    }));
    ++checks;
    try {
        engine.tick();
        fail(__FILE__, __LINE__, "the piece's throw did not come back");
    } catch (const std::runtime_error& e) {
        EXPECT(std::string(e.what()) == "piece");
    }
}

void test_fail() {
    ecs::Engine engine(2);
    const std::size_t before = engine.entity_count();
    engine.add_system(ecs::System("quitter").commands().run([&](ecs::SystemContext& ctx) {
        (void)ctx.commands().spawn();
        ctx.fail("gave up");
    }));
    ++checks;
    try {
        engine.tick();
        fail(__FILE__, __LINE__, "a failed system's tick did not throw");
    } catch (const ecs::Error& e) {
        EXPECT(e.status() == ECS_ERR_SYSTEM_FAILED);
        EXPECT(std::string(e.what()).find("gave up") != std::string::npos);
    }
    EXPECT(engine.entity_count() == before);  // its spawn was dropped
}

void test_command_report() {
    ecs::Engine engine(2);
    const ecs::Entity gone = engine.spawn();
    engine.despawn(gone);
    engine.add_system(ecs::System("spawner").commands().run([&](ecs::SystemContext& ctx) {
        ecs::Commands commands = ctx.commands();
        (void)commands.spawn();
        commands.despawn(gone);  // skipped: already gone
    }));
    EXPECT(engine.command_report().commands == 0);
    engine.tick();
    const ecs_command_report tick = engine.command_report();
    EXPECT(tick.commands == 2);
    EXPECT(tick.applied[ECS_COMMAND_SPAWN] == 1);
    EXPECT(tick.skipped[ECS_COMMAND_DESPAWN] == 1);
    EXPECT(tick.has_skip && tick.first_skip_entity == gone);
    EXPECT(engine.command_report("spawner").skipped[ECS_COMMAND_DESPAWN] == 1);
    EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT, engine.command_report("nobody"));
}

void test_moves() {
    ecs::Engine first;
    auto position = first.component<Position>("Position");
    ecs::Entity e = first.spawn(position.with({1, 1}));
    int runs = 0;
    first.add_system(ecs::System("count").run([&](ecs::SystemContext&) { ++runs; }));
    ecs::Engine second = std::move(first);
    second.build();
    second.tick();
    EXPECT(runs == 1);
    EXPECT(second.get(e, position).x == 1);
    ecs::Engine third;
    third = std::move(second);  // the old `third` is destroyed with `second`
    third.tick();
    EXPECT(runs == 2);
}

}  // namespace

int main() {
    if (ecs_api_version() >> 16 != ECS_API_VERSION_MAJOR) {
        std::fprintf(stderr, "cpp_api: linked with an incompatible C API version\n");
        return 1;
    }
    try {
        test_entities_and_components();
        test_systems_the_same_on_any_thread_count();
        test_exceptions_come_back_on_the_ticking_thread();
        test_two_throws_in_one_tick();
        test_system_errors();
        test_hierarchy_and_disabled();
        test_subtree_commands();
        test_queue();
        test_moves();
        test_resources_conditions_and_startup();
        test_events();
        test_command_report();
        test_sets();
        test_par_each_chunk();
        test_fail();
        test_chunks();
        test_snapshot_round_trip(ECS_SNAPSHOT_POSTCARD);
        test_snapshot_round_trip(ECS_SNAPSHOT_JSON);
        test_snapshot_refusals();
        test_states();
        test_change_detection();
        test_exclusive_systems();
        test_boxed_components();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cpp_api: FAILED: unexpected exception: %s\n", e.what());
        return 1;
    }
    std::printf("cpp_api: all %lu checks passed\n", checks.load());
    return 0;
}
