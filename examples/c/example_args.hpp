// The command-line counts of the C++ examples (movers.cpp, shmup.cpp).
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace example {

// A decimal count from min to max: digits only (strtoull alone would take
// " -1" as 2^64 - 1), refused when it does not fit in 64 bits (ERANGE).
// Throws std::invalid_argument naming `what`.
inline uint64_t parse_count(const char* text, const char* what, uint64_t min,
                            uint64_t max = UINT64_MAX) {
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
    if (value > max) {
        throw std::invalid_argument(std::string(what) + " must be at most " +
                                    std::to_string(max) + ", got `" + shown + "`");
    }
    return value;
}

}  // namespace example
