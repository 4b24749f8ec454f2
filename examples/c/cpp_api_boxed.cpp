// The C++ layer's tests, continued: components that are not trivially
// copyable (boxed: the engine keeps a pointer, the layer deletes the object
// when the engine drops the value), and optional terms of a walk. Every
// object made is counted, so a leak or a double delete fails a check here,
// not only under valgrind.

#include "cpp_api_checks.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace cpp_api;

namespace {

// A name whose copies are counted: `live` is how many exist.
struct Tracked {
    static int live;
    std::string text;
    explicit Tracked(std::string t) : text(std::move(t)) { ++live; }
    Tracked(const Tracked& other) : text(other.text) { ++live; }
    Tracked(Tracked&& other) noexcept : text(std::move(other.text)) { ++live; }
    Tracked& operator=(const Tracked&) = default;
    Tracked& operator=(Tracked&&) = default;
    ~Tracked() { --live; }
};
int Tracked::live = 0;

}  // namespace

void cpp_api::test_boxed_components() {
    {
        ecs::Engine engine(2, 0.5);
        auto name = engine.component<Tracked>("Name");
        auto inventory = engine.component<std::vector<int>>("Inventory");
        auto owned = engine.component<std::unique_ptr<int>>("Owned");
        auto position = engine.component<Position>("Position");

        // Between ticks: insert, read, write in place, replace, remove.
        const ecs::Entity a = engine.spawn(name.with(Tracked("alpha")), position.with({1, 2}));
        const ecs::Entity b = engine.spawn();
        engine.insert(b, name, Tracked("a name far too long for the small-string buffer"));
        engine.insert(b, inventory, {1, 2, 3});
        engine.insert(b, owned, std::make_unique<int>(7));
        EXPECT(Tracked::live == 2);
        EXPECT(engine.get(a, name).text == "alpha");
        // Found by name: a boxed type is stored as a pointer.
        EXPECT(engine.lookup<Tracked>("Name").id == name.id);
        EXPECT_ERROR(ECS_ERR_INVALID_ARGUMENT, engine.lookup<Position>("Name"));
        engine.get(b, inventory).push_back(4);
        EXPECT((engine.get(b, inventory) == std::vector<int>{1, 2, 3, 4}));
        EXPECT(*engine.get(b, owned) == 7);
        engine.insert(a, name, Tracked("beta"));  // the old one deleted
        EXPECT(Tracked::live == 2);
        EXPECT(engine.get(a, name).text == "beta");
        EXPECT(engine.try_get(a, inventory) == nullptr);
        engine.remove(a, name);
        EXPECT(Tracked::live == 1);
        EXPECT_ERROR(ECS_ERR_MISSING_COMPONENT, engine.get(a, name));
        // A refused insert deletes its box: nothing leaks.
        engine.despawn(a);
        EXPECT_ERROR(ECS_ERR_STALE_ENTITY, engine.insert(a, name, Tracked("late")));
        EXPECT(Tracked::live == 1);

        // A move-only value spawns through `with`; a spawn whose second
        // insert is refused (an id of another engine) leaves no entity.
        const std::size_t count = engine.entity_count();
        const ecs::Entity d = engine.spawn(owned.with(std::make_unique<int>(9)));
        EXPECT(*engine.get(d, owned) == 9);
        engine.despawn(d);
        {
            ecs::Engine other;
            auto stranger = other.component<Tracked>("Name");
            EXPECT_ERROR(ECS_ERR_UNKNOWN_COMPONENT,
                         engine.spawn(position.with({0, 0}), stranger.with(Tracked("x"))));
        }
        EXPECT(engine.entity_count() == count);
        EXPECT(Tracked::live == 1);

        // Optional terms, plain and boxed: every entity with a position is
        // visited, with nullptr where a term is missing; writes through the
        // pointers stay.
        std::vector<std::string> optional_seen;
        const ecs::Entity c = engine.spawn(position.with({5, 6}), name.with(Tracked("gamma")));
        engine.insert(b, position, {3, 4});
        engine.add_system(ecs::System("optional").writes(position).reads(name).reads(inventory).run(
            [&, position, name, inventory](ecs::SystemContext& ctx) {
                ctx.each_where(
                    ecs::Filter(),
                    [&](ecs::Entity, Position& p, const Tracked* n, std::vector<int>* items) {
                        p.x += 10;
                        optional_seen.push_back((n != nullptr ? n->text.substr(0, 5) : "-") + "/" +
                                                std::to_string(items != nullptr ? items->size() : 0));
                    },
                    position, ecs::optional(name), ecs::optional(inventory));
            }));

        // In systems: a walk over boxed values, try_get, and commands that
        // insert (one applied, one never: its entity is despawned first).
        std::vector<std::string> seen;
        engine.add_system(ecs::System("read names").reads(name).reads(inventory).run(
            [&, name, inventory](ecs::SystemContext& ctx) {
                ctx.each(
                    [&](ecs::Entity e, const Tracked& n) {
                        const std::vector<int>* items = ctx.try_get(e, inventory);
                        seen.push_back(n.text + ":" +
                                       std::to_string(items != nullptr ? items->size() : 0));
                    },
                    name);
            }));
        engine.add_system(ecs::System("name newcomers").after("read names").writes(name).commands().run(
            [name](ecs::SystemContext& ctx) {
                if (ctx.tick().number != 0) {
                    return;
                }
                ecs::Commands commands = ctx.commands();
                const ecs::Entity kept = commands.spawn();
                commands.insert(kept, name, Tracked("delta"));
                const ecs::Entity lost = commands.spawn();
                commands.despawn(lost);
                commands.insert(lost, name, Tracked("never applied"));
            }));
        engine.build();
        engine.run(2);
        // Tick 0 sees b and c; tick 1 also the newcomer "delta".
        EXPECT(seen.size() == 5);
        EXPECT(seen[0] == "a name far too long for the small-string buffer:4");
        EXPECT(std::count(seen.begin(), seen.end(), "delta:0") == 1);
        EXPECT(std::count(seen.begin(), seen.end(), "gamma:0") == 2);
        EXPECT(Tracked::live == 3);  // b's, c's and delta's: the lost one deleted
        std::sort(optional_seen.begin(), optional_seen.end());
        EXPECT((optional_seen == std::vector<std::string>{"a nam/4", "a nam/4", "gamma/0", "gamma/0"}));
        EXPECT(engine.get(b, position).x == 23 && engine.get(c, position).x == 25);

        // An engine holding values with a destructor is not saved in memory.
        ecs::State state;
        EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.save_state(state));
    }
    // Destroying the engine deleted every box.
    EXPECT(Tracked::live == 0);
}
