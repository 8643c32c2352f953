#!/usr/bin/env node
// @kafkajs/confluent-schema-registry 3.9.0 (with kafkajs 2.2.4) as users run
// it, for the schema registry tests (tests/integration/test_archive_registry.py):
//
//   produce -b HOST:PORT -t TOPIC --registry URL --schema FILE.avsc --count N [--start I]
//       registers the Avro schema under TOPIC-value, encodes N records
//       (record(i) below) with registry.encode and produces them (key "j<i>",
//       partition i % 2); prints {"id": schema id} as one JSON line.
//   decode --registry URL
//       reads base64 values, one per line, from stdin; prints each decoded
//       with registry.decode as one JSON line.
'use strict';
const { Kafka, logLevel, Partitioners } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');
const fs = require('fs');
const readline = require('readline');

function record(i) {
  return { id: i, item: `js-${i}`, tags: Array.from({ length: i % 3 }, (_, k) => `t${k}`),
           customer: { name: `c${i % 4}`, tier: i % 2 ? 'GOLD' : 'FREE' }, note: i % 5 ? `note ${i}` : null };
}

function parse(argv) {
  const a = { start: 0 };
  for (let i = 1; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--?/, ''), v = argv[i + 1];
    a[{ b: 'bootstrap', t: 'topic' }[k] || k] = v;
  }
  a.cmd = argv[0];
  return a;
}

async function main() {
  const a = parse(process.argv.slice(2));
  const registry = new SchemaRegistry({ host: a.registry });
  if (a.cmd === 'decode') {
    const rl = readline.createInterface({ input: process.stdin });
    for await (const line of rl) {
      if (!line.trim()) continue;
      process.stdout.write(JSON.stringify(await registry.decode(Buffer.from(line.trim(), 'base64'))) + '\n');
    }
    return;
  }
  if (a.cmd !== 'produce') throw new Error(`unknown command ${a.cmd}`);
  const { id } = await registry.register({ type: SchemaType.AVRO, schema: fs.readFileSync(a.schema, 'utf8') },
                                         { subject: `${a.topic}-value` });
  const kafka = new Kafka({ clientId: 'thaw-kafkajs-registry', brokers: a.bootstrap.split(','),
                            logLevel: logLevel.ERROR, retry: { retries: 5 } });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true });
  await producer.connect();
  const messages = [];
  for (let i = Number(a.start); i < Number(a.start) + Number(a.count); i++) {
    messages.push({ key: `j${i}`, partition: i % 2, value: await registry.encode(id, record(i)) });
  }
  await producer.send({ topic: a.topic, messages });
  await producer.disconnect();
  process.stdout.write(JSON.stringify({ id }) + '\n');
}

const exit = (code) => process.stdout.write('', () => process.exit(code));
main().then(() => exit(0), (e) => { process.stderr.write(`kafkajs registry driver: ${e.stack || e}\n`); exit(1); });
