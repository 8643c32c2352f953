// The record view the reader hands out: kafka/record.h (below both records/
// and the Kafka wire codec), under the names records/ has always used.
#pragma once

#include "thaw/kafka/record.h"

namespace thaw::records {

using kafka::Header;
using kafka::Record;
using kafka::RecordBatch;
using kafka::TimestampType;

}  // namespace thaw::records
