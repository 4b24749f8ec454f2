// The C++ layer's tests, continued: components that are not trivially
// copyable (boxed: the engine keeps a pointer, the layer deletes the object
// when the engine drops the value). Every object made is counted, so a
// leak or a double delete fails a check here, not only under valgrind.

#include "cpp_api_checks.hpp"

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
                commands.insert(kept, name, Tracked("gamma"));
                const ecs::Entity lost = commands.spawn();
                commands.despawn(lost);
                commands.insert(lost, name, Tracked("never applied"));
            }));
        engine.build();
        engine.run(2);
        EXPECT(seen.size() == 3);
        EXPECT(seen[0] == "a name far too long for the small-string buffer:4");
        EXPECT(seen[2] == "gamma:0" || seen[1] == "gamma:0");
        EXPECT(Tracked::live == 2);  // b's and gamma's: the lost one deleted

        // An engine holding values with a destructor is not saved in memory.
        ecs::State state;
        EXPECT_ERROR(ECS_ERR_SNAPSHOT, engine.save_state(state));
    }
    // Destroying the engine deleted every box.
    EXPECT(Tracked::live == 0);
}
