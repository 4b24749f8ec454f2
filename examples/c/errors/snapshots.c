/* The C API's snapshots (issue 30): an engine saved with ecs_engine_save
 * and loaded with ecs_engine_load into a fresh engine built the same way
 * (same systems, the same components registered savable, in another
 * order) has the same world and goes on the same (checksums, tick counter,
 * next spawns), in both formats; refusals (a component that is not
 * savable with values, a savable component with a destructor, garbage
 * bytes, NULL pointers, a save from inside a tick) return their status
 * and change nothing. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

/* One engine's ids, the systems' user data. */
typedef struct World {
    ecs_engine *engine;
    ecs_component_id position;
    ecs_component_id velocity;
    Seen save_in_tick;
} World;

static void move_one(ecs_entity entity, void *const *components, void *user_data) {
    (void)entity;
    (void)user_data;
    Point *p = components[0];
    const Point *v = components[1];
    p->x += v->x;
    p->y += v->y;
}

static void move_all(ecs_system_ctx *ctx, void *user_data) {
    World *world = user_data;
    ecs_component_id ids[2] = {world->position, world->velocity};
    EXPECT_OK(ecs_view_each(ctx, ids, 2, move_one, NULL));
}

/* One entity per tick at (tick, 0) moving (1, 0.5), through commands. */
static void spawn_one(ecs_system_ctx *ctx, void *user_data) {
    World *world = user_data;
    ecs_commands *commands = NULL;
    ecs_tick tick;
    memset(&tick, 0, sizeof tick);
    ecs_entity e = 0;
    /* Plain data: zeroed first, so the padding (none here) is defined. */
    Point p, v;
    memset(&p, 0, sizeof p);
    memset(&v, 0, sizeof v);
    EXPECT_OK(ecs_ctx_commands(ctx, &commands));
    EXPECT_OK(ecs_ctx_tick(ctx, &tick));
    p.x = (float)tick.number;
    v.x = 1.0f;
    v.y = 0.5f;
    EXPECT_OK(ecs_commands_spawn(commands, &e));
    EXPECT_OK(ecs_commands_insert(commands, e, world->position, &p));
    EXPECT_OK(ecs_commands_insert(commands, e, world->velocity, &v));
}

static ecs_component_id savable(ecs_engine *engine, const char *name, size_t size, size_t align) {
    ecs_component_desc desc = component_desc(name, size, align);
    desc.savable = true;
    ecs_component_id id = 0;
    EXPECT_OK(ecs_component_register(engine, &desc, &id));
    return id;
}

/* An engine with Position and Velocity (savable; `extra` first, so the
 * ids differ from another World's) and the two systems, built. */
static void make_world(World *world, uint32_t threads, int extra) {
    memset(world, 0, sizeof *world);
    world->engine = new_engine(threads);
    if (extra) {
        savable(world->engine, "Extra", 1, 1);
    }
    world->position = savable(world->engine, "Position", sizeof(Point), _Alignof(Point));
    world->velocity = savable(world->engine, "Velocity", sizeof(Point), _Alignof(Point));
    ecs_system_desc move = system_desc("move", move_all, world);
    ecs_component_id reads[1] = {world->velocity}, writes[1] = {world->position};
    move.reads = reads;
    move.reads_len = 1;
    move.writes = writes;
    move.writes_len = 1;
    EXPECT_OK(ecs_system_add(world->engine, &move));
    ecs_system_desc spawn = system_desc("spawn", spawn_one, world);
    spawn.commands = true;
    EXPECT_OK(ecs_system_add(world->engine, &spawn));
    EXPECT_OK(ecs_engine_build(world->engine));
}

static uint64_t checksum(const World *world) {
    ecs_component_id ids[2] = {world->position, world->velocity};
    uint64_t out = 0;
    EXPECT_OK(ecs_world_checksum(world->engine, ids, 2, &out));
    return out;
}

static uint64_t ticks(const World *world) {
    uint64_t out = 0;
    EXPECT_OK(ecs_engine_ticks(world->engine, &out));
    return out;
}

static void test_round_trip(ecs_snapshot_format format) {
    World saved, loaded;
    make_world(&saved, 2, 0);
    make_world(&loaded, 3, 1);
    ecs_engine *engine = saved.engine;
    ecs_entity root = 0, gone = 0, child = 0, parent = 0;
    Point p;
    memset(&p, 0, sizeof p);
    p.x = 1.0f;
    p.y = 2.0f;
    EXPECT_OK(ecs_spawn(engine, &root));
    EXPECT_OK(ecs_spawn(engine, &gone));
    EXPECT_OK(ecs_spawn(engine, &child));
    EXPECT_OK(ecs_insert(engine, root, saved.position, &p));
    EXPECT_OK(ecs_insert(engine, child, saved.velocity, &p));
    EXPECT_OK(ecs_despawn(engine, gone));
    EXPECT_OK(ecs_set_parent(engine, child, root));
    EXPECT_OK(ecs_disable(engine, child, NULL));
    EXPECT_OK(ecs_engine_run(engine, 3));

    uint8_t *bytes = NULL;
    size_t len = 0;
    EXPECT_OK(ecs_engine_save(engine, format, &bytes, &len));
    EXPECT(bytes != NULL && len > 0);
    EXPECT_OK(ecs_engine_load(loaded.engine, format, bytes, len));
    ecs_snapshot_free(bytes, len);

    EXPECT_EQ_U64(checksum(&saved), checksum(&loaded));
    EXPECT_EQ_U64(3, ticks(&loaded));
    EXPECT_OK(ecs_parent(loaded.engine, child, &parent));
    EXPECT_EQ_U64(root, parent);
    bool disabled = false;
    EXPECT_OK(ecs_is_disabled(loaded.engine, child, &disabled));
    EXPECT(disabled);
    void *value = NULL;
    EXPECT_OK(ecs_get(loaded.engine, root, loaded.position, &value));
    EXPECT(((Point *)value)->x == 1.0f && ((Point *)value)->y == 2.0f);

    /* The next ticks and spawns are the saved engine's. */
    EXPECT_OK(ecs_engine_run(saved.engine, 2));
    EXPECT_OK(ecs_engine_run(loaded.engine, 2));
    EXPECT_EQ_U64(checksum(&saved), checksum(&loaded));
    size_t count_saved = 0, count_loaded = 0;
    EXPECT_OK(ecs_entity_count(saved.engine, &count_saved));
    EXPECT_OK(ecs_entity_count(loaded.engine, &count_loaded));
    EXPECT_EQ_U64(count_saved, count_loaded);
    ecs_entity next_saved = 0, next_loaded = 0;
    EXPECT_OK(ecs_spawn(saved.engine, &next_saved));
    EXPECT_OK(ecs_spawn(loaded.engine, &next_loaded));
    EXPECT_EQ_U64(next_saved, next_loaded);

    ecs_engine_destroy(saved.engine);
    ecs_engine_destroy(loaded.engine);
}

static void save_in_tick(ecs_system_ctx *ctx, void *user_data) {
    (void)ctx;
    World *world = user_data;
    uint8_t *bytes = NULL;
    size_t len = 0;
    world->save_in_tick = seen(ecs_engine_save(world->engine, ECS_SNAPSHOT_POSTCARD, &bytes, &len));
}

static void noop_drop(void *component, void *user_data) {
    (void)component;
    (void)user_data;
}

static void test_refusals(void) {
    current_test = "snapshot refusals";
    World world;
    make_world(&world, 1, 0);
    ecs_engine *engine = world.engine;
    ecs_component_id handle = new_component(engine, "FileHandle", sizeof(void *), _Alignof(void *));
    ecs_entity e = 0;
    EXPECT_OK(ecs_spawn(engine, &e));
    uint8_t *bytes = NULL;
    size_t len = 0;

    /* A component that is not savable, with a value: refused, naming it. */
    void *pointer = &world;
    EXPECT_OK(ecs_insert(engine, e, handle, &pointer));
    EXPECT_STATUS(ECS_ERR_SNAPSHOT, ecs_engine_save(engine, ECS_SNAPSHOT_POSTCARD, &bytes, &len));
    EXPECT(strstr(ecs_last_error_message(), "FileHandle") != NULL);
    EXPECT(bytes == NULL && len == 0);
    EXPECT_OK(ecs_remove(engine, e, handle));

    /* A savable component with a destructor: refused at registration. */
    ecs_component_desc owned = component_desc("Owned", 4, 4);
    owned.savable = true;
    owned.drop = noop_drop;
    ecs_component_id id = 0;
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_component_register(engine, &owned, &id));

    /* NULL pointers, an unknown format. */
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_save(NULL, ECS_SNAPSHOT_POSTCARD, &bytes, &len));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_save(engine, ECS_SNAPSHOT_POSTCARD, NULL, &len));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_save(engine, ECS_SNAPSHOT_POSTCARD, &bytes, NULL));
    EXPECT_STATUS(ECS_ERR_INVALID_ARGUMENT, ecs_engine_save(engine, 42, &bytes, &len));
    EXPECT_STATUS(ECS_ERR_NULL_POINTER, ecs_engine_load(engine, ECS_SNAPSHOT_POSTCARD, NULL, 8));
    ecs_snapshot_free(NULL, 0);

    /* Garbage and a cut snapshot: refused, the world unchanged. */
    EXPECT_OK(ecs_engine_run(engine, 2));
    uint64_t before = checksum(&world);
    static const uint8_t garbage[] = {0x03, 0xff, 0x00, 0x42, 0x13, 0x37};
    EXPECT_STATUS(ECS_ERR_SNAPSHOT,
                  ecs_engine_load(engine, ECS_SNAPSHOT_POSTCARD, garbage, sizeof garbage));
    EXPECT_OK(ecs_engine_save(engine, ECS_SNAPSHOT_JSON, &bytes, &len));
    EXPECT_STATUS(ECS_ERR_SNAPSHOT, ecs_engine_load(engine, ECS_SNAPSHOT_JSON, bytes, len / 2));
    EXPECT_STATUS(ECS_ERR_SNAPSHOT, ecs_engine_load(engine, ECS_SNAPSHOT_POSTCARD, bytes, len));
    EXPECT_EQ_U64(before, checksum(&world));
    EXPECT_EQ_U64(2, ticks(&world));
    ecs_snapshot_free(bytes, len);

    /* From inside a tick: the engine is busy. */
    ecs_engine *busy = new_engine(1);
    World inside;
    memset(&inside, 0, sizeof inside);
    inside.engine = busy;
    inside.save_in_tick.status = ECS_OK;
    ecs_system_desc desc = system_desc("saver", save_in_tick, &inside);
    EXPECT_OK(ecs_system_add(busy, &desc));
    EXPECT_OK(ecs_engine_tick(busy));
    EXPECT_SEEN(ECS_ERR_WRONG_STATE, inside.save_in_tick);

    ecs_engine_destroy(busy);
    ecs_engine_destroy(engine);
}

static ecs_resource_id add_resource(ecs_engine *engine, const char *name, uint64_t value, bool savable) {
    ecs_resource_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.name = name;
    desc.size = sizeof value;
    desc.align = _Alignof(uint64_t);
    desc.initial = &value;
    desc.savable = savable;
    ecs_resource_id id = 0;
    EXPECT_OK(ecs_resource_register(engine, &desc, &id));
    return id;
}

static void test_resources_in_snapshots(void) {
    current_test = "resources in snapshots";
    World world;
    make_world(&world, 1, 0);
    ecs_resource_id score = add_resource(world.engine, "score", 41, true);
    EXPECT_OK(ecs_engine_run(world.engine, 2));
    uint8_t *bytes = NULL;
    size_t len = 0;
    EXPECT_OK(ecs_engine_save(world.engine, ECS_SNAPSHOT_POSTCARD, &bytes, &len));
    uint64_t value = 7;
    EXPECT_OK(ecs_resource_set(world.engine, score, &value, sizeof value));
    EXPECT_OK(ecs_engine_load(world.engine, ECS_SNAPSHOT_POSTCARD, bytes, len));
    EXPECT_OK(ecs_resource_get(world.engine, score, &value, sizeof value));
    EXPECT_EQ_U64(41, value);

    /* An engine whose resources differ (one more, not savable): refused. */
    World other;
    make_world(&other, 1, 0);
    add_resource(other.engine, "score", 0, true);
    add_resource(other.engine, "cache", 0, false);
    EXPECT_STATUS(ECS_ERR_SNAPSHOT, ecs_engine_load(other.engine, ECS_SNAPSHOT_POSTCARD, bytes, len));
    EXPECT(strstr(ecs_last_error_message(), "cache") != NULL);
    uint8_t *refused = NULL;
    size_t refused_len = 0;
    EXPECT_STATUS(ECS_ERR_SNAPSHOT,
                  ecs_engine_save(other.engine, ECS_SNAPSHOT_POSTCARD, &refused, &refused_len));
    ecs_snapshot_free(bytes, len);
    ecs_engine_destroy(other.engine);
    ecs_engine_destroy(world.engine);
}

void test_snapshots(void) {
    current_test = "snapshot round trip (postcard)";
    test_round_trip(ECS_SNAPSHOT_POSTCARD);
    current_test = "snapshot round trip (JSON)";
    test_round_trip(ECS_SNAPSHOT_JSON);
    test_refusals();
    test_resources_in_snapshots();
}
