/* The C API's resources, run conditions and startup systems (issue 30):
 * registration and bytes between ticks, declared access from systems (a
 * writer and a reader ordered like Rust Res/ResMut), undeclared access
 * refused with a status, a false condition skipping its system, a startup
 * system running once. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

typedef struct Shared {
    ecs_resource_id counter;
    ecs_resource_id paused;
    uint64_t seen[8];
    size_t seen_len;
    Seen refused_read;
    Seen refused_write;
    int startup_runs;
} Shared;

static void increment(ecs_system_ctx *ctx, void *user_data) {
    Shared *shared = user_data;
    void *value = NULL;
    if (ecs_ctx_resource_write(ctx, shared->counter, &value) == ECS_OK) {
        *(uint64_t *)value += 1;
    }
}

static void observe(ecs_system_ctx *ctx, void *user_data) {
    Shared *shared = user_data;
    const void *value = NULL;
    if (ecs_ctx_resource_read(ctx, shared->counter, &value) == ECS_OK && shared->seen_len < 8) {
        shared->seen[shared->seen_len++] = *(const uint64_t *)value;
    }
}

static void undeclared(ecs_system_ctx *ctx, void *user_data) {
    Shared *shared = user_data;
    const void *read = NULL;
    void *write = NULL;
    shared->refused_read = seen(ecs_ctx_resource_read(ctx, shared->counter, &read));
    /* `paused` is declared read: writing it is refused too. */
    shared->refused_write = seen(ecs_ctx_resource_write(ctx, shared->paused, &write));
}

static void setup(ecs_system_ctx *ctx, void *user_data) {
    Shared *shared = user_data;
    shared->startup_runs++;
    increment(ctx, user_data);
}

static bool not_paused(const ecs_system_ctx *ctx, void *user_data) {
    Shared *shared = user_data;
    const void *value = NULL;
    if (ecs_ctx_resource_read(ctx, shared->paused, &value) != ECS_OK) {
        return false;
    }
    return *(const uint32_t *)value == 0;
}

static ecs_resource_desc resource_desc(const char *name, size_t size, size_t align, const void *initial) {
    ecs_resource_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.name = name;
    desc.size = size;
    desc.align = align;
    desc.initial = initial;
    return desc;
}

static void test_resource_calls(void) {
    current_test = "resources between ticks";
    ecs_engine *engine = new_engine(2);
    ecs_engine *other = new_engine(1);
    const uint64_t initial = 41;
    ecs_resource_desc desc = resource_desc("score", sizeof(uint64_t), _Alignof(uint64_t), &initial);
    ecs_resource_id score = 0, foreign = 0, id = 0;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_resource_register(NULL, &desc, &score));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_resource_register(engine, NULL, &score));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_resource_register(engine, &desc, NULL));
    ecs_resource_desc bad = desc;
    bad.struct_size = 4;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_resource_register(engine, &bad, &id));
    bad = desc;
    bad.align = 12;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_resource_register(engine, &bad, &id));
    bad = desc;
    bad.name = "";
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_resource_register(engine, &bad, &id));
    if (huge_allocations) {
        bad = desc;
        bad.name = "huge";
        bad.size = (size_t)PTRDIFF_MAX - 4096;
        bad.initial = NULL;
        EXPECT_STATUS(ECS_ERR_LIMIT, ecs_resource_register(engine, &bad, &id));
    }
    EXPECT_OK(ecs_resource_register(engine, &desc, &score));
    EXPECT_STATUS(ECS_ERR_DUPLICATE_NAME, ecs_resource_register(engine, &desc, &id));
    EXPECT_OK(ecs_resource_register(other, &desc, &foreign));

    uint64_t value = 0;
    EXPECT_OK(ecs_resource_get(engine, score, &value, sizeof value));
    EXPECT_EQ_U64(41, value);
    value = 7;
    EXPECT_OK(ecs_resource_set(engine, score, &value, sizeof value));
    value = 0;
    EXPECT_OK(ecs_resource_get(engine, score, &value, sizeof value));
    EXPECT_EQ_U64(7, value);
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_resource_get(engine, score, &value, 4));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_resource_get(engine, score, NULL, sizeof value));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_resource_set(engine, score, NULL, sizeof value));
    EXPECT_STATUS(ECS_ERR_UNKNOWN_RESOURCE, ecs_resource_get(engine, foreign, &value, sizeof value));
    EXPECT_STATUS(ECS_ERR_UNKNOWN_RESOURCE, ecs_resource_set(engine, 12345, &value, sizeof value));
    /* Resources are no entities; NULL initial bytes are zero. */
    size_t count = 99;
    EXPECT_OK(ecs_entity_count(engine, &count));
    EXPECT_EQ_U64(0, count);
    EXPECT_OK(ecs_engine_run(engine, 2));
    ecs_resource_desc late = resource_desc("late", sizeof(uint64_t), _Alignof(uint64_t), NULL);
    EXPECT_OK(ecs_resource_register(engine, &late, &id));
    value = 5;
    EXPECT_OK(ecs_resource_get(engine, id, &value, sizeof value));
    EXPECT_EQ_U64(0, value);
    ecs_engine_destroy(other);
    ecs_engine_destroy(engine);
}

static void test_resource_systems(void) {
    current_test = "resources, run conditions and startup systems from systems";
    ecs_engine *engine = new_engine(4);
    Shared shared;
    memset(&shared, 0, sizeof shared);
    const uint64_t zero = 0;
    const uint32_t running = 0;
    ecs_resource_desc counter = resource_desc("counter", sizeof zero, _Alignof(uint64_t), &zero);
    ecs_resource_desc paused = resource_desc("paused", sizeof running, _Alignof(uint32_t), &running);
    EXPECT_OK(ecs_resource_register(engine, &counter, &shared.counter));
    EXPECT_OK(ecs_resource_register(engine, &paused, &shared.paused));

    /* Startup: runs once, before the first tick's systems. */
    ecs_system_desc start = system_desc("setup", setup, &shared);
    start.resource_writes = &shared.counter;
    start.resource_writes_len = 1;
    start.startup = true;
    const char *after_writer[] = {"writer"};
    ecs_system_desc bad = start;
    bad.after = after_writer;
    bad.after_len = 1;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_system_add(engine, &bad));
    EXPECT_OK(ecs_system_add(engine, &start));

    /* The writer, conditioned on `paused` == 0; the reader, added after it,
     * sees the writer's value of the same tick. */
    ecs_system_desc writer = system_desc("writer", increment, &shared);
    writer.resource_writes = &shared.counter;
    writer.resource_writes_len = 1;
    writer.resource_reads = &shared.paused;
    writer.resource_reads_len = 1;
    writer.run_if = not_paused;
    writer.run_if_user_data = &shared;
    EXPECT_OK(ecs_system_add(engine, &writer));
    ecs_system_desc reader = system_desc("reader", observe, &shared);
    reader.resource_reads = &shared.counter;
    reader.resource_reads_len = 1;
    EXPECT_OK(ecs_system_add(engine, &reader));
    ecs_system_desc sneaky = system_desc("sneaky", undeclared, &shared);
    sneaky.resource_reads = &shared.paused;
    sneaky.resource_reads_len = 1;
    EXPECT_OK(ecs_system_add(engine, &sneaky));
    ecs_resource_id bogus = 0x7FFFFFF0u;
    ecs_system_desc unknown = system_desc("unknown", do_nothing, NULL);
    unknown.resource_reads = &bogus;
    unknown.resource_reads_len = 1;
    EXPECT_STATUS(ECS_ERR_UNKNOWN_RESOURCE, ecs_system_add(engine, &unknown));
    unknown.resource_reads = NULL;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_system_add(engine, &unknown));

    EXPECT_OK(ecs_engine_run(engine, 3));
    EXPECT_EQ_U64(1, shared.startup_runs);
    EXPECT_EQ_U64(3, shared.seen_len);
    EXPECT_EQ_U64(2, shared.seen[0]);
    EXPECT_EQ_U64(3, shared.seen[1]);
    EXPECT_EQ_U64(4, shared.seen[2]);
    EXPECT_SEEN(ECS_ERR_UNDECLARED, shared.refused_read);
    EXPECT_SEEN(ECS_ERR_UNDECLARED, shared.refused_write);

    /* Paused: the writer is skipped, the reader sees the same value. */
    const uint32_t stop = 1;
    EXPECT_OK(ecs_resource_set(engine, shared.paused, &stop, sizeof stop));
    EXPECT_OK(ecs_engine_run(engine, 2));
    EXPECT_EQ_U64(5, shared.seen_len);
    EXPECT_EQ_U64(4, shared.seen[3]);
    EXPECT_EQ_U64(4, shared.seen[4]);
    uint64_t value = 0;
    EXPECT_OK(ecs_resource_get(engine, shared.counter, &value, sizeof value));
    EXPECT_EQ_U64(4, value);
    EXPECT_EQ_U64(1, shared.startup_runs);
    ecs_engine_destroy(engine);
}

void test_resources(void) {
    test_resource_calls();
    test_resource_systems();
}
