// CRC-32C (Castagnoli), the checksum of Kafka record batches v2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace thaw::kafka {

// CRC-32C of `data` continuing from `crc` (0 to start). Uses the SSE4.2
// crc32 instruction when the CPU has it (checked once at run time), a
// table-driven implementation otherwise.
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);
inline uint32_t Crc32c(std::string_view data, uint32_t crc = 0) { return Crc32c(data.data(), data.size(), crc); }

// The two implementations, for tests and benchmarks.
uint32_t Crc32cSoftware(const void* data, size_t size, uint32_t crc = 0);
bool Crc32cHardwareAvailable();
uint32_t Crc32cHardware(const void* data, size_t size, uint32_t crc = 0);  // only when available

}  // namespace thaw::kafka
