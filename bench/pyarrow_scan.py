"""The peer for the read benchmark: pyarrow reading the same Parquet data
files' Kafka columns (key, value, headers, partition, offset, timestamp),
planned by pyiceberg. Prints one JSON line like read_bench."""
import json
import resource
import sys
import time

import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog

uri, name, threads = sys.argv[1], sys.argv[2], sys.argv[3] == "threads"
cat = SqlCatalog("default", uri=uri)
files = [t.file.file_path.removeprefix("file://") for t in cat.load_table(name).scan().plan_files()]
cols = ["kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_timestamp_type", "key", "value", "headers"]
t0 = time.monotonic()
records = nbytes = 0
for f in files:
    t = pq.read_table(f, columns=cols, use_threads=threads)
    records += t.num_rows
    nbytes += t["value"].nbytes + t["key"].nbytes
secs = time.monotonic() - t0
print(json.dumps({"records": records, "bytes": nbytes, "seconds": round(secs, 4),
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "files": len(files)}))
