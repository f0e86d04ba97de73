/**
 * The rig's webhook receiver: one per application host, on that host's own loopback. Logs every delivery as a JSON
 * line (time, delivery id, attempt, submission id) to its own file and answers 200. The checker merges the files:
 * delivery ids are global.
 *
 *   node test/cluster/receiver.js <port> <log file>
 */
'use strict';
const fs = require('node:fs');
const http = require('node:http');

const [port, file] = process.argv.slice(2);
const out = fs.openSync(file, 'a');

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let envelope = {};
      try {
        envelope = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        /* logged as it came */
      }
      const line = {
        t: Date.now(),
        delivery: req.headers['x-service-delivery'],
        attempt: Number(req.headers['x-service-attempt']),
        type: envelope.type,
        submission: envelope.data?.submission_id,
      };
      // Written before the answer: what was answered 200 is in the log.
      fs.writeSync(out, `${JSON.stringify(line)}\n`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  })
  .listen(Number(port), '127.0.0.1');
