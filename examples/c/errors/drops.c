/* The C API's error paths: drop callbacks, a re-entrant destructor, two engines. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

/* ---- drop callbacks ------------------------------------------------------------ */

typedef struct DropLog {
    atomic_int count;
    atomic_int sum; /* of the dropped values */
    atomic_int wrong_user_data;
} DropLog;

static DropLog *expected_log = NULL;

static void tracked_drop(void *component, void *user_data) {
    DropLog *log = (DropLog *)user_data;
    if (log != expected_log) {
        /* Can't count into it: note it in the expected one. */
        atomic_fetch_add(&expected_log->wrong_user_data, 1);
        return;
    }
    atomic_fetch_add(&log->count, 1);
    atomic_fetch_add(&log->sum, *(const int32_t *)component);
}

typedef struct Doomed {
    ecs_component_id tracked;
    ecs_entity target;
    Seen despawn, insert, spawn, spawned_insert;
} Doomed;

/* Despawns `target`, then records an insert on it in the same buffer: the
 * insert is skipped at apply and its value dropped once. Also spawns an
 * entity with a Tracked value, which survives until the engine goes. */
static void doomed_system(ecs_system_ctx *ctx, void *user_data) {
    Doomed *d = (Doomed *)user_data;
    ecs_commands *commands = NULL;
    if (ecs_ctx_commands(ctx, &commands) != ECS_OK || d->target == ECS_ENTITY_NULL) {
        return;
    }
    const int32_t late = 1000, spawned_value = 10000;
    d->despawn = seen(ecs_commands_despawn(commands, d->target));
    d->insert = seen(ecs_commands_insert(commands, d->target, d->tracked, &late));
    ecs_entity e = ECS_ENTITY_NULL;
    d->spawn = seen(ecs_commands_spawn(commands, &e));
    d->spawned_insert = seen(ecs_commands_insert(commands, e, d->tracked, &spawned_value));
    d->target = ECS_ENTITY_NULL; /* once */
}

#define EXPECT_DROPS(log, n, total)                 \
    do {                                            \
        EXPECT_EQ_U64((n), atomic_load(&(log).count)); \
        EXPECT_EQ_U64((total), atomic_load(&(log).sum)); \
    } while (0)

void test_drops(void) {
    current_test = "drop callbacks";
    DropLog log;
    atomic_init(&log.count, 0);
    atomic_init(&log.sum, 0);
    atomic_init(&log.wrong_user_data, 0);
    expected_log = &log;

    ecs_engine *engine = new_engine(2);
    ecs_component_desc desc = component_desc("Tracked", sizeof(int32_t), _Alignof(int32_t));
    desc.drop = tracked_drop;
    desc.drop_user_data = &log;
    ecs_component_id tracked = 0;
    EXPECT_OK(ecs_component_register(engine, &desc, &tracked));

    ecs_entity e[4];
    for (int i = 0; i < 4; i++) {
        EXPECT_OK(ecs_spawn(engine, &e[i]));
    }
    for (int32_t i = 0; i < 3; i++) {
        const int32_t value = i + 1; /* 1, 2, 3 */
        EXPECT_OK(ecs_insert(engine, e[i], tracked, &value));
    }
    EXPECT_DROPS(log, 0, 0);
    const int32_t ten = 10;
    EXPECT_OK(ecs_insert(engine, e[0], tracked, &ten)); /* replaces 1 */
    EXPECT_DROPS(log, 1, 1);
    EXPECT_OK(ecs_remove(engine, e[1], tracked)); /* drops 2 */
    EXPECT_DROPS(log, 2, 3);
    EXPECT_OK(ecs_despawn(engine, e[2])); /* drops 3 */
    EXPECT_DROPS(log, 3, 6);
    /* Refused calls take nothing. */
    const int32_t refused = 500;
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_insert(engine, e[2], tracked, &refused));
    EXPECT_STATUS(ECS_ERR_MISSING_COMPONENT, ecs_remove(engine, e[1], tracked));
    EXPECT_DROPS(log, 3, 6);

    /* An unapplied command drops its value once. */
    Doomed doomed;
    memset(&doomed, 0, sizeof doomed);
    doomed.tracked = tracked;
    doomed.target = e[3];
    ecs_system_desc sys = system_desc("doomed", doomed_system, &doomed);
    sys.commands = true;
    EXPECT_OK(ecs_system_add(engine, &sys));
    EXPECT_OK(ecs_engine_tick(engine));
    EXPECT_SEEN(ECS_OK, doomed.despawn);
    EXPECT_SEEN(ECS_OK, doomed.insert);
    EXPECT_SEEN(ECS_OK, doomed.spawn);
    EXPECT_SEEN(ECS_OK, doomed.spawned_insert);
    EXPECT(!ecs_is_alive(engine, e[3]));
    EXPECT_DROPS(log, 4, 1006);
    EXPECT_OK(ecs_engine_run(engine, 2)); /* nothing more to drop */
    EXPECT_DROPS(log, 4, 1006);

    /* The engine drops what it still holds: 10 on e[0], 10000 spawned. */
    ecs_engine_destroy(engine);
    EXPECT_DROPS(log, 6, 11016);
    EXPECT_EQ_U64(0, atomic_load(&log.wrong_user_data));
    expected_log = NULL;
}

/* ---- a destructor that calls its engine, teardown included ----------------------- */

typedef struct Reentrant {
    ecs_engine *engine;
    int calls;
    ecs_status spawn[4];
    ecs_status count[4];
} Reentrant;

/* Calls back into the engine that drops the value: every call must be
 * refused (the engine is busy), ecs_engine_destroy included: were it not,
 * the destroy inside ecs_engine_destroy would free the engine twice. */
static void reentrant_drop(void *component, void *user_data) {
    (void)component;
    Reentrant *r = (Reentrant *)user_data;
    ecs_entity e = ECS_ENTITY_NULL;
    size_t count = 0;
    if (r->calls < 4) {
        r->spawn[r->calls] = ecs_spawn(r->engine, &e);
        r->count[r->calls] = ecs_entity_count(r->engine, &count);
    }
    r->calls++;
    ecs_engine_destroy(r->engine);
}

void test_reentrant_drops(void) {
    current_test = "a destructor calling its engine";
    Reentrant r;
    memset(&r, 0, sizeof r);
    ecs_engine *engine = new_engine(2);
    r.engine = engine;
    ecs_component_desc desc = component_desc("Reentrant", sizeof(int32_t), _Alignof(int32_t));
    desc.drop = reentrant_drop;
    desc.drop_user_data = &r;
    ecs_component_id id = 0;
    EXPECT_OK(ecs_component_register(engine, &desc, &id));
    ecs_entity a = ECS_ENTITY_NULL, b = ECS_ENTITY_NULL;
    EXPECT_OK(ecs_spawn(engine, &a));
    EXPECT_OK(ecs_spawn(engine, &b));
    const int32_t one = 1, two = 2;
    EXPECT_OK(ecs_insert(engine, a, id, &one));
    EXPECT_OK(ecs_insert(engine, b, id, &two));

    /* During ecs_despawn. */
    EXPECT_OK(ecs_despawn(engine, a));
    EXPECT_EQ_U64(1, r.calls);
    EXPECT_STATUS(ECS_ERR_WRONG_STATE, r.spawn[0]);
    EXPECT_STATUS(ECS_ERR_WRONG_STATE, r.count[0]);
    /* The destroy inside was refused: the engine still works. */
    size_t count = 0;
    EXPECT_OK(ecs_entity_count(engine, &count));
    EXPECT_EQ_U64(1, count);

    /* During ecs_engine_destroy: the engine stays busy to the end (valgrind
     * checks that nothing reads freed memory and nothing is freed twice). */
    ecs_engine_destroy(engine);
    EXPECT_EQ_U64(2, r.calls);
    EXPECT_STATUS(ECS_ERR_WRONG_STATE, r.spawn[1]);
    EXPECT_STATUS(ECS_ERR_WRONG_STATE, r.count[1]);
}

/* ---- two engines ----------------------------------------------------------------- */

typedef struct Counting {
    ecs_component_id counter;
    Seen status;
} Counting;

static void increment(ecs_entity entity, void *const *components, void *user_data) {
    (void)entity;
    (void)user_data;
    (*(int64_t *)components[0])++;
}

static void counting_system(ecs_system_ctx *ctx, void *user_data) {
    Counting *c = (Counting *)user_data;
    Seen s = seen(ecs_view_each(ctx, &c->counter, 1, increment, NULL));
    if (s.status != ECS_OK && c->status.status == ECS_OK) {
        c->status = s;
    }
}

static void expect_counters(ecs_engine *engine, ecs_component_id counter, const ecs_entity *es,
                            size_t n, int64_t value) {
    for (size_t i = 0; i < n; i++) {
        void *ptr = NULL;
        EXPECT_OK(ecs_get(engine, es[i], counter, &ptr));
        EXPECT_EQ_U64(value, *(int64_t *)ptr);
    }
}

void test_two_engines(void) {
    current_test = "two engines";
    ecs_engine *a = new_engine(2);
    ecs_engine *b = new_engine(1);
    /* Registered in different orders; the same names in both are fine. */
    Counting ca, cb;
    memset(&ca, 0, sizeof ca);
    memset(&cb, 0, sizeof cb);
    ca.counter = new_component(a, "Counter", sizeof(int64_t), _Alignof(int64_t));
    (void)new_component(a, "Other", 4, 4);
    (void)new_component(b, "Other", 4, 4);
    cb.counter = new_component(b, "Counter", sizeof(int64_t), _Alignof(int64_t));
    ecs_component_desc dup = component_desc("Counter", 8, 8);
    ecs_component_id id = 0;
    EXPECT_STATUS(ECS_ERR_DUPLICATE_NAME, ecs_component_register(b, &dup, &id));

    ecs_entity ea[3], eb[5];
    const int64_t zero = 0;
    for (int i = 0; i < 3; i++) {
        EXPECT_OK(ecs_spawn(a, &ea[i]));
        EXPECT_OK(ecs_insert(a, ea[i], ca.counter, &zero));
    }
    for (int i = 0; i < 5; i++) {
        EXPECT_OK(ecs_spawn(b, &eb[i]));
        EXPECT_OK(ecs_insert(b, eb[i], cb.counter, &zero));
    }
    ecs_system_desc sa = system_desc("count", counting_system, &ca);
    sa.writes = &ca.counter;
    sa.writes_len = 1;
    ecs_system_desc sb = system_desc("count", counting_system, &cb);
    sb.writes = &cb.counter;
    sb.writes_len = 1;
    EXPECT_OK(ecs_system_add(a, &sa));
    EXPECT_OK(ecs_system_add(b, &sb));

    for (int t = 0; t < 5; t++) {
        if (t < 3) {
            EXPECT_OK(ecs_engine_tick(a));
        }
        EXPECT_OK(ecs_engine_tick(b));
    }
    EXPECT_SEEN(ECS_OK, ca.status);
    EXPECT_SEEN(ECS_OK, cb.status);
    uint64_t n = 0;
    size_t count = 0;
    EXPECT_OK(ecs_engine_ticks(a, &n));
    EXPECT_EQ_U64(3, n);
    EXPECT_OK(ecs_engine_ticks(b, &n));
    EXPECT_EQ_U64(5, n);
    EXPECT_OK(ecs_entity_count(a, &count));
    EXPECT_EQ_U64(3, count);
    EXPECT_OK(ecs_entity_count(b, &count));
    EXPECT_EQ_U64(5, count);
    expect_counters(a, ca.counter, ea, 3, 3);
    expect_counters(b, cb.counter, eb, 5, 5);

    /* One goes, the other keeps working. */
    ecs_engine_destroy(a);
    EXPECT_OK(ecs_engine_tick(b));
    expect_counters(b, cb.counter, eb, 5, 6);
    ecs_engine_destroy(b);
}
