/* The C API's error paths: status names, the engine, ticks, components, entities. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

/* ---- status names and the version ----------------------------------------- */

void test_status_names(void) {
    current_test = "status names";
    static const struct {
        ecs_status status;
        const char *name;
    } names[] = {
        {ECS_OK, "ECS_OK"},
        {ECS_ERR_NULL_POINTER, "ECS_ERR_NULL_POINTER"},
        {ECS_ERR_INVALID_ARGUMENT, "ECS_ERR_INVALID_ARGUMENT"},
        {ECS_ERR_STALE_ENTITY, "ECS_ERR_STALE_ENTITY"},
        {ECS_ERR_MISSING_COMPONENT, "ECS_ERR_MISSING_COMPONENT"},
        {ECS_ERR_UNKNOWN_COMPONENT, "ECS_ERR_UNKNOWN_COMPONENT"},
        {ECS_ERR_DUPLICATE_NAME, "ECS_ERR_DUPLICATE_NAME"},
        {ECS_ERR_UNDECLARED, "ECS_ERR_UNDECLARED"},
        {ECS_ERR_SCHEDULE, "ECS_ERR_SCHEDULE"},
        {ECS_ERR_SYSTEM_FAILED, "ECS_ERR_SYSTEM_FAILED"},
        {ECS_ERR_PANIC, "ECS_ERR_PANIC"},
        {ECS_ERR_QUEUE_CLOSED, "ECS_ERR_QUEUE_CLOSED"},
        {ECS_ERR_QUEUE_EMPTY, "ECS_ERR_QUEUE_EMPTY"},
        {ECS_ERR_QUEUE_FULL, "ECS_ERR_QUEUE_FULL"},
        {ECS_ERR_TIMEOUT, "ECS_ERR_TIMEOUT"},
        {ECS_ERR_WRONG_STATE, "ECS_ERR_WRONG_STATE"},
        {ECS_ERR_BORROW_CONFLICT, "ECS_ERR_BORROW_CONFLICT"},
        {ECS_ERR_LIMIT, "ECS_ERR_LIMIT"},
        {ECS_ERR_UNKNOWN_RESOURCE, "ECS_ERR_UNKNOWN_RESOURCE"},
        {ECS_ERR_SNAPSHOT, "ECS_ERR_SNAPSHOT"},
        {ECS_ERR_UNKNOWN_EVENT, "ECS_ERR_UNKNOWN_EVENT"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        checks++;
        const char *got = ecs_status_name(names[i].status);
        if (got == NULL || strcmp(got, names[i].name) != 0) {
            fail(__FILE__, __LINE__, "ecs_status_name(%d) is \"%s\", expected \"%s\"",
                 (int)names[i].status, got ? got : "(NULL)", names[i].name);
        }
    }
    EXPECT(ecs_status_name(-1) != NULL);
    EXPECT(ecs_status_name(9999) != NULL);
    EXPECT(ecs_last_error_message() != NULL);
    EXPECT(ecs_api_version() >> 16 == ECS_API_VERSION_MAJOR);
    EXPECT(ecs_api_version() >= ((uint32_t)ECS_API_VERSION_MAJOR << 16 | ECS_API_VERSION_MINOR));
}

/* ---- engine ------------------------------------------------------------------- */

void test_engine_arguments(void) {
    current_test = "engine arguments";
    ecs_engine *engine = NULL;
    ecs_engine_desc desc = {.struct_size = sizeof desc, .threads = 2, .step_seconds = 0.5};

    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_create(NULL, &engine));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_create(&desc, NULL));
    EXPECT(engine == NULL);

    ecs_engine_desc small = desc;
    small.struct_size = 0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_engine_create(&small, &engine));
    small.struct_size = sizeof(uint32_t);
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_engine_create(&small, &engine));
    ecs_engine_desc bad = desc;
    bad.threads = 0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_engine_create(&bad, &engine));
    bad = desc;
    bad.step_seconds = -1.0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_engine_create(&bad, &engine));
    EXPECT(engine == NULL);

    uint64_t n = 0;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_build(NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_tick(NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_run(NULL, 1));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_ticks(NULL, &n));
    ecs_engine_destroy(NULL); /* a no-op */

    EXPECT_OK(ecs_engine_create(&desc, &engine));
    EXPECT(engine != NULL);
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_ticks(engine, NULL));
    EXPECT_OK(ecs_engine_ticks(engine, &n));
    EXPECT_EQ_U64(0, n);
    /* An engine without systems ticks. */
    EXPECT_OK(ecs_engine_run(engine, 2));
    EXPECT_OK(ecs_engine_ticks(engine, &n));
    EXPECT_EQ_U64(2, n);
    ecs_engine_destroy(engine);
}

/* Tick numbers start at 0; step 0 in the desc means 1/60 s. */
typedef struct TickLog {
    uint64_t numbers[8];
    double steps[8];
    size_t len;
    Seen last;
} TickLog;

/* A destructor with nothing to free (the component's info says it has one). */
static void ignore_value(void *component, void *user_data) {
    (void)component;
    (void)user_data;
}

static void log_tick(ecs_system_ctx *ctx, void *user_data) {
    TickLog *log = (TickLog *)user_data;
    ecs_tick tick;
    log->last = seen(ecs_ctx_tick(ctx, &tick));
    if (log->last.status == ECS_OK && log->len < 8) {
        log->numbers[log->len] = tick.number;
        log->steps[log->len] = tick.step;
        log->len++;
    }
}

void test_ticks(void) {
    current_test = "tick numbers and step";
    ecs_engine *engine = new_engine(2); /* step_seconds 0: 1/60 */
    TickLog log;
    memset(&log, 0, sizeof log);
    ecs_system_desc desc = system_desc("log", log_tick, &log);
    EXPECT_OK(ecs_system_add(engine, &desc));
    EXPECT_OK(ecs_engine_tick(engine)); /* builds the schedule */
    EXPECT_OK(ecs_engine_run(engine, 2));
    EXPECT_OK(ecs_engine_run(engine, 0));
    EXPECT_SEEN(ECS_OK, log.last);
    EXPECT_EQ_U64(3, log.len);
    for (size_t i = 0; i < 3; i++) {
        EXPECT_EQ_U64(i, log.numbers[i]);
        EXPECT(log.steps[i] == 1.0 / 60.0);
    }
    uint64_t n = 0;
    EXPECT_OK(ecs_engine_ticks(engine, &n));
    EXPECT_EQ_U64(3, n);
    ecs_engine_destroy(engine);
}

/* ---- components ----------------------------------------------------------------- */

void test_components(void) {
    current_test = "components";
    ecs_engine *engine = new_engine(1);
    ecs_component_id id = 0;
    ecs_component_desc desc = component_desc("Point", sizeof(Point), _Alignof(Point));

    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_register(NULL, &desc, &id));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_register(engine, NULL, &id));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_register(engine, &desc, NULL));

    ecs_component_desc bad = desc;
    bad.struct_size = 0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_component_register(engine, &bad, &id));
    bad.struct_size = sizeof(uint32_t);
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_component_register(engine, &bad, &id));
    bad = desc;
    bad.align = 3;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_component_register(engine, &bad, &id));
    bad.align = 0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_component_register(engine, &bad, &id));
    /* A size above PTRDIFF_MAX rounded down to the alignment: refused, and
     * the message names the size, not the alignment. */
    bad = desc;
    bad.size = ((size_t)PTRDIFF_MAX & ~(bad.align - 1)) + bad.align;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_component_register(engine, &bad, &id));
    EXPECT(strstr(ecs_last_error_message(), "too large") != NULL);
    EXPECT(strstr(ecs_last_error_message(), "power of two") == NULL);
    bad = desc;
    bad.name = NULL;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_register(engine, &bad, &id));
    /* None of the refused ones took the name. */
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_component_lookup(engine, "Point", &id));

    ecs_component_id point = 0;
    EXPECT_OK(ecs_component_register(engine, &desc, &point));
    EXPECT_STATUS(ECS_ERR_DUPLICATE_NAME, ecs_component_register(engine, &desc, &id));
    /* A tag: size 0. */
    ecs_component_desc tag_desc = component_desc("Tag", 0, 1);
    ecs_component_id tag = 0;
    EXPECT_OK(ecs_component_register(engine, &tag_desc, &tag));
    EXPECT(tag != point);

    EXPECT_OK(ecs_component_lookup(engine, "Point", &id));
    EXPECT(id == point);
    EXPECT_OK(ecs_component_lookup(engine, "Tag", &id));
    EXPECT(id == tag);
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_component_lookup(engine, "Nothing", &id));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_lookup(NULL, "Point", &id));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_lookup(engine, NULL, &id));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_lookup(engine, "Point", NULL));

    /* What a component was registered with; a refusal writes nothing. */
    ecs_component_info info = {.struct_size = sizeof info};
    EXPECT_OK(ecs_component_get_info(engine, point, &info));
    EXPECT(info.size == sizeof(Point) && info.align == _Alignof(Point));
    EXPECT(!info.has_drop && !info.savable && info.flags == 0);
    EXPECT_OK(ecs_component_get_info(engine, tag, &info));
    EXPECT(info.size == 0 && info.align == 1);
    ecs_component_desc kept_desc = component_desc("Kept", sizeof(Point), _Alignof(Point));
    kept_desc.savable = true;
    kept_desc.flags = ECS_COMPONENT_TRACK_CHANGES;
    ecs_component_id kept = 0;
    EXPECT_OK(ecs_component_register(engine, &kept_desc, &kept));
    EXPECT_OK(ecs_component_get_info(engine, kept, &info));
    EXPECT(info.savable && !info.has_drop && info.flags == ECS_COMPONENT_TRACK_CHANGES);
    ecs_component_desc owned_desc = component_desc("Owned", sizeof(void *), _Alignof(void *));
    owned_desc.drop = ignore_value;
    ecs_component_id owned = 0;
    EXPECT_OK(ecs_component_register(engine, &owned_desc, &owned));
    EXPECT_OK(ecs_component_get_info(engine, owned, &info));
    EXPECT(info.has_drop && !info.savable && info.size == sizeof(void *));
    ecs_component_info untouched = {.struct_size = sizeof untouched, .size = 99};
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_get_info(NULL, point, &untouched));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_component_get_info(engine, point, NULL));
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_component_get_info(engine, point + 1000, &untouched));
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_component_get_info(engine, 0, &untouched));
    untouched.struct_size = 4;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_component_get_info(engine, point, &untouched));
    EXPECT(untouched.size == 99 && untouched.struct_size == 4);

    /* The name is copied: a changed buffer does not rename it. */
    char name[16] = "Copied";
    ecs_component_desc copied = component_desc(name, 4, 4);
    ecs_component_id copied_id = 0;
    EXPECT_OK(ecs_component_register(engine, &copied, &copied_id));
    strcpy(name, "Changed");
    EXPECT_OK(ecs_component_lookup(engine, "Copied", &id));
    EXPECT(id == copied_id);

    ecs_engine_destroy(engine);
}

/* ---- entities ------------------------------------------------------------------- */

void test_entities(void) {
    current_test = "entities";
    ecs_engine *engine = new_engine(1);
    ecs_component_id point = new_component(engine, "Point", sizeof(Point), _Alignof(Point));
    ecs_component_id tag = new_component(engine, "Tag", 0, 1);
    ecs_entity e = ECS_ENTITY_NULL;
    size_t count = 99;
    bool has = true;
    void *ptr = NULL;
    const Point p1 = {1.0f, 2.0f};

    /* NULL arguments. */
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_spawn(NULL, &e));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_spawn(engine, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_entity_count(NULL, &count));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_entity_count(engine, NULL));
    EXPECT_OK(ecs_entity_count(engine, &count));
    EXPECT_EQ_U64(0, count);

    EXPECT_OK(ecs_spawn(engine, &e));
    EXPECT(e != ECS_ENTITY_NULL && e != 0);
    EXPECT(ecs_is_alive(engine, e));
    EXPECT(!ecs_is_alive(NULL, e));
    EXPECT(!ecs_is_alive(engine, ECS_ENTITY_NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_despawn(NULL, e));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_insert(NULL, e, point, &p1));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_insert(engine, e, point, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_get(NULL, e, point, &ptr));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_get(engine, e, point, NULL));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_remove(NULL, e, point));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_has(NULL, e, point, &has));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_has(engine, e, point, NULL));
    uint64_t sum = 0;
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_world_checksum(NULL, &point, 1, &sum));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_world_checksum(engine, NULL, 1, &sum));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_world_checksum(engine, &point, 1, NULL));

    /* Insert, get (a pointer into the store), has, replace, remove. */
    EXPECT_OK(ecs_insert(engine, e, point, &p1));
    EXPECT_OK(ecs_insert(engine, e, tag, &p1)); /* size 0: nothing copied */
    EXPECT_OK(ecs_has(engine, e, point, &has));
    EXPECT(has);
    EXPECT_OK(ecs_get(engine, e, point, &ptr));
    EXPECT(ptr != NULL && ((Point *)ptr)->x == 1.0f && ((Point *)ptr)->y == 2.0f);
    ((Point *)ptr)->x = 5.0f;
    ptr = NULL;
    EXPECT_OK(ecs_get(engine, e, point, &ptr));
    EXPECT(((Point *)ptr)->x == 5.0f);
    const Point p2 = {7.0f, 8.0f};
    EXPECT_OK(ecs_insert(engine, e, point, &p2));
    EXPECT_OK(ecs_get(engine, e, point, &ptr));
    EXPECT(((Point *)ptr)->x == 7.0f && ((Point *)ptr)->y == 8.0f);
    EXPECT_OK(ecs_remove(engine, e, point));
    EXPECT_OK(ecs_has(engine, e, point, &has));
    EXPECT(!has);

    /* Missing component. */
    EXPECT_STATUS(ECS_ERR_MISSING_COMPONENT, ecs_remove(engine, e, point));
    EXPECT_STATUS(ECS_ERR_MISSING_COMPONENT, ecs_get(engine, e, point, &ptr));

    /* Unknown component id. */
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_insert(engine, e, BOGUS_ID, &p1));
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_get(engine, e, BOGUS_ID, &ptr));
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_remove(engine, e, BOGUS_ID));
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_has(engine, e, BOGUS_ID, &has));
    const ecs_component_id with_bogus[2] = {point, BOGUS_ID};
    EXPECT_STATUS(ECS_ERR_UNKNOWN_COMPONENT, ecs_world_checksum(engine, with_bogus, 2, &sum));

    /* Stale entity: despawned, never spawned, NULL. */
    EXPECT_OK(ecs_insert(engine, e, point, &p1));
    EXPECT_OK(ecs_despawn(engine, e));
    EXPECT(!ecs_is_alive(engine, e));
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_get(engine, e, point, &ptr));
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_insert(engine, e, point, &p1));
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_remove(engine, e, point));
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_despawn(engine, e));
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_despawn(engine, ECS_ENTITY_NULL));
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_get(engine, ECS_ENTITY_NULL, point, &ptr));
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_insert(engine, (ecs_entity)1 << 32 | 12345u, point, &p1));

    /* The slot is reused with a new generation: the old handle stays dead. */
    ecs_entity reused = ECS_ENTITY_NULL;
    EXPECT_OK(ecs_spawn(engine, &reused));
    EXPECT((reused & 0xFFFFFFFFu) == (e & 0xFFFFFFFFu));
    EXPECT(reused != e);
    EXPECT(!ecs_is_alive(engine, e));
    EXPECT_STATUS(ECS_ERR_STALE_ENTITY, ecs_get(engine, e, point, &ptr));
    EXPECT_OK(ecs_has(engine, reused, point, &has));
    EXPECT(!has);
    EXPECT_OK(ecs_entity_count(engine, &count));
    EXPECT_EQ_U64(1, count);

    /* The checksum: equal worlds, equal sums; a changed value changes it. */
    EXPECT_OK(ecs_insert(engine, reused, point, &p1));
    uint64_t a = 0, b = 0, c = 0;
    EXPECT_OK(ecs_world_checksum(engine, &point, 1, &a));
    EXPECT_OK(ecs_world_checksum(engine, &point, 1, &b));
    EXPECT(a == b);
    EXPECT_OK(ecs_insert(engine, reused, point, &p2));
    EXPECT_OK(ecs_world_checksum(engine, &point, 1, &c));
    EXPECT(a != c);

    ecs_engine_destroy(engine);
}
