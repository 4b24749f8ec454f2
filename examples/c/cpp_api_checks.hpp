// What the C++ layer's test program shares between its files (cpp_api.cpp,
// cpp_api_saves.cpp): the check counter, EXPECT and EXPECT_ERROR, the test
// components, and the tests each file gives main.
#pragma once

#include "ecs_runtime.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace cpp_api {

// Checks made so far (cpp_api.cpp defines it; main prints it); atomic:
// systems check from the worker threads, several at once.
extern std::atomic<unsigned long> checks;

[[noreturn]] inline void fail(const char* file, int line, const std::string& what) {
    std::fprintf(stderr, "cpp_api: FAILED at %s:%d: %s\n", file, line, what.c_str());
    std::exit(1);
}

struct Position {
    float x, y;
};
struct Velocity {
    float x, y;
};
struct Frozen {
    char unused;
};

// cpp_api_saves.cpp: snapshots (save, load) and in-memory states.
void test_snapshot_round_trip(ecs_snapshot_format format);
void test_snapshot_refusals();
void test_states();
void test_change_detection();
void test_exclusive_systems();
// cpp_api_boxed.cpp: components that are not trivially copyable.
void test_boxed_components();

}  // namespace cpp_api

#define EXPECT(condition)                                      \
    do {                                                       \
        ++cpp_api::checks;                                              \
        if (!(condition)) {                                    \
            cpp_api::fail(__FILE__, __LINE__, "expected " #condition); \
        }                                                      \
    } while (0)

// `call` throws ecs::Error with `want` as its status.
#define EXPECT_ERROR(want, call)                                                         \
    do {                                                                                 \
        ++cpp_api::checks;                                                                        \
        try {                                                                            \
            call;                                                                        \
            cpp_api::fail(__FILE__, __LINE__, #call " did not throw");                            \
        } catch (const ecs::Error& e) {                                                  \
            if (e.status() != (want)) {                                                  \
                cpp_api::fail(__FILE__, __LINE__, #call " threw the wrong status: " + std::string(e.what())); \
            }                                                                            \
        }                                                                                \
    } while (0)
