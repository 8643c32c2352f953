#!/usr/bin/env node
// kafkajs 2.2.4 as a consumer driver; prints each record as one JSON line in
// the format of jsonl.py, except headers: kafkajs decodes them into an object
// (key -> value, or an array of values for a repeated key), which loses the
// order across keys, so it prints "headers_grouped": [[key, [base64|null,...]], ...]
// (keys in first-seen order, values in order) and no "headers".
//
//   NODE_PATH=.deps/node/node_modules node kafkajs_consume.js -b HOST:PORT -t TOPIC [-t TOPIC...]
//       [--group G] [--start beginning|offset:N] [--count N] [--timeout S]
//
// A consumer group member (kafkajs has no assign()): subscribes with
// fromBeginning, reads with eachBatch and commits what it read; with
// --start offset:N it seeks every partition to N once it is assigned. Stops when
// every partition reached the end offset it had at the start (admin
// fetchTopicOffsets), or after --count records. kafkajs supports gzip without
// a codec plugin; the tests use gzip for its compressed topic.
'use strict';
const { Kafka, logLevel } = require('kafkajs');

function parse(argv) {
  const a = { topics: [], start: 'beginning', timeout: 120 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    if (k === '-b' || k === '--bootstrap') { a.bootstrap = v; i++; }
    else if (k === '-t' || k === '--topic') { a.topics.push(v); i++; }
    else if (k === '--group') { a.group = v; i++; }
    else if (k === '--start') { a.start = v; i++; }
    else if (k === '--count') { a.count = parseInt(v, 10); i++; }
    else if (k === '--timeout') { a.timeout = parseFloat(v); i++; }
    else { throw new Error(`unknown argument ${k}`); }
  }
  if (!a.bootstrap || a.topics.length === 0) throw new Error('-b and -t are required');
  return a;
}

const b64 = (buf) => (buf === null || buf === undefined ? null : Buffer.from(buf).toString('base64'));

async function main() {
  const a = parse(process.argv.slice(2));
  const kafka = new Kafka({ clientId: 'thaw-kafkajs-driver', brokers: a.bootstrap.split(','),
                            logLevel: logLevel.ERROR, retry: { retries: 5 } });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map();  // "topic/partition" -> end offset at start
  for (const t of a.topics) {
    for (const o of await admin.fetchTopicOffsets(t)) {
      const lo = BigInt(o.low), hi = BigInt(o.high);
      if (hi > lo) ends.set(`${t}/${o.partition}`, hi);
    }
  }
  await admin.disconnect();
  const pending = new Set(ends.keys());
  const group = a.group || `thaw-kafkajs-${Math.random().toString(16).slice(2, 10)}`;
  const consumer = kafka.consumer({ groupId: group, maxBytesPerPartition: 10 << 20, maxBytes: 64 << 20 });
  let n = 0, done, failed;
  const finished = new Promise((res, rej) => { done = res; failed = rej; });
  const timer = setTimeout(() => failed(new Error(
    `timeout after ${a.timeout} s: ${n} records; not at the end: ${[...pending].join(',')}`)), a.timeout * 1000);
  const check = () => { if (pending.size === 0 || (a.count !== undefined && n >= a.count)) done(); };
  check();
  await consumer.connect();
  if (a.start.startsWith('offset:')) {
    const off = a.start.split(':')[1];
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      for (const [t, ps] of Object.entries(e.payload.memberAssignment)) {
        for (const p of ps) consumer.seek({ topic: t, partition: p, offset: off });
      }
    });
  }
  for (const t of a.topics) await consumer.subscribe({ topic: t, fromBeginning: true });
  await consumer.run({
    autoCommit: true,
    eachBatchAutoResolve: true,
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        if (a.count !== undefined && n >= a.count) break;
        const grouped = [];
        for (const [k, v] of Object.entries(m.headers || {})) {
          grouped.push([k, (Array.isArray(v) ? v : [v]).map(b64)]);
        }
        const tt = m.batchContext ? m.batchContext.timestampType : undefined;
        process.stdout.write(JSON.stringify({
          topic: batch.topic, partition: batch.partition, offset: Number(m.offset),
          timestamp: Number(m.timestamp), timestamp_type: tt === 1 ? 'LogAppendTime' : tt === 0 ? 'CreateTime' : null,
          key: b64(m.key), value: b64(m.value), headers_grouped: grouped }) + '\n');
        n++;
        const id = `${batch.topic}/${batch.partition}`;
        if (ends.has(id) && BigInt(m.offset) + 1n >= ends.get(id)) pending.delete(id);
      }
      check();
    },
  });
  try {
    await finished;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}

// stdout to a pipe is asynchronous in node: exit once everything written is flushed
// (write callbacks run in order).
const exit = (code) => process.stdout.write('', () => process.exit(code));
main().then(() => exit(0), (e) => { process.stderr.write(`kafkajs driver: ${e.stack || e}\n`); exit(1); });
