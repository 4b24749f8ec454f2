// The harness's `movers` scenario (harness/scenarios/movers.toml) rebuilt through the
// C API from C++17, with a small RAII wrapper: the same world as movers.c and
// `cargo run --release -- --scenario movers --threads 4`, the same checksum.
//
//     target/capi-examples/movers_cpp [ticks [threads]]
//
// Exceptions never cross the C API: system callbacks are called from Rust
// worker threads, so they record a failure in their state and the main
// thread throws after the tick. Build with -ffp-contract=off (no fused
// multiply-add) so the floats round exactly like Rust's.

extern "C" {  // harmless if the header has its own extern "C" guards
#include "ecs_runtime.h"
}

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace ecs {

// A failed C API call: the status and the library's message.
class Error : public std::runtime_error {
public:
    Error(ecs_status status, const std::string& what)
        : std::runtime_error(what + " failed: " + ecs_status_name(status) + ": " +
                             ecs_last_error_message()),
          status_(status) {}
    ecs_status status() const noexcept { return status_; }

private:
    ecs_status status_;
};

inline void check(ecs_status status, const char* what) {
    if (status != ECS_OK) {
        throw Error(status, what);
    }
}

// Owns an ecs_engine: destroyed with its wrapper, movable, not copyable.
class Engine {
public:
    Engine(uint32_t threads, double step_seconds) {
        ecs_engine_desc desc{};
        desc.struct_size = sizeof desc;
        desc.threads = threads;
        desc.step_seconds = step_seconds;
        check(ecs_engine_create(&desc, &raw_), "ecs_engine_create");
    }
    ~Engine() { ecs_engine_destroy(raw_); }
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    Engine(Engine&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
    Engine& operator=(Engine&& other) noexcept {
        std::swap(raw_, other.raw_);
        return *this;
    }

    // Registers T as plain bytes (no drop function).
    template <class T>
    ecs_component_id component(const char* name) {
        static_assert(std::is_trivially_copyable_v<T>, "components are copied as bytes");
        ecs_component_desc desc{};
        desc.struct_size = sizeof desc;
        desc.name = name;
        desc.size = sizeof(T);
        desc.align = alignof(T);
        ecs_component_id id{};
        check(ecs_component_register(raw_, &desc, &id), "ecs_component_register");
        return id;
    }

    ecs_entity spawn() {
        ecs_entity entity{};
        check(ecs_spawn(raw_, &entity), "ecs_spawn");
        return entity;
    }

    template <class T>
    void insert(ecs_entity entity, ecs_component_id id, const T& value) {
        check(ecs_insert(raw_, entity, id, &value), "ecs_insert");
    }

    void add_system(const ecs_system_desc& desc) {
        check(ecs_system_add(raw_, &desc), "ecs_system_add");
    }
    void build() { check(ecs_engine_build(raw_), "ecs_engine_build"); }
    void tick() { check(ecs_engine_tick(raw_), "ecs_engine_tick"); }

    uint64_t ticks() const {
        uint64_t n = 0;
        check(ecs_engine_ticks(raw_, &n), "ecs_engine_ticks");
        return n;
    }
    size_t entity_count() const {
        size_t n = 0;
        check(ecs_entity_count(raw_, &n), "ecs_entity_count");
        return n;
    }
    uint64_t checksum(std::initializer_list<ecs_component_id> ids) const {
        uint64_t sum = 0;
        check(ecs_world_checksum(raw_, ids.begin(), ids.size(), &sum), "ecs_world_checksum");
        return sum;
    }

private:
    ecs_engine* raw_ = nullptr;
};

}  // namespace ecs

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

// A system's ids and the first error it met (callbacks must not throw).
struct SystemState {
    SystemState(const char* system_name, ecs_component_id position_id,
                ecs_component_id velocity_id)
        : name(system_name), position(position_id), velocity(velocity_id) {}

    const char* name;
    ecs_component_id position;
    ecs_component_id velocity;
    ecs_status status = ECS_OK;
    std::string failure;
    ecs_commands* commands = nullptr;  // spawner only, during its call

    bool ok(ecs_status s, const char* what) {
        if (s != ECS_OK && status == ECS_OK) {
            status = s;  // the message is per thread: copy it here, on the worker
            failure = std::string(what) + " failed: " + ecs_status_name(s) + ": " +
                      ecs_last_error_message();
        }
        return s == ECS_OK;
    }
    void rethrow() const {
        if (status != ECS_OK) {
            throw std::runtime_error(std::string("system `") + name + "`: " + failure);
        }
    }
};

// Reads Velocity, writes Position, a chunk of rows at a time.
void movement(ecs_system_ctx* ctx, void* user_data) noexcept {
    auto& state = *static_cast<SystemState*>(user_data);
    ecs_tick tick{};
    if (!state.ok(ecs_ctx_tick(ctx, &tick), "ecs_ctx_tick")) {
        return;
    }
    float dt = static_cast<float>(tick.step);
    const ecs_component_id ids[] = {state.position, state.velocity};
    auto each = [](const ecs_view_chunk* chunk, void* dt_ptr) {  // captureless: a C pointer
        const float step = *static_cast<const float*>(dt_ptr);
        auto* p = static_cast<Position*>(chunk->columns[0]);
        const auto* v = static_cast<const Velocity*>(chunk->columns[1]);
        for (size_t i = 0; i < chunk->len; ++i) {
            p[i].x += v[i].x * step;
            p[i].y += v[i].y * step;
        }
    };
    state.ok(ecs_view_each_chunk(ctx, ids, 2, each, &dt), "ecs_view_each_chunk");
}

// Reads Position; despawns the entities outside [kMinX, kMaxX] in the view's
// order, then spawns kSpawnPerTick new ones.
void spawner(ecs_system_ctx* ctx, void* user_data) noexcept {
    auto& state = *static_cast<SystemState*>(user_data);
    ecs_tick tick{};
    if (!state.ok(ecs_ctx_tick(ctx, &tick), "ecs_ctx_tick") ||
        !state.ok(ecs_ctx_commands(ctx, &state.commands), "ecs_ctx_commands")) {
        return;
    }
    auto outside = [](ecs_entity entity, void* const* components, void* data) {
        auto& s = *static_cast<SystemState*>(data);
        const auto* p = static_cast<const Position*>(components[0]);
        if (p->x < kMinX || p->x > kMaxX) {
            s.ok(ecs_commands_despawn(s.commands, entity), "ecs_commands_despawn");
        }
    };
    if (!state.ok(ecs_view_each(ctx, &state.position, 1, outside, &state), "ecs_view_each")) {
        return;
    }
    const uint64_t t = tick.number;
    for (uint32_t k = 0; k < kSpawnPerTick; ++k) {
        const Position p{static_cast<float>(k % 100) + 0.5f, static_cast<float>(t % 50)};
        const Velocity v{(static_cast<float>((t + k) % 7) - 3.0f) * kSpeed,
                         (static_cast<float>((3 * t + k) % 5) - 2.0f) * kSpeed};
        ecs_entity e{};
        if (!state.ok(ecs_commands_spawn(state.commands, &e), "ecs_commands_spawn") ||
            !state.ok(ecs_commands_insert(state.commands, e, state.position, &p),
                      "ecs_commands_insert(Position)") ||
            !state.ok(ecs_commands_insert(state.commands, e, state.velocity, &v),
                      "ecs_commands_insert(Velocity)")) {
            return;
        }
    }
    state.commands = nullptr;
}

// A decimal count >= min: digits only (strtoull alone would take " -1" as
// 2^64 - 1), refused when it does not fit in 64 bits (ERANGE).
uint64_t parse(const char* text, const char* what, uint64_t min) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text, &end, 10);
    const std::string shown = std::string(text).substr(0, 40);
    if (errno == ERANGE) {
        throw std::invalid_argument(std::string(what) + " must be at most " +
                                    std::to_string(UINT64_MAX) + ", got `" + shown + "`");
    }
    if (!std::isdigit(static_cast<unsigned char>(*text)) || *end != '\0' || value < min) {
        throw std::invalid_argument(std::string(what) + " must be an integer >= " +
                                    std::to_string(min) + ", got `" + shown + "`");
    }
    return value;
}

int run(uint64_t ticks, uint32_t threads) {
    ecs::Engine engine(threads, 1.0 / 60.0);
    const ecs_component_id position = engine.component<Position>("Position");
    const ecs_component_id velocity = engine.component<Velocity>("Velocity");

    for (uint32_t i = 0; i < kCount; ++i) {
        const ecs_entity e = engine.spawn();
        engine.insert(e, position, Position{static_cast<float>(i % 100),
                                            static_cast<float>(i / 100)});
        engine.insert(e, velocity, Velocity{(static_cast<float>(i % 7) - 3.0f) * kSpeed,
                                            (static_cast<float>(i % 5) - 2.0f) * kSpeed});
    }

    SystemState move_state{"movement", position, velocity};
    SystemState spawn_state{"spawner", position, velocity};

    ecs_system_desc movement_desc{};
    movement_desc.struct_size = sizeof movement_desc;
    movement_desc.name = "movement";
    movement_desc.run = movement;
    movement_desc.user_data = &move_state;
    movement_desc.reads = &velocity;
    movement_desc.reads_len = 1;
    movement_desc.writes = &position;
    movement_desc.writes_len = 1;
    engine.add_system(movement_desc);

    ecs_system_desc spawner_desc{};
    spawner_desc.struct_size = sizeof spawner_desc;
    spawner_desc.name = "spawner";
    spawner_desc.run = spawner;
    spawner_desc.user_data = &spawn_state;
    spawner_desc.reads = &position;
    spawner_desc.reads_len = 1;
    spawner_desc.commands = true;
    engine.add_system(spawner_desc);
    engine.build();

    for (uint64_t n = 0; n < ticks; ++n) {
        engine.tick();
        move_state.rethrow();
        spawn_state.rethrow();
    }

    std::printf("scenario `movers` (C++): %" PRIu64 " ticks on %" PRIu32 " threads\n",
                engine.ticks(), threads);
    std::printf("checksum          0x%016" PRIx64 "\n", engine.checksum({position, velocity}));
    std::printf("entities alive    %zu\n", engine.entity_count());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc > 3) {
            throw std::invalid_argument("too many arguments");
        }
        const uint64_t ticks = argc > 1 ? parse(argv[1], "ticks", 0) : 100;
        const uint64_t threads = argc > 2 ? parse(argv[2], "threads", 1) : 4;
        if (threads > UINT32_MAX) {
            throw std::invalid_argument("threads is too large");
        }
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
