// The harness's shoot'em up (harness/src/shmup.rs) rebuilt in C++17 on the
// C++ layer (ecs_runtime.hpp): the fourteen systems, the players' input as
// events, the spawn queue and the doomed list as resources, views with a
// `without` filter and optional terms, parallel chunk walks and command
// buffers. For the same
// scenario, seed, tick count and input script it ends in the same world as
//
//     cargo run --release -- --scenario harness/scenarios/small.toml --threads 2
//
// bit for bit (the same checksum, entities, scores and lives), on any
// thread count.
//
//     target/capi-examples/shmup_cpp [small|shmup [ticks [threads]]]
//
// `small` is harness/scenarios/small.toml (the default here: 300 ticks);
// `shmup` is the harness's default scenario (3,600 ticks, about 4,400
// enemies at a time). The input is the harness's built-in script. Build
// with -ffp-contract=off (no fused multiply-add), so the floats round like
// Rust's. Collision tests every enemy-side body against every player-side
// body (the harness sorts the few into a grid first: the same contacts).

#include "ecs_runtime.hpp"
#include "example_args.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// ---- the scenario ------------------------------------------------------------

// The fields of a scenario file's [shmup] tables (harness/scenarios/*.toml).
struct Rules {
    const char* name;
    uint64_t ticks;
    double tick_rate;
    // [shmup.arena]
    float width, height, margin;
    // [shmup.players]
    uint8_t players;
    float speed;
    int32_t health;
    uint8_t lives;
    float radius;
    int32_t contact_damage;
    float shield, fire_interval, missile_speed;
    int32_t missile_damage;
    // [shmup.enemies]
    struct Enemies {
        uint32_t per_wave;
        float first_wave, wave_interval, spawn_spacing;
        uint32_t max_waves;
        float band_low, band_high, speed_min, speed_max, sine_share;
        float amplitude_min, amplitude_max, frequency_min, frequency_max;
        int32_t health;
        float radius;
        int32_t contact_damage;
        uint32_t bounty;
        float fire_interval, missile_speed;
        int32_t missile_damage;
    } enemies;
};

constexpr uint64_t kSeed = 1;  // both files' seed

// harness/scenarios/shmup.toml; `small` differs in the lines marked.
Rules shmup_rules() {
    Rules r{};
    r.name = "shmup";
    r.ticks = 3600;
    r.tick_rate = 60.0;
    r.width = 640.0f, r.height = 360.0f, r.margin = 48.0f;
    r.players = 2, r.speed = 180.0f, r.health = 20, r.lives = 5, r.radius = 10.0f;
    r.contact_damage = 5, r.shield = 2.0f, r.fire_interval = 0.12f;
    r.missile_speed = 600.0f, r.missile_damage = 1;
    Rules::Enemies& e = r.enemies;
    e.per_wave = 3000, e.first_wave = 1.0f, e.wave_interval = 2.5f, e.spawn_spacing = 0.01f;
    e.max_waves = 0, e.band_low = 0.05f, e.band_high = 0.95f;
    e.speed_min = 80.0f, e.speed_max = 200.0f, e.sine_share = 0.5f;
    e.amplitude_min = 20.0f, e.amplitude_max = 90.0f;
    e.frequency_min = 0.2f, e.frequency_max = 1.0f;
    e.health = 2, e.radius = 9.0f, e.contact_damage = 1, e.bounty = 100;
    e.fire_interval = 10.0f, e.missile_speed = 220.0f, e.missile_damage = 1;
    return r;
}

Rules small_rules() {
    Rules r = shmup_rules();
    r.name = "small";
    r.ticks = 300;                  // marked
    r.health = 2, r.lives = 3;      // marked
    r.enemies.per_wave = 20;        // marked
    r.enemies.first_wave = 0.2f;    // marked
    r.enemies.wave_interval = 1.0f; // marked
    r.enemies.fire_interval = 1.0f; // marked
    return r;
}

// ---- random draws: the runtime's `Random` (scheduler/src/param/random.rs) ------

// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014; constants of Vigna's
// splitmix64.c), keyed as the Rust `Random` keys its streams.
constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct Stream {
    uint64_t state;
    uint64_t next() {
        state += kGamma;
        return mix(state);
    }
    // A value in [0, n): the high 64 bits of next() * n.
    uint64_t below(uint64_t n) {
        const uint64_t x = next();
        const uint64_t x_lo = x & 0xFFFFFFFFu, x_hi = x >> 32;
        const uint64_t n_lo = n & 0xFFFFFFFFu, n_hi = n >> 32;
        const uint64_t lo_lo = x_lo * n_lo, hi_lo = x_hi * n_lo, lo_hi = x_lo * n_hi;
        const uint64_t middle = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFu) + lo_hi;
        return x_hi * n_hi + (hi_lo >> 32) + (middle >> 32);
    }
    // A float in [0, 1) from the top 24 bits (harness/src/draw.rs).
    float unit() { return static_cast<float>(next() >> 40) / static_cast<float>(1u << 24); }
    float range(float low, float high) { return low + (high - low) * unit(); }
};

struct Random {
    uint64_t key;
    Random(uint64_t seed, const char* name, uint64_t tick) {
        uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a of the name
        for (const char* c = name; *c != '\0'; ++c) {
            h = (h ^ static_cast<unsigned char>(*c)) * 0x100000001B3ull;
        }
        key = mix(mix(mix(seed) ^ h) ^ tick);
    }
    Stream stream(uint64_t n) const { return Stream{mix(key ^ mix(n + kGamma))}; }
};

constexpr float kTau = 6.28318530717958647692f;
constexpr float kFrac1Sqrt2 = 0.70710678118654752440f;
constexpr float kMissileRadius = 3.0f;

// ---- components (harness/src/components.rs) ----------------------------------

struct Position {
    float x, y;
};
struct Velocity {
    float x, y;
};
struct Player {
    uint8_t index;
};
struct Controls {
    int8_t dx, dy;
    bool fire;
};
struct Weapon {
    float cooldown;
};
struct EnemyGun {
    float cooldown;
};
struct Enemy {
    uint32_t wave;
};
struct SineWave {
    float base_y, amplitude, frequency, phase;
    uint64_t start_tick;
};
struct Missile {};
// Player `player`'s side (side 1) or the enemies' (side 2).
struct Faction {
    uint8_t side, player;
    bool is_enemy() const { return side == 2; }
};
constexpr Faction enemy_side() { return Faction{2, 0}; }
struct Collider {
    float radius;
};
struct Health {
    int32_t hp;
};
struct Damage {
    int32_t amount;
};
// A player number, or none.
struct OptionU8 {
    bool some;
    uint8_t value;
};
struct Hits {
    int32_t damage;
    OptionU8 by, killed_by;
};
struct Shield {
    float seconds;
};
struct Lives {
    uint8_t left;
};
struct Score {
    uint32_t points;
};
struct Bounty {
    uint32_t points;
};

struct Types {
    ecs::Component<Position> position;
    ecs::Component<Velocity> velocity;
    ecs::Component<Player> player;
    ecs::Component<Controls> controls;
    ecs::Component<Weapon> weapon;
    ecs::Component<EnemyGun> enemy_gun;
    ecs::Component<Enemy> enemy;
    ecs::Component<SineWave> sine;
    ecs::Component<Missile> missile;
    ecs::Component<Faction> faction;
    ecs::Component<Collider> collider;
    ecs::Component<Health> health;
    ecs::Component<Damage> damage;
    ecs::Component<Hits> hits;
    ecs::Component<Shield> shield;
    ecs::Component<Lives> lives;
    ecs::Component<Score> score;
    ecs::Component<Bounty> bounty;
};

Types register_types(ecs::Engine& engine) {
    Types t;
    t.position = engine.component<Position>("Position");
    t.velocity = engine.component<Velocity>("Velocity");
    t.player = engine.component<Player>("Player");
    t.controls = engine.component<Controls>("Controls");
    t.weapon = engine.component<Weapon>("Weapon");
    t.enemy_gun = engine.component<EnemyGun>("EnemyGun");
    t.enemy = engine.component<Enemy>("Enemy");
    t.sine = engine.component<SineWave>("SineWave");
    t.missile = engine.component<Missile>("Missile");
    t.faction = engine.component<Faction>("Faction");
    t.collider = engine.component<Collider>("Collider");
    t.health = engine.component<Health>("Health");
    t.damage = engine.component<Damage>("Damage");
    t.hits = engine.component<Hits>("Hits");
    t.shield = engine.component<Shield>("Shield");
    t.lives = engine.component<Lives>("Lives");
    t.score = engine.component<Score>("Score");
    t.bounty = engine.component<Bounty>("Bounty");
    return t;
}

// ---- input, the spawn queue, the doomed list ---------------------------------

struct InputEvent {
    uint64_t tick;
    uint64_t sequence;  // rank in the script
    uint8_t player;
    uint8_t kind;       // kMove or kFire
    int8_t dx, dy;      // kMove
    bool fire;          // kFire
};
constexpr uint8_t kMove = 0, kFire = 1;

// The harness's built-in script (harness/src/input.rs, feed_builtin): each
// player turns every 40 ticks, and fires except half a second in five.
void script_of_tick(uint64_t tick, uint8_t players, uint64_t& sequence,
                    std::vector<InputEvent>& out) {
    for (uint8_t player = 0; player < players; ++player) {
        const uint64_t p = player;
        if ((tick + 13 * p) % 40 == 0) {
            Stream rng = Random(kSeed, "harness: input script", tick).stream(p);
            InputEvent e{tick, ++sequence, player, kMove, 0, 0, false};
            e.dx = static_cast<int8_t>(static_cast<int>(rng.below(3)) - 1);
            e.dy = static_cast<int8_t>(static_cast<int>(rng.below(3)) - 1);
            out.push_back(e);
        }
        const uint64_t t = tick % 300;
        if (t == 5 * p || t == 270 + 5 * p) {
            out.push_back(InputEvent{tick, ++sequence, player, kFire, 0, 0, t == 5 * p});
        }
    }
}

struct Planned {
    uint64_t tick;
    uint32_t wave;
    float y, speed;
    bool sine;
    float amplitude, frequency, phase;
    float first_shot;
};

// The enemies planned and not yet spawned, in tick order.
struct SpawnQueue {
    std::vector<Planned> planned;
    std::size_t next = 0;
    uint32_t waves = 0;
};

// The resources hold pointers to the game's own containers: their
// declared reads and writes order the systems that use them.
struct QueueRef {
    SpawnQueue* queue;
};
struct DoomedRef {
    std::vector<ecs::Entity>* doomed;
};

// The tick wave `k` starts on: first_wave + k * wave_interval seconds,
// rounded to the nearest tick.
uint64_t wave_start(const Rules::Enemies& e, double step, uint32_t k) {
    const double seconds = static_cast<double>(e.first_wave) +
                           static_cast<double>(k) * static_cast<double>(e.wave_interval);
    return static_cast<uint64_t>(std::round(seconds / step));
}

int32_t saturating_add(int32_t a, int32_t b) {
    const int64_t sum = static_cast<int64_t>(a) + b;
    return static_cast<int32_t>(std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX));
}
int32_t saturating_sub(int32_t a, int32_t b) {
    const int64_t difference = static_cast<int64_t>(a) - b;
    return static_cast<int32_t>(std::clamp<int64_t>(difference, INT32_MIN, INT32_MAX));
}
uint32_t saturating_add(uint32_t a, uint32_t b) {
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}
float clamp(float x, float low, float high) { return x < low ? low : (x > high ? high : x); }
bool ready(float cooldown, float dt) { return cooldown <= 0.5f * dt; }

// ---- the systems' longer bodies ------------------------------------------------

void spawn_missile(ecs::Commands& commands, const Types& t, Position at, Velocity velocity,
                   Faction faction, int32_t damage) {
    const ecs::Entity m = commands.spawn();
    commands.insert(m, t.position, at);
    commands.insert(m, t.velocity, velocity);
    commands.insert(m, t.missile, Missile{});
    commands.insert(m, t.faction, faction);
    commands.insert(m, t.collider, Collider{kMissileRadius});
    commands.insert(m, t.health, Health{1});
    commands.insert(m, t.damage, Damage{damage});
    commands.insert(m, t.hits, Hits{});
}

// Each enemy gun whose cooldown ran out fires at the nearest ship still in
// the game (ties to the lower player number), if the enemy is on screen.
void enemy_fire(ecs::SystemContext& ctx, const Rules& rules, const Types& t) {
    struct Target {
        float x, y;
        uint8_t player;
    };
    std::vector<Target> ships;
    ctx.each([&](ecs::Entity, const Position& p, const Player& player,
                 const Collider&) { ships.push_back(Target{p.x, p.y, player.index}); },
             t.position, t.player, t.collider);
    const float dt = static_cast<float>(ctx.tick().step);
    const Rules::Enemies& e = rules.enemies;
    ecs::Commands commands = ctx.commands();
    ctx.each(
        [&](ecs::Entity, const Position& p, EnemyGun& gun) {
            const bool fire = ready(gun.cooldown, dt);
            gun.cooldown -= dt;
            if (!fire) {
                return;
            }
            gun.cooldown += e.fire_interval;
            const bool on_screen =
                0.0f <= p.x && p.x <= rules.width && 0.0f <= p.y && p.y <= rules.height;
            const Target* nearest = nullptr;
            float best = 0.0f;
            for (const Target& s : ships) {
                const float d2 = (s.x - p.x) * (s.x - p.x) + (s.y - p.y) * (s.y - p.y);
                if (nearest == nullptr || d2 < best ||
                    (d2 == best && s.player < nearest->player)) {
                    nearest = &s, best = d2;
                }
            }
            if (nearest == nullptr || !on_screen) {
                return;
            }
            const float distance = std::max(std::sqrt(best), 1.0f);
            const Velocity v{(nearest->x - p.x) / distance * e.missile_speed,
                             (nearest->y - p.y) / distance * e.missile_speed};
            spawn_missile(commands, t, p, v, enemy_side(), e.missile_damage);
        },
        t.position, t.enemy_gun);
}

// The wave director: enemy i of wave k drawn from stream (k << 32 | i) of
// the tick's `Random` for the system named "waves".
void plan_waves(SpawnQueue& q, const ecs_tick& tick, const Rules& rules) {
    const Rules::Enemies& e = rules.enemies;
    const auto ticks = [&](double seconds) {
        return static_cast<uint64_t>(std::round(seconds / tick.step));
    };
    for (;;) {
        const uint32_t k = q.waves;
        if ((e.max_waves != 0 && k >= e.max_waves) || k == UINT32_MAX) {
            return;
        }
        const uint64_t start = wave_start(e, tick.step, k);
        if (start > tick.number + 1) {
            return;
        }
        const Random random(kSeed, "waves", tick.number);
        std::vector<Planned> next(q.planned.begin() + static_cast<std::ptrdiff_t>(q.next),
                                  q.planned.end());
        for (uint32_t i = 0; i < e.per_wave; ++i) {
            Stream rng = random.stream(static_cast<uint64_t>(k) << 32 | i);
            Planned p{};
            p.wave = k;
            p.y = rules.height * rng.range(e.band_low, e.band_high);
            p.speed = rng.range(e.speed_min, e.speed_max);
            p.sine = rng.unit() < e.sine_share;
            if (p.sine) {
                p.amplitude = rng.range(e.amplitude_min, e.amplitude_max);
                p.frequency = rng.range(e.frequency_min, e.frequency_max);
                p.phase = rng.range(0.0f, kTau);
            }
            p.first_shot = rng.range(0.0f, e.fire_interval);
            p.tick = start + ticks(static_cast<double>(i) * static_cast<double>(e.spawn_spacing));
            next.push_back(p);
        }
        std::stable_sort(next.begin(), next.end(),
                         [](const Planned& a, const Planned& b) { return a.tick < b.tick; });
        q.planned = std::move(next);
        q.next = 0;
        q.waves += 1;
    }
}

struct Body {
    ecs::Entity entity;
    float x, y, radius;
    Faction faction;
    bool missile;
    int32_t damage;
    // What it takes this tick: damage and the lowest player hitting it.
    int32_t taken;
    OptionU8 by;
};

bool hostile(const Body& a, const Body& b) {
    return a.faction.is_enemy() != b.faction.is_enemy() && !(a.missile && b.missile);
}

void hit(Body& body, int32_t damage, Faction by) {
    body.taken = saturating_add(body.taken, damage);
    if (!by.is_enemy()) {
        body.by = OptionU8{true, body.by.some ? std::min(body.by.value, by.player) : by.player};
    }
}

// Every enemy-side body against every player-side body: damage adds up and
// the hitter kept is the lowest player, so the order does not matter.
void collide(ecs::SystemContext& ctx, const Types& t) {
    std::vector<Body> bodies;
    ctx.each_where(
        ecs::Filter(),
        [&](ecs::Entity e, const Position& p, const Collider& c, const Faction& f,
            const Damage& d, const Missile* missile) {
            bodies.push_back(
                Body{e, p.x, p.y, c.radius, f, missile != nullptr, d.amount, 0, OptionU8{}});
        },
        t.position, t.collider, t.faction, t.damage, ecs::optional(t.missile));
    std::vector<Body*> few;
    for (Body& b : bodies) {
        if (!b.faction.is_enemy()) {
            few.push_back(&b);
        }
    }
    for (Body& a : bodies) {
        if (!a.faction.is_enemy()) {
            continue;
        }
        for (Body* b : few) {
            if (!hostile(a, *b)) {
                continue;
            }
            const float reach = a.radius + b->radius;
            if ((a.x - b->x) * (a.x - b->x) + (a.y - b->y) * (a.y - b->y) < reach * reach) {
                hit(a, b->damage, b->faction);
                hit(*b, a.damage, a.faction);
            }
        }
    }
    ctx.each([](ecs::Entity, Hits& h) { h = Hits{}; }, t.hits);
    for (const Body& b : bodies) {
        Hits* h = b.taken != 0 ? ctx.try_get(b.entity, t.hits) : nullptr;
        if (h != nullptr) {
            h->damage = b.taken;
            h->by = b.by;
        }
    }
}

// ---- the systems -------------------------------------------------------------

void add_systems(ecs::Engine& engine, const Rules& rules, const Types& t,
                 ecs::Event<InputEvent> input, ecs::Resource<QueueRef> queue,
                 ecs::Resource<DoomedRef> doomed) {
    // Applies this tick's input to the ships' controls, then sets their
    // velocity.
    engine.add_system(
        ecs::System("steering").reads(input).reads(t.player).writes(t.controls).writes(t.velocity)
            .run([=](ecs::SystemContext& ctx) {
                std::vector<InputEvent> events;
                ctx.read(input, [&](const InputEvent& e) { events.push_back(e); });
                ctx.each(
                    [&](ecs::Entity, const Player& player, Controls& c, Velocity& v) {
                        for (const InputEvent& e : events) {
                            if (e.player != player.index) {
                                continue;
                            }
                            if (e.kind == kMove) {
                                c.dx = e.dx, c.dy = e.dy;
                            } else {
                                c.fire = e.fire;
                            }
                        }
                        const float diagonal = c.dx != 0 && c.dy != 0 ? kFrac1Sqrt2 : 1.0f;
                        v.x = static_cast<float>(c.dx) * rules.speed * diagonal;
                        v.y = static_cast<float>(c.dy) * rules.speed * diagonal;
                    },
                    t.player, t.controls, t.velocity);
            }));

    // Moves everything by its velocity, on the worker threads.
    engine.add_system(ecs::System("movement").reads(t.velocity).writes(t.position).run(
        [=](ecs::SystemContext& ctx) {
            const float dt = static_cast<float>(ctx.tick().step);
            ctx.par_each_chunk(
                [dt](std::size_t len, const ecs::Entity*, Position* p, const Velocity* v) {
                    for (std::size_t i = 0; i < len; ++i) {
                        p[i].x += v[i].x * dt;
                        p[i].y += v[i].y * dt;
                    }
                },
                t.position, t.velocity);
        }));

    // Puts sine fliers on their curve.
    engine.add_system(ecs::System("sine motion").reads(t.sine).writes(t.position).run(
        [=](ecs::SystemContext& ctx) {
            const ecs_tick tick = ctx.tick();
            ctx.par_each_chunk(
                [tick](std::size_t len, const ecs::Entity*, Position* p, const SineWave* s) {
                    for (std::size_t i = 0; i < len; ++i) {
                        const uint64_t since =
                            tick.number > s[i].start_tick ? tick.number - s[i].start_tick : 0;
                        const float time = static_cast<float>(static_cast<double>(since) * tick.step);
                        p[i].y = s[i].base_y +
                                 s[i].amplitude *
                                     std::sin(kTau * s[i].frequency * time + s[i].phase);
                    }
                },
                t.position, t.sine);
        }));

    // Keeps the ships inside the screen.
    engine.add_system(ecs::System("play area").reads(t.player).writes(t.position).run(
        [=](ecs::SystemContext& ctx) {
            const float r = rules.radius;
            ctx.each(
                [&](ecs::Entity, Position& p, const Player&) {
                    p.x = clamp(p.x, r, std::max(rules.width - r, r));
                    p.y = clamp(p.y, r, std::max(rules.height - r, r));
                },
                t.position, t.player);
        }));

    // A missile to the right every fire_interval while fire is held.
    engine.add_system(ecs::System("weapons")
                          .reads(t.player)
                          .reads(t.position)
                          .reads(t.controls)
                          .writes(t.weapon)
                          .commands()
                          .run([=](ecs::SystemContext& ctx) {
                              const float dt = static_cast<float>(ctx.tick().step);
                              ecs::Commands commands = ctx.commands();
                              ctx.each(
                                  [&](ecs::Entity, const Player& player, const Position& p,
                                      const Controls& c, Weapon& w) {
                                      if (c.fire && ready(w.cooldown, dt)) {
                                          w.cooldown += rules.fire_interval;
                                          const Position at{p.x + rules.radius + kMissileRadius,
                                                            p.y};
                                          spawn_missile(commands, t, at,
                                                        Velocity{rules.missile_speed, 0.0f},
                                                        Faction{1, player.index},
                                                        rules.missile_damage);
                                      }
                                      w.cooldown = std::max(w.cooldown - dt, 0.0f);
                                  },
                                  t.player, t.position, t.controls, t.weapon);
                          }));

    // Each enemy on screen fires at the nearest ship every fire_interval.
    engine.add_system(ecs::System("enemy fire")
                          .reads(t.position)
                          .reads(t.player)
                          .reads(t.collider)
                          .writes(t.enemy_gun)
                          .commands()
                          .run([=](ecs::SystemContext& ctx) { enemy_fire(ctx, rules, t); }));

    // Brings in the planned enemies whose tick has come.
    engine.add_system(ecs::System("spawns").writes(queue).commands().run(
        [=](ecs::SystemContext& ctx) {
            SpawnQueue& q = *ctx.write(queue).queue;
            const uint64_t now = ctx.tick().number;
            const Rules::Enemies& e = rules.enemies;
            ecs::Commands commands = ctx.commands();
            for (; q.next < q.planned.size() && q.planned[q.next].tick <= now; ++q.next) {
                const Planned& plan = q.planned[q.next];
                const ecs::Entity enemy = commands.spawn();
                commands.insert(enemy, t.position, Position{rules.width + e.radius, plan.y});
                commands.insert(enemy, t.velocity, Velocity{-plan.speed, 0.0f});
                commands.insert(enemy, t.enemy, Enemy{plan.wave});
                commands.insert(enemy, t.faction, enemy_side());
                commands.insert(enemy, t.collider, Collider{e.radius});
                commands.insert(enemy, t.health, Health{e.health});
                commands.insert(enemy, t.damage, Damage{e.contact_damage});
                commands.insert(enemy, t.hits, Hits{});
                commands.insert(enemy, t.bounty, Bounty{e.bounty});
                if (plan.sine) {
                    commands.insert(enemy, t.sine,
                                    SineWave{plan.y - plan.amplitude * std::sin(plan.phase),
                                             plan.amplitude, plan.frequency, plan.phase, now});
                }
                if (e.fire_interval > 0.0f) {
                    commands.insert(enemy, t.enemy_gun, EnemyGun{plan.first_shot});
                }
            }
        }));

    // Plans each wave on the tick before it starts.
    engine.add_system(ecs::System("waves").writes(queue).run(
        [=](ecs::SystemContext& ctx) { plan_waves(*ctx.write(queue).queue, ctx.tick(), rules); }));

    // Finds touching hostile pairs and writes each body's hits.
    engine.add_system(ecs::System("collision")
                          .reads(t.position)
                          .reads(t.collider)
                          .reads(t.faction)
                          .reads(t.damage)
                          .reads(t.missile)
                          .writes(t.hits)
                          .run([=](ecs::SystemContext& ctx) { collide(ctx, t); }));

    // Applies the hits; a shielded ship takes none while its shield runs
    // down.
    engine.add_system(ecs::System("damage").writes(t.health).writes(t.hits).writes(t.shield).run(
        [=](ecs::SystemContext& ctx) {
            const float dt = static_cast<float>(ctx.tick().step);
            ctx.each_where(
                ecs::Filter(),
                [&](ecs::Entity, Health& health, Hits& hits, Shield* shield) {
                    hits.killed_by = OptionU8{};
                    if (shield != nullptr && shield->seconds > 0.0f) {
                        shield->seconds = std::max(shield->seconds - dt, 0.0f);
                        return;
                    }
                    const int32_t before = health.hp;
                    health.hp = saturating_sub(health.hp, hits.damage);
                    if (before > 0 && health.hp <= 0) {
                        hits.killed_by = hits.by;
                    }
                },
                t.health, t.hits, ecs::optional(t.shield));
        }));

    // Adds each destroyed enemy's bounty to its destroyer's score.
    engine.add_system(ecs::System("score")
                          .reads(t.hits)
                          .reads(t.bounty)
                          .reads(t.player)
                          .writes(t.score)
                          .run([=](ecs::SystemContext& ctx) {
                              uint32_t points[256] = {};
                              ctx.each(
                                  [&](ecs::Entity, const Hits& hits, const Bounty& bounty) {
                                      if (hits.killed_by.some) {
                                          uint32_t& p = points[hits.killed_by.value];
                                          p = saturating_add(p, bounty.points);
                                      }
                                  },
                                  t.hits, t.bounty);
                              ctx.each(
                                  [&](ecs::Entity, const Player& player, Score& score) {
                                      score.points =
                                          saturating_add(score.points, points[player.index]);
                                  },
                                  t.player, t.score);
                          }));

    // A ship at 0 health costs a life; after the last one the ship stays,
    // inert, with its score.
    engine.add_system(ecs::System("lives")
                          .reads(t.player)
                          .writes(t.health)
                          .writes(t.shield)
                          .writes(t.lives)
                          .commands()
                          .run([=](ecs::SystemContext& ctx) {
                              ecs::Commands commands = ctx.commands();
                              ctx.each(
                                  [&](ecs::Entity ship, const Player&, Health& health,
                                      Shield& shield, Lives& lives) {
                                      if (health.hp > 0 || lives.left == 0) {
                                          return;
                                      }
                                      lives.left -= 1;
                                      if (lives.left > 0) {
                                          health.hp = rules.health;
                                          shield.seconds = rules.shield;
                                      } else {
                                          commands.remove(ship, t.collider);
                                          commands.remove(ship, t.controls);
                                          commands.remove(ship, t.weapon);
                                          commands.remove(ship, t.velocity);
                                      }
                                  },
                                  t.player, t.health, t.shield, t.lives);
                          }));

    // Lists the enemies and missiles at 0 health or past the margin.
    engine.add_system(ecs::System("cleanup")
                          .reads(t.health)
                          .reads(t.position)
                          .reads(t.player)
                          .writes(doomed)
                          .run([=](ecs::SystemContext& ctx) {
                              std::vector<ecs::Entity>& list = *ctx.write(doomed).doomed;
                              const ecs::Filter not_ships = ecs::Filter().without(t.player);
                              ctx.each_where(
                                  not_ships,
                                  [&](ecs::Entity e, const Health& h) {
                                      if (h.hp <= 0) {
                                          list.push_back(e);
                                      }
                                  },
                                  t.health);
                              const float x0 = -rules.margin, x1 = rules.width + rules.margin;
                              const float y0 = -rules.margin, y1 = rules.height + rules.margin;
                              ctx.each_where(
                                  not_ships,
                                  [&](ecs::Entity e, const Position& p) {
                                      if (!(x0 <= p.x && p.x <= x1) || !(y0 <= p.y && p.y <= y1)) {
                                          list.push_back(e);
                                      }
                                  },
                                  t.position);
                          }));

    // Despawns the doomed entities once each, in the order of Rust's
    // `Entity` (slot index, then generation; not the numeric order of
    // `entities()`, generation first).
    engine.add_system(ecs::System("despawn").writes(doomed).commands().run(
        [=](ecs::SystemContext& ctx) {
            std::vector<ecs::Entity>& list = *ctx.write(doomed).doomed;
            const auto key = [](ecs::Entity e) { return (e << 32) | (e >> 32); };
            std::sort(list.begin(), list.end(),
                      [&](ecs::Entity a, ecs::Entity b) { return key(a) < key(b); });
            list.erase(std::unique(list.begin(), list.end()), list.end());
            ecs::Commands commands = ctx.commands();
            for (const ecs::Entity e : list) {
                commands.despawn(e);
            }
            list.clear();
        }));
}

// ---- the world checksum (src/checksum.rs, harness/src/components.rs) --------

// FNV-1a, 64 bits, fed little-endian fields.
struct Fnv1a {
    uint64_t h = 0xCBF29CE484222325ull;
    void u8(uint8_t b) { h = (h ^ b) * 0x100000001B3ull; }
    void u32(uint32_t v) {
        for (int i = 0; i < 4; ++i) {
            u8(static_cast<uint8_t>(v >> (8 * i)));
        }
    }
    void u64(uint64_t v) {
        u32(static_cast<uint32_t>(v));
        u32(static_cast<uint32_t>(v >> 32));
    }
    void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
    void f32(float v) {
        uint32_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        u32(bits);
    }
    void option(OptionU8 v) {
        u8(v.some ? 1 : 0);
        if (v.some) {
            u8(v.value);
        }
    }
};

// A presence byte, then the fields `feed` writes when the entity has it.
template <class T, class F>
void component(ecs::Engine& engine, ecs::Entity e, ecs::Component<T> c, Fnv1a& h, F feed) {
    const T* value = engine.try_get(e, c);
    h.u8(value != nullptr ? 1 : 0);
    if (value != nullptr) {
        feed(*value);
    }
}

// The harness's checksum: the live entity count, then each live entity in
// handle order, its handle and every component type of the harness in its
// fixed order (the last, `Particle`, is never present here).
uint64_t world_checksum(ecs::Engine& engine, const Types& t) {
    const std::vector<ecs::Entity> live = engine.entities();
    Fnv1a h;
    h.u64(live.size());
    for (const ecs::Entity e : live) {
        h.u64(e);
        component(engine, e, t.position, h, [&](const Position& v) { h.f32(v.x), h.f32(v.y); });
        component(engine, e, t.velocity, h, [&](const Velocity& v) { h.f32(v.x), h.f32(v.y); });
        component(engine, e, t.player, h, [&](const Player& v) { h.u8(v.index); });
        component(engine, e, t.controls, h, [&](const Controls& v) {
            h.u8(static_cast<uint8_t>(v.dx)), h.u8(static_cast<uint8_t>(v.dy)), h.u8(v.fire);
        });
        component(engine, e, t.weapon, h, [&](const Weapon& v) { h.f32(v.cooldown); });
        component(engine, e, t.enemy_gun, h, [&](const EnemyGun& v) { h.f32(v.cooldown); });
        component(engine, e, t.enemy, h, [&](const Enemy& v) { h.u32(v.wave); });
        component(engine, e, t.sine, h, [&](const SineWave& v) {
            h.f32(v.base_y), h.f32(v.amplitude), h.f32(v.frequency), h.f32(v.phase);
            h.u64(v.start_tick);
        });
        component(engine, e, t.missile, h, [](const Missile&) {});
        component(engine, e, t.faction, h, [&](const Faction& v) {
            h.u8(v.side);
            if (!v.is_enemy()) {
                h.u8(v.player);
            }
        });
        component(engine, e, t.collider, h, [&](const Collider& v) { h.f32(v.radius); });
        component(engine, e, t.health, h, [&](const Health& v) { h.i32(v.hp); });
        component(engine, e, t.damage, h, [&](const Damage& v) { h.i32(v.amount); });
        component(engine, e, t.hits, h, [&](const Hits& v) {
            h.i32(v.damage), h.option(v.by), h.option(v.killed_by);
        });
        component(engine, e, t.shield, h, [&](const Shield& v) { h.f32(v.seconds); });
        component(engine, e, t.lives, h, [&](const Lives& v) { h.u8(v.left); });
        component(engine, e, t.score, h, [&](const Score& v) { h.u32(v.points); });
        component(engine, e, t.bounty, h, [&](const Bounty& v) { h.u32(v.points); });
        h.u8(0);  // Particle
    }
    return h.h;
}

// ---- the run -----------------------------------------------------------------

std::string with_commas(uint64_t n) {
    std::string digits = std::to_string(n);
    for (std::size_t i = digits.size(); i > 3; i -= 3) {
        digits.insert(i - 3, ",");
    }
    return digits;
}

int run(const Rules& rules, uint64_t ticks, uint32_t threads) {
    ecs::Engine engine(threads, 1.0 / rules.tick_rate);
    const Types t = register_types(engine);

    // The ships, at 1/8 of the width, spread evenly down the screen.
    for (uint8_t i = 0; i < rules.players; ++i) {
        const float y = rules.height * (static_cast<float>(i) + 1.0f) /
                        (static_cast<float>(rules.players) + 1.0f);
        const ecs::Entity ship = engine.spawn(
            t.position.with({rules.width / 8.0f, y}), t.velocity.with({}), t.player.with({i}),
            t.controls.with({}), t.weapon.with({}), t.faction.with({1, i}),
            t.collider.with({rules.radius}), t.health.with({rules.health}),
            t.damage.with({rules.contact_damage}), t.hits.with({}), t.shield.with({}),
            t.lives.with({rules.lives}));
        engine.insert(ship, t.score, Score{});
    }

    SpawnQueue planned;
    std::vector<ecs::Entity> doomed_list;
    const auto input = engine.event<InputEvent>("input");
    const auto queue = engine.resource<QueueRef>("spawn queue", QueueRef{&planned});
    const auto doomed = engine.resource<DoomedRef>("doomed", DoomedRef{&doomed_list});
    add_systems(engine, rules, t, input, queue, doomed);
    engine.build();

    uint64_t sequence = 0;
    std::vector<InputEvent> script;
    for (uint64_t i = 0; i < ticks; ++i) {
        // The engine delivers what is sent between ticks to the next tick.
        script.clear();
        script_of_tick(engine.ticks(), rules.players, sequence, script);
        for (const InputEvent& e : script) {
            engine.send(input, e);
        }
        engine.tick();
    }

    std::printf("scenario `%s` (C++): %" PRIu64 " ticks on %" PRIu32 " threads\n", rules.name,
                engine.ticks(), threads);
    std::printf("checksum          0x%016" PRIx64 "\n", world_checksum(engine, t));
    std::printf("entities alive    %zu\n", engine.entity_count());
    for (const ecs::Entity e : engine.entities()) {
        if (const Player* player = engine.try_get(e, t.player)) {
            std::printf("player %-10u score %s, lives %u\n", unsigned{player->index},
                        with_commas(engine.get(e, t.score).points).c_str(),
                        unsigned{engine.get(e, t.lives).left});
        }
    }
    return 0;
}


}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc > 4) {
            throw std::invalid_argument("too many arguments");
        }
        const std::string name = argc > 1 ? argv[1] : "small";
        if (name != "small" && name != "shmup") {
            throw std::invalid_argument("no scenario `" + name.substr(0, 40) +
                                        "`: small or shmup");
        }
        const Rules rules = name == "small" ? small_rules() : shmup_rules();
        const uint64_t ticks = argc > 2 ? example::parse_count(argv[2], "ticks", 0) : rules.ticks;
        const uint64_t threads =
            argc > 3 ? example::parse_count(argv[3], "threads", 1, ECS_THREADS_MAX) : 2;
        if (ecs_api_version() >> 16 != ECS_API_VERSION_MAJOR) {
            throw std::runtime_error("linked with an incompatible C API version");
        }
        return run(rules, ticks, static_cast<uint32_t>(threads));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "shmup_cpp: %s\nusage: %s [small|shmup [ticks [threads]]]\n",
                     e.what(), argv[0]);
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "shmup_cpp: %s\n", e.what());
        return 1;
    }
}
