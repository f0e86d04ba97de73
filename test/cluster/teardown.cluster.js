/**
 * The rig's teardown leaves nothing (namespaces, links, the bridge, /etc/netns entries, processes, its directory)
 * after a run killed half-way through bringing one up. (After a whole rig: faults.cluster.js's `after`.)
 */
'use strict';
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { it } = require('node:test');
const rig = require('./rig');

const NOTHING = { namespaces: [], links: [], netnsConfigs: [], dirs: [], pids: [] };

it('leaves nothing after a run killed while it brought the rig up', async () => {
  await rig.down();
  const run = spawn(process.execPath, [path.join(__dirname, 'rig.js'), 'up'], { stdio: 'ignore' });
  const exited = new Promise((r) => run.once('exit', r));
  // Killed once etcd, Patroni and NATS run and Postgres is being made: the messiest point to stop at.
  await rig.until('Patroni and Postgres to run', () => rig.rigPids().length >= 10, 120_000, 100);
  const left = rig.leftovers();
  assert.ok(left.namespaces.length >= 12 && left.links.length >= 13 && left.dirs.length === 1, JSON.stringify(left));
  run.kill('SIGKILL');
  await exited;
  await rig.down();
  assert.deepEqual(rig.leftovers(), NOTHING);
});
