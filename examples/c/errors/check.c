/* The checking machinery and the helpers of the C API's error-path tests. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"

/* ---- the checking machinery ---------------------------------------------- */

const char *current_test = "(setup)";
_Atomic unsigned long checks = 0;

_Noreturn void fail(const char *file, int line, const char *format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "errors: FAILED in test `%s` at %s:%d: ", current_test, file, line);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(1);
}

const char *name_of(ecs_status status) {
    const char *name = ecs_status_name(status);
    return name ? name : "(NULL name)";
}

/* A failure must leave a message on this thread. */
void expect_message(const char *file, int line, const char *text) {
    const char *message = ecs_last_error_message();
    if (message == NULL) {
        fail(file, line, "%s: ecs_last_error_message() is NULL after a failure", text);
    }
    if (message[0] == '\0') {
        fail(file, line, "%s: ecs_last_error_message() is empty after a failure", text);
    }
}

void expect_status(const char *file, int line, const char *text, ecs_status got,
                          ecs_status want) {
    checks++;
    if (got != want) {
        fail(file, line, "%s returned %s (%d), expected %s (%d); last error message: \"%s\"", text,
             name_of(got), (int)got, name_of(want), (int)want, ecs_last_error_message());
    }
    if (want != ECS_OK) {
        expect_message(file, line, text);
    }
}

void expect_either(const char *file, int line, const char *text, ecs_status got,
                          ecs_status a, ecs_status b) {
    checks++;
    if (got != a && got != b) {
        fail(file, line, "%s returned %s (%d), expected %s or %s; last error message: \"%s\"",
             text, name_of(got), (int)got, name_of(a), name_of(b), ecs_last_error_message());
    }
    if (got != ECS_OK) {
        expect_message(file, line, text);
    }
}



Seen seen(ecs_status status) {
    Seen s = {status, 0};
    if (status != ECS_OK) {
        const char *m = ecs_last_error_message();
        s.has_message = m != NULL && m[0] != '\0';
    }
    return s;
}

void expect_seen(const char *file, int line, const char *what, Seen s, ecs_status want) {
    checks++;
    if (s.status != want) {
        fail(file, line, "inside the system, %s returned %s (%d), expected %s (%d)", what,
             name_of(s.status), (int)s.status, name_of(want), (int)want);
    }
    if (want != ECS_OK && !s.has_message) {
        fail(file, line, "inside the system, %s failed with an empty error message", what);
    }
}

/* ---- helpers ---------------------------------------------------------------- */

ecs_engine *new_engine(uint32_t threads) {
    ecs_engine_desc desc = {.struct_size = sizeof desc, .threads = threads, .step_seconds = 0.0};
    ecs_engine *engine = NULL;
    EXPECT_OK(ecs_engine_create(&desc, &engine));
    EXPECT(engine != NULL);
    return engine;
}

ecs_component_desc component_desc(const char *name, size_t size, size_t align) {
    ecs_component_desc desc = {
        .struct_size = sizeof desc, .name = name, .size = size, .align = align};
    return desc;
}

ecs_component_id new_component(ecs_engine *engine, const char *name, size_t size,
                                      size_t align) {
    ecs_component_desc desc = component_desc(name, size, align);
    ecs_component_id id = 0;
    EXPECT_OK(ecs_component_register(engine, &desc, &id));
    return id;
}

ecs_system_desc system_desc(const char *name, ecs_system_fn run, void *user_data) {
    ecs_system_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    desc.name = name;
    desc.run = run;
    desc.user_data = user_data;
    return desc;
}

void do_nothing(ecs_system_ctx *ctx, void *user_data) {
    (void)ctx;
    (void)user_data;
}

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int huge_allocations = 1;
