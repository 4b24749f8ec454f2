/* The harness's `movers` scenario (harness/scenarios/movers.toml) rebuilt through
 * the C API: 1,000 entities moving in straight lines, those that leave the
 * band [0, 100] despawned, 10 new ones spawned every tick through commands.
 * After 100 ticks on 4 threads it prints the world checksum, which must
 * equal the harness's:
 *
 *     cargo run --release -- --scenario movers --threads 4
 *     target/capi-examples/movers_c [ticks [threads]]
 *
 * Both print a line `checksum          0x...` (.ci/capi compares them). The
 * float arithmetic must round exactly like Rust's: build with
 * -ffp-contract=off (no fused multiply-add) and keep every operation in
 * float (`3.0f`, never `3.0`).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecs_runtime.h"

/* The scenario's values (harness/scenarios/movers.toml, [movers]). */
#define MOVERS_COUNT 1000u
#define MOVERS_SPAWN_PER_TICK 10u
#define MOVERS_SPEED 20.0f
#define MOVERS_MIN_X 0.0f
#define MOVERS_MAX_X 100.0f
#define MOVERS_TICKS 100u
#define MOVERS_THREADS 4u
#define MOVERS_STEP (1.0 / 60.0)

typedef struct Position {
    float x, y;
} Position;

typedef struct Velocity {
    float x, y;
} Velocity;

/* What a system needs, and the first error it met: a system callback
 * returns nothing, so it records the failure here and main reports it
 * after the tick. ecs_last_error_message() is per thread, so the message
 * is copied on the worker thread that saw it. */
typedef struct SystemState {
    const char *name;
    ecs_component_id position;
    ecs_component_id velocity;
    ecs_status status;
    char what[64];
    char message[256];
    /* spawner only: the buffer of the running call */
    ecs_commands *commands;
} SystemState;

static int system_check(SystemState *state, const char *what, ecs_status status) {
    if (status == ECS_OK) {
        return 1;
    }
    if (state->status == ECS_OK) {
        state->status = status;
        snprintf(state->what, sizeof state->what, "%s", what);
        snprintf(state->message, sizeof state->message, "%s", ecs_last_error_message());
    }
    return 0;
}

/* ---- movement: reads Velocity, writes Position ---------------------------- */

static void move_chunk(const ecs_view_chunk *chunk, void *user_data) {
    const float dt = *(const float *)user_data;
    Position *p = (Position *)chunk->columns[0];
    const Velocity *v = (const Velocity *)chunk->columns[1];
    for (size_t i = 0; i < chunk->len; i++) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
    }
}

static void movement(ecs_system_ctx *ctx, void *user_data) {
    SystemState *state = (SystemState *)user_data;
    ecs_tick tick;
    if (!system_check(state, "ecs_ctx_tick", ecs_ctx_tick(ctx, &tick))) {
        return;
    }
    float dt = (float)tick.step; /* the fixed step, never the wall-clock delta */
    const ecs_component_id ids[2] = {state->position, state->velocity};
    system_check(state, "ecs_view_each_chunk", ecs_view_each_chunk(ctx, ids, 2, move_chunk, &dt));
}

/* ---- spawner: reads Position, records commands ---------------------------- */

static void despawn_outside(ecs_entity entity, void *const *components, void *user_data) {
    SystemState *state = (SystemState *)user_data;
    const Position *p = (const Position *)components[0];
    if (p->x < MOVERS_MIN_X || p->x > MOVERS_MAX_X) {
        system_check(state, "ecs_commands_despawn", ecs_commands_despawn(state->commands, entity));
    }
}

static void spawner(ecs_system_ctx *ctx, void *user_data) {
    SystemState *state = (SystemState *)user_data;
    ecs_tick tick;
    if (!system_check(state, "ecs_ctx_tick", ecs_ctx_tick(ctx, &tick)) ||
        !system_check(state, "ecs_ctx_commands", ecs_ctx_commands(ctx, &state->commands))) {
        return;
    }
    /* First the despawns, in the view's order (it decides which freed slot
     * is reused first), then the spawns. */
    if (!system_check(state, "ecs_view_each",
                      ecs_view_each(ctx, &state->position, 1, despawn_outside, state))) {
        return;
    }
    const uint64_t t = tick.number;
    for (uint32_t k = 0; k < MOVERS_SPAWN_PER_TICK; k++) {
        const Position p = {(float)(k % 100u) + 0.5f, (float)(t % 50u)};
        const Velocity v = {((float)((t + k) % 7u) - 3.0f) * MOVERS_SPEED,
                            ((float)((3u * t + k) % 5u) - 2.0f) * MOVERS_SPEED};
        ecs_entity e;
        if (!system_check(state, "ecs_commands_spawn", ecs_commands_spawn(state->commands, &e)) ||
            !system_check(state, "ecs_commands_insert(Position)",
                          ecs_commands_insert(state->commands, e, state->position, &p)) ||
            !system_check(state, "ecs_commands_insert(Velocity)",
                          ecs_commands_insert(state->commands, e, state->velocity, &v))) {
            return;
        }
    }
    state->commands = NULL; /* valid only during this call */
}

/* ---- main ------------------------------------------------------------------ */

/* A decimal count >= min: digits only (strtoull alone would take " -1" as
 * 2^64 - 1), refused when it does not fit in 64 bits (ERANGE). */
static int parse_u64(const char *text, const char *what, uint64_t min, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno == ERANGE) {
        fprintf(stderr, "movers: %s must be at most %" PRIu64 ", got `%.40s`\n", what, UINT64_MAX,
                text);
        return 0;
    }
    if (!isdigit((unsigned char)text[0]) || *end != '\0' || value < min) {
        fprintf(stderr, "movers: %s must be an integer >= %" PRIu64 ", got `%.40s`\n", what, min,
                text);
        return 0;
    }
    *out = (uint64_t)value;
    return 1;
}

/* Reports a failed call and jumps to the clean-up. */
#define CHECK(call)                                                                          \
    do {                                                                                     \
        ecs_status check_status_ = (call);                                                   \
        if (check_status_ != ECS_OK) {                                                       \
            fprintf(stderr, "movers: %s failed: %s: %s\n", #call,                            \
                    ecs_status_name(check_status_), ecs_last_error_message());               \
            goto done;                                                                       \
        }                                                                                    \
    } while (0)

static int system_failed(const SystemState *state) {
    if (state->status == ECS_OK) {
        return 0;
    }
    fprintf(stderr, "movers: system `%s`: %s failed: %s: %s\n", state->name, state->what,
            ecs_status_name(state->status), state->message);
    return 1;
}

int main(int argc, char **argv) {
    uint64_t ticks = MOVERS_TICKS;
    uint64_t threads = MOVERS_THREADS;
    if (argc > 3 || (argc > 1 && !parse_u64(argv[1], "ticks", 0, &ticks)) ||
        (argc > 2 && !parse_u64(argv[2], "threads", 1, &threads)) || threads > ECS_THREADS_MAX) {
        if (threads > ECS_THREADS_MAX) {
            fprintf(stderr, "threads must be at most %d, got %" PRIu64 "\n", ECS_THREADS_MAX,
                    threads);
        }
        fprintf(stderr, "usage: %s [ticks [threads]]\n", argv[0]);
        return 2;
    }
    if (ecs_api_version() >> 16 != ECS_API_VERSION_MAJOR) {
        fprintf(stderr, "movers: built for C API %d.x, linked with %" PRIu32 ".%" PRIu32 "\n",
                ECS_API_VERSION_MAJOR, ecs_api_version() >> 16, ecs_api_version() & 0xFFFFu);
        return 1;
    }

    int exit_code = 1;
    ecs_engine *engine = NULL;
    SystemState move_state = {.name = "movement"};
    SystemState spawn_state = {.name = "spawner"};

    ecs_engine_desc engine_desc = {
        .struct_size = sizeof(ecs_engine_desc),
        .threads = (uint32_t)threads,
        .step_seconds = MOVERS_STEP,
    };
    CHECK(ecs_engine_create(&engine_desc, &engine));

    ecs_component_id position, velocity;
    ecs_component_desc position_desc = {
        .struct_size = sizeof(ecs_component_desc),
        .name = "Position",
        .size = sizeof(Position),
        .align = _Alignof(Position),
    };
    CHECK(ecs_component_register(engine, &position_desc, &position));
    ecs_component_desc velocity_desc = {
        .struct_size = sizeof(ecs_component_desc),
        .name = "Velocity",
        .size = sizeof(Velocity),
        .align = _Alignof(Velocity),
    };
    CHECK(ecs_component_register(engine, &velocity_desc, &velocity));
    move_state.position = spawn_state.position = position;
    move_state.velocity = spawn_state.velocity = velocity;

    /* The world before the first tick, entity i in order. */
    for (uint32_t i = 0; i < MOVERS_COUNT; i++) {
        const Position p = {(float)(i % 100u), (float)(i / 100u)};
        const Velocity v = {((float)(i % 7u) - 3.0f) * MOVERS_SPEED,
                            ((float)(i % 5u) - 2.0f) * MOVERS_SPEED};
        ecs_entity e;
        CHECK(ecs_spawn(engine, &e));
        CHECK(ecs_insert(engine, e, position, &p));
        CHECK(ecs_insert(engine, e, velocity, &v));
    }

    /* movement writes Position, spawner reads it: two waves, movement first. */
    ecs_system_desc movement_desc = {
        .struct_size = sizeof(ecs_system_desc),
        .name = "movement",
        .run = movement,
        .user_data = &move_state,
        .reads = &velocity,
        .reads_len = 1,
        .writes = &position,
        .writes_len = 1,
    };
    CHECK(ecs_system_add(engine, &movement_desc));
    ecs_system_desc spawner_desc = {
        .struct_size = sizeof(ecs_system_desc),
        .name = "spawner",
        .run = spawner,
        .user_data = &spawn_state,
        .reads = &position,
        .reads_len = 1,
        .commands = true,
    };
    CHECK(ecs_system_add(engine, &spawner_desc));
    CHECK(ecs_engine_build(engine));

    for (uint64_t n = 0; n < ticks; n++) {
        CHECK(ecs_engine_tick(engine));
        if (system_failed(&move_state) || system_failed(&spawn_state)) {
            goto done;
        }
    }

    uint64_t ran = 0;
    CHECK(ecs_engine_ticks(engine, &ran));
    const ecs_component_id hashed[2] = {position, velocity};
    uint64_t checksum = 0;
    CHECK(ecs_world_checksum(engine, hashed, 2, &checksum));
    size_t alive = 0;
    CHECK(ecs_entity_count(engine, &alive));

    printf("scenario `movers` (C): %" PRIu64 " ticks on %" PRIu64 " threads\n", ran, threads);
    printf("checksum          0x%016" PRIx64 "\n", checksum);
    printf("entities alive    %zu\n", alive);
    exit_code = 0;

done:
    ecs_engine_destroy(engine);
    return exit_code;
}
